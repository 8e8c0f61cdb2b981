//! WindowPoSt and WinningPoSt side by side in one process, on the same vanilla proofs and the
//! same parameter files (upstream's random setup, in `--params`): upstream's
//! `generate_single_window_post_with_vanilla` / `generate_winning_post_with_vanilla` (warm:
//! its parameters stay cached after the first call) against a warm cuzk engine (CPU backend,
//! PCE and native witness; one job per proof, submit to result). Calls alternate; every raw
//! line is printed, then the medians. Every cuzk proof is verified by the engine before it
//! is returned (upstream's verifier accepting them is the daemon's end-to-end test).
//!
//! `cuzk-post-bench --params <dir> [--runs 5]` (uses `fixtures/post/2KiB`; parameters are
//! generated there by upstream when missing).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Parser;
use cuzk_circuits::PostRequest;
use cuzk_engine::kind::{PostKind, Registry};
use cuzk_engine::{Engine, EngineConfig, Outcome, Priority, Request, Wait};
use cuzk_groth16::backend::CpuBackend;
use cuzk_upstream_tools::post::{paramgen, prove_with_vanilla, prover_id};

#[derive(Parser)]
struct Args {
    #[arg(long)]
    params: PathBuf,
    #[arg(long, default_value_t = 5)]
    runs: usize,
    #[arg(long, default_value = "fixtures/post/2KiB")]
    fixture: PathBuf,
}

#[derive(serde::Deserialize)]
struct Fixture {
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

fn main() -> Result<()> {
    let args = Args::parse();
    let f: Fixture = serde_json::from_slice(&std::fs::read(args.fixture.join("post.json"))?)?;
    let read = |n: &str| std::fs::read(args.fixture.join(n));
    let window = vec![read("window-0.bin")?, read("window-1.bin")?];
    let winning = vec![read("winning.bin")?];
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &args.params);
    for id in [10, 0] {
        let [params, ..] = cuzk_circuits::RegisteredPostProof::from_id(id)
            .expect("a PoSt proof type")
            .file_names();
        if !args.params.join(params).exists() {
            println!("upstream paramgen {id}: {:?}", paramgen(id, &args.params)?);
        }
    }
    let store = tempfile::tempdir()?;
    let engine = Engine::start(EngineConfig::new(
        store.path(),
        Registry::filecoin(&args.params, true, true),
        Arc::new(CpuBackend),
    ))?;
    let prover = prover_id(f.miner_id);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("machine: {cores} cores; runs {}", args.runs);
    for (name, kind, id, vanilla) in [
        ("window-post", PostKind::WINDOW, 10, &window),
        ("winning-post", PostKind::WINNING, 0, &winning),
    ] {
        let payload = PostRequest {
            registered_proof: id,
            randomness: f.randomness.to_vec(),
            miner_id: f.miner_id,
            partition_index: 0,
            vanilla_proofs: vanilla.clone(),
        }
        .encode();
        let mut n = 0;
        let mut ours = || -> Result<(f64, Vec<u8>, String)> {
            n += 1;
            let t = Instant::now();
            let job = engine.submit(Request {
                request_id: format!("{name}-{n}"),
                kind: kind.into(),
                priority: Priority::Normal,
                payload: payload.clone(),
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
            let proof = prove_with_vanilla(id, &f.randomness, &prover, vanilla, 0)?;
            Ok((t.elapsed().as_secs_f64() * 1e3, proof))
        };
        // Warm both: parameters loaded, PCE extracted (cuzk), upstream's parameter cache.
        let (w_ours, proof, _) = ours()?;
        let (w_theirs, _) = theirs()?;
        println!("{name} warm-up: cuzk_ms={w_ours:.0} upstream_ms={w_theirs:.0}");
        assert_eq!(proof.len(), 192);
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
