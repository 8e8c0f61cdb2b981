//! `cuzk.v1.ProvingEngine` over [`cuzk_engine::Engine`]: request checks that name the field,
//! engine errors mapped to gRPC codes, and blocking engine calls kept off the async workers.

// `tonic::Status` is the error of every RPC; boxing it here would only be unboxed again.
#![allow(clippy::result_large_err)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cuzk_circuits::snap::{RegisteredUpdateProof, SnapRequest};
use cuzk_circuits::{C1Input, PostRequest, RegisteredPostProof};
use cuzk_engine::kind::{CircuitId, PorepKind, PostKind, SnapKind};
use cuzk_engine::residency::Tier;
use cuzk_engine::{Engine, EngineError, JobId, Outcome, Priority, Request as EngineRequest};
use cuzk_proto::diag::v1::{diagnostics_server, GetTraceRequest, GetTraceResponse, Span};
use cuzk_proto::v1::await_proof_response::Status as AwaitStatus;
use cuzk_proto::v1::proving_engine_server::ProvingEngine;
use cuzk_proto::v1::{self as pb, srs_status};
use tokio::sync::watch;
use tonic::{Code, Request, Response, Status};

/// Longest single blocking wait inside `AwaitProof`; between waits the call notices a client
/// that went away or a daemon that is shutting down.
const AWAIT_SLICE: Duration = Duration::from_millis(500);

/// One GPU as `GetStatus` reports it.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub total_bytes: u64,
    /// Reads current free device memory, where there is a device.
    pub free: Option<fn(usize) -> Option<u64>>,
}

/// The service state shared by every connection.
#[derive(Debug)]
pub struct ProvingService {
    engine: Arc<Engine>,
    devices: Vec<DeviceInfo>,
    shutdown: watch::Receiver<bool>,
    rpcs: Mutex<BTreeMap<(&'static str, i32), u64>>,
    anonymous: AtomicU64,
    started: Instant,
}

fn field(name: &str, message: impl std::fmt::Display) -> Status {
    Status::invalid_argument(format!("{name}: {message}"))
}

/// Maps an engine error to a gRPC status; `subject` names the request field it concerns.
fn engine_status(subject: &str, e: EngineError) -> Status {
    let msg = format!("{subject}: {e}");
    match e {
        EngineError::UnknownKind(_) | EngineError::InvalidRequest(_) => {
            Status::invalid_argument(msg)
        }
        EngineError::RequestIdReused { .. } => Status::already_exists(msg),
        EngineError::UnknownJob(_) | EngineError::UnknownCircuit(_) => Status::not_found(msg),
        EngineError::AlreadyFinished(_) | EngineError::NotFinished(_) | EngineError::InUse(_) => {
            Status::failed_precondition(msg)
        }
        EngineError::NeverFits { .. } | EngineError::NoRoom { .. } => {
            Status::resource_exhausted(msg)
        }
        // This daemon's devices cannot take it (kinds or memory); another daemon may.
        EngineError::NoDevice { .. } => Status::failed_precondition(msg),
        EngineError::Timeout(_) => Status::deadline_exceeded(msg),
        EngineError::ShuttingDown => Status::unavailable(msg),
        // The daemon's own storage, not the request: nothing was recorded, and the same
        // request can be sent again once the store can be written (disk space, permissions).
        EngineError::Store(_) => Status::unavailable(format!(
            "{e}; nothing was recorded, send the request again once the store can be written"
        )),
        EngineError::Load { .. } | EngineError::Start(_) => Status::internal(msg),
    }
}

/// Parses `job-7` (what SubmitProof returns) or `7`.
pub fn parse_job_id(s: &str) -> Result<JobId, Status> {
    s.strip_prefix("job-")
        .unwrap_or(s)
        .parse()
        .map(JobId)
        .map_err(|_| field("job_id", format!("{s:?} is not a cuzk job id (job-<n>)")))
}

/// Circuit ids are short lowercase names (`porep-32g`), never paths.
pub fn parse_circuit_id(s: &str) -> Result<CircuitId, Status> {
    let ok = !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(CircuitId(s.into()))
    } else {
        Err(field(
            "circuit_id",
            format!("{s:?} is not a circuit id (like porep-32g)"),
        ))
    }
}

fn priority(p: i32) -> Result<Priority, Status> {
    Ok(match pb::Priority::try_from(p) {
        Ok(pb::Priority::Unspecified) | Ok(pb::Priority::Normal) => Priority::Normal,
        Ok(pb::Priority::Low) => Priority::Low,
        Ok(pb::Priority::High) => Priority::High,
        Ok(pb::Priority::Critical) => Priority::Critical,
        Err(_) => return Err(field("priority", format!("unknown value {p}"))),
    })
}

/// The engine kind serving a `ProofKind`.
fn kind(k: i32) -> Result<&'static str, Status> {
    match pb::ProofKind::try_from(k) {
        Ok(pb::ProofKind::PorepSealCommit) => Ok(PorepKind::NAME),
        Ok(pb::ProofKind::WindowPostPartition) => Ok(PostKind::WINDOW),
        Ok(pb::ProofKind::WinningPost) => Ok(PostKind::WINNING),
        Ok(pb::ProofKind::SnapDealsUpdate) => Ok(SnapKind::NAME),
        Ok(pb::ProofKind::Unspecified) => Err(field(
            "proof_kind",
            "must be set (POREP_SEAL_COMMIT, SNAP_DEALS_UPDATE, WINDOW_POST_PARTITION or \
             WINNING_POST)",
        )),
        Err(_) => Err(field("proof_kind", format!("unknown value {k}"))),
    }
}

/// Checks a `SubmitProof` request field by field before the engine sees it; the payload itself
/// is checked by the engine's proof kind. An empty `request_id` stays empty (the caller names
/// the job).
pub fn check_submit(mut req: pb::SubmitProofRequest) -> Result<EngineRequest, Status> {
    let kind = kind(req.proof_kind)?;
    let priority = priority(req.priority)?;
    if req.request_id.len() > 256 {
        return Err(field("request_id", "longer than 256 bytes"));
    }
    let request_id = std::mem::take(&mut req.request_id);
    let payload = match kind {
        PorepKind::NAME => porep_payload(req)?,
        SnapKind::NAME => snap_payload(req)?,
        _ => post_payload(req)?,
    };
    Ok(EngineRequest {
        request_id,
        kind: kind.into(),
        priority,
        payload,
    })
}

/// PoRep C2: the C1 output in `vanilla_proof`; when the request states `sector_size` or
/// (non-zero) `registered_proof`, the C1 output must be for that proof.
fn porep_payload(req: pb::SubmitProofRequest) -> Result<Vec<u8>, Status> {
    if req.vanilla_proof.is_empty() {
        return Err(field(
            "vanilla_proof",
            "empty; PoRep C2 takes the C1 output JSON or Curio's envelope",
        ));
    }
    if !req.vanilla_proofs.is_empty() {
        return Err(field("vanilla_proofs", "PoRep C2 takes vanilla_proof only"));
    }
    if req.sector_size != 0 || req.registered_proof != 0 {
        let c1 = C1Input::parse(&req.vanilla_proof).map_err(|e| field("vanilla_proof", e))?;
        let proof = c1.registered_proof;
        if req.sector_size != 0 && req.sector_size != proof.sector_size() {
            return Err(field(
                "sector_size",
                format!(
                    "{} bytes, but the C1 output is for {proof:?} ({} bytes)",
                    req.sector_size,
                    proof.sector_size()
                ),
            ));
        }
        if req.registered_proof != 0 && req.registered_proof != proof.id() {
            return Err(field(
                "registered_proof",
                format!(
                    "{}, but the C1 output is for {proof:?} ({})",
                    req.registered_proof,
                    proof.id()
                ),
            ));
        }
    }
    Ok(req.vanilla_proof)
}

/// `sector_size`, when stated, must be the proof type's.
fn check_sector_size(req: &pb::SubmitProofRequest, proof_size: u64) -> Result<(), Status> {
    if req.sector_size != 0 && req.sector_size != proof_size {
        return Err(field(
            "sector_size",
            format!(
                "{} bytes, but registered_proof {} is for {proof_size} bytes",
                req.sector_size, req.registered_proof
            ),
        ));
    }
    Ok(())
}

/// Vanilla proofs come in `vanilla_proofs`, one per `what`, never in `vanilla_proof`.
fn check_vanilla_proofs(
    req: &pb::SubmitProofRequest,
    kind: &str,
    what: &str,
) -> Result<(), Status> {
    if !req.vanilla_proof.is_empty() {
        return Err(field(
            "vanilla_proof",
            format!("{kind} takes vanilla_proofs (one per {what}), not vanilla_proof"),
        ));
    }
    if req.vanilla_proofs.is_empty() {
        return Err(field(
            "vanilla_proofs",
            format!("empty; one vanilla proof per {what}"),
        ));
    }
    Ok(())
}

/// SnapDeals: one bincode `PartitionProof` per partition in `vanilla_proofs`, with
/// `registered_proof` (FFI update proof number) and the three 32-byte commitments.
fn snap_payload(req: pb::SubmitProofRequest) -> Result<Vec<u8>, Status> {
    check_vanilla_proofs(&req, "SnapDeals", "partition")?;
    for (name, c) in [
        ("comm_r_old", &req.comm_r_old),
        ("comm_r_new", &req.comm_r_new),
        ("comm_d_new", &req.comm_d_new),
    ] {
        if c.len() != 32 {
            return Err(field(name, format!("{} bytes, expected 32", c.len())));
        }
    }
    let proof = RegisteredUpdateProof::parse(req.registered_proof)
        .map_err(|r| field("registered_proof", r))?;
    check_sector_size(&req, proof.sector_size())?;
    Ok(SnapRequest {
        registered_proof: req.registered_proof,
        comm_r_old: req.comm_r_old,
        comm_r_new: req.comm_r_new,
        comm_d_new: req.comm_d_new,
        vanilla_proofs: req.vanilla_proofs,
    }
    .encode())
}

/// WindowPoSt / WinningPoSt: one bincode vanilla proof per sector in `vanilla_proofs`, with
/// `registered_proof` (FFI number), 32 bytes of `randomness`, `miner_id` and, for WindowPoSt,
/// `partition_index`.
fn post_payload(req: pb::SubmitProofRequest) -> Result<Vec<u8>, Status> {
    check_vanilla_proofs(&req, "PoSt", "sector")?;
    if req.randomness.len() != 32 {
        return Err(field(
            "randomness",
            format!("{} bytes, expected 32", req.randomness.len()),
        ));
    }
    let proof = RegisteredPostProof::parse(req.registered_proof)
        .map_err(|r| field("registered_proof", r))?;
    check_sector_size(&req, proof.sector_size())?;
    Ok(PostRequest {
        registered_proof: req.registered_proof,
        randomness: req.randomness,
        miner_id: req.miner_id,
        partition_index: req.partition_index,
        vanilla_proofs: req.vanilla_proofs,
    }
    .encode())
}

fn outcome_response(job: JobId, outcome: Outcome) -> pb::AwaitProofResponse {
    let mut r = pb::AwaitProofResponse {
        job_id: job.to_string(),
        ..Default::default()
    };
    match outcome {
        Outcome::Succeeded { proof, timings } => {
            r.status = AwaitStatus::Completed as i32;
            r.proof = proof;
            r.queue_wait_ms = timings.queue_wait_ms;
            r.srs_load_ms = timings.srs_load_ms;
            r.synthesis_ms = timings.synthesis_ms;
            r.gpu_compute_ms = timings.backend_ms;
            r.total_ms = timings.total_ms;
        }
        Outcome::Failed { reason } => {
            r.status = AwaitStatus::Failed as i32;
            r.error_message = reason;
        }
        Outcome::Cancelled => r.status = AwaitStatus::Cancelled as i32,
    }
    r
}

/// Runs a blocking engine call on tokio's blocking pool.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(format!("engine call failed: {e}")))
}

impl ProvingService {
    pub fn new(
        engine: Arc<Engine>,
        devices: Vec<DeviceInfo>,
        shutdown: watch::Receiver<bool>,
    ) -> Self {
        ProvingService {
            engine,
            devices,
            shutdown,
            rpcs: Mutex::new(BTreeMap::new()),
            anonymous: AtomicU64::new(0),
            started: Instant::now(),
        }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Counts an RPC by method and outcome code, for `cuzk_rpc_requests_total`.
    fn count<T>(&self, method: &'static str, r: Result<T, Status>) -> Result<T, Status> {
        let code = r.as_ref().map_or_else(|s| s.code(), |_| Code::Ok);
        if let Ok(mut m) = self.rpcs.lock() {
            *m.entry((method, code as i32)).or_default() += 1;
        }
        if let Err(s) = &r {
            if matches!(s.code(), Code::Internal | Code::Unavailable) {
                tracing::warn!(method, code = ?s.code(), message = s.message(), "rpc failed");
            } else {
                tracing::debug!(method, code = ?s.code(), message = s.message(), "rpc refused");
            }
        }
        r
    }

    /// Engine metrics plus the daemon's own, as Prometheus text.
    pub fn prometheus(&self) -> String {
        use std::fmt::Write;
        let mut out = self.engine.metrics().to_prometheus();
        let _ = writeln!(
            out,
            "# HELP cuzk_rpc_requests_total gRPC calls by method and status code\n\
             # TYPE cuzk_rpc_requests_total counter"
        );
        if let Ok(m) = self.rpcs.lock() {
            for ((method, code), n) in m.iter() {
                let _ = writeln!(
                    out,
                    "cuzk_rpc_requests_total{{method=\"{method}\",code=\"{:?}\"}} {n}",
                    Code::from(*code)
                );
            }
        }
        out
    }

    async fn submit_inner(
        &self,
        req: pb::SubmitProofRequest,
    ) -> Result<pb::SubmitProofResponse, Status> {
        let mut request = check_submit(req)?;
        if request.request_id.is_empty() {
            // No idempotency asked for: a name no caller can collide with.
            let n = self.anonymous.fetch_add(1, Ordering::Relaxed);
            request.request_id = format!("anonymous/{}/{n}", self.started.elapsed().as_nanos());
        }
        let engine = self.engine.clone();
        let (rid, kind, priority) = (
            request.request_id.clone(),
            request.kind.clone(),
            request.priority,
        );
        let (job, info) = blocking(move || {
            let job = engine.submit(request)?;
            Ok::<_, EngineError>((job, engine.job(job).ok()))
        })
        .await?
        .map_err(|e| match e {
            EngineError::RequestIdReused { .. } => engine_status("request_id", e),
            EngineError::UnknownKind(_) => engine_status("proof_kind", e),
            // A PoSt refusal names its own field (randomness, vanilla_proofs[i]...).
            _ if kind != PorepKind::NAME => engine_status("request", e),
            _ => engine_status("vanilla_proof", e),
        })?;
        tracing::info!(%job, request_id = %rid, kind = %kind, ?priority, "accepted");
        Ok(pb::SubmitProofResponse {
            job_id: job.to_string(),
            queue_position: info.map_or(0, |i| i.queue_position),
            assigned_gpu: String::new(),
        })
    }

    /// Runs a residency call on circuit `id` after checking that it is a circuit name.
    async fn on_circuit<T: Send + 'static>(
        &self,
        id: &str,
        f: impl FnOnce(&Engine, &CircuitId) -> Result<T, EngineError> + Send + 'static,
    ) -> Result<T, Status> {
        let id = parse_circuit_id(id)?;
        let engine = self.engine.clone();
        blocking(move || f(&engine, &id))
            .await?
            .map_err(|e| engine_status("circuit_id", e))
    }

    async fn await_inner(
        &self,
        job: JobId,
        timeout_ms: u64,
    ) -> Result<pb::AwaitProofResponse, Status> {
        let deadline = (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms));
        let mut shutdown = self.shutdown.clone();
        loop {
            if *shutdown.borrow() {
                return Err(Status::unavailable(format!(
                    "the daemon is shutting down; {job} is kept and can be awaited after restart"
                )));
            }
            let slice = match deadline {
                None => AWAIT_SLICE,
                Some(d) => d.saturating_duration_since(Instant::now()).min(AWAIT_SLICE),
            };
            let engine = self.engine.clone();
            let wait = blocking(move || engine.await_job(job, slice));
            let result = tokio::select! {
                r = wait => r?,
                _ = shutdown.changed() => continue,
            };
            match result {
                Ok(outcome) => return Ok(outcome_response(job, outcome)),
                Err(EngineError::Timeout(_)) => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Ok(pb::AwaitProofResponse {
                            job_id: job.to_string(),
                            status: AwaitStatus::Timeout as i32,
                            ..Default::default()
                        });
                    }
                }
                Err(e) => return Err(engine_status("job_id", e)),
            }
        }
    }
}

#[tonic::async_trait]
impl ProvingEngine for ProvingService {
    async fn submit_proof(
        &self,
        request: Request<pb::SubmitProofRequest>,
    ) -> Result<Response<pb::SubmitProofResponse>, Status> {
        let r = self.submit_inner(request.into_inner()).await;
        self.count("SubmitProof", r).map(Response::new)
    }

    async fn await_proof(
        &self,
        request: Request<pb::AwaitProofRequest>,
    ) -> Result<Response<pb::AwaitProofResponse>, Status> {
        let req = request.into_inner();
        let r = match parse_job_id(&req.job_id) {
            Ok(job) => self.await_inner(job, req.timeout_ms).await,
            Err(e) => Err(e),
        };
        self.count("AwaitProof", r).map(Response::new)
    }

    async fn prove(
        &self,
        request: Request<pb::ProveRequest>,
    ) -> Result<Response<pb::ProveResponse>, Status> {
        let r = async {
            let submit = request
                .into_inner()
                .submit
                .ok_or_else(|| field("submit", "missing"))?;
            let accepted = self.submit_inner(submit).await?;
            let job = parse_job_id(&accepted.job_id)?;
            let result = self.await_inner(job, 0).await?;
            Ok(pb::ProveResponse {
                result: Some(result),
            })
        }
        .await;
        self.count("Prove", r).map(Response::new)
    }

    async fn cancel_proof(
        &self,
        request: Request<pb::CancelProofRequest>,
    ) -> Result<Response<pb::CancelProofResponse>, Status> {
        let r = async {
            let job = parse_job_id(&request.into_inner().job_id)?;
            let engine = self.engine.clone();
            let was_running = blocking(move || engine.cancel(job))
                .await?
                .map_err(|e| engine_status("job_id", e))?;
            tracing::info!(%job, was_running, "cancelled");
            Ok(pb::CancelProofResponse { was_running })
        }
        .await;
        self.count("CancelProof", r).map(Response::new)
    }

    async fn get_status(
        &self,
        _request: Request<pb::GetStatusRequest>,
    ) -> Result<Response<pb::GetStatusResponse>, Status> {
        let s = self.engine.status();
        let gpus = s
            .backends
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let dev = self.devices.get(i);
                pb::GpuStatus {
                    ordinal: dev.map_or(i, |d| d.ordinal) as u32,
                    name: dev.map_or_else(|| b.device.clone(), |d| d.name.clone()),
                    vram_total_bytes: dev.map_or(0, |d| d.total_bytes),
                    vram_free_bytes: dev
                        .and_then(|d| d.free.and_then(|f| f(d.ordinal)))
                        .unwrap_or(0),
                    current_job_id: b.current_job.map(|j| j.to_string()).unwrap_or_default(),
                    current_proof_kind: b
                        .current_job
                        .and_then(|j| self.engine.job(j).ok())
                        .map(|j| j.kind)
                        .unwrap_or_default(),
                }
            })
            .collect();
        let loaded_srs = s
            .resident
            .iter()
            .map(|r| pb::SrsStatus {
                circuit_id: r.circuit.0.clone(),
                tier: match r.tier {
                    Tier::Hot => srs_status::Tier::Hot,
                    Tier::Warm => srs_status::Tier::Warm,
                    Tier::Cold => srs_status::Tier::Cold,
                } as i32,
                size_bytes: r.size_bytes,
                ref_count: r.ref_count as u32,
            })
            .collect();
        let queues = s
            .queues
            .iter()
            .map(|(kind, q)| pb::QueueStatus {
                proof_kind: kind.clone(),
                pending: q.pending,
                in_progress: q.in_progress,
            })
            .collect();
        let r = Ok(pb::GetStatusResponse {
            gpus,
            loaded_srs,
            queues,
            total_proofs_completed: s.completed,
            total_proofs_failed: s.failed,
            uptime_seconds: s.uptime.as_secs(),
            pinned_memory_bytes: s.budget_used_bytes,
            pinned_memory_limit_bytes: s.budget_limit_bytes,
        });
        self.count("GetStatus", r).map(Response::new)
    }

    async fn get_metrics(
        &self,
        _request: Request<pb::GetMetricsRequest>,
    ) -> Result<Response<pb::GetMetricsResponse>, Status> {
        let prometheus_text = self.prometheus();
        self.count("GetMetrics", Ok(pb::GetMetricsResponse { prometheus_text }))
            .map(Response::new)
    }

    async fn preload_srs(
        &self,
        request: Request<pb::PreloadSrsRequest>,
    ) -> Result<Response<pb::PreloadSrsResponse>, Status> {
        let id = request.into_inner().circuit_id;
        let r = self
            .on_circuit(&id, |e, c| e.preload(c))
            .await
            .map(|r| pb::PreloadSrsResponse {
                already_loaded: r.already_loaded,
                load_time_ms: r.load_time.as_millis() as u64,
            });
        self.count("PreloadSRS", r).map(Response::new)
    }

    async fn evict_srs(
        &self,
        request: Request<pb::EvictSrsRequest>,
    ) -> Result<Response<pb::EvictSrsResponse>, Status> {
        let id = request.into_inner().circuit_id;
        let r = self
            .on_circuit(&id, |e, c| e.evict(c))
            .await
            .map(|r| pb::EvictSrsResponse {
                was_loaded: r.was_loaded,
                freed_bytes: r.freed_bytes,
            });
        self.count("EvictSRS", r).map(Response::new)
    }
}

/// `cuzk.diag.v1.Diagnostics`: the engine's stage spans.
#[derive(Debug)]
pub struct DiagnosticsService(pub Arc<Engine>);

#[tonic::async_trait]
impl diagnostics_server::Diagnostics for DiagnosticsService {
    async fn get_trace(
        &self,
        request: Request<GetTraceRequest>,
    ) -> Result<Response<GetTraceResponse>, Status> {
        let (spans, now_us) = self.0.trace(request.into_inner().since_us);
        Ok(Response::new(GetTraceResponse {
            spans: spans
                .into_iter()
                .map(|s| Span {
                    job_id: s.job.to_string(),
                    partition: s.partition,
                    stage: s.stage.name().into(),
                    worker: s.worker,
                    start_us: s.start_us,
                    end_us: s.end_us,
                })
                .collect(),
            now_us,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_round_trip_and_garbage_names_the_field() {
        assert_eq!(parse_job_id("job-7").unwrap(), JobId(7));
        assert_eq!(parse_job_id("7").unwrap(), JobId(7));
        for bad in ["", "job-", "job-x", "../etc", "-1"] {
            let e = parse_job_id(bad).unwrap_err();
            assert_eq!(e.code(), Code::InvalidArgument);
            assert!(e.message().starts_with("job_id: "), "{}", e.message());
        }
    }

    #[test]
    fn circuit_ids_cannot_be_paths() {
        assert!(parse_circuit_id("porep-32g").is_ok());
        for bad in [
            "",
            "../../etc/passwd",
            "/abs",
            "a/b",
            "porep.params",
            "UPPER",
            &"x".repeat(65),
        ] {
            let e = parse_circuit_id(bad).unwrap_err();
            assert!(e.message().starts_with("circuit_id: "), "{bad:?}");
        }
    }

    #[test]
    fn enums_are_checked() {
        assert_eq!(priority(0).unwrap(), Priority::Normal);
        assert_eq!(priority(4).unwrap(), Priority::Critical);
        assert!(priority(9).unwrap_err().message().starts_with("priority: "));
        assert_eq!(kind(1).unwrap(), PorepKind::NAME);
        assert_eq!(kind(0).unwrap_err().code(), Code::InvalidArgument);
        assert_eq!(kind(2).unwrap(), SnapKind::NAME);
        assert_eq!(kind(3).unwrap(), PostKind::WINDOW);
        assert_eq!(kind(4).unwrap(), PostKind::WINNING);
        assert!(kind(99).unwrap_err().message().starts_with("proof_kind: "));
    }
}
