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
}
