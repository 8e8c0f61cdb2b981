//! `cuzk`: the proving daemon, its client and benchmarks, and local prove / paramgen / PCE
//! tools and the bundled demo.

mod local;
mod progress;
mod remote;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use cuzk_circuits::post::PostType;
use cuzk_circuits::snap::{RegisteredUpdateProof, SnapRequest, SnapShape};
use cuzk_circuits::{C1Input, PostRequest, PostShape, RegisteredPostProof, SealShape};
use cuzk_daemon::config::CheckParams;
use cuzk_engine::kind::{PorepKind, PostKind, SnapKind};

use local::{BackendKind, SynthesisKind};
use remote::{BenchArgs, DaemonArgs, RemoteCommand};

/// The 2 KiB C1 output bundled for `cuzk demo` (sealed by tools/fixtures).
pub(crate) const DEMO_C1: &[u8] = include_bytes!("../../../fixtures/porep/2KiB/c1.json");

/// The bundled 2 KiB PoSt vanilla proofs (upstream's, written by `cuzk-fixtures --post`).
const DEMO_POST: &[u8] = include_bytes!("../../../fixtures/post/2KiB/post.json");
const DEMO_WINDOW: [&[u8]; 3] = [
    include_bytes!("../../../fixtures/post/2KiB/window-0.bin"),
    include_bytes!("../../../fixtures/post/2KiB/window-1.bin"),
    include_bytes!("../../../fixtures/post/2KiB/window-2.bin"),
];
const DEMO_WINNING: &[u8] = include_bytes!("../../../fixtures/post/2KiB/winning.bin");

/// The bundled 2 KiB sector update (upstream's, written by `cuzk-fixtures --snap`).
const DEMO_SNAP: &[u8] = include_bytes!("../../../fixtures/snap/2KiB/snap.json");
const DEMO_SNAP_PARTITION: &[u8] = include_bytes!("../../../fixtures/snap/2KiB/partition-0.bin");

/// The commitments of the bundled update.
#[derive(serde::Deserialize)]
struct DemoSnap {
    registered_proof: u64,
    comm_r_old: [u8; 32],
    comm_r_new: [u8; 32],
    comm_d_new: [u8; 32],
}

/// Proves the bundled SnapDeals update (verified by the engine before it is returned),
/// generating its 2 KiB parameters first when missing.
fn demo_snap(dir: &std::path::Path, engine: &local::InProcess) -> Result<()> {
    let f: DemoSnap = serde_json::from_slice(DEMO_SNAP)?;
    let shape = SnapShape::new(
        RegisteredUpdateProof::parse(f.registered_proof).map_err(anyhow::Error::msg)?,
    );
    let [params, _, _] = cuzk_circuits::CircuitShape::file_names(&shape);
    if !dir.join(params).exists() {
        println!("no snap-2k parameters; generating them (under a minute)");
        local::paramgen(
            &local::Fixed(shape),
            dir,
            &mut local::Setup::new(None, None)?,
        )?;
    }
    let request = SnapRequest {
        registered_proof: f.registered_proof,
        comm_r_old: f.comm_r_old.to_vec(),
        comm_r_new: f.comm_r_new.to_vec(),
        comm_d_new: f.comm_d_new.to_vec(),
        vanilla_proofs: vec![DEMO_SNAP_PARTITION.to_vec()],
    };
    let bytes = engine.prove(SnapKind::NAME, request.encode())?;
    println!(
        "demo: SnapDeals update proved and verified ({} bytes)",
        bytes.len()
    );
    Ok(())
}

/// What the bundled PoSt vanilla proofs answer.
#[derive(serde::Deserialize)]
struct DemoPost {
    randomness: [u8; 32],
    miner_id: u64,
}

/// Proves the bundled WindowPoSt partitions and WinningPoSt (each verified by the engine
/// before it is returned), generating their 2 KiB parameters first when missing.
fn demo_post(dir: &std::path::Path, engine: &local::InProcess) -> Result<()> {
    let f: DemoPost = serde_json::from_slice(DEMO_POST)?;
    let window = RegisteredPostProof::current(PostType::Window, "2KiB").expect("2 KiB");
    let winning = RegisteredPostProof::current(PostType::Winning, "2KiB").expect("2 KiB");
    for proof in [window, winning] {
        let [params, _, _] = proof.file_names();
        if !dir.join(params).exists() {
            println!(
                "no {} parameters; generating them (seconds)",
                proof.circuit_id()
            );
            let shape = local::Fixed(PostShape::new(proof));
            local::paramgen(&shape, dir, &mut local::Setup::new(None, None)?)?;
        }
    }
    let request = |proof: RegisteredPostProof, partition: u32, vanilla: &[&[u8]]| PostRequest {
        registered_proof: proof.id(),
        randomness: f.randomness.to_vec(),
        miner_id: f.miner_id,
        partition_index: partition,
        vanilla_proofs: vanilla.iter().map(|v| v.to_vec()).collect(),
    };
    let prove = |kind: &str, r: PostRequest| engine.prove(kind, r.encode());
    // Two sectors per 2 KiB partition: the third sector is partition 1, padded.
    for (k, sectors) in DEMO_WINDOW.chunks(2).enumerate() {
        let bytes = prove(PostKind::WINDOW, request(window, k as u32, sectors))?;
        println!(
            "demo: WindowPoSt partition {k} proved and verified ({} bytes)",
            bytes.len()
        );
    }
    let bytes = prove(PostKind::WINNING, request(winning, 0, &[DEMO_WINNING]))?;
    println!(
        "demo: WinningPoSt proved and verified ({} bytes)",
        bytes.len()
    );
    Ok(())
}

#[derive(Parser)]
#[command(name = "cuzk", version, about = "Groth16 proving engine for Filecoin")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Prove a sector.
    Prove {
        #[command(subcommand)]
        kind: ProveKind,
    },
    /// Generate Groth16 parameters with a random (test) setup.
    Paramgen {
        #[command(subcommand)]
        kind: ParamgenKind,
    },
    /// Pre-compiled constraint matrices.
    Pce {
        #[command(subcommand)]
        kind: PceKind,
    },
    /// Run the cuzk.v1 gRPC daemon (Curio's ProvingEngine).
    Daemon(DaemonArgs),
    /// Talk to a running daemon.
    #[command(flatten)]
    Remote(RemoteCommand),
    /// Benchmark a daemon (or an in-process one): progress, summary table, timeline SVG.
    Bench(BenchArgs),
    /// Write a random well-formed PoSt request (sparse trees, every check passes) for
    /// benchmarks at sizes no test can seal; `cuzk bench --post` sends it.
    RandomPost {
        /// The FFI proof type (Winning 0-4, Window 5-9 and 10-14).
        #[arg(long)]
        registered_proof: u64,
        /// Sectors [default: a full partition].
        #[arg(long)]
        sectors: Option<usize>,
        #[arg(long, default_value_t = 0)]
        partition_index: u32,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
    },
    /// A random sector of any size, sealed sparsely (`cuzk_circuits::seal`): writes
    /// `<out>/c1.json`, whose proofs satisfy the circuit, and `<out>/sector.json`, what
    /// upstream's `verify_seal` takes beside the proof (`cuzk bench --c1` sends the C1).
    RandomC1 {
        /// 2KiB, 8MiB, 512MiB, 32GiB or 64GiB (the current, interactive proof type).
        #[arg(long)]
        sector_size: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The folder the two files go into.
        #[arg(long)]
        out: PathBuf,
    },
    /// A random well-formed SnapDeals request of any size (every partition; it proves and
    /// verifies under any key of its size, for benchmarks), as a `cuzk bench --snap` input.
    RandomSnap {
        /// The FFI update proof type (0-4: 2KiB .. 64GiB).
        #[arg(long)]
        registered_proof: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
    },
    /// Generate 2 KiB parameters if missing, then prove and verify every kind the engine
    /// serves from the bundled 2 KiB fixtures (PoRep C2, WindowPoSt, WinningPoSt, SnapDeals).
    Demo {
        /// Parameter folder [default: $FIL_PROOFS_PARAMETER_CACHE, else .cache/params].
        #[arg(long)]
        params: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ProveKind {
    /// PoRep C2: C1 output (raw JSON or Curio envelope) to the concatenated partition proofs.
    Porep {
        /// C1 output file.
        #[arg(long)]
        c1: PathBuf,
        #[command(flatten)]
        opts: ProveOpts,
    },
    /// One WindowPoSt partition (as Curio asks for it) to its 192-byte proof.
    WindowPost {
        #[command(flatten)]
        post: PostArgs,
        /// The partition of the deadline these sectors are.
        #[arg(long, default_value_t = 0)]
        partition_index: u32,
    },
    /// A WinningPoSt of the challenged sector to its 192-byte proof.
    WinningPost {
        #[command(flatten)]
        post: PostArgs,
    },
    /// A SnapDeals update (every partition) to the partition proofs concatenated.
    Snap(SnapArgs),
}

/// A SnapDeals update, from Curio's fields.
#[derive(clap::Args)]
struct SnapArgs {
    /// One vanilla proof file per partition (bincode `PartitionProof`, what
    /// `generate_partition_proofs` returns), in partition order.
    #[arg(long = "vanilla", required = true)]
    vanilla: Vec<PathBuf>,
    /// The registered update proof's FFI number (0-4: 2KiB .. 64GiB).
    #[arg(long, conflicts_with = "sector_size")]
    registered_proof: Option<u64>,
    /// Or the sector size (2KiB .. 64GiB).
    #[arg(long)]
    sector_size: Option<String>,
    /// The sealed sector's comm_r, as 64 hex digits (bytes in order).
    #[arg(long)]
    comm_r_old: String,
    /// The updated replica's comm_r, as 64 hex digits.
    #[arg(long)]
    comm_r_new: String,
    /// The new data's comm_d, as 64 hex digits.
    #[arg(long)]
    comm_d_new: String,
    #[command(flatten)]
    opts: ProveOpts,
}

impl SnapArgs {
    /// Runs the update through an in-process engine and writes the proof.
    fn prove(self) -> Result<()> {
        let proof = proof_id(self.registered_proof, &self.sector_size, |size| {
            Ok(update_proof(size)?.id())
        })?;
        self.opts.prove(SnapKind::NAME, || {
            let request = SnapRequest {
                registered_proof: proof,
                comm_r_old: hex(&self.comm_r_old).context("--comm-r-old")?,
                comm_r_new: hex(&self.comm_r_new).context("--comm-r-new")?,
                comm_d_new: hex(&self.comm_d_new).context("--comm-d-new")?,
                vanilla_proofs: read_all(&self.vanilla)?,
            };
            Ok(request.encode())
        })
    }
}

/// `cuzk prove`'s log: warnings, and each parameter load (where its points came from).
const PROVE_LOG: &str = "warn,cuzk_engine::residency=info";

/// The proof type a `prove` names: `--registered-proof`, else the one of `--sector-size`.
fn proof_id(
    registered_proof: Option<u64>,
    sector_size: &Option<String>,
    of_size: impl Fn(&str) -> Result<u64>,
) -> Result<u64> {
    match (registered_proof, sector_size) {
        (Some(id), _) => Ok(id),
        (None, Some(size)) => of_size(size),
        (None, None) => anyhow::bail!("give --registered-proof or --sector-size"),
    }
}

/// Every file's bytes.
fn read_all(paths: &[PathBuf]) -> Result<Vec<Vec<u8>>> {
    paths
        .iter()
        .map(|p| std::fs::read(p).with_context(|| format!("reading {}", p.display())))
        .collect()
}

/// A WindowPoSt partition or a WinningPoSt, from Curio's fields.
#[derive(clap::Args)]
struct PostArgs {
    /// One vanilla proof file per sector (bincode `FallbackPoStSectorProof`, what
    /// `generate_single_vanilla_proof` returns), in the partition's sector order.
    #[arg(long = "vanilla", required = true)]
    vanilla: Vec<PathBuf>,
    /// The registered PoSt proof's FFI number (Winning 0-4, Window 5-9 and 10-14).
    #[arg(long, conflicts_with = "sector_size")]
    registered_proof: Option<u64>,
    /// Or the sector size (2KiB .. 64GiB), for the current proof type.
    #[arg(long)]
    sector_size: Option<String>,
    /// The 32-byte challenge randomness, as 64 hex digits (bytes in order).
    #[arg(long)]
    randomness: String,
    #[arg(long)]
    miner_id: u64,
    #[command(flatten)]
    opts: ProveOpts,
}

/// Where parameters are, where the proof goes, and what proves it (every `cuzk prove`).
#[derive(clap::Args)]
struct ProveOpts {
    /// Parameter folder [default: $FIL_PROOFS_PARAMETER_CACHE].
    #[arg(long)]
    params: Option<PathBuf>,
    /// Where to write the proof bytes.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    /// The GPU's ordinal, for `--backend gpu` [default: 0].
    #[arg(long)]
    gpu: Option<usize>,
    /// How witnesses are produced.
    #[arg(long, value_enum, default_value_t = SynthesisKind::Native)]
    synthesis: SynthesisKind,
    /// How far to check parameter points when loading.
    #[arg(long, value_enum, default_value_t = CheckParams::Trusted)]
    check_params: CheckParams,
    /// Decode the parameter points every time instead of mapping them from (and writing)
    /// the point cache `<params file>.cuzk-points`, which takes as much disk again.
    #[arg(long)]
    no_point_cache: bool,
}

impl ProveOpts {
    fn params_dir(&self) -> Result<PathBuf> {
        self.params
            .clone()
            .map_or_else(local::default_params_dir, Ok)
    }

    /// Proves the request `payload` makes, of engine kind `kind`, through an in-process
    /// engine, and writes the proof. The engine starts first, so that a backend that cannot
    /// start is refused before any input is read.
    fn prove(&self, kind: &str, payload: impl FnOnce() -> Result<Vec<u8>>) -> Result<()> {
        progress::prove(PROVE_LOG);
        let engine = local::InProcess::start(
            &self.params_dir()?,
            local::How {
                backend: self.backend,
                gpu: self.gpu,
                synthesis: self.synthesis,
                check_params: self.check_params,
                point_cache: !self.no_point_cache,
            },
        )?;
        self.write(&engine.prove(kind, payload()?)?)
    }

    fn write(&self, proof: &[u8]) -> Result<()> {
        std::fs::write(&self.out, proof)
            .with_context(|| format!("writing {}", self.out.display()))?;
        println!("wrote {} bytes to {}", proof.len(), self.out.display());
        Ok(())
    }
}

impl PostArgs {
    /// Runs the request through an in-process engine and writes the proof.
    fn prove(self, post: PostType, partition_index: u32) -> Result<()> {
        let proof = proof_id(self.registered_proof, &self.sector_size, |size| {
            Ok(post_proof(post, size)?.id())
        })?;
        let kind = match post {
            PostType::Window => PostKind::WINDOW,
            PostType::Winning => PostKind::WINNING,
        };
        self.opts.prove(kind, || {
            let request = PostRequest {
                registered_proof: proof,
                randomness: hex(&self.randomness).context("--randomness")?,
                miner_id: self.miner_id,
                partition_index,
                vanilla_proofs: read_all(&self.vanilla)?,
            };
            Ok(request.encode())
        })
    }
}

/// Bytes from hex digits.
fn hex(s: &str) -> Result<Vec<u8>> {
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        anyhow::bail!("{s:?} is not an even number of hex digits");
    }
    (0..s.len())
        .step_by(2)
        .map(|i| Ok(u8::from_str_radix(&s[i..i + 2], 16)?))
        .collect()
}

#[derive(Subcommand)]
enum PceKind {
    /// Record a circuit's matrices into a PCE file.
    Extract {
        #[command(subcommand)]
        kind: PceExtract,
    },
    /// Time loading a PCE file and each matrix-vector product on a synthetic witness shaped
    /// like Filecoin's (45% zeros, 45% ones, 10% arbitrary field elements).
    Bench {
        #[arg(long)]
        pce: PathBuf,
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
}

#[derive(Subcommand)]
enum PceExtract {
    Porep(SizeOut),
    /// The WindowPoSt circuit (at 32 GiB about 5 minutes on 16 cores: do it before the first
    /// deadline, with `--out` the parameters' directory, where the engine finds it).
    WindowPost(SizeOut),
    WinningPost(SizeOut),
    /// The SnapDeals update circuit (one partition's; every partition shares it).
    Snap(SizeOut),
}

/// A sector size and where the file goes.
#[derive(clap::Args)]
struct SizeOut {
    /// 2KiB, 8MiB, 512MiB, 32GiB or 64GiB.
    #[arg(long)]
    sector_size: String,
    /// The PCE file, or a directory (the parameters'), where it takes the name the engine
    /// looks for.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Subcommand)]
enum ParamgenKind {
    /// Parameters for a PoRep sector size, under the names upstream looks for (32GiB and 64GiB
    /// need about 90 GB of memory, and `--gpu` to finish in minutes).
    Porep(ParamgenArgs),
    /// Parameters of the WindowPoSt circuit of a sector size (V1 and V1_2 share them).
    WindowPost(ParamgenArgs),
    /// Parameters of the WinningPoSt circuit of a sector size.
    WinningPost(ParamgenArgs),
    /// Parameters of the SnapDeals update circuit of a sector size.
    Snap(ParamgenArgs),
}

/// A random (test) setup of one circuit.
#[derive(clap::Args)]
struct ParamgenArgs {
    /// 2KiB, 8MiB, 512MiB, 32GiB or 64GiB.
    #[arg(long)]
    sector_size: String,
    /// The parameter folder the files go into.
    #[arg(long)]
    out: PathBuf,
    /// Compute the query points on this GPU (a build with `--features cuda`): the same file
    /// as the CPU's for the same seed, in minutes instead of hours at 32 GiB.
    #[arg(long)]
    gpu: Option<usize>,
    /// Derive the setup's randomness from this seed (a reproducible test key) instead of
    /// fresh OS randomness.
    #[arg(long)]
    seed: Option<u64>,
}

/// `cuzk pce extract window-post | winning-post`.
fn extract_post(post: PostType, size: &str, out: &std::path::Path) -> Result<()> {
    extract_fixed(PostShape::new(post_proof(post, size)?), out)
}

/// `cuzk pce extract` of a PoSt or SnapDeals circuit.
fn extract_fixed<S>(shape: S, out: &std::path::Path) -> Result<()>
where
    S: cuzk_circuits::CircuitShape,
    S::Error: std::error::Error + Send + Sync + 'static,
{
    let circuit = local::Fixed(shape);
    local::write_pce(&circuit, &local::extract_pce(&circuit)?, out)
}

fn update_proof(size: &str) -> Result<RegisteredUpdateProof> {
    RegisteredUpdateProof::for_size(size)
        .with_context(|| format!("--sector-size {size}: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB"))
}

fn post_proof(post: PostType, size: &str) -> Result<RegisteredPostProof> {
    RegisteredPostProof::current(post, size)
        .with_context(|| format!("--sector-size {size}: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB"))
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Prove {
            kind: ProveKind::Porep { c1, opts },
        } => opts.prove(PorepKind::NAME, || {
            std::fs::read(&c1).with_context(|| format!("reading {}", c1.display()))
        })?,
        Command::Prove {
            kind:
                ProveKind::WindowPost {
                    post,
                    partition_index,
                },
        } => post.prove(PostType::Window, partition_index)?,
        Command::Prove {
            kind: ProveKind::WinningPost { post },
        } => post.prove(PostType::Winning, 0)?,
        Command::Prove {
            kind: ProveKind::Snap(snap),
        } => snap.prove()?,
        Command::Paramgen { kind } => {
            // A 32 GiB setup takes minutes: a bar of its steps, or their log lines.
            progress::paramgen();
            let (args, circuit): (&ParamgenArgs, Box<dyn local::Circuit>) = match &kind {
                ParamgenKind::Porep(a) => {
                    (a, Box::new(SealShape::from_sector_size(&a.sector_size)?))
                }
                ParamgenKind::WindowPost(a) => (
                    a,
                    Box::new(local::Fixed(PostShape::new(post_proof(
                        PostType::Window,
                        &a.sector_size,
                    )?))),
                ),
                ParamgenKind::WinningPost(a) => (
                    a,
                    Box::new(local::Fixed(PostShape::new(post_proof(
                        PostType::Winning,
                        &a.sector_size,
                    )?))),
                ),
                ParamgenKind::Snap(a) => (
                    a,
                    Box::new(local::Fixed(SnapShape::new(update_proof(&a.sector_size)?))),
                ),
            };
            let mut setup = local::Setup::new(args.gpu, args.seed)?;
            local::paramgen(circuit.as_ref(), &args.out, &mut setup)?;
        }
        Command::Pce {
            kind:
                PceKind::Extract {
                    kind: PceExtract::Porep(SizeOut { sector_size, out }),
                },
        } => {
            let shape = SealShape::from_sector_size(&sector_size)?;
            local::write_pce(&shape, &local::extract_pce(&shape)?, &out)?;
        }
        Command::Pce {
            kind:
                PceKind::Extract {
                    kind: PceExtract::WindowPost(SizeOut { sector_size, out }),
                },
        } => extract_post(PostType::Window, &sector_size, &out)?,
        Command::Pce {
            kind:
                PceKind::Extract {
                    kind: PceExtract::WinningPost(SizeOut { sector_size, out }),
                },
        } => extract_post(PostType::Winning, &sector_size, &out)?,
        Command::Pce {
            kind:
                PceKind::Extract {
                    kind: PceExtract::Snap(SizeOut { sector_size, out }),
                },
        } => extract_fixed(SnapShape::new(update_proof(&sector_size)?), &out)?,
        Command::Pce {
            kind: PceKind::Bench { pce, runs },
        } => local::pce_bench(&pce, runs)?,
        Command::RandomPost {
            registered_proof,
            sectors,
            partition_index,
            seed,
            out,
        } => {
            use rand::SeedableRng;
            let proof = RegisteredPostProof::parse(registered_proof).map_err(anyhow::Error::msg)?;
            let n = sectors.unwrap_or(proof.sectors());
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let r = cuzk_circuits::post::random::request(proof, n, partition_index, &mut rng);
            std::fs::write(&out, r.encode())
                .with_context(|| format!("writing {}", out.display()))?;
            println!("random {proof:?} request of {n} sectors: {}", out.display());
        }
        Command::RandomC1 {
            sector_size,
            seed,
            out,
        } => {
            use rand::SeedableRng;
            let proof = SealShape::from_sector_size(&sector_size)?.registered_proof();
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
            let t = std::time::Instant::now();
            let (c1, info) = cuzk_circuits::seal::random_sector(proof, &mut rng)?;
            std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
            let write = |name: &str, bytes: Vec<u8>| {
                let path = out.join(name);
                std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
            };
            write("c1.json", serde_json::to_vec(&c1)?)?;
            write("sector.json", serde_json::to_vec_pretty(&info)?)?;
            println!(
                "random sealed {proof:?} sector {} in {} ms: {}",
                info.sector_id,
                t.elapsed().as_millis(),
                out.display()
            );
        }
        Command::RandomSnap {
            registered_proof,
            seed,
            out,
        } => {
            use rand::SeedableRng;
            let proof =
                RegisteredUpdateProof::parse(registered_proof).map_err(anyhow::Error::msg)?;
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let r = cuzk_circuits::snap::random::update(proof, &mut rng);
            std::fs::write(&out, r.encode())
                .with_context(|| format!("writing {}", out.display()))?;
            println!(
                "random {proof:?} update of {} partitions: {}",
                r.vanilla_proofs.len(),
                out.display()
            );
        }
        Command::Daemon(args) => remote::daemon(args)?,
        Command::Remote(cmd) => remote::client(cmd)?,
        Command::Bench(args) => remote::bench(args)?,
        Command::Demo { params } => {
            let dir = match params {
                Some(d) => d,
                None => {
                    local::default_params_dir().unwrap_or_else(|_| PathBuf::from(".cache/params"))
                }
            };
            let c1 = C1Input::parse(DEMO_C1)?;
            let shape = SealShape::new(c1.registered_proof)?;
            let [params_name, _, _] = shape.file_names()?;
            if !dir.join(&params_name).exists() {
                println!(
                    "no 2 KiB parameters in {}; generating them (about a minute)",
                    dir.display()
                );
                local::paramgen(&shape, &dir, &mut local::Setup::new(None, None)?)?;
            }
            let engine = local::InProcess::start(&dir, local::How::CPU)?;
            let proof = engine.prove(PorepKind::NAME, DEMO_C1.to_vec())?;
            println!(
                "demo: PoRep C2 of the bundled 2 KiB sector proved and verified ({} bytes)",
                proof.len()
            );
            demo_post(&dir, &engine)?;
            demo_snap(&dir, &engine)?;
        }
    }
    Ok(())
}
