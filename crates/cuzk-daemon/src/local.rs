//! Commands that prove or prepare on this machine, without a daemon.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use cuzk_circuits::{CircuitShape, SealShape};
use cuzk_daemon::config::CheckParams;
use cuzk_groth16::generator::{CpuFixedBase, FixedBaseMul};
use cuzk_groth16::params::ProvingKey;
use cuzk_pce::Pce;

#[derive(Clone, Copy, ValueEnum)]
pub enum BackendKind {
    /// The CPU reference backend.
    Cpu,
    /// One GPU (`--gpu`, default 0; a build with `--features cuda`). With the native witness
    /// it keeps the PCE on the device and takes only the witness columns.
    Gpu,
}

pub fn default_params_dir() -> Result<PathBuf> {
    std::env::var_os("FIL_PROOFS_PARAMETER_CACHE")
        .map(PathBuf::from)
        .context("no --params given and FIL_PROOFS_PARAMETER_CACHE is not set")
}

fn ms(t: Instant) -> u128 {
    t.elapsed().as_millis()
}

/// How `cuzk paramgen` makes a key: the randomness, and where the query points (nearly all of
/// the work) are computed. The same seed gives the same file on either.
pub struct Setup {
    rng: Box<dyn rand::RngCore>,
    mul: Box<dyn FixedBaseMul>,
}

impl Setup {
    /// Points on GPU `gpu` (a build with `--features cuda`) or the CPU; randomness from `seed`
    /// (a reproducible test key) or the OS.
    pub fn new(gpu: Option<usize>, seed: Option<u64>) -> Result<Self> {
        let mul: Box<dyn FixedBaseMul> = match gpu {
            None => Box::new(CpuFixedBase),
            Some(n) => Box::new(
                cuzk_gpu::setup::GpuFixedBase::new(n)
                    .with_context(|| format!("--gpu {n} (build with --features cuda)"))?,
            ),
        };
        let rng: Box<dyn rand::RngCore> = match seed {
            Some(s) => Box::new(cuzk_groth16::generator::seeded_rng(s)),
            None => Box::new(rand::rngs::OsRng),
        };
        Ok(Setup { rng, mul })
    }
}

/// Generates `circuit`'s parameters and writes them into `dir` under upstream's names.
pub fn paramgen(circuit: &(impl Circuit + ?Sized), dir: &Path, setup: &mut Setup) -> Result<()> {
    let t = Instant::now();
    let pk = circuit.generate(&mut setup.rng, setup.mul.as_ref())?;
    let gen_ms = ms(t);
    let t = Instant::now();
    let file = circuit.write_params(&pk, dir)?;
    tracing::info!(step = "parameters written", ms = ms(t) as u64, "setup");
    println!(
        "paramgen {} points={} generate_ms={gen_ms} write_ms={} file={}",
        circuit.label(),
        setup.mul.name(),
        ms(t),
        file.display()
    );
    Ok(())
}

/// A circuit `cuzk paramgen` and `cuzk pce extract` work on: its label, setup and matrices.
pub trait Circuit {
    fn label(&self) -> String;
    fn generate(&self, rng: &mut dyn rand::RngCore, mul: &dyn FixedBaseMul) -> Result<ProvingKey>;
    /// Writes `.params`, `.vk` and `.meta` into `dir`; the `.params` path.
    fn write_params(&self, pk: &ProvingKey, dir: &Path) -> Result<PathBuf>;
    fn identity(&self) -> Result<String>;
    /// The PCE cache's name beside the parameters, where the engine looks for it.
    fn pce_file_name(&self) -> Result<String>;
    fn extract(&self) -> Result<Pce>;
}

impl Circuit for SealShape {
    fn label(&self) -> String {
        format!("porep sector_size={}", self.sector_size())
    }
    fn generate(
        &self,
        mut rng: &mut dyn rand::RngCore,
        mul: &dyn FixedBaseMul,
    ) -> Result<ProvingKey> {
        Ok(self.generate_params_with(&mut rng, mul)?)
    }
    fn write_params(&self, pk: &ProvingKey, dir: &Path) -> Result<PathBuf> {
        SealShape::write_params(self, pk, dir)?;
        let [params, _, _] = self.file_names()?;
        Ok(dir.join(params))
    }
    fn identity(&self) -> Result<String> {
        Ok(self.pce_identity()?)
    }
    fn pce_file_name(&self) -> Result<String> {
        Ok(SealShape::pce_file_name(self)?)
    }
    fn extract(&self) -> Result<Pce> {
        Ok(self.extract_pce()?)
    }
}

/// A fixed circuit of a PoSt or SnapDeals proof type, as `cuzk paramgen` and `cuzk pce
/// extract` see it.
pub struct Fixed<S>(pub S);

impl<S> Circuit for Fixed<S>
where
    S: CircuitShape,
    S::Error: std::error::Error + Send + Sync + 'static,
{
    fn label(&self) -> String {
        self.0.circuit_id()
    }
    fn generate(&self, rng: &mut dyn rand::RngCore, mul: &dyn FixedBaseMul) -> Result<ProvingKey> {
        Ok(self.0.generate_params_with(rng, mul)?)
    }
    fn write_params(&self, pk: &ProvingKey, dir: &Path) -> Result<PathBuf> {
        self.0.write_params(pk, dir)?;
        let [params, _, _] = self.0.file_names();
        Ok(dir.join(params))
    }
    fn identity(&self) -> Result<String> {
        Ok(self.0.pce_identity())
    }
    fn pce_file_name(&self) -> Result<String> {
        Ok(self.0.pce_file_name())
    }
    fn extract(&self) -> Result<Pce> {
        Ok(self.0.extract_pce()?)
    }
}

/// Extracts `circuit`'s matrices, reporting size and time.
pub fn extract_pce(circuit: &impl Circuit) -> Result<Pce> {
    let t = Instant::now();
    let bar = crate::progress::spinner(&format!("{}: recording the circuit", circuit.label()));
    let pce = circuit.extract()?;
    bar.finish_and_clear();
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

/// Writes `pce` to `out` under `circuit`'s identity, reporting size and time. An `out` that is
/// a directory (the parameters') gets the file under the name the engine looks for.
pub fn write_pce(circuit: &impl Circuit, pce: &Pce, out: &Path) -> Result<()> {
    let t = Instant::now();
    let file;
    let out = if out.is_dir() {
        file = out.join(circuit.pce_file_name()?);
        &file
    } else {
        out
    };
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

/// How `cuzk prove` and `cuzk demo` prove: backend, device, witness path and key loading.
#[derive(Clone, Copy)]
pub struct How {
    pub backend: BackendKind,
    /// The GPU of `BackendKind::Gpu` (0 when `None`); naming one for the CPU backend is
    /// refused rather than ignored.
    pub gpu: Option<usize>,
    pub synthesis: SynthesisKind,
    pub check_params: CheckParams,
    /// Map decoded points from `<params file>.cuzk-points`, writing it on the first load.
    pub point_cache: bool,
}

impl How {
    /// The CPU backend, native witness, trusted parameter points, point cache.
    pub const CPU: How = How {
        backend: BackendKind::Cpu,
        gpu: None,
        synthesis: SynthesisKind::Native,
        check_params: CheckParams::Trusted,
        point_cache: true,
    };
}

/// An in-process engine, the daemon's own path (each kind's plan, the scheduler, the backend,
/// every proof verified before it is returned), with a throw-away job store: local proving
/// has no pipeline of its own.
pub struct InProcess {
    engine: Option<cuzk_engine::Engine>,
    how: How,
    /// Requests sent so far: each gets its own request id (the engine refuses a reused one).
    sent: std::sync::atomic::AtomicU64,
    _store: tempfile::TempDir,
}

impl InProcess {
    /// Starts the engine on `params`; a backend that cannot start (no such GPU) fails here,
    /// before any input is read.
    pub fn start(params: &Path, how: How) -> Result<Self> {
        use cuzk_daemon::config::{BackendChoice, Config, Gpus};
        if let (BackendKind::Cpu, Some(n)) = (how.backend, how.gpu) {
            bail!("--gpu {n} needs --backend gpu");
        }
        let store = tempfile::tempdir().context("creating a job store")?;
        let mut cfg = Config::load(None, std::iter::empty())?;
        cfg.engine.params_dir = params.to_path_buf();
        cfg.engine.store_dir = store.path().join("store");
        cfg.engine.backend = match how.backend {
            BackendKind::Cpu => BackendChoice::Cpu,
            BackendKind::Gpu => BackendChoice::Gpu,
        };
        cfg.engine.gpus = Gpus::List(vec![how.gpu.unwrap_or(0)]);
        cfg.engine.pce = !matches!(how.synthesis, SynthesisKind::Full);
        cfg.engine.native_witness = matches!(how.synthesis, SynthesisKind::Native);
        cfg.engine.check_params = how.check_params;
        cfg.engine.point_cache = how.point_cache;
        // Fixed-base tables take seconds to build per key and pay only over many proofs.
        cfg.engine.tables = "0".into();
        let (engine, _) =
            cuzk_daemon::server::start_engine(&cfg.settings()?).with_context(|| {
                match how.backend {
                    BackendKind::Gpu => format!(
                        "--backend gpu on GPU {} (build with --features cuda)",
                        how.gpu.unwrap_or(0)
                    ),
                    BackendKind::Cpu => "starting the engine".into(),
                }
            })?;
        Ok(InProcess {
            engine: Some(engine),
            how,
            sent: Default::default(),
            _store: store,
        })
    }

    /// Proves one request of engine kind `kind`, printing its stage times; the result bytes.
    pub fn prove(&self, kind: &str, payload: Vec<u8>) -> Result<Vec<u8>> {
        use cuzk_engine::{Outcome, Priority, Request, Wait};
        let engine = self.engine.as_ref().expect("running until dropped");
        let n = self.sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let job = engine.submit(Request {
            request_id: format!("cuzk-prove-{n}"),
            kind: kind.into(),
            priority: Priority::Normal,
            payload,
        })?;
        match engine.await_job(job, Wait::Forever)? {
            Outcome::Succeeded { proof, timings: t } => {
                println!(
                    "prove {kind} backend={} synthesis={} load_ms={} synthesis_ms={} prove_ms={} total_ms={}",
                    match self.how.backend {
                        BackendKind::Cpu => "cpu",
                        BackendKind::Gpu => "gpu",
                    },
                    self.how.synthesis.name(),
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
}

impl Drop for InProcess {
    /// Stops the engine, which waits for point caches still being written.
    fn drop(&mut self) {
        if let Some(e) = self.engine.take() {
            e.shutdown();
        }
    }
}
