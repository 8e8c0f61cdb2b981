//! The 2 KiB SnapDeals update circuit on the GPU, from the bundled upstream partition proof:
//! the same proof bytes as the CPU reference, through `prove` (witness from the host) and
//! `prove_assigned` (columns, PCE on the device), and the proof verifies. Needs a GPU; run by
//! tools/gpu-tests.sh (docs/GPU.md).

mod common;

use common::{fixture, gpu_proofs_equal_the_cpu_reference};
use cuzk_circuits::snap::{SnapRequest, SnapUpdate};
use cuzk_circuits::Synthesis;

#[derive(serde::Deserialize)]
struct Fixture {
    registered_proof: u64,
    comm_r_old: [u8; 32],
    comm_r_new: [u8; 32],
    comm_d_new: [u8; 32],
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn snap_2kib_proofs_equal_the_cpu_reference_on_every_gpu() {
    let read = |name: &str| std::fs::read(fixture(&format!("snap/2KiB/{name}"))).unwrap();
    let f: Fixture = serde_json::from_slice(&read("snap.json")).unwrap();
    let update = SnapUpdate::new(&SnapRequest {
        registered_proof: f.registered_proof,
        comm_r_old: f.comm_r_old.to_vec(),
        comm_r_new: f.comm_r_new.to_vec(),
        comm_d_new: f.comm_d_new.to_vec(),
        vanilla_proofs: vec![read("partition-0.bin")],
    })
    .unwrap();
    gpu_proofs_equal_the_cpu_reference(
        update.shape(),
        |pce| update.witness(0, Synthesis::Native(pce)).unwrap(),
        update.columns(0).unwrap(),
        2050,
    );
}
