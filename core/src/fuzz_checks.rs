//! Invariants checked on arbitrary input by the fuzz targets (`fuzz/`) and by
//! the regression test over every input they ever found (`fuzz/regressions/`).
//! Each function panics when an invariant breaks; it never panics otherwise.

use crate::awb::{expand_block, Awb};
use crate::format::{NumberFormat, Period};
use crate::scope::ScopeKey;

/// AWB parsing: never panics; an accepted text normalises to a canonical
/// form that parses to the same number and is its own normal form.
pub fn awb(text: &str) {
    if let Ok(a) = Awb::parse(text) {
        let canonical = a.to_string();
        assert_eq!(Awb::parse(&canonical), Ok(a), "{text:?}");
        assert_eq!(
            Awb::normalize(&canonical).as_deref(),
            Ok(canonical.as_str())
        );
        assert_eq!(u32::from(a.check_digit()), a.serial() % 7);
    }
    if let Some((first, last)) = text.split_once('|') {
        if let Ok(block) = expand_block(first, last) {
            assert!(!block.is_empty());
            assert!(block.windows(2).all(|w| w[1].serial() == w[0].serial() + 1));
        }
    }
}

/// Template parsing: never panics; an accepted template renders any number
/// so that reading it back gives the number — always, for a template that
/// [`NumberFormat::reads_back`]; when read back at all, for the others.
pub fn format(text: &str) {
    if let Ok(f) = NumberFormat::parse(text) {
        let period = Period::new(2026, 11).expect("valid period");
        for n in [0u64, 7, 10_000, u64::MAX] {
            let rendered = f.render(n, period);
            match f.parse_rendered(&rendered) {
                Some(back) => assert_eq!(back.seq, n, "{text:?} rendered {rendered:?}"),
                None => assert!(
                    !f.reads_back(),
                    "{text:?} rendered {rendered:?} and could not read it back"
                ),
            }
        }
    }
}

/// Scope keys: never panics; an accepted key is stored verbatim.
pub fn scope_key(text: &str) {
    if let Ok(k) = ScopeKey::new(text) {
        assert_eq!(k.as_str(), text);
        assert!(k.as_str().len() <= ScopeKey::MAX_BYTES);
    }
}
