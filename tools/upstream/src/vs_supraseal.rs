//! One PoRep partition on one GPU, supraseal-c2 against cuzk, on the same inputs in one process
//! (default: the 32 GiB circuit, 130 M constraints). The circuit is real (its PCE is extracted
//! here); the witness is a synthetic partition's native witness and the key is synthetic
//! (`Pce::tiled_key`: random points tiled to the circuit's query lengths), written as a
//! bellperson `.params` file for supraseal. Both provers get the same a, b, c, witness and
//! r, s, so their proofs must be the same bytes; the run fails if they are not. Over a synthetic
//! key the proofs prove nothing; MSM and NTT cost do not depend on the points.
//!
//! Order, so that host memory peaks near 104 GiB at 32 GiB and never holds two copies of the
//! key besides the file: cuzk (key resident on the GPU, the witness on the host and then the
//! resident-PCE path), the key written out and dropped, supraseal's load (its own pinned copy),
//! the file unlinked, supraseal's proofs (one partition per call, then `--batch` partitions in
//! one call, the way it proves a sector).
//!
//! Built by tools/supraseal-peer.sh; run on the device machine by tools/supraseal-vs-cuzk.sh.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use clap::Parser;
use cuzk_circuits::SealShape;
use cuzk_gpu::GpuBackend;
use cuzk_groth16::assignment::Witness;
use cuzk_groth16::backend::{Backend, Randomness};
use cuzk_groth16::{Fr, G1Affine, G2Affine, Proof};
use cuzk_pce::{Columns, PceBackend};
use rand_chacha::rand_core::SeedableRng;

#[derive(Parser)]
struct Cli {
    /// Sector size whose PoRep circuit is proved (2KiB for a quick check).
    #[arg(long, default_value = "32GiB")]
    sector_size: String,
    /// Where the synthetic `.params` file goes (44 GiB at 32 GiB; tmpfs is fastest).
    #[arg(long, default_value = "/dev/shm/cuzk-vs-supraseal.params")]
    srs: PathBuf,
    /// Timed proofs per prover and path (after one untimed warm-up each).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Partitions in supraseal's batched call (0: none).
    #[arg(long, default_value_t = 10)]
    batch: usize,
}

/// supraseal's `groth16_proof`: affine A, B, C in blst's layout, which blstrs' affine types
/// share.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct SupraProof {
    a: G1Affine,
    b: G2Affine,
    c: G1Affine,
}

/// Median of `runs` timed calls of `f`, printing each as `label run=i ms=…`.
fn timed(label: &str, runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<Duration> {
    let mut times = Vec::with_capacity(runs);
    for run in 0..runs {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed());
        println!("{label} run={run} ms={}", t.elapsed().as_millis());
    }
    times.sort();
    Ok(times[runs / 2])
}

/// supraseal's prover on `k` copies of `w` (the same pointers: its inputs are read-only).
fn supraseal_prove(
    srs: &supraseal_c2::SRS,
    w: &Witness,
    rs: &Randomness,
    k: usize,
) -> Vec<SupraProof> {
    let d = &w.density;
    let mut proofs = vec![SupraProof::default(); k];
    supraseal_c2::generate_groth16_proof::<Fr, u64, SupraProof>(
        &vec![w.a.as_ptr(); k],
        &vec![w.b.as_ptr(); k],
        &vec![w.c.as_ptr(); k],
        w.a.len(),
        &vec![w.input.as_ptr(); k],
        &vec![w.aux.as_ptr(); k],
        w.input.len(),
        w.aux.len(),
        d.a_aux.words(),
        d.b_input.words(),
        d.b_aux.words(),
        d.a_aux.count(),
        d.b_input.count(),
        d.b_aux.count(),
        k,
        &vec![rs.r; k],
        &vec![rs.s; k],
        &mut proofs,
        srs,
    );
    proofs
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    ensure!(cli.runs > 0, "--runs must be at least 1");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let size = &cli.sector_size;

    let shape = SealShape::from_sector_size(size)?;
    let t = Instant::now();
    let pce = std::sync::Arc::new(shape.extract_pce()?);
    let circuit = shape
        .stacked()
        .synthetic(&mut rand_chacha::ChaCha8Rng::seed_from_u64(32));
    let (input, aux) = circuit.native_witness()?;
    let w = pce.evaluate(input, aux)?;
    let rs = Randomness::random(&mut rand_chacha::ChaCha8Rng::seed_from_u64(11));
    println!(
        "{size}: PCE, native witness and a, b, c in {:.1?} ({} constraints, {} aux)",
        t.elapsed(),
        pce.num_constraints(),
        pce.num_aux
    );
    let t = Instant::now();
    let pk = pce.tiled_key();
    println!("{size}: synthetic key built in {:.1?}", t.elapsed());

    let backend = GpuBackend::new(0)?;
    println!("{size}: GPU {:?}", backend.device());
    let t = Instant::now();
    backend.preload(&pk)?;
    println!("{size}: cuzk key upload {:.1?}", t.elapsed());
    let mut ours = backend.prove(&pk, std::slice::from_ref(&w), std::slice::from_ref(&rs))?;
    let host = timed("cuzk prove (a, b, c from the host)", cli.runs, || {
        ours = backend.prove(&pk, std::slice::from_ref(&w), std::slice::from_ref(&rs))?;
        Ok(())
    })?;
    let ours = ours[0];
    // Packed as the engine packs them (PoRep's witness is mostly bits).
    let columns = Columns::new(w.input.clone(), w.aux.clone());
    let t = Instant::now();
    let assigned = backend.prove_assigned(&pk, &pce, &columns, &rs)?;
    println!(
        "{size}: cuzk first prove_assigned (uploads the PCE) {:.1?}",
        t.elapsed()
    );
    ensure!(assigned == ours, "cuzk's two paths disagree");
    let resident = timed("cuzk prove_assigned (resident PCE)", cli.runs, || {
        ensure!(backend.prove_assigned(&pk, &pce, &columns, &rs)? == ours);
        Ok(())
    })?;
    drop(backend);
    drop(pce);

    let t = Instant::now();
    pk.write(&cli.srs)?;
    println!(
        "{size}: synthetic key written to {} in {:.1?}",
        cli.srs.display(),
        t.elapsed()
    );
    drop(pk);
    let t = Instant::now();
    let srs = supraseal_c2::SRS::try_new(cli.srs.clone(), false)
        .map_err(|e| anyhow::anyhow!("supraseal SRS: {}", String::from(e)))?;
    // Mapped by now: its pages go when supraseal's reader unmaps them.
    std::fs::remove_file(&cli.srs).context("removing the synthetic key file")?;
    let first = supraseal_prove(&srs, &w, &rs, 1)[0];
    println!(
        "{size}: supraseal SRS load + first proof {:.1?}",
        t.elapsed()
    );
    let theirs = |p: SupraProof| Proof {
        a: p.a,
        b: p.b,
        c: p.c,
    };
    ensure!(
        theirs(first) == ours,
        "supraseal-c2 and cuzk give different proofs for the same inputs"
    );
    println!("{size}: supraseal-c2's proof is cuzk's, byte for byte");
    let supra = timed("supraseal one partition per call", cli.runs, || {
        ensure!(theirs(supraseal_prove(&srs, &w, &rs, 1)[0]) == ours);
        Ok(())
    })?;
    let mut per_partition = None;
    if cli.batch > 0 {
        let t = Instant::now();
        let proofs = supraseal_prove(&srs, &w, &rs, cli.batch);
        let each = t.elapsed() / cli.batch as u32;
        ensure!(proofs.iter().all(|p| theirs(*p) == ours));
        println!(
            "supraseal {} partitions in one call: {:.1?} ({:.0} ms each)",
            cli.batch,
            t.elapsed(),
            ms(each)
        );
        per_partition = Some(each);
    }
    let best = per_partition.map_or(supra, |b| b.min(supra));
    println!(
        "{size} partition median ms: cuzk prove_assigned={:.0} cuzk prove={:.0} \
         supraseal={:.0} supraseal_batched={} speedup={:.2}x (resident PCE vs supraseal's best)",
        ms(resident),
        ms(host),
        ms(supra),
        per_partition.map_or("-".into(), |b| format!("{:.0}", ms(b))),
        ms(best) / ms(resident)
    );
    Ok(())
}
