//! Synthesis time of our gadgets against upstream's, into a prover-style constraint system.

mod common;

use common::{PoseidonCase, Side};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use typenum::{U11, U8};

const SIDES: [Side; 2] = [Side::Ours, Side::Upstream];

fn sha256(c: &mut Criterion) {
    let mut group = c.benchmark_group("sha256_synthesis");
    group.sample_size(20);
    for blocks in [1usize, 4] {
        // 55 bytes pad to one block; each further 64 bytes add one.
        let message: Vec<u8> = (0..55 + 64 * (blocks - 1)).map(|i| i as u8).collect();
        for side in SIDES {
            group.bench_with_input(
                BenchmarkId::new(side.name(), format!("{blocks}_blocks")),
                &message,
                |b, m| b.iter(|| common::sha256(side, m)),
            );
        }
    }
    group.finish();
}

fn poseidon_case<A: neptune::Arity<blstrs::Scalar>>(c: &mut Criterion, name: &str) {
    const HASHES: usize = 16;
    let case = PoseidonCase::<A>::new();
    let mut group = c.benchmark_group(format!("poseidon_synthesis_{name}"));
    group.sample_size(20);
    for side in SIDES {
        group.bench_function(
            BenchmarkId::new(side.name(), format!("{HASHES}_hashes")),
            |b| b.iter(|| case.synthesize(side, HASHES)),
        );
    }
    group.finish();
}

fn poseidon(c: &mut Criterion) {
    poseidon_case::<U8>(c, "arity8");
    poseidon_case::<U11>(c, "arity11");
}

criterion_group!(benches, sha256, poseidon);
criterion_main!(benches);
