//! Sparse mat-vec throughput (non-zeros per second) on a random circuit with a bit-heavy
//! witness, and witness-only synthesis + mat-vec against full synthesis.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use cuzk_groth16::assignment::Witness;
use cuzk_groth16::conformance::{RandomCircuit, Shape};
use cuzk_pce::{Pce, WitnessCs};

fn bench(c: &mut Criterion) {
    let shape = Shape {
        inputs: 8,
        free_aux: 1000,
        constraints: 200_000,
        max_terms: 6,
        zero_witness: false,
        b_only_one: false,
    };
    let circuit = RandomCircuit::new(shape, 1);
    let pce = Pce::extract(circuit.clone()).unwrap();
    let (input, aux) = WitnessCs::assign(circuit.clone()).unwrap();
    let mut g = c.benchmark_group("pce");
    g.sample_size(10);
    g.throughput(Throughput::Elements(
        (pce.a.nnz() + pce.b.nnz() + pce.c.nnz()) as u64,
    ));
    g.bench_function("matvec_random_200k", |b| {
        b.iter(|| pce.evaluate(input.clone(), aux.clone()).unwrap())
    });
    g.throughput(Throughput::Elements(shape.constraints as u64));
    g.bench_function("full_synthesis_random_200k", |b| {
        b.iter(|| Witness::synthesize(circuit.clone()).unwrap())
    });
    g.bench_function("pce_synthesis_random_200k", |b| {
        b.iter(|| pce.witness(circuit.clone()).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
