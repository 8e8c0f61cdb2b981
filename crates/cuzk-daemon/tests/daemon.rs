//! End to end through `cuzk daemon` over a unix socket (and TCP with a token): Curio's `Prove`
//! of a 2 KiB PoRep C2 checked by upstream `verify_seal`, concurrent and duplicate clients,
//! cancellation, garbage / truncated / oversized requests, auth, metrics, and restarts (SIGTERM
//! drain and SIGKILL) with jobs in flight.

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::*;
use cuzk_circuits::C1Input;
use cuzk_daemon::client::{Client, Target};
use cuzk_proto::v1::await_proof_response::Status as AwaitStatus;
use cuzk_proto::v1::{self as pb, Priority, ProofKind};
use tonic::Code;

fn c1() -> Vec<u8> {
    std::fs::read(fixture("2KiB").join("c1.json")).unwrap()
}

fn request(id: &str, payload: Vec<u8>) -> pb::SubmitProofRequest {
    pb::SubmitProofRequest {
        request_id: id.into(),
        proof_kind: ProofKind::PorepSealCommit as i32,
        sector_size: 2048,
        priority: Priority::Normal as i32,
        vanilla_proof: payload,
        ..Default::default()
    }
}

async fn connect(d: &Daemon) -> Client {
    Target {
        addr: d.addr(),
        ..Default::default()
    }
    .connect()
    .await
    .unwrap()
}

async fn prove(mut c: Client, req: pb::SubmitProofRequest) -> pb::AwaitProofResponse {
    c.prove(pb::ProveRequest { submit: Some(req) })
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap()
}

async fn await_job(c: &mut Client, job_id: &str) -> pb::AwaitProofResponse {
    c.await_proof(pb::AwaitProofRequest {
        job_id: job_id.into(),
        timeout_ms: 0,
    })
    .await
    .unwrap()
    .into_inner()
}

fn assert_verifies(r: &pb::AwaitProofResponse) {
    assert_eq!(r.status, AwaitStatus::Completed as i32, "{r:?}");
    assert_eq!(upstream_verdict("2KiB", &r.proof), Ok(true));
}

async fn status(c: &mut Client) -> pb::GetStatusResponse {
    c.get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner()
}

/// Waits until the daemon reports a job in progress.
async fn until_running(c: &mut Client) {
    for _ in 0..600 {
        if status(c).await.queues.iter().any(|q| q.in_progress > 0) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no job started");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curio_prove_concurrent_and_duplicate_clients_verify_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let metrics = format!("127.0.0.1:{port}");
    let d = Daemon::start(dir.path(), &["--metrics-listen", &metrics], &[]);
    let mode = std::fs::metadata(&d.socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the socket is private by default");

    let envelope = C1Input::envelope(&c1(), 7, 2048);
    let (a, b, dup) = tokio::join!(
        prove(connect(&d).await, request("curio-a", envelope.clone())),
        prove(connect(&d).await, request("curio-b", c1())),
        prove(connect(&d).await, request("curio-a", envelope)),
    );
    assert_verifies(&a);
    assert_verifies(&b);
    // The same request id is the same job: same id, same proof, proved once.
    assert_eq!(
        (dup.job_id.as_str(), &dup.proof),
        (a.job_id.as_str(), &a.proof)
    );
    assert_ne!(a.job_id, b.job_id);
    assert!(a.total_ms >= a.synthesis_ms && a.gpu_compute_ms > 0);

    let mut c = connect(&d).await;
    let s = status(&mut c).await;
    assert_eq!((s.total_proofs_completed, s.total_proofs_failed), (2, 0));
    assert!(s.loaded_srs.iter().any(|c| c.circuit_id == "porep-2k"));
    let text = c
        .get_metrics(pb::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .prometheus_text;
    assert!(text.contains("cuzk_jobs_succeeded_total 2"), "{text}");
    let http = http_get(&metrics, "/metrics");
    assert!(http.starts_with("HTTP/1.1 200"), "{http}");
    for needle in [
        "cuzk_jobs_succeeded_total 2",
        "cuzk_job_stage_seconds_count{stage=\"total\"} 2",
        "cuzk_rpc_requests_total{method=\"Prove\",code=\"Ok\"} 3",
        "cuzk_backend_busy_ratio",
    ] {
        assert!(http.contains(needle), "missing {needle}: {http}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_and_bad_requests_leave_the_daemon_serving() {
    let dir = tempfile::tempdir().unwrap();
    let limit = c1().len() + 4096;
    let d = Daemon::start(
        dir.path(),
        &["--max-message-bytes", &limit.to_string()],
        &[("CUZK_ENGINE_LOOKAHEAD", "0")],
    );
    let mut c = connect(&d).await;

    // One job runs, the next waits: cancel both.
    let submit = |id: &str| request(id, c1());
    let running = c.submit_proof(submit("run")).await.unwrap().into_inner();
    until_running(&mut c).await;
    let queued = c.submit_proof(submit("queued")).await.unwrap().into_inner();
    assert!(queued.queue_position <= 1);
    let cancel = |id: &str| pb::CancelProofRequest { job_id: id.into() };
    let was = c
        .cancel_proof(cancel(&queued.job_id))
        .await
        .unwrap()
        .into_inner();
    assert!(!was.was_running);
    let was = c
        .cancel_proof(cancel(&running.job_id))
        .await
        .unwrap()
        .into_inner();
    assert!(was.was_running);
    for job in [&queued.job_id, &running.job_id] {
        assert_eq!(
            await_job(&mut c, job).await.status,
            AwaitStatus::Cancelled as i32
        );
    }
    let again = c.cancel_proof(cancel(&running.job_id)).await.unwrap_err();
    assert_eq!(again.code(), Code::FailedPrecondition);

    // Bad requests: a typed status naming the field, and the daemon carries on.
    let truncated = c1()[..c1().len() / 2].to_vec();
    let mut no_kind = submit("k");
    no_kind.proof_kind = 0;
    // A C1 output sent as a SnapDeals update: it takes vanilla_proofs.
    let mut snap = submit("u");
    snap.proof_kind = ProofKind::SnapDealsUpdate as i32;
    // A C1 output sent as a WindowPoSt: PoSt takes vanilla_proofs.
    let mut post = submit("p");
    post.proof_kind = ProofKind::WindowPostPartition as i32;
    let mut prio = submit("q");
    prio.priority = 9;
    let mut size = submit("s");
    size.sector_size = 32 << 30;
    let mut proof = submit("r");
    proof.registered_proof = 8; // StackedDrg32GiBV1_1
                                // Another seed challenges other nodes than the vanilla proofs open: refused at submission.
    let mut reseeded: serde_json::Value = serde_json::from_slice(&c1()).unwrap();
    reseeded["seed"][0] = (reseeded["seed"][0].as_u64().unwrap() ^ 1).into();
    let cases = [
        (
            request("g", b"\x00garbage".to_vec()),
            Code::InvalidArgument,
            "vanilla_proof",
        ),
        (
            request("t", truncated),
            Code::InvalidArgument,
            "vanilla_proof",
        ),
        (request("e", vec![]), Code::InvalidArgument, "vanilla_proof"),
        (no_kind, Code::InvalidArgument, "proof_kind"),
        (snap, Code::InvalidArgument, "vanilla_proof"),
        (post, Code::InvalidArgument, "vanilla_proof"),
        (prio, Code::InvalidArgument, "priority"),
        (size, Code::InvalidArgument, "sector_size"),
        (proof, Code::InvalidArgument, "registered_proof"),
        (
            request("seed", serde_json::to_vec(&reseeded).unwrap()),
            Code::InvalidArgument,
            "vanilla_proof",
        ),
    ];
    for (req, code, field) in cases {
        let e = c.submit_proof(req).await.unwrap_err();
        assert_eq!(e.code(), code, "{e:?}");
        assert!(e.message().starts_with(field), "{e:?}");
    }
    let e = c
        .submit_proof(request("big", vec![b' '; limit + 1]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::OutOfRange, "{e:?}");
    for (job, code) in [("job-999", Code::NotFound), ("../x", Code::InvalidArgument)] {
        let e = c
            .await_proof(pb::AwaitProofRequest {
                job_id: job.into(),
                timeout_ms: 1,
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), code, "{e:?}");
    }
    let e = c
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "../../etc/passwd".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);

    // Bytes that are not HTTP/2 at all: the connection is dropped, nothing else.
    let mut raw = std::os::unix::net::UnixStream::connect(&d.socket).unwrap();
    raw.write_all(b"GET / HTTP/1.0\r\n\r\n\x00\xff\xfe garbage")
        .unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = raw.read(&mut [0u8; 64]);
    drop(raw);

    let s = status(&mut connect(&d).await).await;
    assert_eq!(s.total_proofs_failed, 0);
    assert!(!d.log_text().contains("panicked"), "{}", d.log_text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_with_jobs_in_flight_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("CUZK_ENGINE_LOOKAHEAD", "0")];

    // SIGTERM while one job runs and one waits: the running partition finishes, the daemon
    // exits cleanly, and the waiting job is still there after the restart.
    let d = Daemon::start(dir.path(), &[], &env);
    let mut c = connect(&d).await;
    let first = c
        .submit_proof(request("first", c1()))
        .await
        .unwrap()
        .into_inner();
    until_running(&mut c).await;
    let second = c
        .submit_proof(request("second", c1()))
        .await
        .unwrap()
        .into_inner();
    let exit = d.terminate();
    assert!(exit.success(), "daemon exit {exit}");

    let d = Daemon::start(dir.path(), &[], &env);
    let mut c = connect(&d).await;
    assert_verifies(&await_job(&mut c, &first.job_id).await);
    assert_verifies(&await_job(&mut c, &second.job_id).await);
    // Resubmitting an accepted request id names the same job.
    let again = c
        .submit_proof(request("second", c1()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.job_id, second.job_id);

    // SIGKILL mid-proof: the accepted job is proved after the restart.
    let third = c
        .submit_proof(request("third", c1()))
        .await
        .unwrap()
        .into_inner();
    until_running(&mut c).await;
    d.kill();
    let d = Daemon::start(dir.path(), &[], &env);
    let mut c = connect(&d).await;
    assert_verifies(&await_job(&mut c, &third.job_id).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_needs_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let bin = env!("CARGO_BIN_EXE_cuzk");

    // No token and no TLS: refused at start, naming the key.
    let out = std::process::Command::new(bin)
        .args(["daemon", "--listen", &addr, "--store"])
        .arg(dir.path().join("store"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("auth.token_file"), "{err}");

    let token = "s3cret-token-0123456789";
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, token).unwrap();
    let d = Daemon::start(
        dir.path(),
        &["--listen", &addr],
        &[
            ("CUZK_AUTH_TOKEN_FILE", token_file.to_str().unwrap()),
            ("RUST_LOG", "debug"),
        ],
    );
    let with = |token: Option<&str>| Target {
        addr: addr.clone(),
        token: token.map(str::to_string),
        ..Default::default()
    };
    for bad in [None, Some("wrong-token-0123456789")] {
        let e = with(bad)
            .connect()
            .await
            .unwrap()
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated);
    }
    let mut c = with(Some(token)).connect().await.unwrap();
    assert_eq!(status(&mut c).await.total_proofs_completed, 0);
    // The CLI client: refused without the token, served with it.
    let cli = |extra: &[&str]| {
        std::process::Command::new(bin)
            .args(["status", "--addr", &addr])
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = cli(&[]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("Unauthenticated"));
    let served = cli(&["--token-file", token_file.to_str().unwrap()]);
    assert!(served.status.success(), "{served:?}");
    assert!(String::from_utf8_lossy(&served.stdout).starts_with("uptime "));
    assert!(
        !d.log_text().contains(token),
        "the token must never be logged"
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn http_get(addr: &str, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_with_tls_serves_only_tls_clients() {
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let (cert_path, key_path) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.key_pair.serialize_pem()).unwrap();
    let _d = Daemon::start(
        dir.path(),
        &["--listen", &addr],
        &[
            ("CUZK_AUTH_TLS_CERT", cert_path.to_str().unwrap()),
            ("CUZK_AUTH_TLS_KEY", key_path.to_str().unwrap()),
        ],
    );
    let tls = Target {
        addr: addr.clone(),
        tls_ca: Some(cert_path),
        ..Default::default()
    };
    let mut c = tls.connect().await.unwrap();
    assert_eq!(status(&mut c).await.total_proofs_failed, 0);
    // A plaintext client gets nowhere.
    let plain = Target {
        addr,
        ..Default::default()
    };
    let refused = match plain.connect().await {
        Err(_) => true,
        Ok(mut c) => c.get_status(pb::GetStatusRequest {}).await.is_err(),
    };
    assert!(refused);
}

/// `cuzk prove porep` with bad `args`: it stops before reading anything, with an error that
/// contains `names`.
fn prove_refused(args: &[&str], names: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["prove", "porep"])
        .args(args)
        .arg("--c1")
        .arg(dir.path().join("c1.json"))
        .arg("--params")
        .arg(dir.path())
        .arg("--out")
        .arg(dir.path().join("proof"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(names), "{err}");
}

/// `cuzk prove porep --backend gpu` on a machine (or build) without a GPU stops with an error
/// that names the flag and the device; a GPU named for the CPU backend is refused too.
#[test]
fn proving_on_a_missing_gpu_is_a_clear_error() {
    prove_refused(&["--gpu", "1"], "--gpu 1 needs --backend gpu");
    let gpus = cuzk_gpu::count().unwrap_or(0);
    // An ordinal past the last GPU fails on any machine.
    let past = gpus.to_string();
    prove_refused(
        &["--backend", "gpu", "--gpu", &past],
        &format!("--backend gpu on GPU {gpus}"),
    );
    if gpus == 0 {
        prove_refused(&["--backend", "gpu"], "--backend gpu on GPU 0");
    }
}
