//! `cuzk bench single | batch | stress` against a daemon: progress while it runs, a summary
//! (throughput, p50/p95 per stage), an exactly-once check of every job, and a timeline SVG.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use cuzk_proto::diag::v1::GetTraceRequest;
use cuzk_proto::v1::await_proof_response::Status as AwaitStatus;
use cuzk_proto::v1::{
    AwaitProofRequest, CancelProofRequest, Priority, ProofKind, SubmitProofRequest,
};
use indicatif::{ProgressBar, ProgressStyle};
use rand::Rng;
use tokio::sync::Semaphore;

use crate::client::Target;
use crate::timeline::{self, SpanRec};

/// What to run.
#[derive(Clone, Debug)]
pub enum Mode {
    /// One proof.
    Single,
    /// `count` proofs, at most `concurrency` in flight.
    Batch { count: usize, concurrency: usize },
    /// Continuous submissions for `duration`, `concurrency` in flight, a `cancel_fraction` of
    /// them cancelled at a random point, priorities mixed.
    Stress {
        duration: Duration,
        concurrency: usize,
        cancel_fraction: f64,
    },
}

impl std::fmt::Display for Mode {
    /// The run in words, for the timeline's title.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mode::Single => write!(f, "one proof"),
            Mode::Batch { count, concurrency } => {
                write!(f, "{count} proofs, {concurrency} in flight")
            }
            Mode::Stress {
                duration,
                concurrency,
                cancel_fraction,
            } => write!(
                f,
                "stress for {} s, {concurrency} in flight, {:.0} % cancelled",
                duration.as_secs(),
                cancel_fraction * 100.0
            ),
        }
    }
}

/// A PoRep C2 request of this C1 output (raw or Curio envelope).
pub fn porep(c1: Vec<u8>) -> SubmitProofRequest {
    SubmitProofRequest {
        proof_kind: ProofKind::PorepSealCommit as i32,
        vanilla_proof: c1,
        ..Default::default()
    }
}

/// The `SubmitProof` of a PoSt request (kind from its proof type).
pub fn post(r: cuzk_circuits::PostRequest) -> Result<SubmitProofRequest> {
    use cuzk_circuits::post::PostType;
    let proof = cuzk_circuits::RegisteredPostProof::parse(r.registered_proof)
        .map_err(anyhow::Error::msg)?;
    let kind = match proof.post_type() {
        PostType::Window => ProofKind::WindowPostPartition,
        PostType::Winning => ProofKind::WinningPost,
    };
    Ok(SubmitProofRequest {
        proof_kind: kind as i32,
        registered_proof: r.registered_proof,
        vanilla_proofs: r.vanilla_proofs,
        randomness: r.randomness,
        partition_index: r.partition_index,
        miner_id: r.miner_id,
        ..Default::default()
    })
}

/// The `SubmitProof` of a SnapDeals request.
pub fn snap(r: cuzk_circuits::snap::SnapRequest) -> SubmitProofRequest {
    SubmitProofRequest {
        proof_kind: ProofKind::SnapDealsUpdate as i32,
        registered_proof: r.registered_proof,
        vanilla_proofs: r.vanilla_proofs,
        comm_r_old: r.comm_r_old,
        comm_r_new: r.comm_r_new,
        comm_d_new: r.comm_d_new,
        ..Default::default()
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    pub mode: Mode,
    /// The request every job sends (its request id and priority set per job): a PoRep C2
    /// (`Options::porep`) or a PoSt request.
    pub request: Arc<SubmitProofRequest>,
    pub timeline: Option<PathBuf>,
    /// Draw progress bars (off for tests and non-terminals).
    pub progress: bool,
    /// Mix priorities in a batch too (a stress run always does).
    pub mixed_priorities: bool,
    /// Write every returned proof to `<dir>/<request id>.proof` (for an outside verifier).
    pub save_proofs: Option<PathBuf>,
}

/// How one submitted job ended.
#[derive(Clone, Debug)]
pub struct JobResult {
    pub request_id: String,
    pub status: AwaitStatus,
    pub error: String,
    pub proof_len: usize,
    /// queue_wait, srs_load, synthesis, gpu_compute, total (ms), as the daemon reports them.
    pub stages: [u64; 5],
    /// Submission to the end of AwaitProof, as the client saw it.
    pub client_ms: u64,
}

pub const STAGES: [&str; 5] = [
    "queue_wait",
    "srs_load",
    "synthesis",
    "gpu_compute",
    "total",
];

#[derive(Debug)]
pub struct Report {
    pub jobs: Vec<JobResult>,
    pub wall: Duration,
    /// Share of the run's time the backend workers spent proving (from the trace).
    pub backend_busy: Option<f64>,
}

impl Report {
    pub fn count(&self, s: AwaitStatus) -> usize {
        self.jobs.iter().filter(|j| j.status == s).count()
    }

    /// `q`-quantile (0..=1) of a stage over completed jobs, in ms.
    pub fn quantile(&self, stage: usize, q: f64) -> Option<u64> {
        let mut v: Vec<u64> = self
            .jobs
            .iter()
            .filter(|j| j.status == AwaitStatus::Completed)
            .map(|j| j.stages[stage])
            .collect();
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        let i = ((v.len() - 1) as f64 * q).round() as usize;
        Some(v[i])
    }

    /// Completed proofs per hour of wall time.
    pub fn throughput_per_hour(&self) -> f64 {
        self.count(AwaitStatus::Completed) as f64 / self.wall.as_secs_f64().max(1e-9) * 3600.0
    }

    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "jobs {} | completed {} | failed {} | cancelled {} | wall {:.1} s | {:.1} proofs/hour{}",
            self.jobs.len(),
            self.count(AwaitStatus::Completed),
            self.count(AwaitStatus::Failed),
            self.count(AwaitStatus::Cancelled),
            self.wall.as_secs_f64(),
            self.throughput_per_hour(),
            self.backend_busy
                .map_or(String::new(), |b| format!(" | backend busy {:.0}%", b * 100.0)),
        );
        let _ = writeln!(out, "{:<12} {:>10} {:>10}", "stage", "p50 ms", "p95 ms");
        for (i, name) in STAGES.iter().enumerate() {
            let f = |q| {
                self.quantile(i, q)
                    .map_or("-".into(), |v: u64| v.to_string())
            };
            let _ = writeln!(out, "{name:<12} {:>10} {:>10}", f(0.5), f(0.95));
        }
        for j in self.jobs.iter().filter(|j| j.status == AwaitStatus::Failed) {
            let _ = writeln!(out, "failed {}: {}", j.request_id, j.error);
        }
        out
    }
}

fn bar(progress: bool, len: Option<u64>) -> ProgressBar {
    if !progress {
        return ProgressBar::hidden();
    }
    let pb = match len {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} proofs {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

/// Submits one job and awaits it (cancelling it after `cancel_after`, if set).
async fn one(
    target: &Target,
    request_id: String,
    request: Arc<SubmitProofRequest>,
    priority: Priority,
    cancel_after: Option<Duration>,
    save: Option<PathBuf>,
) -> Result<JobResult> {
    let mut client = target.connect().await?;
    let t = Instant::now();
    let submit = SubmitProofRequest {
        request_id: request_id.clone(),
        priority: priority as i32,
        ..request.as_ref().clone()
    };
    let job_id = client.submit_proof(submit).await?.into_inner().job_id;
    if let Some(after) = cancel_after {
        let mut c = client.clone();
        let id = job_id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            // It may have finished first; either way AwaitProof reports how it ended.
            let _ = c.cancel_proof(CancelProofRequest { job_id: id }).await;
        });
    }
    let r = client
        .await_proof(AwaitProofRequest {
            job_id,
            timeout_ms: 0,
        })
        .await?
        .into_inner();
    if let (Some(dir), false) = (save, r.proof.is_empty()) {
        let path = dir.join(format!("{request_id}.proof"));
        std::fs::write(&path, &r.proof).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(JobResult {
        request_id,
        status: AwaitStatus::try_from(r.status).unwrap_or(AwaitStatus::Unknown),
        error: r.error_message,
        proof_len: r.proof.len(),
        stages: [
            r.queue_wait_ms,
            r.srs_load_ms,
            r.synthesis_ms,
            r.gpu_compute_ms,
            r.total_ms,
        ],
        client_ms: t.elapsed().as_millis() as u64,
    })
}

/// Runs the benchmark against `target`.
pub async fn run(target: &Target, opts: &Options) -> Result<Report> {
    let run_id = format!(
        "bench-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    let mut diag = target.diagnostics().await?;
    let since = diag
        .get_trace(GetTraceRequest { since_us: u64::MAX })
        .await?
        .into_inner()
        .now_us;
    let (concurrency, total, until, cancel_fraction) = match &opts.mode {
        Mode::Single => (1, Some(1), None, 0.0),
        Mode::Batch { count, concurrency } => ((*concurrency).max(1), Some(*count), None, 0.0),
        Mode::Stress {
            duration,
            concurrency,
            cancel_fraction,
        } => (
            (*concurrency).max(1),
            None,
            Some(Instant::now() + *duration),
            *cancel_fraction,
        ),
    };
    let pb = bar(opts.progress, total.map(|n| n as u64));
    let start = Instant::now();
    let slots = Arc::new(Semaphore::new(concurrency));
    let mut tasks = tokio::task::JoinSet::new();
    let mut submitted = 0usize;
    loop {
        if total.is_some_and(|n| submitted >= n) || until.is_some_and(|u| Instant::now() >= u) {
            break;
        }
        let permit = slots.clone().acquire_owned().await?;
        if until.is_some_and(|u| Instant::now() >= u) {
            break;
        }
        let (priority, cancel_after) = {
            let mut rng = rand::thread_rng();
            let p = if until.is_some() || opts.mixed_priorities {
                [
                    Priority::Low,
                    Priority::Normal,
                    Priority::High,
                    Priority::Critical,
                ][rng.gen_range(0..4)]
            } else {
                // The request's own priority (`cuzk bench --priority`), else NORMAL.
                Priority::try_from(opts.request.priority)
                    .ok()
                    .filter(|p| *p != Priority::Unspecified)
                    .unwrap_or(Priority::Normal)
            };
            let c = rng
                .gen_bool(cancel_fraction.clamp(0.0, 1.0))
                .then(|| Duration::from_millis(rng.gen_range(0..5000)));
            (p, c)
        };
        let (t, payload, id, save) = (
            target.clone(),
            opts.request.clone(),
            format!("{run_id}-{submitted}"),
            opts.save_proofs.clone(),
        );
        let pb2 = pb.clone();
        tasks.spawn(async move {
            let r = one(&t, id, payload, priority, cancel_after, save).await;
            pb2.inc(1);
            drop(permit);
            r
        });
        submitted += 1;
    }
    let mut jobs = Vec::new();
    while let Some(r) = tasks.join_next().await {
        jobs.push(r??);
    }
    let wall = start.elapsed();
    pb.finish_and_clear();

    // Exactly once: every request id ended once, with a terminal status.
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for j in &jobs {
        *seen.entry(&j.request_id).or_default() += 1;
    }
    if jobs.len() != submitted || seen.values().any(|&n| n != 1) {
        bail!(
            "{submitted} jobs submitted but {} results came back",
            jobs.len()
        );
    }
    if let Some(j) = jobs.iter().find(|j| j.status == AwaitStatus::Unknown) {
        bail!("{} ended with no status", j.request_id);
    }

    let trace = diag
        .get_trace(GetTraceRequest { since_us: since })
        .await?
        .into_inner();
    let spans: Vec<SpanRec> = trace
        .spans
        .into_iter()
        .map(|s| SpanRec {
            job: s.job_id,
            partition: s.partition,
            stage: s.stage,
            worker: s.worker,
            start_us: s.start_us,
            end_us: s.end_us,
        })
        .collect();
    let backend: Vec<&SpanRec> = spans.iter().filter(|s| s.stage == "backend").collect();
    let workers = backend.iter().map(|s| s.worker).max().map_or(1, |w| w + 1);
    let backend_busy = (!backend.is_empty()).then(|| {
        (0..workers)
            .map(|w| {
                let mine: Vec<&SpanRec> =
                    backend.iter().copied().filter(|s| s.worker == w).collect();
                timeline::busy_ratio(&mine, since, trace.now_us)
            })
            .sum::<f64>()
            / workers as f64
    });
    let report = Report {
        jobs,
        wall,
        backend_busy,
    };
    if let Some(path) = &opts.timeline {
        let kind = ProofKind::try_from(opts.request.proof_kind).map_or_else(
            |_| "unknown kind".to_string(),
            |k| k.as_str_name().to_lowercase(),
        );
        let title = format!(
            "cuzk bench, {kind}: {}; {} jobs in {:.1} s, {:.1} proofs/hour",
            opts.mode,
            report.jobs.len(),
            wall.as_secs_f64(),
            report.throughput_per_hour()
        );
        std::fs::write(path, timeline::svg(&spans, since, trace.now_us, &title))?;
    }
    Ok(report)
}
