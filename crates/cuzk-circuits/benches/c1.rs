//! Parsing a 32 GiB PoRep C1 output (random, well-formed; 10 partitions): `C1Input::parse`,
//! raw and in Curio's envelope, against going through a `serde_json::Value` tree first (how
//! `parse` worked before). Figures go to docs/PERFORMANCE.md.

use criterion::{criterion_group, criterion_main, Criterion};
use cuzk_circuits::{C1Input, RegisteredSealProof};
use rand_chacha::rand_core::SeedableRng;

fn bench(c: &mut Criterion) {
    let proof = RegisteredSealProof::StackedDrg32GiBV1_1;
    let c1 = C1Input::random(proof, &mut rand_chacha::ChaCha8Rng::seed_from_u64(32));
    let raw = serde_json::to_vec(&c1).unwrap();
    let envelope = C1Input::envelope(&raw, 7, proof.sector_size());
    let mut g = c.benchmark_group(format!("c1_parse_32gib_{}mb", raw.len() >> 20));
    g.sample_size(10);
    g.bench_function("parse_raw", |b| b.iter(|| C1Input::parse(&raw).unwrap()));
    g.bench_function("parse_envelope", |b| {
        b.iter(|| C1Input::parse(&envelope).unwrap())
    });
    g.bench_function("through_value_raw", |b| {
        b.iter(|| {
            let v: serde_json::Value = serde_json::from_slice(&raw).unwrap();
            serde_json::from_value::<C1Input>(v).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
