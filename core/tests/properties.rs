//! Property tests of the pure rules.

use counterfoil_core::awb::{expand_block, Awb};
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

    /// Every generated number is valid and every spelling of it normalises to it.
    #[test]
    fn awb_normalise_round_trip(prefix in 0u16..1000, serial in 0u32..10_000_000) {
        let a = Awb::new(prefix, serial).unwrap();
        let canonical = a.to_string();
        prop_assert!(Awb::is_valid(&canonical));
        let digits = canonical.replace('-', "");
        for spelling in [digits.clone(), format!("{} {}", &canonical[..8], &canonical[8..]), format!("  {canonical} ")] {
            prop_assert_eq!(Awb::normalize(&spelling).unwrap(), canonical.clone());
        }
        // Any other last digit is refused.
        let wrong = (a.check_digit() + 1 + (serial % 5) as u8) % 10;
        if u32::from(wrong) % 7 != serial % 7 || wrong > 6 {
            let bad = format!("{}{}", &digits[..10], wrong);
            prop_assert!(!Awb::is_valid(&bad) || wrong == a.check_digit());
        }
    }

    /// The parser never panics on any text.
    #[test]
    fn awb_parser_total(s in "\\PC{0,20}") {
        let _ = Awb::parse(&s);
    }

    /// A block has last − first + 1 numbers, in order, all valid.
    #[test]
    fn awb_blocks_expand_completely(prefix in 0u16..1000, first in 0u32..9_999_000, len in 1u32..500) {
        let a = Awb::new(prefix, first).unwrap().to_string();
        let b = Awb::new(prefix, first + len - 1).unwrap().to_string();
        let block = expand_block(&a, &b).unwrap();
        prop_assert_eq!(block.len() as u32, len);
        prop_assert!(block.windows(2).all(|w| w[1].serial() == w[0].serial() + 1));
        prop_assert!(block.iter().all(|n| Awb::is_valid(&n.to_string())));
    }

    /// Valid keys round-trip verbatim; invalid ones are refused, never altered.
    #[test]
    fn scope_keys_verbatim(s in "\\PC{0,200}") {
        if let Ok(k) = ScopeKey::new(s.clone()) { prop_assert_eq!(k.as_str(), s.as_str()) }
    }
}
