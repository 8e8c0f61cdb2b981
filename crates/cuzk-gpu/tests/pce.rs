//! The GPU-resident PCE against the host: the device mat-vec equals [`Pce::product`], its
//! quotient equals the CPU quotient of the host-evaluated a, b, c, and `prove_assigned` gives
//! the CPU reference's proof bytes, on random circuits and the 2 KiB PoRep circuit. Needs a
//! GPU; run by tools/gpu-tests.sh (docs/GPU.md).

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::{fixture, streaming_backends};
use cuzk_circuits::{C1Input, SealShape, Synthesis};
use cuzk_gpu::pce::DevicePce;
use cuzk_gpu::{Device, GpuBackend, GpuError};
use cuzk_groth16::assignment::Witness;
use cuzk_groth16::backend::{quotient, Backend, CpuBackend, Randomness};
use cuzk_groth16::conformance::{standard_shapes, RandomCircuit, Shape};
use cuzk_groth16::generator;
use cuzk_pce::{Columns, Pce, PceBackend, Values, Which};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn columns_of(w: &Witness) -> Columns {
    Columns::new(w.input.clone(), w.aux.clone())
}

/// Checks one circuit's witness on every GPU: products, quotient, proof (the key resident, and
/// streamed in chunks of `chunk` bytes).
fn check(
    pce: &Arc<Pce>,
    pk: &cuzk_groth16::params::ProvingKey,
    w: &Witness,
    seed: u64,
    chunk: u64,
) {
    let products =
        [Which::A, Which::B, Which::C].map(|m| pce.product(m, &w.input, &w.aux).unwrap());
    // As the engine makes them (packed when mostly bits, as PoRep's), and in full.
    let forms = [columns_of(w), Columns::full(w.input.clone(), w.aux.clone())];
    let (_, h) = quotient(&w.a, &w.b, &w.c).unwrap();
    let rs = Randomness::random(&mut ChaCha20Rng::seed_from_u64(seed));
    let want = CpuBackend
        .prove(pk, std::slice::from_ref(w), &[rs])
        .unwrap();
    for d in Device::all().unwrap() {
        let mut dp = DevicePce::upload(&d, pce).unwrap();
        assert!(
            matches!(dp.products(), Err(GpuError::Argument(_))),
            "nothing loaded yet"
        );
        let short = Columns::new(w.input[1..].to_vec(), w.aux.clone());
        assert!(matches!(dp.load(&short), Err(GpuError::Argument(_))));
        for columns in &forms {
            let packed = matches!(columns.values(), Values::Packed(_));
            dp.load(columns).unwrap();
            assert_eq!(
                dp.products().unwrap(),
                products,
                "GPU {}, {packed}",
                d.ordinal()
            );
            assert_eq!(dp.quotient().unwrap().1, h, "GPU {}, {packed}", d.ordinal());
        }
        let mut backends = vec![GpuBackend::new(d.ordinal()).unwrap()];
        backends.extend(streaming_backends(d.ordinal(), chunk));
        for gpu in &backends {
            for columns in &forms {
                let got = gpu.prove_assigned(pk, pce, columns, &rs).unwrap();
                let memory = gpu.device_memory();
                assert_eq!(got, want[0], "GPU {} ({memory:?})", d.ordinal());
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn device_pce_equals_the_host_on_random_circuits() {
    let mut shapes = standard_shapes();
    shapes.extend((0..12).map(|i| Shape::random(200 + i, 400)));
    for (i, shape) in shapes.into_iter().enumerate() {
        let circuit = RandomCircuit::new(shape, 500 + i as u64);
        let pce = Arc::new(Pce::extract(circuit.clone()).unwrap());
        let pk = generator::generate(circuit.clone(), &mut ChaCha20Rng::seed_from_u64(i as u64))
            .unwrap();
        let w = pce.witness(circuit).unwrap();
        check(&pce, &pk, &w, i as u64, 4 * 192);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn device_pce_proves_the_2kib_porep_circuit() {
    let c1 = C1Input::parse(&std::fs::read(fixture("porep/2KiB/c1.json")).unwrap()).unwrap();
    let shape = SealShape::from_sector_size("2KiB").unwrap();
    let pk = shape
        .generate_params(&mut ChaCha20Rng::seed_from_u64(2049))
        .unwrap();
    let pce = Arc::new(shape.extract_pce().unwrap());
    let t = Instant::now();
    let parts = shape.witnesses(&c1, Synthesis::Native(&pce)).unwrap();
    println!(
        "{} partitions synthesised: {:.2?}",
        parts.len(),
        t.elapsed()
    );
    for (i, part) in parts.iter().enumerate() {
        check(&pce, &pk, &part.witness, 10 + i as u64, 64 << 20);
    }
}

/// Two keys and their circuits, proved alternately, stay resident side by side (a WinningPoSt
/// between PoRep partitions must not evict the PoRep key), the proofs stay the CPU's, a
/// circuit the caller drops is freed at the next call, releasing one key keeps the other, and
/// releasing both gives the memory back.
#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn alternating_keys_and_circuits_stay_resident() {
    let jobs: Vec<_> = [Shape::random(31, 3000), Shape::random(32, 5000)]
        .into_iter()
        .enumerate()
        .map(|(i, shape)| {
            let circuit = RandomCircuit::new(shape, 900 + i as u64);
            let pce = Arc::new(Pce::extract(circuit.clone()).unwrap());
            let mut rng = ChaCha20Rng::seed_from_u64(i as u64);
            let pk = generator::generate(circuit.clone(), &mut rng).unwrap();
            let w = pce.witness(circuit).unwrap();
            let rs = Randomness::random(&mut rng);
            let want = CpuBackend
                .prove(&pk, std::slice::from_ref(&w), &[rs])
                .unwrap();
            (pk, pce, w, rs, want)
        })
        .collect();
    // A warm-up proof creates the context-lifetime state (streams, NTT twiddle tables).
    let (pk, pce, w, rs, _) = &jobs[0];
    let warm = GpuBackend::new(0).unwrap();
    warm.prove_assigned(pk, pce, &columns_of(w), rs).unwrap();
    drop(warm);
    let d = Device::open(0).unwrap();
    let start = d.free_memory().unwrap();

    let gpu = GpuBackend::new(0).unwrap();
    for round in 0..3 {
        for (pk, pce, w, rs, want) in &jobs {
            let got = gpu.prove_assigned(pk, pce, &columns_of(w), rs).unwrap();
            assert_eq!(got, want[0], "round {round}");
            assert_eq!(
                &gpu.prove(pk, std::slice::from_ref(w), &[*rs]).unwrap(),
                want
            );
        }
        assert_eq!(gpu.resident(), (2, 2), "round {round}");
    }
    let mut jobs = jobs.into_iter();
    let (pk, pce, w, rs, want) = jobs.next().unwrap();
    let (other_key, ..) = jobs.next().unwrap();
    let got = gpu.prove_assigned(&pk, &pce, &columns_of(&w), &rs).unwrap();
    assert_eq!(got, want[0]);
    assert_eq!(gpu.resident(), (2, 1), "the dropped circuit is freed");
    // Releasing one key keeps the other, and its circuit while the caller holds it.
    gpu.release(&other_key);
    assert_eq!(gpu.resident(), (1, 1));
    let got = gpu.prove_assigned(&pk, &pce, &columns_of(&w), &rs).unwrap();
    assert_eq!(got, want[0]);
    drop(pce);
    gpu.release(&pk);
    assert_eq!(gpu.resident(), (0, 0));
    assert_eq!(d.free_memory().unwrap(), start);
}
