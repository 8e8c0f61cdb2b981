//! Commands that prove or prepare on this machine, without a daemon.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use cuzk_circuits::{C1Input, CircuitShape, SealShape, Synthesis};
use cuzk_groth16::backend::{Backend, CpuBackend, Randomness};
use cuzk_groth16::params::{ParamsError, PointCache, ProvingKey, Validation};
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::{Fr, Proof};
use cuzk_pce::{Pce, PceBackend};

#[derive(Clone, Copy, ValueEnum)]
pub enum BackendKind {
    /// The CPU reference backend.
    Cpu,
    /// One GPU (`--gpu`, default 0; a build with `--features cuda`). With the native witness
    /// it keeps the PCE on the device and takes only the witness columns.
    Gpu,
}

/// What proves the partitions of one local run: a backend, and the GPU's PCE side.
pub struct Prover {
    pub backend: Arc<dyn Backend>,
    pub columns: Option<Arc<dyn PceBackend>>,
}

impl Prover {
    pub fn cpu() -> Self {
        Prover {
            backend: Arc::new(CpuBackend),
            columns: None,
        }
    }

    /// `gpu` picks the device of `BackendKind::Gpu` (0 when `None`); naming one for the CPU
    /// backend is refused rather than ignored.
    pub fn new(kind: BackendKind, gpu: Option<usize>) -> Result<Self> {
        Ok(match kind {
            BackendKind::Cpu => match gpu {
                Some(n) => bail!("--gpu {n} needs --backend gpu"),
                None => Prover::cpu(),
            },
            BackendKind::Gpu => {
                let n = gpu.unwrap_or(0);
                let gpu = Arc::new(cuzk_gpu::GpuBackend::new(n).with_context(|| {
                    format!("--backend gpu on GPU {n} (build with --features cuda)")
                })?);
                Prover {
                    backend: gpu.clone(),
                    columns: Some(gpu),
                }
            }
        })
    }
}

pub fn default_params_dir() -> Result<PathBuf> {
    std::env::var_os("FIL_PROOFS_PARAMETER_CACHE")
        .map(PathBuf::from)
        .context("no --params given and FIL_PROOFS_PARAMETER_CACHE is not set")
}

fn ms(t: Instant) -> u128 {
    t.elapsed().as_millis()
}

/// Generates and writes parameters for `shape` into `dir`.
pub fn paramgen(shape: &SealShape, dir: &Path) -> Result<()> {
    let t = Instant::now();
    let pk = shape.generate_params(&mut rand::rngs::OsRng)?;
    let gen_ms = ms(t);
    let t = Instant::now();
    shape.write_params(&pk, dir)?;
    let [params, _, _] = shape.file_names()?;
    println!(
        "paramgen sector_size={} generate_ms={gen_ms} write_ms={} file={}",
        shape.sector_size(),
        ms(t),
        dir.join(params).display()
    );
    Ok(())
}

/// A circuit whose matrices `cuzk pce extract` records: its label, identity and extraction.
pub trait PceCircuit {
    fn label(&self) -> String;
    fn identity(&self) -> Result<String>;
    fn extract(&self) -> Result<Pce>;
}

impl PceCircuit for SealShape {
    fn label(&self) -> String {
        format!("porep sector_size={}", self.sector_size())
    }
    fn identity(&self) -> Result<String> {
        Ok(self.pce_identity()?)
    }
    fn extract(&self) -> Result<Pce> {
        Ok(self.extract_pce()?)
    }
}

/// A fixed circuit of a PoSt or SnapDeals proof type, as `cuzk pce extract` sees it.
pub struct Fixed<S>(pub S);

impl<S> PceCircuit for Fixed<S>
where
    S: CircuitShape,
    S::Error: std::error::Error + Send + Sync + 'static,
{
    fn label(&self) -> String {
        self.0.circuit_id()
    }
    fn identity(&self) -> Result<String> {
        Ok(self.0.pce_identity())
    }
    fn extract(&self) -> Result<Pce> {
        Ok(self.0.extract_pce()?)
    }
}

/// Extracts `circuit`'s matrices, reporting size and time.
pub fn extract_pce(circuit: &impl PceCircuit) -> Result<Pce> {
    let t = Instant::now();
    let pce = circuit.extract()?;
    println!(
        "pce extract {} constraints={} nnz={} heap_bytes={} extract_ms={}",
        circuit.label(),
        pce.num_constraints(),
        pce.a.nnz() + pce.b.nnz() + pce.c.nnz(),
        pce.heap_bytes(),
        ms(t)
    );
    Ok(pce)
}

/// Writes `pce` to `out` under `circuit`'s identity, reporting size and time.
pub fn write_pce(circuit: &impl PceCircuit, pce: &Pce, out: &Path) -> Result<()> {
    let t = Instant::now();
    let digest = pce.write(out, &circuit.identity()?)?;
    println!(
        "pce write file_bytes={} write_ms={} digest={} file={}",
        std::fs::metadata(out)?.len(),
        ms(t),
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>(),
        out.display()
    );
    Ok(())
}

pub fn pce_bench(path: &Path, runs: usize) -> Result<()> {
    use cuzk_groth16::Fr;
    use ff::Field;
    use rand::{Rng, SeedableRng};
    let t = Instant::now();
    let (pce, _) = Pce::load(path, None)?;
    println!(
        "pce bench load_ms={} (checksum and invariant checks)",
        ms(t)
    );
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let mut value = || match rng.gen_range(0..20) {
        0..=8 => Fr::ZERO,
        9..=17 => Fr::ONE,
        _ => Fr::random(&mut rng),
    };
    let input: Vec<Fr> = (0..pce.num_inputs)
        .map(|i| if i == 0 { Fr::ONE } else { value() })
        .collect();
    let aux: Vec<Fr> = (0..pce.num_aux).map(|_| value()).collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for run in 0..runs {
        for (name, which, m) in [
            ("A", cuzk_pce::Which::A, &pce.a),
            ("B", cuzk_pce::Which::B, &pce.b),
            ("C", cuzk_pce::Which::C, &pce.c),
        ] {
            let t = Instant::now();
            let out = pce.product(which, &input, &aux)?;
            let secs = t.elapsed().as_secs_f64();
            drop(out);
            println!(
                "pce bench run={run} matrix={name} nnz={} ms={:.0} nnz_per_s_per_core={:.3e}",
                m.nnz(),
                secs * 1e3,
                m.nnz() as f64 / secs / cores as f64
            );
        }
    }
    Ok(())
}

/// Loads the PCE cache for `shape`, extracting (and caching) it when missing or unusable.
fn pce_for(shape: &SealShape, path: &Path) -> Result<Pce> {
    if path.exists() {
        match Pce::load(path, Some(&shape.pce_identity()?)) {
            Ok((pce, _)) => return Ok(pce),
            Err(e) => eprintln!("warning: PCE cache unusable ({e}); extracting again"),
        }
    }
    let pce = extract_pce(shape)?;
    if let Err(e) = write_pce(shape, &pce, path) {
        eprintln!(
            "warning: could not cache the PCE at {} ({e:#}); using it in memory",
            path.display()
        );
    }
    Ok(pce)
}

/// Proves every partition of `c1`, verifies each proof, and returns the concatenated bytes.
pub fn prove_porep(
    c1_bytes: &[u8],
    params_dir: &Path,
    prover: &Prover,
    synthesis: SynthesisKind,
    pce_path: Option<PathBuf>,
    validation: Validation,
    point_cache: bool,
) -> Result<Vec<u8>> {
    let total = Instant::now();
    let c1 = C1Input::parse(c1_bytes)?;
    let shape = SealShape::new(c1.registered_proof)?;
    let [params_name, _, _] = shape.file_names()?;
    let params_path = params_dir.join(&params_name);
    if !params_path.exists() {
        bail!(
            "no parameters at {}; generate them with `cuzk paramgen porep --sector-size <size> --out {}`",
            params_path.display(),
            params_dir.display()
        );
    }
    let t = Instant::now();
    let (pk, cache_write) = if point_cache {
        let cache = params_path.with_extension("cuzk-points");
        match ProvingKey::read_cached(&params_path, validation, &cache)? {
            (pk, PointCache::Hit) => (pk, None),
            (pk, PointCache::Miss(write)) => (pk, Some(write)),
        }
    } else {
        let pk = ProvingKey::read(&params_path, validation)?;
        pk.preload()?;
        (pk, None)
    };
    let points = match (point_cache, &cache_write) {
        (false, _) => "decoded",
        (true, None) => "cached",
        (true, Some(_)) => "decoded+cached",
    };
    let load_ms = ms(t);
    // A missed point cache is written beside the proof: disk and sync, not the cores.
    let pk = Arc::new(pk);
    let _writer = CacheWriter(cache_write.map(|w| {
        let pk = Arc::clone(&pk);
        std::thread::spawn(move || (w.path().to_path_buf(), w.write(&pk)))
    }));

    let t = Instant::now();
    let pce = match synthesis {
        SynthesisKind::Full => None,
        SynthesisKind::Pce | SynthesisKind::Native => {
            let path =
                pce_path.map_or_else(|| shape.pce_file_name().map(|n| params_dir.join(n)), Ok)?;
            Some(Arc::new(pce_for(&shape, &path)?))
        }
    };
    let pce_ms = ms(t);

    let t = Instant::now();
    // Columns only where the device evaluates the PCE; else whole witnesses.
    let (parts, inputs): (Parts<'_>, Vec<Vec<Fr>>) = match (&pce, synthesis, &prover.columns) {
        (Some(pce), SynthesisKind::Native, Some(device)) => {
            let made = (0..shape.partitions())
                .map(|k| shape.partition_columns(&c1, k))
                .collect::<Result<Vec<_>, _>>()?;
            let (cols, inputs) = made
                .into_iter()
                .map(|c| ((c.input, c.aux), c.public_inputs))
                .unzip();
            (Parts::Columns { cols, pce, device }, inputs)
        }
        _ => {
            let synthesis = match (&pce, synthesis) {
                (None, _) => Synthesis::Full,
                (Some(pce), SynthesisKind::Native) => Synthesis::Native(pce),
                (Some(pce), _) => Synthesis::Pce(pce),
            };
            let (w, inputs) = shape
                .witnesses(&c1, synthesis)?
                .into_iter()
                .map(|p| (p.witness, p.public_inputs))
                .unzip();
            (Parts::Witnesses(w), inputs)
        }
    };
    let synth_ms = ms(t);

    let t = Instant::now();
    // The quotient's vectors are reused from one transform (and partition) to the next
    // instead of faulted in afresh: up to three domain-sized vectors are kept meanwhile.
    let domain = pk.lengths()[0] + 1;
    cuzk_groth16::memory::set_recycle_limit(3 * domain * std::mem::size_of::<Fr>());
    let rs: Vec<Randomness> = inputs
        .iter()
        .map(|_| Randomness::random(&mut rand::rngs::OsRng))
        .collect();
    let proofs = match &parts {
        Parts::Columns { cols, pce, device } => (cols.iter().zip(&rs))
            .map(|((input, aux), rs)| device.prove_assigned(&pk, pce, input, aux, rs))
            .collect::<Result<Vec<_>, _>>(),
        Parts::Witnesses(w) => prover.backend.prove(&pk, w, &rs),
    };
    // Released on the error path too: the kept vectors are gigabytes at 32 GiB.
    cuzk_groth16::memory::set_recycle_limit(0);
    let proofs = proofs?;
    let columns = matches!(parts, Parts::Columns { .. });
    let prove_ms = ms(t);

    let t = Instant::now();
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    drop(parts);
    for (k, (proof, inputs)) in proofs.iter().zip(&inputs).enumerate() {
        if !verify_proof(&pvk, proof, inputs)? {
            bail!("partition {k}: the proof does not verify; refusing to return it");
        }
    }
    let verify_ms = ms(t);
    println!(
        "prove porep sector_size={} partitions={} backend={} synthesis={} points={points} load_ms={load_ms} pce_ms={pce_ms} synthesis_ms={synth_ms} prove_ms={prove_ms} verify_ms={verify_ms} total_ms={}",
        shape.sector_size(),
        proofs.len(),
        prover.backend.name(),
        match (synthesis, columns) {
            (SynthesisKind::Native, true) => "native-columns",
            _ => synthesis.name(),
        },
        ms(total)
    );
    Ok(proofs.iter().flat_map(Proof::to_bytes).collect())
}

/// A point cache being written in the background, joined on every way out of
/// [`prove_porep`] (a write cut short by the process exiting would leave its temporary file).
struct CacheWriter(Option<std::thread::JoinHandle<(PathBuf, Result<(), ParamsError>)>>);

impl Drop for CacheWriter {
    fn drop(&mut self) {
        match self.0.take().map(|h| h.join()) {
            Some(Ok((path, Err(e)))) => {
                eprintln!("warning: point cache {} not written: {e}", path.display())
            }
            Some(Err(_)) => eprintln!("warning: the point cache writer panicked"),
            Some(Ok((_, Ok(())))) | None => {}
        }
    }
}

/// A run's partitions: whole witnesses, or the columns a device's PCE evaluates.
enum Parts<'a> {
    Witnesses(Vec<cuzk_groth16::assignment::Witness>),
    Columns {
        cols: Vec<(Vec<Fr>, Vec<Fr>)>,
        pce: &'a Arc<Pce>,
        device: &'a Arc<dyn PceBackend>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SynthesisKind {
    /// The native witness generator plus pre-compiled matrices.
    Native,
    /// Witness-only synthesis plus pre-compiled matrices.
    Pce,
    /// Full constraint synthesis (the reference path).
    Full,
}

impl SynthesisKind {
    pub fn name(self) -> &'static str {
        match self {
            SynthesisKind::Native => "native",
            SynthesisKind::Pce => "pce",
            SynthesisKind::Full => "full",
        }
    }
}

/// Proves one request of engine kind `kind` through an in-process engine (the daemon's own
/// path: the kind's plan, the scheduler, the backend, verification before return), with a
/// throw-away job store. Returns the result bytes.
pub fn prove_in_engine(
    kind: &str,
    payload: Vec<u8>,
    params: &Path,
    backend: BackendKind,
    gpu: Option<usize>,
    synthesis: SynthesisKind,
) -> Result<Vec<u8>> {
    use cuzk_daemon::config::{BackendChoice, Config, Gpus};
    use cuzk_engine::{Outcome, Priority, Request, Wait};
    if matches!(backend, BackendKind::Cpu) {
        if let Some(n) = gpu {
            bail!("--gpu {n} needs --backend gpu");
        }
    }
    let store = tempfile::tempdir().context("creating a job store")?;
    let mut cfg = Config::load(None, std::iter::empty())?;
    cfg.engine.params_dir = params.to_path_buf();
    cfg.engine.store_dir = store.path().join("store");
    cfg.engine.backend = match backend {
        BackendKind::Cpu => BackendChoice::Cpu,
        BackendKind::Gpu => BackendChoice::Gpu,
    };
    cfg.engine.gpus = Gpus::List(vec![gpu.unwrap_or(0)]);
    cfg.engine.pce = !matches!(synthesis, SynthesisKind::Full);
    cfg.engine.native_witness = matches!(synthesis, SynthesisKind::Native);
    let (engine, _) = cuzk_daemon::server::start_engine(&cfg.settings()?)?;
    let job = engine.submit(Request {
        request_id: "cuzk-prove".into(),
        kind: kind.into(),
        priority: Priority::Normal,
        payload,
    })?;
    let outcome = engine.await_job(job, Wait::Forever)?;
    engine.shutdown();
    match outcome {
        Outcome::Succeeded { proof, timings: t } => {
            println!(
                "prove {kind} backend={} synthesis={} load_ms={} synthesis_ms={} prove_ms={} total_ms={}",
                match backend {
                    BackendKind::Cpu => "cpu",
                    BackendKind::Gpu => "gpu",
                },
                synthesis.name(),
                t.srs_load_ms,
                t.synthesis_ms,
                t.backend_ms,
                t.total_ms
            );
            Ok(proof)
        }
        Outcome::Failed { reason } => bail!("{kind}: {reason}"),
        Outcome::Cancelled => bail!("{kind}: cancelled"),
    }
}

/// Generates and writes the parameters of a PoSt or SnapDeals circuit into `dir`.
pub fn paramgen_fixed<S>(shape: &S, dir: &Path) -> Result<()>
where
    S: CircuitShape,
    S::Error: std::error::Error + Send + Sync + 'static,
{
    let t = Instant::now();
    let pk = shape.generate_params(&mut rand::rngs::OsRng)?;
    let gen_ms = ms(t);
    let t = Instant::now();
    shape.write_params(&pk, dir)?;
    let [params, _, _] = shape.file_names();
    println!(
        "paramgen {} generate_ms={gen_ms} write_ms={} file={}",
        shape.circuit_id(),
        ms(t),
        dir.join(params).display()
    );
    Ok(())
}
