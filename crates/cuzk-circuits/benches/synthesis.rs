//! One PoRep partition's witness, full synthesis against the PCE paths (witness-only synthesis or
//! the native witness generator, then the sparse mat-vec), side by side, for the bundled 2 KiB
//! and 8 MiB sectors; the PCE path's two halves are timed apart as well. Figures go to
//! docs/PERFORMANCE.md ("PCE").

mod common;

use common::fixture;
use criterion::{criterion_group, criterion_main, Criterion};
use cuzk_circuits::SealShape;
use cuzk_groth16::assignment::Witness;
use cuzk_pce::WitnessCs;

fn bench(c: &mut Criterion) {
    for size in ["2KiB", "8MiB"] {
        let c1 = fixture(size);
        let shape = SealShape::from_sector_size(size).unwrap();
        let pce = shape.extract_pce().unwrap();
        let circuit = shape.partition_circuit(&c1, 0).unwrap();
        let (input, aux) = WitnessCs::assign(circuit.clone()).unwrap();
        let mut g = c.benchmark_group(format!("porep_partition_{size}"));
        g.sample_size(10);
        g.bench_function("full_synthesis", |b| {
            b.iter(|| Witness::synthesize(circuit.clone()).unwrap())
        });
        g.bench_function("pce", |b| b.iter(|| pce.witness(circuit.clone()).unwrap()));
        g.bench_function("pce_native", |b| {
            b.iter(|| {
                let (input, aux) = circuit.native_witness().unwrap();
                pce.evaluate(input, aux).unwrap()
            })
        });
        g.bench_function("pce_witness_only", |b| {
            b.iter(|| WitnessCs::assign_sized(circuit.clone(), input.len(), aux.len()).unwrap())
        });
        g.bench_function("pce_matvec", |b| {
            b.iter(|| pce.evaluate(input.clone(), aux.clone()).unwrap())
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
