//! The 2 KiB WindowPoSt and WinningPoSt circuits on the GPU, from the bundled upstream vanilla
//! proofs: the same proof bytes as the CPU reference, through `prove` (witness from the host)
//! and `prove_assigned` (columns, PCE on the device), and the proofs verify. Needs a GPU; run
//! by tools/gpu-tests.sh (docs/GPU.md).

mod common;

use common::{fixture, gpu_proofs_equal_the_cpu_reference};
use cuzk_circuits::{PostPartition, PostRequest, Synthesis};

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
    for (id, files) in [
        (10, &["window-0.bin", "window-1.bin"][..]),
        (0, &["winning.bin"][..]),
    ] {
        let p = PostPartition::new(&request(id, files)).unwrap();
        gpu_proofs_equal_the_cpu_reference(
            p.shape(),
            |pce| p.witness(Synthesis::Native(pce)).unwrap(),
            p.columns().unwrap(),
            2049 + id,
        );
    }
}
