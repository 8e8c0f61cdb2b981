//! G1 and G2 multi-scalar multiplication, 2^16..2^22 (set CUZK_BENCH_LOGS to pick sizes),
//! side by side with blst's Pippenger; `*_bits`: witness-shaped scalars (45 % zeros, 50 %
//! ones, 5 % random, as in PoRep's aux columns), the 0/1 split's own cost.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuzk_groth16::conformance::{random_g1, random_g2, random_scalars};
use cuzk_groth16::msm;
use cuzk_groth16::Fr;
use ff::Field;

fn logs() -> Vec<u32> {
    std::env::var("CUZK_BENCH_LOGS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![16, 18, 20, 22])
}

fn bench(c: &mut Criterion) {
    let max = 1usize << logs().into_iter().max().unwrap_or(16);
    let scalars = random_scalars(max, 1);
    let bits: Vec<Fr> = scalars
        .iter()
        .enumerate()
        .map(|(i, s)| match i % 20 {
            0..=8 => Fr::ZERO,
            9..=18 => Fr::ONE,
            _ => *s,
        })
        .collect();
    let mut g = c.benchmark_group("msm");
    g.sample_size(10);
    let p1 = random_g1(max, 2);
    for log in logs() {
        let n = 1 << log;
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("g1", log), &n, |b, &n| {
            b.iter(|| msm::g1(&p1[..n], &scalars[..n]))
        });
        // The peer: blst's Pippenger on the same input.
        g.bench_with_input(BenchmarkId::new("g1_blst", log), &n, |b, &n| {
            b.iter(|| msm::blst_g1(&p1[..n], &scalars[..n]))
        });
        g.bench_with_input(BenchmarkId::new("g1_bits", log), &n, |b, &n| {
            b.iter(|| msm::g1(&p1[..n], &bits[..n]))
        });
    }
    drop(p1);
    let p2 = random_g2(max, 3);
    for log in logs() {
        let n = 1 << log;
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("g2", log), &n, |b, &n| {
            b.iter(|| msm::g2(&p2[..n], &scalars[..n]))
        });
        g.bench_with_input(BenchmarkId::new("g2_blst", log), &n, |b, &n| {
            b.iter(|| msm::blst_g2(&p2[..n], &scalars[..n]))
        });
        g.bench_with_input(BenchmarkId::new("g2_bits", log), &n, |b, &n| {
            b.iter(|| msm::g2(&p2[..n], &bits[..n]))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
