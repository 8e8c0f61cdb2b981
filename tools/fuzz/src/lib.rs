//! One harness per untrusted input cuzk parses. Each takes arbitrary bytes and must return
//! without panicking, whatever they are; where a parse succeeds it also exercises what a caller
//! would do next. The cargo-fuzz targets in `fuzz/` call these, and `tests/replay.rs` runs every
//! saved corpus and regression input through them in CI.

use std::io::Write;

use cuzk_circuits::{C1Input, SealShape, SectorIds};
use cuzk_engine::kind::{PostKind, Registry, SnapKind};
use cuzk_groth16::params::{ProvingKey, Validation, VerifyingKey};
use cuzk_pce::Pce;
use cuzk_proto::v1 as pb;
use prost::Message;

/// A harness: arbitrary bytes in, nothing out, never a panic.
pub type Harness = fn(&[u8]);

/// The harnesses by name (the fuzz target names and the corpus folder names).
pub const TARGETS: [(&str, Harness); 8] = [
    ("c1", c1),
    ("params", params),
    ("pce", pce),
    ("request", request),
    ("post_vanilla", post_vanilla),
    ("post_request", post_request),
    ("snap_vanilla", snap_vanilla),
    ("snap_request", snap_request),
];

/// One bincode `PartitionProof`: what reads writes back byte for byte (the reader is exact),
/// and is checked as the one partition of a 2 KiB update.
pub fn snap_vanilla(data: &[u8]) {
    let Ok(proof) = cuzk_circuits::snap::PartitionProof::parse(data) else {
        return;
    };
    assert_eq!(proof.to_bytes(), data, "the reader is exact");
    let _ = cuzk_circuits::snap::SnapUpdate::new(&cuzk_circuits::snap::SnapRequest {
        registered_proof: 0,
        comm_r_old: vec![1; 32],
        comm_r_new: vec![2; 32],
        comm_d_new: vec![3; 32],
        vanilla_proofs: vec![data.to_vec()],
    });
}

/// An engine payload of the SnapDeals kind (`SnapRequest::encode`'s format), planned.
pub fn snap_request(data: &[u8]) {
    let _ = registry()
        .get(SnapKind::NAME)
        .expect("registered")
        .plan(data);
}

/// One bincode `FallbackPoStSectorProof`: what reads writes back byte for byte (the reader is
/// exact), and is checked as the one sector of a WindowPoSt and of a WinningPoSt.
pub fn post_vanilla(data: &[u8]) {
    let Ok(proof) = cuzk_circuits::post::SectorProof::parse(data) else {
        return;
    };
    assert_eq!(proof.to_bytes(), data, "the reader is exact");
    for registered_proof in [0, 10] {
        let _ = cuzk_circuits::PostPartition::new(&cuzk_circuits::PostRequest {
            registered_proof,
            randomness: vec![1; 32],
            miner_id: 1000,
            partition_index: 0,
            vanilla_proofs: vec![data.to_vec()],
        });
    }
}

/// An engine payload of the PoSt kinds (`PostRequest::encode`'s format), planned by both.
pub fn post_request(data: &[u8]) {
    let registry = registry();
    for kind in [PostKind::WINDOW, PostKind::WINNING] {
        let _ = registry.get(kind).expect("registered").plan(data);
    }
}

/// Every kind the daemon serves, without parameters (planning needs none).
fn registry() -> Registry {
    Registry::filecoin(&std::env::temp_dir().join("cuzk-fuzz-params"), false, true)
}

/// A C1 output (raw or in Curio's envelope): parse, check against its proof type, build every
/// partition's circuit and public inputs.
pub fn c1(data: &[u8]) {
    let Ok(c1) = C1Input::parse(data) else { return };
    let Ok(shape) = SealShape::new(c1.registered_proof) else {
        return;
    };
    if shape.check(&c1).is_err() {
        return;
    }
    for k in 0..shape.partitions() {
        shape.partition_circuit(&c1, k).expect("checked C1 builds");
        shape
            .public_inputs(&SectorIds::of(&c1), k)
            .expect("checked C1 has public inputs");
    }
}

/// A `.params` or `.vk` file: the layout check, then every section decoded with full checks.
pub fn params(data: &[u8]) {
    let _ = VerifyingKey::from_bytes(data);
    let Ok(pk) = ProvingKey::from_bytes(data.to_vec(), Validation::Full) else {
        return;
    };
    let _ = (pk.h(), pk.l(), pk.a(), pk.b_g1(), pk.b_g2());
}

/// A PCE file image, with its checksum recomputed so the structural checks behind it are
/// reached; a file that loads is evaluated on an all-ones witness when small.
pub fn pce(data: &[u8]) {
    let mut image = data.to_vec();
    cuzk_pce::file::restamp(&mut image);
    let mut file = tempfile::NamedTempFile::new().expect("temporary file");
    file.write_all(&image).expect("write temporary file");
    let Ok((pce, _)) = Pce::load(file.path(), None) else {
        return;
    };
    if pce.num_inputs + pce.num_aux <= 1 << 16 && pce.num_constraints() <= 1 << 16 {
        let one = blstrs::Scalar::from(1u64);
        let _ = pce.evaluate(vec![one; pce.num_inputs], vec![one; pce.num_aux]);
    }
}

/// A gRPC `SubmitProofRequest` as it arrives off the wire: decode, the daemon's field checks,
/// the kind's payload checks (PoRep C2, WindowPoSt, WinningPoSt, SnapDeals). Job and circuit ids get the same treatment as strings.
pub fn request(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = cuzk_daemon::service::parse_job_id(&text);
    let _ = cuzk_daemon::service::parse_circuit_id(&text);
    let Ok(req) = pb::SubmitProofRequest::decode(data) else {
        return;
    };
    let Ok(request) = cuzk_daemon::service::check_submit(req) else {
        return;
    };
    let registry = registry();
    let _ = registry
        .get(&request.kind)
        .expect("check_submit names a served kind")
        .plan(&request.payload);
}
