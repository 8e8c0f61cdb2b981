//! Writes the seed inputs of every fuzz target under `fuzz/corpus/<target>/`: the bundled C1
//! fixtures (raw and in Curio's envelope), a small proving key and verifying key, a small PCE
//! file, and SubmitProof requests (valid and with wrong fields).
//!
//! `cargo run -p cuzk-fuzz --example seeds`

use std::path::Path;

use cuzk_circuits::C1Input;
use cuzk_groth16::conformance::{standard_shapes, RandomCircuit};
use cuzk_pce::Pce;
use cuzk_proto::v1 as pb;
use prost::Message;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let corpus = root.join("fuzz/corpus");
    let put = |target: &str, name: &str, bytes: &[u8]| {
        let dir = corpus.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    let c1 = std::fs::read(root.join("fixtures/porep/2KiB/c1.json")).unwrap();
    put("c1", "2KiB.json", &c1);
    put("c1", "2KiB-envelope.json", &C1Input::envelope(&c1, 7, 2048));

    let circuit = RandomCircuit::new(standard_shapes()[0], 1);
    let pk = cuzk_groth16::generator::generate(circuit.clone(), &mut rand_core::OsRng).unwrap();
    let mut params = Vec::new();
    pk.write_to(&mut params).unwrap();
    put("params", "tiny.params", &params);
    put("params", "tiny.vk", &pk.vk.to_bytes());

    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tiny.pce");
    Pce::extract(circuit).unwrap().write(&path, "tiny").unwrap();
    put("pce", "tiny.pce", &std::fs::read(&path).unwrap());

    let request = |sector_size, registered_proof, priority| pb::SubmitProofRequest {
        request_id: "seed".into(),
        proof_kind: pb::ProofKind::PorepSealCommit as i32,
        sector_size,
        registered_proof,
        priority,
        vanilla_proof: c1.clone(),
        ..Default::default()
    };
    put("request", "valid.bin", &request(2048, 5, 2).encode_to_vec());
    put("request", "bare.bin", &request(0, 0, 0).encode_to_vec());
    put(
        "request",
        "wrong-size.bin",
        &request(4096, 5, 1).encode_to_vec(),
    );
    put(
        "request",
        "wrong-proof.bin",
        &request(2048, 8, 3).encode_to_vec(),
    );

    // PoSt: the bundled upstream vanilla proofs, as engine payloads and as SubmitProof requests.
    let post = root.join("fixtures/post/2KiB");
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(post.join("post.json")).unwrap()).unwrap();
    let randomness: Vec<u8> = serde_json::from_value(info["randomness"].clone()).unwrap();
    let miner_id = info["miner_id"].as_u64().unwrap();
    let window: Vec<Vec<u8>> = (0..2)
        .map(|i| std::fs::read(post.join(format!("window-{i}.bin"))).unwrap())
        .collect();
    let winning = std::fs::read(post.join("winning.bin")).unwrap();
    put("post_vanilla", "window-0.bin", &window[0]);
    put("post_vanilla", "winning.bin", &winning);
    let payload = |registered_proof, vanilla_proofs: Vec<Vec<u8>>| cuzk_circuits::PostRequest {
        registered_proof,
        randomness: randomness.clone(),
        miner_id,
        partition_index: 0,
        vanilla_proofs,
    };
    put(
        "post_request",
        "window.bin",
        &payload(10, window.clone()).encode(),
    );
    put(
        "post_request",
        "winning.bin",
        &payload(0, vec![winning.clone()]).encode(),
    );
    let post_request = |kind: pb::ProofKind, registered_proof, randomness: Vec<u8>, vanilla| {
        pb::SubmitProofRequest {
            request_id: "seed".into(),
            proof_kind: kind as i32,
            registered_proof,
            vanilla_proofs: vanilla,
            randomness,
            miner_id,
            ..Default::default()
        }
        .encode_to_vec()
    };
    use pb::ProofKind::{WindowPostPartition, WinningPost};
    put(
        "request",
        "window.bin",
        &post_request(WindowPostPartition, 10, randomness.clone(), window.clone()),
    );
    put(
        "request",
        "winning.bin",
        &post_request(WinningPost, 0, randomness.clone(), vec![winning.clone()]),
    );
    put(
        "request",
        "window-short-randomness.bin",
        &post_request(WindowPostPartition, 10, randomness[..31].to_vec(), window),
    );
    put(
        "request",
        "winning-as-window.bin",
        &post_request(WindowPostPartition, 0, randomness, vec![winning]),
    );

    // SnapDeals: the bundled upstream partition proof, as engine payload and SubmitProof request.
    let snap = root.join("fixtures/snap/2KiB");
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(snap.join("snap.json")).unwrap()).unwrap();
    let comm = |name: &str| -> Vec<u8> { serde_json::from_value(info[name].clone()).unwrap() };
    let partition = std::fs::read(snap.join("partition-0.bin")).unwrap();
    put("snap_vanilla", "partition-0.bin", &partition);
    let update = cuzk_circuits::snap::SnapRequest {
        registered_proof: 0,
        comm_r_old: comm("comm_r_old"),
        comm_r_new: comm("comm_r_new"),
        comm_d_new: comm("comm_d_new"),
        vanilla_proofs: vec![partition],
    };
    put("snap_request", "2KiB.bin", &update.encode());
    let submit = pb::SubmitProofRequest {
        request_id: "seed".into(),
        proof_kind: pb::ProofKind::SnapDealsUpdate as i32,
        registered_proof: 0,
        vanilla_proofs: update.vanilla_proofs,
        comm_r_old: update.comm_r_old,
        comm_r_new: update.comm_r_new,
        comm_d_new: update.comm_d_new,
        ..Default::default()
    };
    put("request", "snap.bin", &submit.encode_to_vec());
}
