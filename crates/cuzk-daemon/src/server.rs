//! Running the daemon: the engine from [`Settings`], gRPC on unix sockets (mode 0600) and TCP
//! (bearer token and/or TLS), Prometheus over HTTP, and a graceful drain on SIGTERM/SIGINT.

use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use cuzk_engine::budget::Meter;
use cuzk_engine::kind::Registry;
use cuzk_engine::{DeviceSlot, Engine, EngineConfig, SeededKeys};
use cuzk_groth16::backend::{Backend, CpuBackend};
use cuzk_groth16::generator::{CpuFixedBase, FixedBaseMul};
use cuzk_proto::diag::v1::diagnostics_server::DiagnosticsServer;
use cuzk_proto::v1::proving_engine_server::ProvingEngineServer;
use tokio::net::UnixListener;
use tokio::sync::watch;
use tokio_stream::wrappers::{TcpListenerStream, UnixListenerStream};
use tokio_stream::StreamExt;
use tonic::metadata::MetadataValue;
use tonic::transport::{Identity, Server, ServerTlsConfig};
use tonic::{Request, Status};

use crate::config::{BackendChoice, Listen, Secret, Settings};
use crate::service::{DeviceInfo, DiagnosticsService, ProvingService};

/// The configured proving devices and what status reports about each GPU.
fn devices(s: &Settings) -> Result<(Vec<DeviceSlot>, Vec<DeviceInfo>)> {
    let e = &s.engine;
    if e.backend == BackendChoice::Cpu {
        let cpu: Arc<dyn Backend> = Arc::new(CpuBackend);
        let slots = (0..e.backend_workers)
            .map(|i| DeviceSlot::new(format!("cpu{i}"), cpu.clone()))
            .collect();
        return Ok((slots, Vec::new()));
    }
    const NO_GPU: &str =
        "engine.backend = \"gpu\": no usable GPU (build with --features cuda, or use \"cpu\")";
    let count = cuzk_gpu::count().context(NO_GPU)?;
    let ordinals = s.gpus.clone().unwrap_or_else(|| (0..count).collect());
    if ordinals.is_empty() {
        bail!("{NO_GPU}");
    }
    for o in s.gpu_kinds.keys() {
        if *o >= count {
            bail!("engine.gpu_kinds: GPU {o} does not exist ({count} usable)");
        }
    }
    let mut slots = Vec::new();
    let mut infos = Vec::new();
    for o in ordinals {
        let gpu = cuzk_gpu::GpuBackend::new(o)
            .with_context(|| format!("engine.gpus: GPU {o} ({count} usable)"))?;
        let dev = gpu.device();
        infos.push(DeviceInfo {
            ordinal: o,
            name: dev.name().to_string(),
            total_bytes: dev.total_memory() as u64,
            free: Some(|ordinal| {
                cuzk_gpu::Device::open(ordinal)
                    .ok()?
                    .free_memory_now()
                    .ok()
                    .map(|b| b as u64)
            }),
        });
        let kinds = s.gpu_kinds.get(&o).cloned().unwrap_or_default();
        let gpu = Arc::new(gpu);
        let mut slot = DeviceSlot::new(format!("gpu{o}"), gpu.clone()).only(kinds);
        if e.pce && e.device_pce {
            slot = slot.with_pce_backend(gpu);
        }
        slots.push(slot);
    }
    Ok((slots, infos))
}

/// Starts the engine described by `s` (opening its store and re-queuing unfinished jobs).
pub fn start_engine(s: &Settings) -> Result<(Engine, Vec<DeviceInfo>)> {
    let e = &s.engine;
    std::fs::create_dir_all(&e.params_dir)
        .with_context(|| format!("engine.params_dir: creating {}", e.params_dir.display()))?;
    let registry = Registry::filecoin(&e.params_dir, e.pce, e.native_witness);
    for kind in s.gpu_kinds.values().flatten() {
        if registry.get(kind).is_none() {
            let known: Vec<_> = registry.names().collect();
            bail!("engine.gpu_kinds: unknown proof kind {kind:?} (known: {known:?})");
        }
    }
    let (slots, devices) = self::devices(s)?;
    let mut cfg = EngineConfig::new(&e.store_dir, registry, slots[0].backend.clone());
    cfg.devices = slots;
    if let Some(b) = s.budget_bytes {
        cfg.budget_bytes = b;
    }
    cfg.recycle_bytes = s.recycle_bytes.unwrap_or(cfg.budget_bytes / 8);
    cfg.tables_bytes = s.tables_bytes.unwrap_or(cfg.budget_bytes / 8);
    cfg.meter = Meter::Heap;
    cfg.cpu_workers = e.cpu_workers;
    cfg.lookahead = e.lookahead;
    cfg.max_batch = e.max_batch;
    cfg.validation = e.check_params.into();
    cfg.point_cache = e.point_cache;
    cfg.result_ttl = s.result_ttl;
    cfg.max_restarts = e.max_restarts;
    if let Some(seed) = e.seeded_keys {
        let points: Arc<dyn FixedBaseMul + Send + Sync> = match devices.first() {
            Some(d) => Arc::new(cuzk_gpu::setup::GpuFixedBase::new(d.ordinal)?),
            None => Arc::new(CpuFixedBase),
        };
        tracing::warn!(
            seed,
            "engine.seeded_keys: missing keys are made in memory (bench only)"
        );
        cfg.seeded_keys = Some(SeededKeys::new(seed, points));
    }
    let engine = Engine::start(cfg)
        .with_context(|| format!("engine.store_dir: starting on {}", e.store_dir.display()))?;
    Ok((engine, devices))
}

/// Checks `authorization: Bearer <token>` in constant time.
#[derive(Clone)]
struct BearerAuth(Option<Arc<Secret>>);

impl tonic::service::Interceptor for BearerAuth {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let Some(token) = &self.0 else {
            return Ok(req);
        };
        let sent = req
            .metadata()
            .get("authorization")
            .and_then(|v: &MetadataValue<_>| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        let (a, b) = (sent.as_bytes(), token.0.as_bytes());
        let diff = a.len() ^ b.len()
            | a.iter()
                .zip(b.iter().cycle())
                .fold(0, |d, (x, y)| d | (x ^ y) as usize);
        if diff == 0 && !b.is_empty() {
            Ok(req)
        } else {
            Err(Status::unauthenticated(
                "missing or wrong bearer token (authorization: Bearer <token>)",
            ))
        }
    }
}

/// Binds a unix socket with `mode`, replacing a stale socket file but never a live one.
fn bind_unix(path: &Path, mode: u32) -> Result<UnixListener> {
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            bail!(
                "daemon.listen: {} is in use by another process",
                path.display()
            );
        }
        std::fs::remove_file(path)
            .with_context(|| format!("daemon.listen: removing stale {}", path.display()))?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("daemon.listen: creating {}", dir.display()))?;
    }
    // The umask closes the window between bind and chmod in which others could connect.
    // SAFETY: umask only swaps the process's file-creation mask.
    let old = unsafe { libc::umask(0o177) };
    let bound = UnixListener::bind(path);
    // SAFETY: as above, restoring the previous mask.
    unsafe { libc::umask(old) };
    let listener = bound.with_context(|| format!("daemon.listen: binding {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("daemon.socket_mode: chmod {}", path.display()))?;
    Ok(listener)
}

/// Serves `/metrics` (Prometheus text) and `/healthz`.
async fn serve_metrics(
    addr: SocketAddr,
    service: Arc<ProvingService>,
    mut shutdown: watch::Receiver<bool>,
) -> Result<()> {
    use axum::routing::get;
    let app = axum::Router::new()
        .route(
            "/metrics",
            get(move || {
                let s = service.clone();
                async move {
                    (
                        [("content-type", "text/plain; version=0.0.4")],
                        s.prometheus(),
                    )
                }
            }),
        )
        .route("/healthz", get(|| async { "ok\n" }));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("daemon.metrics_listen: binding {addr}"))?;
    tracing::info!(%addr, "metrics on http://{addr}/metrics");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = shutdown.wait_for(|s| *s).await;
        })
        .await?;
    Ok(())
}

/// Resolves when SIGTERM or SIGINT arrives.
async fn termination() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM: draining"),
        _ = int.recv() => tracing::info!("SIGINT: draining"),
    }
}

/// Runs the daemon until SIGTERM/SIGINT (or `stop` resolves), then drains: listeners close,
/// waiting `AwaitProof` calls get `UNAVAILABLE`, partitions in flight finish, and unfinished
/// jobs stay in the store for the next start.
pub async fn run(s: Settings, stop: impl std::future::Future<Output = ()> + Send) -> Result<()> {
    let settings = s.clone();
    let (engine, devices) = tokio::task::spawn_blocking(move || start_engine(&settings)).await??;
    let engine = Arc::new(engine);
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let service = Arc::new(ProvingService::new(
        engine.clone(),
        devices,
        shutdown_rx.clone(),
    ));
    let limit = s.max_message_bytes;
    let grpc = ProvingEngineServer::from_arc(service.clone())
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit);
    let diag = DiagnosticsServer::new(DiagnosticsService(engine.clone()));

    let mut tasks = tokio::task::JoinSet::new();
    let mut sockets: Vec<PathBuf> = Vec::new();
    for listen in &s.listen {
        let mut rx = shutdown_rx.clone();
        let until = async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        match listen {
            Listen::Unix(path) => {
                // C-core and grpc-java clients send the socket path as :authority.
                let incoming = UnixListenerStream::new(bind_unix(path, s.socket_mode)?)
                    .map(|conn| conn.map(crate::authority::UnixAuthority::new));
                sockets.push(path.clone());
                let router = Server::builder()
                    .add_service(grpc.clone())
                    .add_service(diag.clone());
                tasks.spawn(async move {
                    router
                        .serve_with_incoming_shutdown(incoming, until)
                        .await
                        .map_err(anyhow::Error::from)
                });
            }
            Listen::Tcp(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("daemon.listen: binding {addr}"))?;
                let incoming = TcpListenerStream::new(listener);
                let mut builder = Server::builder();
                if let Some((cert, key)) = &s.tls {
                    let read = |p: &PathBuf, k: &str| {
                        std::fs::read(p).with_context(|| format!("auth.{k}: {}", p.display()))
                    };
                    let identity =
                        Identity::from_pem(read(cert, "tls_cert")?, read(key, "tls_key")?);
                    builder = builder
                        .tls_config(ServerTlsConfig::new().identity(identity))
                        .context("auth.tls_cert: bad certificate or key")?;
                }
                let auth = BearerAuth(s.token.clone().map(Arc::new));
                let router = builder
                    .add_service(tonic::service::interceptor::InterceptedService::new(
                        grpc.clone(),
                        auth.clone(),
                    ))
                    .add_service(tonic::service::interceptor::InterceptedService::new(
                        diag.clone(),
                        auth,
                    ));
                tasks.spawn(async move {
                    router
                        .serve_with_incoming_shutdown(incoming, until)
                        .await
                        .map_err(anyhow::Error::from)
                });
            }
        }
        tracing::info!(%listen, "serving cuzk.v1");
    }
    if let Some(addr) = s.metrics_listen {
        tasks.spawn(serve_metrics(addr, service.clone(), shutdown_rx.clone()));
    }
    tracing::info!(
        backend = engine.status().backends.first().map_or("", |b| b.name),
        params = %s.engine.params_dir.display(),
        store = %s.engine.store_dir.display(),
        "cuzk daemon ready"
    );

    let failed = tokio::select! {
        _ = termination() => None,
        _ = stop => None,
        Some(r) = tasks.join_next() => Some(r),
    };
    let _ = shutdown_tx.send(true);
    while let Some(r) = tasks.join_next().await {
        if let Ok(Err(e)) = r {
            tracing::warn!("listener: {e:#}");
        }
    }
    for p in sockets {
        let _ = std::fs::remove_file(p);
    }
    drop(service);
    // The servers are gone; blocking engine calls they started end within one await slice.
    let mut engine = engine;
    for _ in 0..200 {
        match Arc::try_unwrap(engine) {
            Ok(e) => {
                tokio::task::spawn_blocking(move || e.shutdown()).await?;
                break;
            }
            Err(e) => engine = e,
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tracing::info!("drained; unfinished jobs are kept for the next start");
    match failed {
        Some(Ok(Err(e))) => Err(e),
        Some(Err(e)) => Err(e.into()),
        _ => Ok(()),
    }
}
