//! Counters the engine keeps, and their Prometheus text form (what `GetMetrics` returns).

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::job::{Priority, Timings};
use crate::residency::ResidentInfo;

/// Upper bounds (seconds) of the latency histogram buckets: 2 KiB proofs take well under a
/// second on a GPU, 32 GiB ones minutes on a CPU.
pub const LATENCY_BUCKETS: [f64; 12] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0,
];

/// A lock-free latency histogram over [`LATENCY_BUCKETS`] (plus +Inf).
#[derive(Debug, Default)]
pub(crate) struct Histogram {
    buckets: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    sum_ms: AtomicU64,
}

impl Histogram {
    fn observe(&self, ms: u64) {
        let secs = ms as f64 / 1e3;
        let i = LATENCY_BUCKETS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.buckets[i].fetch_add(1, Relaxed);
        self.sum_ms.fetch_add(ms, Relaxed);
    }

    fn snapshot(&self, stage: &'static str) -> StageLatency {
        StageLatency {
            stage,
            counts: self.buckets.iter().map(|b| b.load(Relaxed)).collect(),
            sum_ms: self.sum_ms.load(Relaxed),
        }
    }
}

/// Job-level stage latencies of successful jobs, named as in `AwaitProofResponse`.
#[derive(Debug, Default)]
pub(crate) struct StageHistograms {
    queue_wait: Histogram,
    srs_load: Histogram,
    synthesis: Histogram,
    backend: Histogram,
    total: Histogram,
}

impl StageHistograms {
    pub fn observe(&self, t: &Timings) {
        self.queue_wait.observe(t.queue_wait_ms);
        self.srs_load.observe(t.srs_load_ms);
        self.synthesis.observe(t.synthesis_ms);
        self.backend.observe(t.backend_ms);
        self.total.observe(t.total_ms);
    }

    fn snapshot(&self) -> Vec<StageLatency> {
        vec![
            self.queue_wait.snapshot("queue_wait"),
            self.srs_load.snapshot("srs_load"),
            self.synthesis.snapshot("synthesis"),
            self.backend.snapshot("backend"),
            self.total.snapshot("total"),
        ]
    }
}

/// One stage's histogram: per-bucket (not cumulative) counts over [`LATENCY_BUCKETS`] + Inf.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageLatency {
    pub stage: &'static str,
    pub counts: Vec<u64>,
    pub sum_ms: u64,
}

/// Jobs of one kind and priority that are waiting or running.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueDepth {
    pub kind: String,
    pub priority: Priority,
    pub pending: u32,
    pub running: u32,
}

/// One device's live counters (the engine's backend totals are their sums).
#[derive(Debug, Default)]
pub(crate) struct DeviceCounters {
    pub label: String,
    pub calls: AtomicU64,
    pub busy_ns: AtomicU64,
    /// Partitions whose proof from this device verified.
    pub proved: AtomicU64,
    /// Its proofs that failed verification, and its errors.
    pub failures: AtomicU64,
}

/// Live counters, bumped lock-free from the workers.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub submitted: AtomicU64,
    pub duplicates: AtomicU64,
    pub succeeded: AtomicU64,
    pub failed: AtomicU64,
    pub cancelled: AtomicU64,
    pub partitions: AtomicU64,
    pub cpu_retries: AtomicU64,
    pub cpu_retry_successes: AtomicU64,
    pub loads: AtomicU64,
    pub load_ns: AtomicU64,
    pub evictions: AtomicU64,
    pub recovered: AtomicU64,
    pub stages: StageHistograms,
    /// In device-slot order.
    pub devices: Vec<DeviceCounters>,
}

impl Counters {
    pub fn new(device_labels: impl IntoIterator<Item = String>) -> Self {
        let devices = device_labels
            .into_iter()
            .map(|label| DeviceCounters {
                label,
                ..DeviceCounters::default()
            })
            .collect();
        Counters {
            devices,
            ..Counters::default()
        }
    }

    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Relaxed);
    }
}

/// One device's share of the backend counters, so an operator sees an idle or failing GPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceMetrics {
    /// The device's label (`gpu0`, `cpu`, …).
    pub device: String,
    pub backend_calls: u64,
    pub backend_busy_ns: u64,
    /// Partitions whose proof from this device verified (also those of a job cancelled
    /// meanwhile, which `partitions_proved` of [`Metrics`] leaves out).
    pub partitions_proved: u64,
    /// Its proofs that failed verification, and its errors (each retried on the CPU).
    pub verify_failures: u64,
}

/// A snapshot of the engine's counters and gauges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    pub jobs_submitted: u64,
    /// Submissions that named an already accepted request id.
    pub duplicate_submissions: u64,
    pub jobs_succeeded: u64,
    pub jobs_failed: u64,
    pub jobs_cancelled: u64,
    /// Unfinished jobs found in the store at start.
    pub jobs_recovered: u64,
    pub partitions_proved: u64,
    pub backend_calls: u64,
    /// Time the backend spent inside `prove`.
    pub backend_busy_ns: u64,
    /// Backend proofs that failed verification (or backend errors).
    pub verify_failures: u64,
    pub cpu_retries: u64,
    pub cpu_retry_successes: u64,
    pub circuit_loads: u64,
    pub circuit_load_ns: u64,
    pub evictions: u64,
    pub budget_used_bytes: u64,
    pub budget_peak_bytes: u64,
    pub budget_limit_bytes: u64,
    pub queued_jobs: u64,
    pub running_jobs: u64,
    /// Waiting and running jobs by kind and priority.
    pub queues: Vec<QueueDepth>,
    /// Every known circuit's tier and size.
    pub resident: Vec<ResidentInfo>,
    /// Stage latencies of successful jobs.
    pub stages: Vec<StageLatency>,
    /// Per device, in device order.
    pub devices: Vec<DeviceMetrics>,
    pub uptime_ms: u64,
    pub backend_workers: u64,
}

impl Metrics {
    pub(crate) fn from_counters(c: &Counters) -> Self {
        let g = |a: &AtomicU64| a.load(Relaxed);
        Metrics {
            jobs_submitted: g(&c.submitted),
            duplicate_submissions: g(&c.duplicates),
            jobs_succeeded: g(&c.succeeded),
            jobs_failed: g(&c.failed),
            jobs_cancelled: g(&c.cancelled),
            jobs_recovered: g(&c.recovered),
            partitions_proved: g(&c.partitions),
            cpu_retries: g(&c.cpu_retries),
            cpu_retry_successes: g(&c.cpu_retry_successes),
            circuit_loads: g(&c.loads),
            circuit_load_ns: g(&c.load_ns),
            evictions: g(&c.evictions),
            stages: c.stages.snapshot(),
            devices: (c.devices.iter())
                .map(|d| DeviceMetrics {
                    device: d.label.clone(),
                    backend_calls: g(&d.calls),
                    backend_busy_ns: g(&d.busy_ns),
                    partitions_proved: g(&d.proved),
                    verify_failures: g(&d.failures),
                })
                .collect(),
            ..Metrics::default()
        }
        .with_backend_totals()
    }

    /// The backend totals are the devices' sums.
    fn with_backend_totals(mut self) -> Self {
        for d in &self.devices {
            self.backend_calls += d.backend_calls;
            self.backend_busy_ns += d.backend_busy_ns;
            self.verify_failures += d.verify_failures;
        }
        self
    }

    /// Prometheus exposition text.
    pub fn to_prometheus(&self) -> String {
        let rows: [(&str, &str, &str, f64); 21] = [
            (
                "cuzk_jobs_submitted_total",
                "counter",
                "accepted jobs",
                self.jobs_submitted as f64,
            ),
            (
                "cuzk_duplicate_submissions_total",
                "counter",
                "submissions of a known request id",
                self.duplicate_submissions as f64,
            ),
            (
                "cuzk_jobs_succeeded_total",
                "counter",
                "jobs that returned a verified proof",
                self.jobs_succeeded as f64,
            ),
            (
                "cuzk_jobs_failed_total",
                "counter",
                "jobs that failed",
                self.jobs_failed as f64,
            ),
            (
                "cuzk_jobs_cancelled_total",
                "counter",
                "jobs cancelled",
                self.jobs_cancelled as f64,
            ),
            (
                "cuzk_jobs_recovered_total",
                "counter",
                "unfinished jobs re-queued at start",
                self.jobs_recovered as f64,
            ),
            (
                "cuzk_partitions_proved_total",
                "counter",
                "partition proofs made and verified",
                self.partitions_proved as f64,
            ),
            (
                "cuzk_backend_calls_total",
                "counter",
                "backend prove calls",
                self.backend_calls as f64,
            ),
            (
                "cuzk_backend_busy_seconds_total",
                "counter",
                "time inside the backend",
                self.backend_busy_ns as f64 / 1e9,
            ),
            (
                "cuzk_verify_failures_total",
                "counter",
                "backend proofs that failed verification",
                self.verify_failures as f64,
            ),
            (
                "cuzk_cpu_retries_total",
                "counter",
                "partitions retried on the CPU reference backend",
                self.cpu_retries as f64,
            ),
            (
                "cuzk_cpu_retry_successes_total",
                "counter",
                "CPU retries that verified",
                self.cpu_retry_successes as f64,
            ),
            (
                "cuzk_circuit_loads_total",
                "counter",
                "parameter/PCE loads to the hot tier",
                self.circuit_loads as f64,
            ),
            (
                "cuzk_circuit_load_seconds_total",
                "counter",
                "time spent loading",
                self.circuit_load_ns as f64 / 1e9,
            ),
            (
                "cuzk_evictions_total",
                "counter",
                "hot circuits demoted",
                self.evictions as f64,
            ),
            (
                "cuzk_budget_used_bytes",
                "gauge",
                "accounted memory",
                self.budget_used_bytes as f64,
            ),
            (
                "cuzk_budget_peak_bytes",
                "gauge",
                "highest accounted memory",
                self.budget_peak_bytes as f64,
            ),
            (
                "cuzk_budget_limit_bytes",
                "gauge",
                "memory budget",
                self.budget_limit_bytes as f64,
            ),
            (
                "cuzk_queued_jobs",
                "gauge",
                "jobs with partitions waiting",
                self.queued_jobs as f64,
            ),
            (
                "cuzk_running_jobs",
                "gauge",
                "jobs with partitions in flight",
                self.running_jobs as f64,
            ),
            ("cuzk_up", "gauge", "1 while the engine runs", 1.0),
        ];
        let mut out = String::new();
        for (name, kind, help, value) in rows {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
        let busy = if self.uptime_ms == 0 || self.backend_workers == 0 {
            0.0
        } else {
            self.backend_busy_ns as f64 / 1e6 / (self.uptime_ms * self.backend_workers) as f64
        };
        let _ = writeln!(
            out,
            "# HELP cuzk_backend_busy_ratio share of backend-worker time spent proving since start\n\
             # TYPE cuzk_backend_busy_ratio gauge\ncuzk_backend_busy_ratio {busy}"
        );
        for (name, kind, help, value) in [
            (
                "cuzk_device_backend_calls_total",
                "counter",
                "backend prove calls by device",
                (|d: &DeviceMetrics| d.backend_calls as f64) as fn(&DeviceMetrics) -> f64,
            ),
            (
                "cuzk_device_busy_seconds_total",
                "counter",
                "time inside the backend by device",
                |d| d.backend_busy_ns as f64 / 1e9,
            ),
            (
                "cuzk_device_partitions_proved_total",
                "counter",
                "partition proofs made and verified, by device",
                |d| d.partitions_proved as f64,
            ),
            (
                "cuzk_device_verify_failures_total",
                "counter",
                "proofs that failed verification or errors, by device",
                |d| d.verify_failures as f64,
            ),
        ] {
            header(&mut out, name, kind, help);
            for d in &self.devices {
                let _ = writeln!(out, "{name}{{device=\"{}\"}} {}", d.device, value(d));
            }
        }
        header(
            &mut out,
            "cuzk_queue_jobs",
            "gauge",
            "jobs by kind, priority and state",
        );
        for q in &self.queues {
            let labels = format!("kind=\"{}\",priority=\"{:?}\"", q.kind, q.priority);
            let _ = writeln!(
                out,
                "cuzk_queue_jobs{{{labels},state=\"pending\"}} {}",
                q.pending
            );
            let _ = writeln!(
                out,
                "cuzk_queue_jobs{{{labels},state=\"running\"}} {}",
                q.running
            );
        }
        header(
            &mut out,
            "cuzk_circuit_bytes",
            "gauge",
            "circuit size by residency tier",
        );
        for r in &self.resident {
            let _ = writeln!(
                out,
                "cuzk_circuit_bytes{{circuit=\"{}\",tier=\"{:?}\"}} {}\n\
                 cuzk_circuit_refs{{circuit=\"{}\"}} {}",
                r.circuit, r.tier, r.size_bytes, r.circuit, r.ref_count
            );
        }
        let name = "cuzk_job_stage_seconds";
        header(
            &mut out,
            name,
            "histogram",
            "stage latency of successful jobs",
        );
        for h in &self.stages {
            let mut cumulative = 0;
            for (i, c) in h.counts.iter().enumerate() {
                cumulative += c;
                let le = LATENCY_BUCKETS
                    .get(i)
                    .map_or_else(|| "+Inf".to_string(), |b| b.to_string());
                let _ = writeln!(
                    out,
                    "{name}_bucket{{stage=\"{}\",le=\"{le}\"}} {cumulative}",
                    h.stage
                );
            }
            let _ = writeln!(
                out,
                "{name}_sum{{stage=\"{}\"}} {}\n{name}_count{{stage=\"{}\"}} {cumulative}",
                h.stage,
                h.sum_ms as f64 / 1e3,
                h.stage
            );
        }
        out
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}
