//! The upstream side of cuzk's benchmarks: bellperson's parameter generation and
//! filecoin-proofs' `seal_commit_phase2`, timed the same way `cuzk` times itself.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use filecoin_proofs::constants::{DefaultPieceHasher, SectorShape2KiB, SectorShape8MiB};
use filecoin_proofs_api::seal::{seal_commit_phase2, SealCommitPhase1Output};
use filecoin_proofs_api::{RegisteredSealProof, SectorId};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::VERSION;
use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};

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

fn proof_type(size: &str) -> Result<RegisteredSealProof> {
    Ok(match size {
        "2KiB" => RegisteredSealProof::StackedDrg2KiBV1_1,
        "8MiB" => RegisteredSealProof::StackedDrg8MiBV1_1,
        other => anyhow::bail!("unsupported size {other}"),
    })
}

fn paramgen<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
    out: &std::path::Path,
) -> Result<()> {
    let config = proof.as_v1_config();
    let setup = compound_proof::SetupParams {
        vanilla_params: filecoin_proofs::parameters::setup_params(&config)?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    let pp = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::setup(&setup)?;
    let blank = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::blank_circuit(&pp.vanilla_params);
    let t = Instant::now();
    let params = bellperson::groth16::generate_random_parameters::<blstrs::Bls12, _, _>(
        blank,
        &mut rand::rngs::OsRng,
    )?;
    let gen_ms = t.elapsed().as_millis();
    std::fs::create_dir_all(out)?;
    let id = proof.circuit_identifier()?;
    let path = out.join(format!("v{VERSION}-{id}.params"));
    params.write(std::io::BufWriter::new(std::fs::File::create(&path)?))?;
    let mut vk = std::io::BufWriter::new(std::fs::File::create(
        out.join(format!("v{VERSION}-{id}.vk")),
    )?);
    params.vk.write(&mut vk)?;
    println!(
        "upstream paramgen sector_size={} generate_ms={gen_ms} file={}",
        config.sector_size.0,
        path.display()
    );
    Ok(())
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Paramgen { sector_size, out } => {
            let proof = proof_type(&sector_size)?;
            match sector_size.as_str() {
                "2KiB" => paramgen::<SectorShape2KiB>(proof, &out),
                _ => paramgen::<SectorShape8MiB>(proof, &out),
            }
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
