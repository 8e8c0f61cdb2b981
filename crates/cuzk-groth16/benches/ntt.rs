//! NTT throughput and the whole quotient step (h from a, b, c), 2^16..2^22 (set
//! CUZK_BENCH_LOGS="16,18" to pick sizes).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuzk_groth16::backend::quotient;
use cuzk_groth16::conformance::random_scalars;
use cuzk_groth16::domain::Domain;

fn logs() -> Vec<u32> {
    std::env::var("CUZK_BENCH_LOGS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![16, 18, 20, 22])
}

fn ntt(c: &mut Criterion) {
    let mut g = c.benchmark_group("ntt");
    g.sample_size(10);
    for log in logs() {
        let d = Domain::new(log).unwrap();
        let coeffs = d.coefficients(random_scalars(d.size(), 1)).unwrap();
        g.throughput(Throughput::Elements(d.size() as u64));
        g.bench_with_input(BenchmarkId::new("fft", log), &coeffs, |b, c| {
            b.iter(|| d.fft(c.clone()))
        });
        g.bench_with_input(BenchmarkId::new("coset_fft", log), &coeffs, |b, c| {
            b.iter(|| d.coset_fft(c.clone()))
        });
        let abc: Vec<_> = (2..5).map(|seed| random_scalars(d.size(), seed)).collect();
        g.bench_with_input(BenchmarkId::new("quotient", log), &abc, |b, v| {
            b.iter(|| quotient(&v[0], &v[1], &v[2]).unwrap())
        });
    }
}

criterion_group!(benches, ntt);
criterion_main!(benches);
