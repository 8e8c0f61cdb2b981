//! The 2 KiB WindowPoSt and WinningPoSt circuits on the GPU, from the bundled upstream vanilla
//! proofs: the same proof bytes as the CPU reference, through `prove` (witness from the host)
//! and `prove_assigned` (columns, PCE on the device), and the proofs verify. Needs a GPU; run
//! by tools/gpu-tests.sh (docs/GPU.md).

mod common;

use common::fixture;
use cuzk_circuits::{CircuitShape, PostPartition, PostRequest, PostShape, Synthesis};
use cuzk_gpu::GpuBackend;
use cuzk_groth16::backend::{Backend, CpuBackend, Randomness};
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_pce::PceBackend;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

#[derive(serde::Deserialize)]
struct Fixture {
    randomness: [u8; 32],
    miner_id: u64,
}

fn request(id: u64, files: &[&str]) -> PostRequest {
    let read = |name: &str| std::fs::read(fixture(&format!("post/2KiB/{name}"))).unwrap();
    let f: Fixture = serde_json::from_slice(&read("post.json")).unwrap();
    PostRequest {
        registered_proof: id,
        randomness: f.randomness.to_vec(),
        miner_id: f.miner_id,
        partition_index: 0,
        vanilla_proofs: files.iter().map(|n| read(n)).collect(),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn post_2kib_proofs_equal_the_cpu_reference_on_every_gpu() {
    let mut rng = ChaCha20Rng::seed_from_u64(2049);
    for (id, files) in [
        (10, &["window-0.bin", "window-1.bin"][..]),
        (0, &["winning.bin"][..]),
    ] {
        let p = PostPartition::new(&request(id, files)).unwrap();
        let shape: &PostShape = p.shape();
        let pk = shape.generate_params(&mut rng).unwrap();
        let pce = std::sync::Arc::new(shape.extract_pce().unwrap());
        let w = p.witness(Synthesis::Native(&pce)).unwrap();
        let rs = [Randomness::random(&mut rng)];
        let want = CpuBackend
            .prove(&pk, std::slice::from_ref(&w.witness), &rs)
            .unwrap();
        let pvk = PreparedVerifyingKey::new(&pk.vk);
        assert!(verify_proof(&pvk, &want[0], p.public_inputs()).unwrap());
        let cols = p.columns().unwrap();
        for ordinal in 0..cuzk_gpu::count().unwrap() {
            let gpu = GpuBackend::new(ordinal).unwrap();
            let got = gpu
                .prove(&pk, std::slice::from_ref(&w.witness), &rs)
                .unwrap();
            assert_eq!(got, want, "proof type {id}, GPU {ordinal}, prove");
            let got = gpu
                .prove_assigned(&pk, &pce, &cols.input, &cols.aux, &rs[0])
                .unwrap();
            assert_eq!(
                vec![got],
                want,
                "proof type {id}, GPU {ordinal}, prove_assigned"
            );
        }
    }
}
