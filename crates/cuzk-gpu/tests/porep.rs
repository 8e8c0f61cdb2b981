//! The 2 KiB PoRep C2 circuit on the GPU: the same proof bytes as the CPU reference, and the
//! proofs verify. Needs a GPU; run by tools/gpu-tests.sh (docs/GPU.md).

mod common;

use std::time::Instant;

use common::fixture;
use cuzk_circuits::{C1Input, SealShape, Synthesis};
use cuzk_gpu::GpuBackend;
use cuzk_groth16::backend::{Backend, CpuBackend, Randomness};
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn porep_2kib_proofs_equal_the_cpu_reference_on_every_gpu() {
    let c1 = C1Input::parse(&std::fs::read(fixture("porep/2KiB/c1.json")).unwrap()).unwrap();
    let shape = SealShape::from_sector_size("2KiB").unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(2048);
    let t = Instant::now();
    let pk = shape.generate_params(&mut rng).unwrap();
    println!("random 2 KiB setup: {:.1?}", t.elapsed());
    let parts = shape.witnesses(&c1, Synthesis::Full).unwrap();
    let witnesses: Vec<_> = parts.iter().map(|p| p.witness.clone()).collect();
    let rs: Vec<Randomness> = parts.iter().map(|_| Randomness::random(&mut rng)).collect();

    let t = Instant::now();
    let want = CpuBackend.prove(&pk, &witnesses, &rs).unwrap();
    println!(
        "CPU backend, {} partitions: {:.2?}",
        parts.len(),
        t.elapsed()
    );
    for ordinal in 0..cuzk_gpu::count().unwrap() {
        let gpu = GpuBackend::new(ordinal).unwrap();
        for round in 0..3 {
            let t = Instant::now();
            let got = gpu.prove(&pk, &witnesses, &rs).unwrap();
            println!("GPU {ordinal} round {round}: {:.2?}", t.elapsed());
            assert_eq!(got, want, "GPU {ordinal}");
        }
    }
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    for (proof, part) in want.iter().zip(&parts) {
        assert!(verify_proof(&pvk, proof, &part.public_inputs).unwrap());
    }
}
