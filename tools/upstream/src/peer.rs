//! The upstream side of cuzk's benchmarks: bellperson's parameter generation and
//! filecoin-proofs' `seal_commit_phase2`, timed the same way `cuzk` times itself.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use filecoin_proofs_api::seal::{seal_commit_phase2, SealCommitPhase1Output};
use filecoin_proofs_api::SectorId;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// bellperson `generate_random_parameters` for a PoRep sector size, written where upstream
    /// looks for it.
    Paramgen {
        #[arg(long)]
        sector_size: String,
        #[arg(long)]
        out: PathBuf,
    },
    /// Upstream `verify_seal` on every `*.proof` file in a folder, for one fixture's sector.
    Verify {
        #[arg(long)]
        fixture: PathBuf,
        #[arg(long)]
        params: PathBuf,
        #[arg(long)]
        proofs: PathBuf,
    },
    /// Upstream `seal_commit_phase2` on a fixture (`c1.json` + `sector.json` in one folder).
    C2 {
        #[arg(long)]
        fixture: PathBuf,
        #[arg(long)]
        params: PathBuf,
        #[arg(long, default_value_t = 1)]
        runs: usize,
    },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Paramgen { sector_size, out } => {
            let took = cuzk_upstream_tools::paramgen(&sector_size, &out)?;
            let bytes = cuzk_upstream_tools::proof_type(&sector_size)?.sector_size();
            println!(
                "upstream paramgen sector_size={} generate_ms={} dir={}",
                u64::from(bytes),
                took.as_millis(),
                out.display()
            );
            Ok(())
        }
        Command::Verify {
            fixture,
            params,
            proofs,
        } => {
            std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params);
            let info = cuzk_upstream_tools::SectorInfo::read(&fixture.join("sector.json"))?;
            let (mut good, mut bad) = (0, Vec::new());
            for entry in std::fs::read_dir(&proofs)? {
                let path = entry?.path();
                if path.extension().is_some_and(|e| e == "proof") {
                    match info.verify(&std::fs::read(&path)?) {
                        Ok(true) => good += 1,
                        verdict => bad.push(format!("{}: {verdict:?}", path.display())),
                    }
                }
            }
            println!("upstream verify_seal: {good} valid, {} not", bad.len());
            anyhow::ensure!(bad.is_empty(), "rejected: {}", bad.join("; "));
            Ok(())
        }
        Command::C2 {
            fixture,
            params,
            runs,
        } => {
            std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params);
            let c1: SealCommitPhase1Output =
                serde_json::from_slice(&std::fs::read(fixture.join("c1.json"))?)?;
            let sector: serde_json::Value =
                serde_json::from_slice(&std::fs::read(fixture.join("sector.json"))?)?;
            let prover_id: [u8; 32] =
                serde_json::from_value(sector["prover_id"].clone()).context("prover_id")?;
            let sector_id = SectorId::from(sector["sector_id"].as_u64().context("sector_id")?);
            for run in 0..runs {
                let t = Instant::now();
                let out = seal_commit_phase2(c1.clone(), prover_id, sector_id)?;
                println!(
                    "upstream c2 run={run} sector_size={} total_ms={} proof_bytes={}",
                    u64::from(c1.registered_proof.sector_size()),
                    t.elapsed().as_millis(),
                    out.proof.len()
                );
            }
            Ok(())
        }
    }
}
