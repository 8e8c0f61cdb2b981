//! Seals test-size sectors with upstream `filecoin-proofs-api` and writes their C1 output.
//!
//! For each sector size it writes, under `--out/<size>/`:
//! - `c1.json`: the `SealCommitPhase1Output` exactly as `serde_json` writes it (what lotus and
//!   Curio hand to C2);
//! - `sector.json`: the values C2's verifier needs beside it (prover id, sector id, ticket,
//!   seed, commitments, registered proof).
//!
//! Sealing needs no Groth16 parameters. The SDR parent cache goes to `FIL_PROOFS_PARENT_CACHE`
//! (set to `<out>/../.cache/parents` when unset, so the tool never writes to /var/tmp).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Parser;
use filecoin_proofs_api::seal::{
    add_piece, seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2,
};
use filecoin_proofs_api::{RegisteredSealProof, SectorId, UnpaddedBytesAmount};
use rand::{RngCore, SeedableRng};
use serde::Serialize;

#[derive(Parser)]
struct Args {
    /// Output folder (one subfolder per sector size).
    #[arg(long, default_value = "fixtures/porep")]
    out: PathBuf,
    /// Sector sizes to seal.
    #[arg(long, value_delimiter = ',', default_value = "2KiB,8MiB")]
    sizes: Vec<String>,
    /// Seed for the piece data, prover id, ticket and seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// What the verifier needs beside the C1 output.
#[derive(Serialize)]
struct SectorInfo {
    registered_proof: RegisteredSealProof,
    prover_id: [u8; 32],
    sector_id: u64,
    ticket: [u8; 32],
    seed: [u8; 32],
    comm_r: [u8; 32],
    comm_d: [u8; 32],
}

fn proof_type(size: &str) -> Result<RegisteredSealProof> {
    Ok(match size {
        "2KiB" => RegisteredSealProof::StackedDrg2KiBV1_1,
        "8MiB" => RegisteredSealProof::StackedDrg8MiBV1_1,
        "512MiB" => RegisteredSealProof::StackedDrg512MiBV1_1,
        other => anyhow::bail!("unsupported fixture size {other} (2KiB, 8MiB, 512MiB)"),
    })
}

/// A 32-byte value that is a valid field element (top bits cleared), as Filecoin requires of
/// prover ids and tickets.
fn fr_bytes(rng: &mut impl RngCore) -> [u8; 32] {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    b[31] &= 0x3f;
    b
}

fn seal(size: &str, out: &Path, rng: &mut impl RngCore) -> Result<()> {
    let proof = proof_type(size)?;
    let sector_size = u64::from(proof.sector_size());
    let work = tempfile::tempdir()?;
    let cache = work.path().join("cache");
    fs::create_dir_all(&cache)?;
    let staged = work.path().join("staged");
    let sealed = work.path().join("sealed");
    fs::File::create(&sealed)?;

    let unpadded = sector_size / 128 * 127;
    let mut data = vec![0u8; unpadded as usize];
    rng.fill_bytes(&mut data);
    let (piece, _) = add_piece(
        proof,
        &data[..],
        fs::File::create(&staged)?,
        UnpaddedBytesAmount(unpadded),
        &[],
    )?;
    let pieces = [piece];

    let prover_id = fr_bytes(rng);
    let ticket = fr_bytes(rng);
    let seed = fr_bytes(rng);
    let sector_id = SectorId::from(rng.next_u32() as u64);
    let pc1 = seal_pre_commit_phase1(
        proof, &cache, &staged, &sealed, prover_id, sector_id, ticket, &pieces,
    )?;
    let pc2 = seal_pre_commit_phase2(pc1, &cache, &sealed)?;
    let (comm_r, comm_d) = (pc2.comm_r, pc2.comm_d);
    let c1 = seal_commit_phase1(
        &cache, &sealed, prover_id, sector_id, ticket, seed, pc2, &pieces,
    )?;

    let dir = out.join(size);
    fs::create_dir_all(&dir)?;
    fs::File::create(dir.join("c1.json"))?.write_all(&serde_json::to_vec(&c1)?)?;
    let info = SectorInfo {
        registered_proof: proof,
        prover_id,
        sector_id: u64::from(sector_id),
        ticket,
        seed,
        comm_r,
        comm_d,
    };
    fs::write(dir.join("sector.json"), serde_json::to_vec_pretty(&info)?)?;
    eprintln!("sealed {size}: {}", dir.display());
    Ok(())
}

fn main() -> Result<()> {
    let args = Args::parse();
    if std::env::var_os("FIL_PROOFS_PARENT_CACHE").is_none() {
        let dir = std::env::current_dir()?.join(".cache/parents");
        fs::create_dir_all(&dir)?;
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    for size in &args.sizes {
        seal(size, &args.out, &mut rng).with_context(|| format!("sealing a {size} sector"))?;
    }
    Ok(())
}
