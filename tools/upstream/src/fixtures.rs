//! Seals test-size sectors with upstream `filecoin-proofs-api` and writes their C1 output.
//!
//! For each sector size it writes, under `--out/<size>/`:
//! - `c1.json`: the `SealCommitPhase1Output` exactly as `serde_json` writes it (what lotus and
//!   Curio hand to C2);
//! - `sector.json`: the values C2's verifier needs beside it (prover id, sector id, ticket,
//!   seed, commitments, registered proof).
//!
//! With `--post`, it also seals three 2 KiB sectors and writes, under `fixtures/post/2KiB/`,
//! their WindowPoSt (V1_2) and WinningPoSt vanilla proofs as Curio's workers make them
//! (`window-<i>.bin`, `winning.bin`, bincode) and `post.json` (randomness, miner id, sectors).
//!
//! With `--snap`, it also seals a sector of each `--snap-sizes` size (2 KiB by default),
//! updates it with fresh random deal data (SnapDeals) and writes, under
//! `fixtures/snap/<size>/`, its vanilla partition proofs as Curio
//! sends them (`partition-<k>.bin`, bincode) and `snap.json` (update proof type, sector size,
//! `comm_r_old`, `comm_r_new`, `comm_d_new`).
//!
//! Sealing and updating need no Groth16 parameters. The SDR parent cache goes to `FIL_PROOFS_PARENT_CACHE`
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
    /// Sector sizes to seal (`--sizes ""` for none).
    #[arg(long, value_delimiter = ',', default_value = "2KiB,8MiB")]
    sizes: Vec<String>,
    /// Seed for the piece data, prover id, ticket and seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write the PoSt fixtures into this folder.
    #[arg(long)]
    post: Option<PathBuf>,
    /// Also write the SnapDeals fixtures into this folder.
    #[arg(long)]
    snap: Option<PathBuf>,
    /// Sector sizes of the SnapDeals fixtures (2KiB, 8MiB, 512MiB).
    #[arg(long, value_delimiter = ',', default_value = "2KiB")]
    snap_sizes: Vec<String>,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if std::env::var_os("FIL_PROOFS_PARENT_CACHE").is_none() {
        let dir = std::env::current_dir()?.join(".cache/parents");
        fs::create_dir_all(&dir)?;
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    for size in args.sizes.iter().filter(|s| !s.is_empty()) {
        let (c1, info) = cuzk_upstream_tools::seal(size, &mut rng)
            .with_context(|| format!("sealing a {size} sector"))?;
        let dir = args.out.join(size);
        fs::create_dir_all(&dir)?;
        fs::write(dir.join("c1.json"), c1)?;
        fs::write(dir.join("sector.json"), serde_json::to_vec_pretty(&info)?)?;
        eprintln!("sealed {size}: {}", dir.display());
    }
    if let Some(dir) = &args.post {
        post_fixtures(dir, &mut rng)?;
    }
    if let Some(dir) = &args.snap {
        for size in &args.snap_sizes {
            let dir = dir.join(size);
            cuzk_upstream_tools::snap::update_fresh_sector(size, &mut rng)?.write_fixture(&dir)?;
            eprintln!("SnapDeals vanilla proofs: {}", dir.display());
        }
    }
    Ok(())
}

/// What a PoSt fixture's vanilla proofs are for.
#[derive(serde::Serialize)]
struct PostFixture {
    randomness: [u8; 32],
    miner_id: u64,
    /// (sector id, comm_r), sorted by sector id as a deadline lists them.
    sectors: Vec<(u64, [u8; 32])>,
}

fn post_fixtures(dir: &std::path::Path, rng: &mut rand::rngs::StdRng) -> Result<()> {
    use cuzk_upstream_tools::post::vanilla_proofs;
    use rand::RngCore;
    let mut sealed = (0..3)
        .map(|_| cuzk_upstream_tools::seal_sector("2KiB", rng))
        .collect::<Result<Vec<_>>>()?;
    sealed.sort_by_key(|s| s.info.sector_id);
    let randomness = cuzk_upstream_tools::fr_bytes(rng);
    let miner_id = 1000 + u64::from(rng.next_u32() % 100_000);
    let prover_id = cuzk_upstream_tools::post::prover_id(miner_id);
    let all: Vec<_> = sealed.iter().collect();
    let dir = dir.join("2KiB");
    fs::create_dir_all(&dir)?;
    // Window V1_2 2 KiB is FFI 10, Winning 2 KiB is 0.
    for (i, v) in vanilla_proofs(10, &all, &randomness, &prover_id)?
        .iter()
        .enumerate()
    {
        fs::write(dir.join(format!("window-{i}.bin")), v)?;
    }
    let winning = vanilla_proofs(0, &all[..1], &randomness, &prover_id)?;
    fs::write(dir.join("winning.bin"), &winning[0])?;
    let fixture = PostFixture {
        randomness,
        miner_id,
        sectors: sealed
            .iter()
            .map(|s| (s.info.sector_id, s.info.comm_r))
            .collect(),
    };
    fs::write(dir.join("post.json"), serde_json::to_vec_pretty(&fixture)?)?;
    eprintln!("PoSt vanilla proofs: {}", dir.display());
    Ok(())
}
