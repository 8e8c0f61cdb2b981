//! Pins the wire bytes of representative `cuzk.v1` messages. The expected bytes are written
//! out by hand from FACTS.md's field numbers (tag = field << 3 | wire type), not produced by
//! prost, so a renumbered or retyped field fails here.

use cuzk_proto::v1::{
    await_proof_response, srs_status, AwaitProofResponse, GetStatusResponse, GpuStatus, Priority,
    ProofKind, ProveRequest, QueueStatus, SrsStatus, SubmitProofRequest,
};
use prost::Message;

fn submit() -> SubmitProofRequest {
    SubmitProofRequest {
        request_id: "r".into(),
        proof_kind: ProofKind::PorepSealCommit as i32,
        sector_size: 2048,
        registered_proof: 3,
        priority: Priority::Critical as i32,
        vanilla_proof: vec![0xaa],
        vanilla_proofs: vec![vec![0xbb], vec![]],
        sector_number: 7,
        miner_id: 1000,
        randomness: vec![0xcc],
        partition_index: 2,
        comm_r_old: vec![0x01],
        comm_r_new: vec![0x02],
        comm_d_new: vec![0x03],
    }
}

const SUBMIT_BYTES: &[u8] = &[
    0x0a, 0x01, b'r', // 1 request_id
    0x10, 0x01, // 2 proof_kind = POREP_SEAL_COMMIT
    0x18, 0x80, 0x10, // 3 sector_size = 2048
    0x20, 0x03, // 4 registered_proof
    0x28, 0x04, // 5 priority = CRITICAL
    0x52, 0x01, 0xaa, // 10 vanilla_proof
    0x5a, 0x01, 0xbb, 0x5a, 0x00, // 11 vanilla_proofs (two)
    0xa0, 0x01, 0x07, // 20 sector_number
    0xa8, 0x01, 0xe8, 0x07, // 21 miner_id = 1000
    0xb2, 0x01, 0x01, 0xcc, // 22 randomness
    0xb8, 0x01, 0x02, // 23 partition_index
    0xf2, 0x01, 0x01, 0x01, // 30 comm_r_old
    0xfa, 0x01, 0x01, 0x02, // 31 comm_r_new
    0x82, 0x02, 0x01, 0x03, // 32 comm_d_new
];

#[test]
fn submit_request_bytes() {
    assert_eq!(submit().encode_to_vec(), SUBMIT_BYTES);
    assert_eq!(SubmitProofRequest::decode(SUBMIT_BYTES).unwrap(), submit());
}

#[test]
fn prove_request_wraps_submit_in_field_1() {
    let bytes = ProveRequest {
        submit: Some(submit()),
    }
    .encode_to_vec();
    let mut expected = vec![0x0a, SUBMIT_BYTES.len() as u8];
    expected.extend_from_slice(SUBMIT_BYTES);
    assert_eq!(bytes, expected);
}

#[test]
fn await_response_bytes() {
    let msg = AwaitProofResponse {
        job_id: "j".into(),
        status: await_proof_response::Status::Timeout as i32,
        proof: vec![0x11, 0x22],
        error_message: "e".into(),
        queue_wait_ms: 1,
        srs_load_ms: 2,
        synthesis_ms: 3,
        gpu_compute_ms: 4,
        total_ms: 300,
    };
    let expected: &[u8] = &[
        0x0a, 0x01, b'j', // 1 job_id
        0x10, 0x04, // 2 status = TIMEOUT
        0x1a, 0x02, 0x11, 0x22, // 3 proof
        0x22, 0x01, b'e', // 4 error_message
        0x50, 0x01, // 10 queue_wait_ms
        0x58, 0x02, // 11 srs_load_ms
        0x60, 0x03, // 12 synthesis_ms
        0x68, 0x04, // 13 gpu_compute_ms
        0x70, 0xac, 0x02, // 14 total_ms = 300
    ];
    assert_eq!(msg.encode_to_vec(), expected);
}

#[test]
fn status_response_bytes() {
    let msg = GetStatusResponse {
        gpus: vec![GpuStatus {
            ordinal: 1,
            name: "g".into(),
            vram_total_bytes: 2,
            vram_free_bytes: 3,
            current_job_id: "j".into(),
            current_proof_kind: "k".into(),
        }],
        loaded_srs: vec![SrsStatus {
            circuit_id: "c".into(),
            tier: srs_status::Tier::Cold as i32,
            size_bytes: 5,
            ref_count: 6,
        }],
        queues: vec![QueueStatus {
            proof_kind: "p".into(),
            pending: 7,
            in_progress: 8,
        }],
        total_proofs_completed: 9,
        total_proofs_failed: 10,
        uptime_seconds: 11,
        pinned_memory_bytes: 12,
        pinned_memory_limit_bytes: 13,
    };
    let expected: &[u8] = &[
        0x0a, 0x0f, // 1 gpus
        0x08, 0x01, 0x12, 0x01, b'g', 0x18, 0x02, 0x20, 0x03, 0x2a, 0x01, b'j', 0x32, 0x01,
        b'k', //
        0x12, 0x09, // 2 loaded_srs
        0x0a, 0x01, b'c', 0x10, 0x02, 0x18, 0x05, 0x20, 0x06, //
        0x1a, 0x07, // 3 queues
        0x0a, 0x01, b'p', 0x10, 0x07, 0x18, 0x08, //
        0x20, 0x09, 0x28, 0x0a, 0x30, 0x0b, 0x38, 0x0c, 0x40, 0x0d,
    ];
    assert_eq!(msg.encode_to_vec(), expected);
}

#[test]
fn default_enums_are_zero_and_unspecified() {
    assert_eq!(ProofKind::default() as i32, 0);
    assert_eq!(Priority::default() as i32, 0);
    assert_eq!(srs_status::Tier::Hot as i32, 0);
    assert_eq!(await_proof_response::Status::Unknown as i32, 0);
    // An empty message is empty on the wire.
    assert!(SubmitProofRequest::default().encode_to_vec().is_empty());
}
