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
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use rand::SeedableRng;

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

fn main() -> Result<()> {
    let args = Args::parse();
    if std::env::var_os("FIL_PROOFS_PARENT_CACHE").is_none() {
        let dir = std::env::current_dir()?.join(".cache/parents");
        fs::create_dir_all(&dir)?;
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    for size in &args.sizes {
        let (c1, info) = cuzk_upstream_tools::seal(size, &mut rng)
            .with_context(|| format!("sealing a {size} sector"))?;
        let dir = args.out.join(size);
        fs::create_dir_all(&dir)?;
        fs::write(dir.join("c1.json"), c1)?;
        fs::write(dir.join("sector.json"), serde_json::to_vec_pretty(&info)?)?;
        eprintln!("sealed {size}: {}", dir.display());
    }
    Ok(())
}
