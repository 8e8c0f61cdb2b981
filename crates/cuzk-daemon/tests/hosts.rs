//! Several hosts: one client spreads jobs over two daemons by their queue depth (`GetStatus`),
//! as Curio's task scheduler spreads proofs over machines. Every job is proved exactly once,
//! by one daemon; both take work; a daemon that stops answering takes no more, and the jobs it
//! had finished are not lost to the client.

mod common;

use common::*;
use cuzk_daemon::client::{Spread, Target};
use cuzk_proto::v1::await_proof_response::Status as AwaitStatus;
use cuzk_proto::v1::{self as pb, ProofKind};

#[derive(serde::Deserialize)]
struct PostFixture {
    randomness: [u8; 32],
    miner_id: u64,
}

/// WindowPoSt partition 0 of the bundled 2 KiB vanilla proofs (about a second a proof).
fn window_request(id: &str) -> pb::SubmitProofRequest {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/post/2KiB");
    let read = |n: &str| std::fs::read(dir.join(n)).unwrap();
    let f: PostFixture = serde_json::from_slice(&read("post.json")).unwrap();
    pb::SubmitProofRequest {
        request_id: id.into(),
        proof_kind: ProofKind::WindowPostPartition as i32,
        registered_proof: WINDOW,
        vanilla_proofs: vec![read("window-0.bin"), read("window-1.bin")],
        randomness: f.randomness.to_vec(),
        miner_id: f.miner_id,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_spreads_jobs_over_two_daemons_by_queue_depth() {
    ensure_post_params(&params_dir());
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut daemons: Vec<Daemon> = dirs
        .iter()
        .map(|d| Daemon::start(d.path(), &[], &[]))
        .collect();
    let target = |d: &Daemon| Target {
        addr: d.addr(),
        ..Default::default()
    };
    let spread = Spread::new(daemons.iter().map(target).collect());
    assert_eq!(spread.depths().await, vec![Some(0), Some(0)]);

    let mut jobs = Vec::new();
    for i in 0..8 {
        jobs.push(
            spread
                .submit(window_request(&format!("job-{i}")))
                .await
                .unwrap(),
        );
    }
    let mut per_daemon = [0usize; 2];
    for (daemon, job) in &jobs {
        let r = spread.await_job(*daemon, job).await.unwrap();
        assert_eq!(r.status, AwaitStatus::Completed as i32, "{r:?}");
        assert_eq!(r.proof.len(), 192);
        per_daemon[*daemon] += 1;
    }
    // Each placement saw the jobs placed before it: the two queues stay within one job.
    assert!(per_daemon.iter().all(|&n| n >= 3), "{per_daemon:?}");
    // Each daemon proved exactly the jobs it was given, once.
    for (i, d) in daemons.iter().enumerate() {
        let status = target(d)
            .connect()
            .await
            .unwrap()
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            status.total_proofs_completed, per_daemon[i] as u64,
            "daemon {i}"
        );
    }

    // One host goes away: the next jobs go to the other.
    daemons.pop().unwrap().kill();
    assert_eq!(spread.depths().await, vec![Some(0), None]);
    for i in 8..10 {
        let (daemon, job) = spread
            .submit(window_request(&format!("job-{i}")))
            .await
            .unwrap();
        assert_eq!(daemon, 0);
        let r = spread.await_job(daemon, &job).await.unwrap();
        assert_eq!(r.status, AwaitStatus::Completed as i32, "{r:?}");
    }
}
