//! Property tests of the pure rules.

use counterfoil_core::{NumberFormat, Period, ScopeKey};
use proptest::prelude::*;

proptest! {
    /// Padding is a minimum: the digits of the number always appear whole.
    #[test]
    fn padding_never_truncates(n in any::<u64>(), pad in 1usize..=20, year in 1u32..=9999) {
        let f = NumberFormat::parse(&format!("{{year}}-{{seq:0{pad}}}")).unwrap();
        let s = f.render(n, Period::new(year, 1).unwrap());
        let (y, seq) = s.split_once('-').unwrap();
        prop_assert_eq!(y, format!("{year:04}"));
        prop_assert!(seq.len() >= pad);
        prop_assert_eq!(seq.parse::<u64>().unwrap(), n);
    }

    /// Different numbers of one series never render the same text.
    #[test]
    fn rendering_is_injective(a in any::<u64>(), b in any::<u64>(), pad in 1usize..=8) {
        prop_assume!(a != b);
        let f = NumberFormat::parse(&format!("X{{seq:0{pad}}}Y")).unwrap();
        let p = Period::new(2019, 1).unwrap();
        prop_assert_ne!(f.render(a, p), f.render(b, p));
    }

    /// The parser never panics and, when it accepts, the template holds one seq.
    #[test]
    fn parser_total(s in "\\PC{0,40}") {
        if let Ok(f) = NumberFormat::parse(&s) {
            prop_assert_eq!(f.template(), s.as_str());
        }
    }

    /// Valid keys round-trip verbatim; invalid ones are refused, never altered.
    #[test]
    fn scope_keys_verbatim(s in "\\PC{0,200}") {
        if let Ok(k) = ScopeKey::new(s.clone()) { prop_assert_eq!(k.as_str(), s.as_str()) }
    }
}
