#![no_main]
//! Fuzz target: counterfoil_core::fuzz_checks::format on arbitrary UTF-8.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        counterfoil_core::fuzz_checks::format(text);
    }
});
