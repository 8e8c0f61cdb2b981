//! WindowPoSt, WinningPoSt and SnapDeals side by side in one process, on the same vanilla
//! proofs and the same parameter files (upstream's random setup, in `--params`): upstream's
//! `generate_single_window_post_with_vanilla` / `generate_winning_post_with_vanilla` /
//! `generate_empty_sector_update_proof_with_vanilla` (warm: its parameters stay cached after
//! the first call) against a warm cuzk engine (CPU backend, PCE and native witness; one job per
//! proof, submit to result). Calls alternate; every raw line is printed, then the medians.
//! Every cuzk proof is verified by the engine before it is returned (upstream's verifier
//! accepting them is the daemon's end-to-end tests).
//!
//! `cuzk-kinds-bench --params <dir> [--runs 5] [--kinds window-post,winning-post,snap-update]`
//! (uses `fixtures/post/2KiB` and `fixtures/snap/2KiB`; parameters are generated there by
//! upstream when missing).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Parser;
use cuzk_circuits::snap::SnapRequest;
use cuzk_circuits::PostRequest;
use cuzk_engine::kind::{PostKind, Registry, SnapKind};
use cuzk_engine::{Engine, EngineConfig, Outcome, Priority, Request, Wait};
use cuzk_groth16::backend::CpuBackend;
use cuzk_upstream_tools::post::{self, prover_id};
use cuzk_upstream_tools::snap::{self, Updated};

#[derive(Parser)]
struct Args {
    #[arg(long)]
    params: PathBuf,
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// The kinds to run (engine names), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "window-post,winning-post,snap-update"
    )]
    kinds: Vec<String>,
    #[arg(long, default_value = "fixtures/post/2KiB")]
    post_fixture: PathBuf,
    /// A folder `cuzk-fixtures --snap` wrote (any size).
    #[arg(long, default_value = "fixtures/snap/2KiB")]
    snap_fixture: PathBuf,
    /// cuzk's fixed-base table memory per key in bytes (`engine.tables`); by default the
    /// daemon's, an eighth of the budget.
    #[arg(long)]
    tables: Option<u64>,
}

#[derive(serde::Deserialize)]
struct PostFixture {
    randomness: [u8; 32],
    miner_id: u64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One kind's request: the engine payload, and upstream's call on the same inputs.
struct Case {
    name: &'static str,
    payload: Vec<u8>,
    theirs: Box<dyn Fn() -> Result<Vec<u8>>>,
}

fn post_cases(args: &Args) -> Result<Vec<Case>> {
    let dir = &args.post_fixture;
    let f: PostFixture = serde_json::from_slice(&std::fs::read(dir.join("post.json"))?)?;
    let read = |n: &str| std::fs::read(dir.join(n));
    let window = vec![read("window-0.bin")?, read("window-1.bin")?];
    let winning = vec![read("winning.bin")?];
    let mut cases = Vec::new();
    for (name, id, vanilla) in [
        (PostKind::WINDOW, 10, window),
        (PostKind::WINNING, 0, winning),
    ] {
        if !args.kinds.iter().any(|k| k == name) {
            continue;
        }
        ensure_params(
            &args.params,
            &cuzk_circuits::RegisteredPostProof::from_id(id)
                .expect("PoSt")
                .file_names(),
            || post::paramgen(id, &args.params),
        )?;
        let payload = PostRequest {
            registered_proof: id,
            randomness: f.randomness.to_vec(),
            miner_id: f.miner_id,
            partition_index: 0,
            vanilla_proofs: vanilla.clone(),
        }
        .encode();
        let prover = prover_id(f.miner_id);
        let randomness = f.randomness;
        cases.push(Case {
            name,
            payload,
            theirs: Box::new(move || {
                post::prove_with_vanilla(id, &randomness, &prover, &vanilla, 0)
            }),
        });
    }
    Ok(cases)
}

fn snap_case(args: &Args) -> Result<Option<Case>> {
    if !args.kinds.iter().any(|k| k == SnapKind::NAME) {
        return Ok(None);
    }
    let u = Updated::read_fixture(&args.snap_fixture)?;
    let proof = cuzk_circuits::snap::RegisteredUpdateProof::parse(u.registered_proof)
        .map_err(anyhow::Error::msg)?;
    ensure_params(&args.params, &proof.file_names(), || {
        snap::paramgen(u.registered_proof, &args.params)
    })?;
    let payload = SnapRequest {
        registered_proof: u.registered_proof,
        comm_r_old: u.comm_r_old.to_vec(),
        comm_r_new: u.comm_r_new.to_vec(),
        comm_d_new: u.comm_d_new.to_vec(),
        vanilla_proofs: u.partition_proofs.clone(),
    }
    .encode();
    Ok(Some(Case {
        name: SnapKind::NAME,
        payload,
        theirs: Box::new(move || {
            snap::prove_with_vanilla(
                u.registered_proof,
                &u.partition_proofs,
                u.comm_r_old,
                u.comm_r_new,
                u.comm_d_new,
            )
        }),
    }))
}

/// Upstream's random setup into `dir` unless its `.params` file is there.
fn ensure_params(
    dir: &Path,
    [params, ..]: &[String; 3],
    paramgen: impl FnOnce() -> Result<std::time::Duration>,
) -> Result<()> {
    if !dir.join(params).exists() {
        println!("upstream paramgen {params}: {:?}", paramgen()?);
    }
    Ok(())
}

fn main() -> Result<()> {
    let args = Args::parse();
    // `RUST_LOG=cuzk_groth16=debug` shows cuzk's step times, `info` its key and table loads.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &args.params);
    let mut cases = post_cases(&args)?;
    cases.extend(snap_case(&args)?);
    let store = tempfile::tempdir()?;
    let mut cfg = EngineConfig::new(
        store.path(),
        Registry::filecoin(&args.params, true, true),
        Arc::new(CpuBackend),
    );
    cfg.tables_bytes = args.tables.unwrap_or(cfg.budget_bytes / 8);
    let engine = Engine::start(cfg)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("machine: {cores} cores; runs {}", args.runs);
    for case in cases {
        let name = case.name;
        let mut n = 0;
        let mut ours = || -> Result<(f64, Vec<u8>, String)> {
            n += 1;
            let t = Instant::now();
            let job = engine.submit(Request {
                request_id: format!("{name}-{n}"),
                kind: name.into(),
                priority: Priority::Normal,
                payload: case.payload.clone(),
            })?;
            match engine.await_job(job, Wait::Forever)? {
                Outcome::Succeeded { proof, timings: s } => Ok((
                    t.elapsed().as_secs_f64() * 1e3,
                    proof,
                    format!(
                        "queue_wait_ms={} synthesis_ms={} backend_ms={} total_ms={}",
                        s.queue_wait_ms, s.synthesis_ms, s.backend_ms, s.total_ms
                    ),
                )),
                other => bail!("{name}: {other:?}"),
            }
        };
        let theirs = || -> Result<(f64, Vec<u8>)> {
            let t = Instant::now();
            let proof = (case.theirs)()?;
            Ok((t.elapsed().as_secs_f64() * 1e3, proof))
        };
        // Warm both: parameters loaded, PCE extracted (cuzk), upstream's parameter cache.
        let (w_ours, proof, _) = ours()?;
        let (w_theirs, their_proof) = theirs()?;
        println!("{name} warm-up: cuzk_ms={w_ours:.0} upstream_ms={w_theirs:.0}");
        assert_eq!(proof.len(), their_proof.len(), "{name}: proof lengths");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for run in 0..args.runs {
            let (c, _, stages) = ours()?;
            let (u, _) = theirs()?;
            println!("{name} run={run} cuzk_ms={c:.1} upstream_ms={u:.1} (cuzk {stages})");
            a.push(c);
            b.push(u);
        }
        let (c, u) = (median(a), median(b));
        println!(
            "{name} median: cuzk_ms={c:.1} upstream_ms={u:.1} ratio={:.2}",
            u / c
        );
    }
    engine.shutdown();
    Ok(())
}
