//! End to end, SnapDeals as Curio asks for it: a fresh 2 KiB sector sealed by upstream, updated
//! with fresh random data by `empty_sector_update_encode_into`, vanilla partition proofs from
//! `generate_partition_proofs`; cuzk proves the update through the daemon (one `Prove` over the
//! real gRPC API) and through `cuzk prove snap`; upstream's `verify_empty_sector_update_proof`
//! accepts both, with parameters from upstream's own random setup.

mod common;

use std::path::Path;

use common::*;
use cuzk_daemon::client::Target;
use cuzk_proto::v1::await_proof_response::Status as AwaitStatus;
use cuzk_proto::v1::{self as pb, Priority, ProofKind};
use cuzk_upstream_tools::snap::{self as upstream, Updated};
use rand::SeedableRng;
use tonic::Code;

/// The 2 KiB update proof (FFI number).
const SNAP_2K: u64 = 0;

/// Upstream's parameters of the 2 KiB update circuit in `dir` (generated once, under a lock:
/// about 6 minutes on 2 cores).
fn ensure_snap_params(dir: &Path) {
    let _lock = lock(&dir.join("snap-2k"));
    let proof = cuzk_circuits::snap::RegisteredUpdateProof::parse(SNAP_2K).unwrap();
    let [params, ..] = proof.file_names();
    if !dir.join(&params).exists() {
        let took = upstream::paramgen(SNAP_2K, dir).unwrap();
        eprintln!("upstream paramgen {}: {took:?}", proof.circuit_id());
    }
}

fn fresh_update() -> Updated {
    let mut rng = rand::rngs::StdRng::from_entropy();
    upstream::update_fresh_sector("2KiB", &mut rng).unwrap()
}

fn request(u: &Updated) -> pb::SubmitProofRequest {
    pb::SubmitProofRequest {
        proof_kind: ProofKind::SnapDealsUpdate as i32,
        registered_proof: u.registered_proof,
        priority: Priority::Normal as i32,
        vanilla_proofs: u.partition_proofs.clone(),
        comm_r_old: u.comm_r_old.to_vec(),
        comm_r_new: u.comm_r_new.to_vec(),
        comm_d_new: u.comm_d_new.to_vec(),
        ..Default::default()
    }
}

fn verdict(u: &Updated, proof: &[u8]) -> bool {
    upstream::verify(
        u.registered_proof,
        proof,
        u.comm_r_old,
        u.comm_r_new,
        u.comm_d_new,
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snap_update_through_the_daemon_verifies_upstream() {
    let params = params_dir();
    ensure_snap_params(&params);
    let u = fresh_update();
    let tmp = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(tmp.path(), &[], &[]);
    let target = Target {
        addr: daemon.addr(),
        ..Default::default()
    };
    let r = prove_rpc(&target, request(&u)).await.unwrap();
    assert_eq!(r.status, AwaitStatus::Completed as i32, "{r:?}");
    assert_eq!(r.proof.len(), 192);
    assert!(
        verdict(&u, &r.proof),
        "upstream verify_empty_sector_update_proof"
    );
    let other = fresh_update();
    assert!(
        !verdict(&other, &r.proof),
        "another update's commitments must not verify"
    );

    // Refusals name the field, and the daemon keeps serving.
    let good = request(&u);
    let mut short = good.clone();
    short.comm_d_new.pop();
    let mut wrong_type = good.clone();
    wrong_type.registered_proof = 1;
    let mut other_comm = good.clone();
    other_comm.comm_r_new = other.comm_r_new.to_vec();
    let mut garbage = good.clone();
    garbage.vanilla_proofs[0].truncate(100);
    for (req, names) in [
        (short, "comm_d_new"),
        (wrong_type, "vanilla_proofs"),
        (
            other_comm,
            "vanilla_proofs[0].challenge_proofs[0].proof_r_new",
        ),
        (garbage, "vanilla_proofs[0]"),
    ] {
        let e = prove_rpc(&target, req).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains(names), "{names}: {}", e.message());
    }
    let again = prove_rpc(&target, good).await.unwrap();
    assert!(verdict(&u, &again.proof));

    // `cuzk random-snap` writes a well-formed update that proves (and self-verifies) under the
    // same key: what `cuzk bench --snap` sends.
    let random = tmp.path().join("random.bin");
    let o = cuzk(&[
        "random-snap",
        "--registered-proof",
        "0",
        "--out",
        random.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let req = cuzk_circuits::snap::SnapRequest::decode(&std::fs::read(random).unwrap()).unwrap();
    let r = prove_rpc(&target, cuzk_daemon::bench::snap(req))
        .await
        .unwrap();
    assert_eq!(r.status, AwaitStatus::Completed as i32, "{r:?}");
}

/// `cuzk prove snap` from the partition files, through the in-process engine; upstream
/// verifies the result.
#[test]
fn cli_proves_snap_update_and_upstream_verifies() {
    let params = params_dir();
    ensure_snap_params(&params);
    let u = fresh_update();
    let tmp = tempfile::tempdir().unwrap();
    let hex = |b: &[u8; 32]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let mut args = vec![
        "prove".to_string(),
        "snap".into(),
        "--registered-proof".into(),
        u.registered_proof.to_string(),
        "--comm-r-old".into(),
        hex(&u.comm_r_old),
        "--comm-r-new".into(),
        hex(&u.comm_r_new),
        "--comm-d-new".into(),
        hex(&u.comm_d_new),
        "--params".into(),
        params.display().to_string(),
    ];
    for (k, p) in u.partition_proofs.iter().enumerate() {
        let f = tmp.path().join(format!("partition-{k}.bin"));
        std::fs::write(&f, p).unwrap();
        args.extend(["--vanilla".into(), f.display().to_string()]);
    }
    let proof = cli_prove(args, &tmp.path().join("snap.proof"), "snap-update");
    assert!(verdict(&u, &proof));
}
