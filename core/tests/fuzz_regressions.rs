//! Every input in fuzz/regressions/<target>/ (seeds, and every crash a fuzz
//! run ever found) runs through the same checks as the fuzz targets.

use counterfoil_core::fuzz_checks;

#[test]
fn fuzz_regressions() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let mut ran = 0;
    for (target, check) in [
        ("awb", fuzz_checks::awb as fn(&str)),
        ("format", fuzz_checks::format),
        ("scope_key", fuzz_checks::scope_key),
    ] {
        for entry in std::fs::read_dir(root.join(target)).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            if let Ok(text) = std::str::from_utf8(&bytes) {
                check(text);
                ran += 1;
            }
        }
    }
    assert!(ran >= 3, "the regression corpus is missing");
}
