//! Criterion benchmarks of the pure parts: template parsing and rendering.

use counterfoil_core::{NumberFormat, Period, ScopeKey};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn bench_format(c: &mut Criterion) {
    let period = Period::new(2019, 6).unwrap();
    let f = NumberFormat::default();
    c.bench_function("format/render default", |b| {
        b.iter(|| f.render(black_box(12345), period))
    });
    c.bench_function("format/parse default", |b| {
        b.iter(|| NumberFormat::parse(black_box("{year}-{seq:04}")).unwrap())
    });
    c.bench_function("scope/for_user_year", |b| {
        b.iter(|| ScopeKey::for_user_year(black_box(42), black_box(2019)).unwrap())
    });
}

criterion_group!(benches, bench_format);
criterion_main!(benches);
