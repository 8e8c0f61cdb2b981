//! One PoRep partition's witness: witness-only synthesis (`WitnessCs`, the PCE path's first
//! half) against the native generator, side by side, for the bundled 2 KiB and 8 MiB sectors
//! and, with `CUZK_BENCH_LARGE=1` (several minutes), for a synthetic 32 GiB partition (random
//! values of the right shapes). Each method runs twice: into fresh memory (every page faulted
//! in and zeroed by the kernel), and into the previous run's vector, recycled
//! (`cuzk_groth16::memory`), as the engine's steady state with `engine.recycle`. Figures go to
//! docs/PERFORMANCE.md ("Native witness").

mod common;

use common::fixture;
use criterion::{criterion_group, criterion_main, Criterion};
use cuzk_circuits::{SealShape, StackedCircuit, StackedShape};
use cuzk_groth16::memory;
use cuzk_pce::WitnessCs;
use rand_chacha::rand_core::SeedableRng;

fn fixture_circuit(size: &str) -> StackedCircuit<'static> {
    let shape = SealShape::from_sector_size(size).unwrap();
    shape.partition_circuit(&fixture(size), 0).unwrap()
}

fn compare(c: &mut Criterion, name: &str, circuit: StackedCircuit<'_>) {
    let aux = circuit.shape.witness_layout().unwrap().aux();
    let mut g = c.benchmark_group(format!("witness_{name}"));
    g.sample_size(10);
    g.bench_function("witness_only_synthesis", |b| {
        b.iter(|| WitnessCs::assign_sized(circuit.clone(), 1, aux).unwrap())
    });
    g.bench_function("native", |b| b.iter(|| circuit.native_witness().unwrap()));
    memory::set_recycle_limit(aux * std::mem::size_of::<cuzk_groth16::Fr>());
    g.bench_function("witness_only_synthesis_recycled", |b| {
        b.iter(|| memory::recycle(WitnessCs::assign_sized(circuit.clone(), 1, aux).unwrap().1))
    });
    g.bench_function("native_recycled", |b| {
        b.iter(|| memory::recycle(circuit.native_witness().unwrap().1))
    });
    memory::set_recycle_limit(0);
    g.finish();
}

fn bench(c: &mut Criterion) {
    for size in ["2KiB", "8MiB"] {
        compare(c, size, fixture_circuit(size));
    }
    if std::env::var_os("CUZK_BENCH_LARGE").is_some() {
        let shape = StackedShape::for_sector_size(32 << 30).unwrap();
        let circuit = shape.synthetic(&mut rand_chacha::ChaCha8Rng::seed_from_u64(32));
        compare(c, "32GiB_synthetic", circuit);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
