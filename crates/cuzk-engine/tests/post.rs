//! WindowPoSt and WinningPoSt through the engine: the bundled 2 KiB vanilla proofs (upstream's,
//! `fixtures/post/2KiB`) prove on the CPU backend with parameters from our generator, and a
//! CRITICAL WinningPoSt that arrives while a long job's partitions are queued is proved on the
//! next free device, ahead of them.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use cuzk_circuits::post::PostType;
use cuzk_circuits::{CircuitShape, PostPartition, PostRequest, PostShape, RegisteredPostProof};
use cuzk_engine::kind::PostKind;
use cuzk_engine::{Engine, EngineError, JobState, Outcome, Priority, Request, Wait};
use cuzk_groth16::params::VerifyingKey;
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::Proof;

const WINDOW: u64 = 10;
const WINNING: u64 = 0;

#[derive(serde::Deserialize)]
struct Fixture {
    randomness: [u8; 32],
    miner_id: u64,
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/post/2KiB")
}

/// The fixture's request: WindowPoSt partition 0 (sectors 0 and 1) or the WinningPoSt.
fn post_request(id: u64) -> PostRequest {
    let dir = fixture_dir();
    let f: Fixture =
        serde_json::from_slice(&std::fs::read(dir.join("post.json")).unwrap()).unwrap();
    let files: Vec<String> = if id == WINNING {
        vec!["winning.bin".into()]
    } else {
        vec!["window-0.bin".into(), "window-1.bin".into()]
    };
    PostRequest {
        registered_proof: id,
        randomness: f.randomness.to_vec(),
        miner_id: f.miner_id,
        partition_index: 0,
        vanilla_proofs: files
            .iter()
            .map(|n| std::fs::read(dir.join(n)).unwrap())
            .collect(),
    }
}

/// Our generator's 2 KiB PoSt parameters in `dir/params`, beside the synthetic circuits'.
fn paramgen(dir: &Path) {
    for id in [WINDOW, WINNING] {
        let shape = PostShape::new(RegisteredPostProof::from_id(id).unwrap());
        let pk = shape.generate_params(&mut rand::rngs::OsRng).unwrap();
        shape.write_params(&pk, &dir.join("params")).unwrap();
    }
}

fn post_engine(dir: &Path, delay_ms: u64) -> Engine {
    paramgen(dir);
    let mut cfg = config(dir, sim(delay_ms));
    let params = dir.join("params");
    cfg.registry = registry(dir)
        .with(PostKind::new(PostType::Window, &params, true))
        .with(PostKind::new(PostType::Winning, &params, true));
    Engine::start(cfg).unwrap()
}

fn submit_post(engine: &Engine, name: &str, id: u64, priority: Priority) -> cuzk_engine::JobId {
    let kind = if id == WINNING {
        PostKind::WINNING
    } else {
        PostKind::WINDOW
    };
    engine
        .submit(Request {
            request_id: name.into(),
            kind: kind.into(),
            priority,
            payload: post_request(id).encode(),
        })
        .unwrap()
}

fn proof(outcome: Outcome) -> Vec<u8> {
    match outcome {
        Outcome::Succeeded { proof, .. } => proof,
        other => panic!("expected success, got {other:?}"),
    }
}

/// The engine's proof verifies against the written key and the request's public inputs.
fn verifies(dir: &Path, id: u64, bytes: &[u8]) -> bool {
    let proof = RegisteredPostProof::from_id(id).unwrap();
    let [_, vk, _] = proof.file_names();
    let vk = VerifyingKey::read(dir.join("params").join(vk)).unwrap();
    let inputs = PostPartition::new(&post_request(id)).unwrap();
    let proof = Proof::from_bytes(bytes).unwrap();
    verify_proof(
        &PreparedVerifyingKey::new(&vk),
        &proof,
        inputs.public_inputs(),
    )
    .unwrap()
}

#[test]
fn window_and_winning_post_prove_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let engine = post_engine(dir.path(), 0);
    for (name, id) in [("w", WINDOW), ("win", WINNING)] {
        let job = submit_post(&engine, name, id, Priority::Normal);
        let bytes = proof(engine.await_job(job, Wait::Forever).unwrap());
        assert_eq!(bytes.len(), 192);
        assert!(verifies(dir.path(), id, &bytes), "{name}");
        assert!(
            !verifies(dir.path(), WINDOW + WINNING - id, &bytes),
            "{name} under the other key"
        );
    }
    // A WinningPoSt payload under the WindowPoSt kind is refused at submission.
    let err = engine
        .submit(Request {
            request_id: "mixed".into(),
            kind: PostKind::WINDOW.into(),
            priority: Priority::Normal,
            payload: post_request(WINNING).encode(),
        })
        .unwrap_err();
    assert!(matches!(err, EngineError::InvalidRequest(_)), "{err:?}");
    assert!(err.to_string().contains("registered_proof"), "{err}");
}

#[test]
fn critical_winning_post_overtakes_queued_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let engine = post_engine(dir.path(), 100);
    // A long job stands in for a 32 GiB PoRep: many partitions, one device.
    let long = submit(&engine, "long", Priority::Normal, SMALL, 20);
    wait_running(&engine, long, 1);
    let winning = submit_post(&engine, "winning", WINNING, Priority::Critical);
    proof(engine.await_job(winning, Wait::Forever).unwrap());
    match engine.job(long).unwrap().state {
        JobState::Running { done, total } => assert!(done < total - 5, "{done}/{total}"),
        other => panic!("the long job should still run, is {other:?}"),
    }
    proof(engine.await_job(long, Wait::Forever).unwrap());
}
