//! `cuzk daemon`, the client commands against a running daemon, and `cuzk bench`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use cuzk_daemon::bench::{self, Mode};
use cuzk_daemon::client::Target;
use cuzk_daemon::config::{Config, LogFormat};
use cuzk_daemon::{logging, server};
use cuzk_proto::v1::await_proof_response::Status as AwaitStatus;
use cuzk_proto::v1::srs_status::Tier;
use cuzk_proto::v1::{self as pb, Priority, ProofKind};

#[derive(Args)]
pub struct DaemonArgs {
    /// TOML configuration (see docs/cuzk.example.toml); flags below override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// gRPC listener: unix:///path or host:port (repeatable).
    #[arg(long)]
    listen: Vec<String>,
    /// Parameter folder.
    #[arg(long)]
    params: Option<PathBuf>,
    /// Job store folder.
    #[arg(long)]
    store: Option<PathBuf>,
    /// Prometheus /metrics address (host:port).
    #[arg(long)]
    metrics_listen: Option<String>,
    /// Largest gRPC message in bytes.
    #[arg(long)]
    max_message_bytes: Option<u64>,
}

#[derive(Args, Clone)]
pub struct ClientArgs {
    /// The daemon: unix:///path or host:port.
    #[arg(long, env = "CUZK_ADDR", default_value = "unix:///run/cuzk/cuzk.sock")]
    addr: String,
    /// File with the bearer token for a TCP daemon.
    #[arg(long, env = "CUZK_TOKEN_FILE")]
    token_file: Option<PathBuf>,
    /// CA certificate (PEM) of a TLS daemon.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
}

impl ClientArgs {
    fn target(&self) -> Result<Target> {
        let token = match &self.token_file {
            None => None,
            Some(p) => Some(
                std::fs::read_to_string(p)
                    .with_context(|| format!("reading {}", p.display()))?
                    .trim()
                    .to_string(),
            ),
        };
        Ok(Target {
            addr: self.addr.clone(),
            token,
            tls_ca: self.tls_ca.clone(),
            tls_domain: None,
        })
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum PriorityArg {
    Low,
    Normal,
    High,
    Critical,
}

impl From<PriorityArg> for Priority {
    fn from(p: PriorityArg) -> Self {
        match p {
            PriorityArg::Low => Priority::Low,
            PriorityArg::Normal => Priority::Normal,
            PriorityArg::High => Priority::High,
            PriorityArg::Critical => Priority::Critical,
        }
    }
}

#[derive(Args)]
pub struct SubmitArgs {
    /// C1 output (raw JSON or Curio's envelope).
    #[arg(long)]
    c1: PathBuf,
    /// Idempotency key [default: none].
    #[arg(long, default_value = "")]
    request_id: String,
    #[arg(long, value_enum, default_value_t = PriorityArg::Normal)]
    priority: PriorityArg,
}

impl SubmitArgs {
    fn request(&self) -> Result<pb::SubmitProofRequest> {
        Ok(pb::SubmitProofRequest {
            request_id: self.request_id.clone(),
            proof_kind: ProofKind::PorepSealCommit as i32,
            priority: Priority::from(self.priority) as i32,
            vanilla_proof: std::fs::read(&self.c1)
                .with_context(|| format!("reading {}", self.c1.display()))?,
            ..Default::default()
        })
    }
}

#[derive(Subcommand)]
pub enum RemoteCommand {
    /// Submit a PoRep C2 job; prints its job id.
    Submit {
        #[command(flatten)]
        client: ClientArgs,
        #[command(flatten)]
        submit: SubmitArgs,
    },
    /// Wait for a job; writes the proof with --out.
    Await {
        #[command(flatten)]
        client: ClientArgs,
        job_id: String,
        /// 0 waits for ever.
        #[arg(long, default_value_t = 0)]
        timeout_ms: u64,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Submit and wait in one call (what Curio does).
    ProveRemote {
        #[command(flatten)]
        client: ClientArgs,
        #[command(flatten)]
        submit: SubmitArgs,
        #[arg(long)]
        out: PathBuf,
    },
    /// Queues, circuits, backends and counters.
    Status {
        #[command(flatten)]
        client: ClientArgs,
    },
    /// The daemon's Prometheus text.
    Metrics {
        #[command(flatten)]
        client: ClientArgs,
    },
    Cancel {
        #[command(flatten)]
        client: ClientArgs,
        job_id: String,
    },
    /// Load a circuit's parameters (and PCE) now, e.g. porep-32g.
    Preload {
        #[command(flatten)]
        client: ClientArgs,
        circuit_id: String,
    },
    /// Release a circuit's memory.
    Evict {
        #[command(flatten)]
        client: ClientArgs,
        circuit_id: String,
    },
}

#[derive(Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    mode: BenchMode,
    #[command(flatten)]
    client: ClientArgs,
    /// Start a daemon in this process (temporary store and socket) instead of using --addr.
    #[arg(long, global = true)]
    in_process: bool,
    /// Parameter folder for --in-process [default: $FIL_PROOFS_PARAMETER_CACHE].
    #[arg(long, global = true)]
    params: Option<PathBuf>,
    /// C1 output to prove [default: the bundled 2 KiB sector].
    #[arg(long, global = true)]
    c1: Option<PathBuf>,
    /// Prove this PoSt request instead (`cuzk random-post` writes one).
    #[arg(long, global = true, conflicts_with = "c1")]
    post: Option<PathBuf>,
    /// Prove this SnapDeals request instead (`cuzk random-snap` writes one).
    #[arg(long, global = true, conflicts_with_all = ["c1", "post"])]
    snap: Option<PathBuf>,
    /// Every job's priority (low, normal, high, critical) outside stress and mixed runs.
    #[arg(long, global = true)]
    priority: Option<String>,
    /// Where to write the timeline SVG.
    #[arg(long, global = true)]
    timeline: Option<PathBuf>,
    /// No progress bars.
    #[arg(long, global = true)]
    quiet: bool,
    /// Write every proof to <dir>/<request id>.proof.
    #[arg(long, global = true)]
    save_proofs: Option<PathBuf>,
}

#[derive(Subcommand, Clone)]
enum BenchMode {
    /// One proof.
    Single,
    /// A batch of proofs.
    Batch {
        #[arg(long, default_value_t = 4)]
        count: usize,
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// Random priorities (low, normal, high, critical) instead of all normal.
        #[arg(long)]
        mixed_priorities: bool,
    },
    /// Continuous load with mixed priorities and random cancellations.
    Stress {
        #[arg(long, default_value_t = 60)]
        duration_secs: u64,
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        #[arg(long, default_value_t = 0.1)]
        cancel_fraction: f64,
    },
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

pub fn daemon(args: DaemonArgs) -> Result<()> {
    let mut cfg = Config::load(args.config.as_deref(), std::env::vars())?;
    if !args.listen.is_empty() {
        cfg.daemon.listen = args.listen;
    }
    if let Some(p) = args.params {
        cfg.engine.params_dir = p;
    }
    if let Some(s) = args.store {
        cfg.engine.store_dir = s;
    }
    if let Some(m) = args.metrics_listen {
        cfg.daemon.metrics_listen = m;
    }
    if let Some(m) = args.max_message_bytes {
        cfg.daemon.max_message_bytes = m;
    }
    let settings = cfg.settings()?;
    logging::init(settings.log.format, &settings.log.level);
    // A file-size limit (RLIMIT_FSIZE) must surface as a write error (EFBIG) that the engine
    // reports against the job or request, not as SIGXFSZ killing the daemon mid-write.
    // SAFETY: installing SIG_IGN for one signal has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    runtime()?.block_on(server::run(settings, std::future::pending()))
}

/// A refused call as `CODE: message`, without tonic's metadata dump.
fn rpc_error(s: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!("{:?}: {}", s.code(), s.message())
}

fn job_line(r: &pb::AwaitProofResponse) -> String {
    let status = AwaitStatus::try_from(r.status).map_or("UNKNOWN", |s| s.as_str_name());
    format!(
        "{} {status} proof_bytes={} queue_wait_ms={} srs_load_ms={} synthesis_ms={} gpu_compute_ms={} total_ms={}{}",
        r.job_id,
        r.proof.len(),
        r.queue_wait_ms,
        r.srs_load_ms,
        r.synthesis_ms,
        r.gpu_compute_ms,
        r.total_ms,
        if r.error_message.is_empty() {
            String::new()
        } else {
            format!(" error={:?}", r.error_message)
        }
    )
}

/// Prints `r` and writes its proof; an error unless the job completed.
fn finish(r: &pb::AwaitProofResponse, out: Option<&PathBuf>) -> Result<()> {
    println!("{}", job_line(r));
    if r.status != AwaitStatus::Completed as i32 {
        bail!("{} did not complete", r.job_id);
    }
    if let Some(out) = out {
        std::fs::write(out, &r.proof).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}

impl RemoteCommand {
    fn client(&self) -> &ClientArgs {
        match self {
            RemoteCommand::Submit { client, .. }
            | RemoteCommand::Await { client, .. }
            | RemoteCommand::ProveRemote { client, .. }
            | RemoteCommand::Status { client }
            | RemoteCommand::Metrics { client }
            | RemoteCommand::Cancel { client, .. }
            | RemoteCommand::Preload { client, .. }
            | RemoteCommand::Evict { client, .. } => client,
        }
    }
}

/// The reply of a call, or the refusal as `CODE: message`.
fn reply<T>(r: Result<tonic::Response<T>, tonic::Status>) -> Result<T> {
    r.map(tonic::Response::into_inner).map_err(rpc_error)
}

pub fn client(cmd: RemoteCommand) -> Result<()> {
    logging::init(LogFormat::Text, "warn");
    let target = cmd.client().target()?;
    runtime()?.block_on(async move {
        let mut c = target.connect().await?;
        match cmd {
            RemoteCommand::Submit { submit, .. } => {
                let r = reply(c.submit_proof(submit.request()?).await)?;
                println!("{} queue_position={}", r.job_id, r.queue_position);
            }
            RemoteCommand::Await {
                job_id,
                timeout_ms,
                out,
                ..
            } => {
                let req = pb::AwaitProofRequest { job_id, timeout_ms };
                finish(&reply(c.await_proof(req).await)?, out.as_ref())?;
            }
            RemoteCommand::ProveRemote { submit, out, .. } => {
                let req = pb::ProveRequest {
                    submit: Some(submit.request()?),
                };
                let r = reply(c.prove(req).await)?.result.unwrap_or_default();
                finish(&r, Some(&out))?;
            }
            RemoteCommand::Status { .. } => {
                let s = reply(c.get_status(pb::GetStatusRequest {}).await)?;
                println!(
                    "uptime {} s | completed {} | failed {} | memory {} / {} bytes",
                    s.uptime_seconds,
                    s.total_proofs_completed,
                    s.total_proofs_failed,
                    s.pinned_memory_bytes,
                    s.pinned_memory_limit_bytes
                );
                for g in &s.gpus {
                    println!(
                        "backend {} {} vram {}/{} job {:?} {}",
                        g.ordinal,
                        g.name,
                        g.vram_free_bytes,
                        g.vram_total_bytes,
                        g.current_job_id,
                        g.current_proof_kind
                    );
                }
                for q in &s.queues {
                    println!(
                        "queue {} pending {} in_progress {}",
                        q.proof_kind, q.pending, q.in_progress
                    );
                }
                for c in &s.loaded_srs {
                    let tier = Tier::try_from(c.tier).map_or("?", |t| t.as_str_name());
                    println!(
                        "circuit {} {tier} {} bytes refs {}",
                        c.circuit_id, c.size_bytes, c.ref_count
                    );
                }
            }
            RemoteCommand::Metrics { .. } => {
                let m = reply(c.get_metrics(pb::GetMetricsRequest {}).await)?;
                print!("{}", m.prometheus_text);
            }
            RemoteCommand::Cancel { job_id, .. } => {
                let r = reply(c.cancel_proof(pb::CancelProofRequest { job_id }).await)?;
                println!("cancelled was_running={}", r.was_running);
            }
            RemoteCommand::Preload { circuit_id, .. } => {
                let r = reply(c.preload_srs(pb::PreloadSrsRequest { circuit_id }).await)?;
                println!(
                    "preload already_loaded={} load_time_ms={}",
                    r.already_loaded, r.load_time_ms
                );
            }
            RemoteCommand::Evict { circuit_id, .. } => {
                let r = reply(c.evict_srs(pb::EvictSrsRequest { circuit_id }).await)?;
                println!(
                    "evict was_loaded={} freed_bytes={}",
                    r.was_loaded, r.freed_bytes
                );
            }
        }
        Ok(())
    })
}

pub fn bench(args: BenchArgs) -> Result<()> {
    logging::init(LogFormat::Text, "warn");
    let read = |p: &PathBuf| std::fs::read(p).with_context(|| format!("reading {}", p.display()));
    let request = match (&args.c1, &args.post, &args.snap) {
        (_, _, Some(p)) => bench::snap(cuzk_circuits::snap::SnapRequest::decode(&read(p)?)?),
        (_, Some(p), None) => bench::post(cuzk_circuits::PostRequest::decode(&read(p)?)?)?,
        (Some(p), None, None) => bench::porep(read(p)?),
        (None, None, None) => bench::porep(crate::DEMO_C1.to_vec()),
    };
    let mut request = request;
    if let Some(p) = &args.priority {
        request.priority = pb::Priority::from_str_name(&p.to_uppercase())
            .filter(|p| *p != pb::Priority::Unspecified)
            .with_context(|| format!("--priority {p}: low, normal, high or critical"))?
            as i32;
    }
    let mode = match args.mode.clone() {
        BenchMode::Single => Mode::Single,
        BenchMode::Batch {
            count, concurrency, ..
        } => Mode::Batch { count, concurrency },
        BenchMode::Stress {
            duration_secs,
            concurrency,
            cancel_fraction,
        } => Mode::Stress {
            duration: Duration::from_secs(duration_secs),
            concurrency,
            cancel_fraction,
        },
    };
    if let Some(dir) = &args.save_proofs {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let opts = bench::Options {
        mode,
        request: Arc::new(request),
        timeline: args.timeline.clone(),
        progress: !args.quiet,
        mixed_priorities: matches!(
            args.mode,
            BenchMode::Batch {
                mixed_priorities: true,
                ..
            }
        ),
        save_proofs: args.save_proofs.clone(),
    };
    runtime()?.block_on(async move {
        let report = if args.in_process {
            let tmp = tempdir()?;
            let mut cfg = Config::load(None, std::env::vars())?;
            let socket = tmp.join("cuzk.sock");
            cfg.daemon.listen = vec![format!("unix://{}", socket.display())];
            cfg.engine.store_dir = tmp.join("store");
            if let Some(p) = args.params.clone() {
                cfg.engine.params_dir = p;
            }
            let settings = cfg.settings()?;
            let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
            let daemon = tokio::spawn(server::run(settings, async move {
                let _ = stop_rx.await;
            }));
            let target = Target {
                addr: format!("unix://{}", socket.display()),
                ..Default::default()
            };
            // The daemon is ready once its socket answers.
            let mut tries = 0;
            while target.connect().await.is_err() {
                tries += 1;
                if daemon.is_finished() {
                    daemon.await??;
                    bail!("the in-process daemon stopped before serving");
                }
                if tries > 600 {
                    bail!("the in-process daemon did not start within a minute");
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let report = bench::run(&target, &opts).await;
            let _ = stop_tx.send(());
            daemon.await??;
            let _ = std::fs::remove_dir_all(&tmp);
            report?
        } else {
            bench::run(&args.client.target()?, &opts).await?
        };
        print!("{}", report.table());
        if let Some(p) = &opts.timeline {
            println!("timeline: {}", p.display());
        }
        Ok(())
    })
}

/// A fresh private folder for an in-process daemon.
fn tempdir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("cuzk-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}
