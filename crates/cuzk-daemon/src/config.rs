//! The daemon's configuration: a TOML file (see `docs/cuzk.example.toml`), `CUZK_<SECTION>_<KEY>`
//! environment overrides, defaults for a one-GPU machine, and validation whose errors name the
//! key.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

/// Large enough for a 32 GiB C1 output in Curio's base64 envelope (about 67 MB).
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 256 << 20;

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{origin}: {message}")]
    Parse { origin: String, message: String },
    #[error("environment variable {var}: {message}")]
    Env { var: String, message: String },
    #[error("{key}: {message}")]
    Invalid { key: &'static str, message: String },
}

/// A byte size like `"96GiB"`, or `None` where the value is empty (the key's default).
fn optional_bytes(key: &'static str, value: &str) -> Result<Option<u64>, ConfigError> {
    if value.is_empty() {
        return Ok(None);
    }
    parse_bytes(value)
        .map(Some)
        .ok_or_else(|| invalid(key, format!("{value:?}: expected bytes like \"96GiB\"")))
}

fn invalid(key: &'static str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key,
        message: message.into(),
    }
}

/// A secret read from a file; never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub daemon: DaemonSection,
    pub auth: AuthSection,
    pub engine: EngineSection,
    pub log: LogSection,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DaemonSection {
    /// `unix:///path` and/or `host:port` addresses for the gRPC service.
    pub listen: Vec<String>,
    /// Octal permission bits of the unix socket.
    pub socket_mode: String,
    /// Largest request or response, in bytes.
    pub max_message_bytes: u64,
    /// `host:port` for Prometheus `/metrics` over HTTP; empty for none.
    pub metrics_listen: String,
}

impl Default for DaemonSection {
    fn default() -> Self {
        DaemonSection {
            listen: vec!["unix:///run/cuzk/cuzk.sock".into()],
            socket_mode: "0600".into(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            metrics_listen: String::new(),
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthSection {
    /// File holding the bearer token TCP clients must send.
    pub token_file: Option<PathBuf>,
    /// PEM certificate and key: TCP listeners speak TLS.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// Serve TCP with neither token nor TLS (only for trusted networks).
    pub allow_insecure_tcp: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    Cpu,
    Gpu,
}

/// `engine.gpus`: `"all"` or a list of ordinals.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Gpus {
    Named(String),
    List(Vec<usize>),
}

/// How far parameter points are checked when a key is loaded (`engine.check_params`, `cuzk
/// prove --check-params`). Every proof is verified against the (always fully checked)
/// verifying key before it is returned, so a damaged point cannot yield a wrong proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CheckParams {
    /// On-curve and subgroup checks (seconds per million points).
    Full,
    /// On-curve checks.
    OnCurve,
    /// Field-element range checks only.
    Trusted,
}

impl From<CheckParams> for cuzk_groth16::params::Validation {
    fn from(c: CheckParams) -> Self {
        use cuzk_groth16::params::Validation;
        match c {
            CheckParams::Full => Validation::Full,
            CheckParams::OnCurve => Validation::OnCurve,
            CheckParams::Trusted => Validation::Trusted,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineSection {
    /// Parameter folder (upstream's file names); PCE caches are written beside them.
    pub params_dir: PathBuf,
    /// Folder of the durable job store.
    pub store_dir: PathBuf,
    pub backend: BackendChoice,
    /// Memory budget, e.g. `"96GiB"` or a byte count; empty for three quarters of RAM.
    pub budget: String,
    /// Part of the budget kept for finished witnesses' vectors, reused by the next
    /// partitions instead of fresh memory (which the kernel zeroes page by page): e.g.
    /// `"16GiB"`, `"0"` for none; empty for an eighth of the budget.
    pub recycle: String,
    /// Host memory per proving key for fixed-base tables (precomputed multiples of its
    /// points), with which the CPU backend proves PoSt faster: e.g. `"2GiB"`, `"0"` for none;
    /// empty for an eighth of the budget. Charged to the budget with the key.
    pub tables: String,
    pub cpu_workers: usize,
    /// Threads proving on the CPU backend (with `backend = "gpu"`: one per GPU, and this
    /// must stay 1).
    pub backend_workers: usize,
    /// GPUs to prove on (`backend = "gpu"`): `"all"` or ordinals, e.g. `[0, 1]`.
    pub gpus: Gpus,
    /// GPUs dedicated to some proof kinds, by ordinal: `{ "1" = ["porep-c2"] }`. A GPU not
    /// listed takes every kind.
    pub gpu_kinds: BTreeMap<String, Vec<String>>,
    pub lookahead: usize,
    pub max_batch: usize,
    /// Pre-compiled constraints (extracted into `params_dir` on first use).
    pub pce: bool,
    /// With `pce`: witnesses from the native generator (`true`) or from witness-only
    /// synthesis of the circuit (`false`, the reference path).
    pub native_witness: bool,
    /// With `pce` and `backend = "gpu"`: each GPU keeps the circuit's PCE in device memory and
    /// evaluates a, b, c there, so CPU workers make only the witness columns and a proof sends
    /// `input ‖ aux` over the bus instead of a, b, c and every MSM's scalars (`false`: the
    /// mat-vec runs on the host).
    pub device_pce: bool,
    pub check_params: CheckParams,
    /// Keep decoded parameter points in `<params file>.cuzk-points` (as much disk again, and
    /// skipped when the disk lacks that much plus 1 GiB), which later loads map instead of
    /// decoding: a 32 GiB key then loads in seconds instead of minutes.
    pub point_cache: bool,
    /// How long an uncollected result is kept, in seconds.
    pub result_ttl_secs: u64,
    pub max_restarts: u32,
    /// Bench only: a key whose `.params` file is missing from `params_dir` is made in memory
    /// from this seed (the key `cuzk paramgen --seed` writes, its points on the first GPU),
    /// and its `.vk` is written there; proofs verify against that `.vk` only. For keys larger
    /// than the disk: a 32 GiB WindowPoSt key is 60.7 GB.
    pub seeded_keys: Option<u64>,
}

impl Default for EngineSection {
    fn default() -> Self {
        EngineSection {
            params_dir: std::env::var_os("FIL_PROOFS_PARAMETER_CACHE").map_or_else(
                || "/var/tmp/filecoin-proof-parameters".into(),
                PathBuf::from,
            ),
            store_dir: default_store_dir(),
            backend: if cuzk_gpu::BUILT_WITH_CUDA {
                BackendChoice::Gpu
            } else {
                BackendChoice::Cpu
            },
            budget: String::new(),
            recycle: String::new(),
            tables: String::new(),
            cpu_workers: 1,
            backend_workers: 1,
            gpus: Gpus::Named("all".into()),
            gpu_kinds: BTreeMap::new(),
            lookahead: 1,
            max_batch: 1,
            pce: true,
            native_witness: true,
            device_pce: true,
            check_params: CheckParams::Trusted,
            point_cache: true,
            result_ttl_secs: 24 * 3600,
            max_restarts: 3,
            seeded_keys: None,
        }
    }
}

/// `/var/lib/cuzk/jobs` for root, else `~/.local/state/cuzk/jobs`.
fn default_store_dir() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    match std::env::var_os("HOME") {
        Some(home) if !root => PathBuf::from(home).join(".local/state/cuzk/jobs"),
        _ => "/var/lib/cuzk/jobs".into(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogSection {
    pub format: LogFormat,
    /// A `tracing` filter, e.g. `info` or `cuzk_daemon=debug,info`; `RUST_LOG` wins.
    pub level: String,
}

impl Default for LogSection {
    fn default() -> Self {
        LogSection {
            format: LogFormat::Text,
            level: "info".into(),
        }
    }
}

/// A listen address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    Unix(PathBuf),
    Tcp(std::net::SocketAddr),
}

impl Listen {
    pub fn parse(s: &str) -> Result<Listen, String> {
        if let Some(path) = s.strip_prefix("unix://") {
            if !path.starts_with('/') {
                return Err(format!(
                    "{s:?}: a unix socket path must be absolute (unix:///path)"
                ));
            }
            return Ok(Listen::Unix(path.into()));
        }
        let hostport = s.strip_prefix("tcp://").unwrap_or(s);
        use std::net::ToSocketAddrs;
        hostport
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .map(Listen::Tcp)
            .ok_or_else(|| format!("{s:?} is neither unix:///path nor host:port"))
    }
}

impl fmt::Display for Listen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Listen::Unix(p) => write!(f, "unix://{}", p.display()),
            Listen::Tcp(a) => write!(f, "{a}"),
        }
    }
}

/// A checked configuration, ready to run.
#[derive(Clone, Debug)]
pub struct Settings {
    pub listen: Vec<Listen>,
    pub socket_mode: u32,
    pub max_message_bytes: usize,
    pub metrics_listen: Option<std::net::SocketAddr>,
    pub token: Option<Secret>,
    pub tls: Option<(PathBuf, PathBuf)>,
    pub engine: EngineSection,
    /// The GPUs to use; `None` for all of them.
    pub gpus: Option<Vec<usize>>,
    /// Proof kinds by GPU ordinal, for GPUs dedicated to some kinds.
    pub gpu_kinds: BTreeMap<usize, Vec<String>>,
    pub budget_bytes: Option<u64>,
    /// `None`: an eighth of the budget.
    pub recycle_bytes: Option<u64>,
    /// `None`: an eighth of the budget.
    pub tables_bytes: Option<u64>,
    pub result_ttl: Duration,
    pub log: LogSection,
}

/// Parses `"96GiB"`, `"512MiB"`, `"1.5TiB"`, `"1000000"`.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => return None,
    };
    let n: f64 = num.trim().parse().ok()?;
    (n.is_finite() && n >= 0.0).then_some((n * mult as f64) as u64)
}

impl Config {
    /// Reads `path` (when given), then applies `CUZK_*` overrides from `env`.
    pub fn load(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let (text, origin) = match path {
            Some(p) => (
                std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                    path: p.into(),
                    source,
                })?,
                p.display().to_string(),
            ),
            None => (String::new(), "(defaults)".to_string()),
        };
        let mut table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ConfigError::Parse {
                    origin: origin.clone(),
                    message: e.to_string(),
                })?;
        for (var, value) in env {
            apply_env(&mut table, &var, &value)?;
        }
        Config::deserialize(toml::Value::Table(table)).map_err(|e| ConfigError::Parse {
            origin,
            message: e.to_string(),
        })
    }

    /// Checks every key and resolves files (the token is read here).
    pub fn settings(&self) -> Result<Settings, ConfigError> {
        let d = &self.daemon;
        if d.listen.is_empty() {
            return Err(invalid("daemon.listen", "at least one address is needed"));
        }
        let listen = d
            .listen
            .iter()
            .map(|s| Listen::parse(s).map_err(|m| invalid("daemon.listen", m)))
            .collect::<Result<Vec<_>, _>>()?;
        let socket_mode = u32::from_str_radix(d.socket_mode.trim_start_matches("0o"), 8)
            .ok()
            .filter(|m| *m <= 0o777)
            .ok_or_else(|| invalid("daemon.socket_mode", "expected octal bits like \"0600\""))?;
        if d.max_message_bytes < 1024 || d.max_message_bytes > u32::MAX as u64 {
            return Err(invalid(
                "daemon.max_message_bytes",
                "must be between 1 KiB and 4 GiB",
            ));
        }
        let metrics_listen = if d.metrics_listen.is_empty() {
            None
        } else {
            match Listen::parse(&d.metrics_listen) {
                Ok(Listen::Tcp(a)) => Some(a),
                _ => {
                    return Err(invalid(
                        "daemon.metrics_listen",
                        format!("{:?} is not host:port", d.metrics_listen),
                    ))
                }
            }
        };
        let a = &self.auth;
        let token = match &a.token_file {
            None => None,
            Some(p) => {
                let t = std::fs::read_to_string(p)
                    .map_err(|e| invalid("auth.token_file", format!("{}: {e}", p.display())))?;
                let t = t.trim().to_string();
                if t.len() < 16 {
                    return Err(invalid(
                        "auth.token_file",
                        "the token must be at least 16 characters",
                    ));
                }
                Some(Secret(t))
            }
        };
        let tls = match (&a.tls_cert, &a.tls_key) {
            (None, None) => None,
            (Some(c), Some(k)) => Some((c.clone(), k.clone())),
            (Some(_), None) => return Err(invalid("auth.tls_key", "tls_cert needs tls_key")),
            (None, Some(_)) => return Err(invalid("auth.tls_cert", "tls_key needs tls_cert")),
        };
        let has_tcp = listen.iter().any(|l| matches!(l, Listen::Tcp(_)));
        if has_tcp && token.is_none() && tls.is_none() && !a.allow_insecure_tcp {
            return Err(invalid(
                "auth.token_file",
                "a TCP listener needs a bearer token (auth.token_file) or TLS \
                 (auth.tls_cert/tls_key), or auth.allow_insecure_tcp = true",
            ));
        }
        let e = &self.engine;
        for (key, v) in [
            ("engine.cpu_workers", e.cpu_workers),
            ("engine.backend_workers", e.backend_workers),
            ("engine.max_batch", e.max_batch),
        ] {
            if v == 0 {
                return Err(invalid(key, "must be at least 1"));
            }
        }
        let budget_bytes = optional_bytes("engine.budget", &e.budget)?;
        let recycle_bytes = optional_bytes("engine.recycle", &e.recycle)?;
        let tables_bytes = optional_bytes("engine.tables", &e.tables)?;
        if let (Some(r), Some(b)) = (recycle_bytes, budget_bytes) {
            if r > b {
                return Err(invalid(
                    "engine.recycle",
                    format!("{:?} is more than the budget {:?}", e.recycle, e.budget),
                ));
            }
        }
        let gpus = match &e.gpus {
            Gpus::Named(n) if n == "all" => None,
            Gpus::Named(n) => {
                return Err(invalid(
                    "engine.gpus",
                    format!("{n:?}: expected \"all\" or a list of ordinals like [0, 1]"),
                ))
            }
            Gpus::List(l) if l.is_empty() => {
                return Err(invalid("engine.gpus", "an empty list proves nowhere"))
            }
            Gpus::List(l) => {
                let mut seen = l.clone();
                seen.sort_unstable();
                seen.dedup();
                if seen.len() != l.len() {
                    return Err(invalid("engine.gpus", format!("{l:?} names a GPU twice")));
                }
                Some(l.clone())
            }
        };
        let mut gpu_kinds = BTreeMap::new();
        for (ordinal, kinds) in &e.gpu_kinds {
            let n: usize = ordinal.parse().map_err(|_| {
                invalid(
                    "engine.gpu_kinds",
                    format!("{ordinal:?} is not a GPU ordinal"),
                )
            })?;
            if gpus.as_ref().is_some_and(|g| !g.contains(&n)) {
                return Err(invalid(
                    "engine.gpu_kinds",
                    format!("GPU {n} is not in engine.gpus"),
                ));
            }
            if kinds.is_empty() {
                return Err(invalid(
                    "engine.gpu_kinds",
                    format!("GPU {n}: an empty list; leave the GPU out to take every kind"),
                ));
            }
            gpu_kinds.insert(n, kinds.clone());
        }
        if e.backend == BackendChoice::Gpu && e.backend_workers != 1 {
            return Err(invalid(
                "engine.backend_workers",
                "the GPU backend proves with one worker per GPU; choose GPUs with engine.gpus",
            ));
        }
        if e.backend == BackendChoice::Cpu && !gpu_kinds.is_empty() {
            return Err(invalid("engine.gpu_kinds", "needs backend = \"gpu\""));
        }
        if e.result_ttl_secs == 0 {
            return Err(invalid("engine.result_ttl_secs", "must be at least 1"));
        }
        if self.log.level.is_empty() {
            return Err(invalid("log.level", "empty filter"));
        }
        Ok(Settings {
            listen,
            socket_mode,
            max_message_bytes: d.max_message_bytes as usize,
            metrics_listen,
            token,
            tls,
            engine: e.clone(),
            gpus,
            gpu_kinds,
            budget_bytes,
            recycle_bytes,
            tables_bytes,
            result_ttl: Duration::from_secs(e.result_ttl_secs),
            log: self.log.clone(),
        })
    }
}

/// Applies `CUZK_<SECTION>_<KEY>=value` (e.g. `CUZK_ENGINE_CPU_WORKERS=4`). The value is read
/// as a TOML value when it parses as one, else as a string; `CUZK_DAEMON_LISTEN` takes a
/// comma-separated list.
fn apply_env(table: &mut toml::Table, var: &str, value: &str) -> Result<(), ConfigError> {
    const SECTIONS: [&str; 4] = ["daemon", "auth", "engine", "log"];
    let Some(rest) = var.strip_prefix("CUZK_") else {
        return Ok(());
    };
    let rest = rest.to_ascii_lowercase();
    let Some((section, key)) = SECTIONS
        .iter()
        .find_map(|s| Some((*s, rest.strip_prefix(s)?.strip_prefix('_')?)))
    else {
        return Ok(()); // other CUZK_ variables (CUZK_GPU_BENCH, ...) are not configuration
    };
    let parsed = if section == "daemon" && key == "listen" {
        toml::Value::Array(
            value
                .split(',')
                .map(|s| toml::Value::String(s.trim().into()))
                .collect(),
        )
    } else {
        format!("v = {value}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.into()))
    };
    let entry = table
        .entry(section)
        .or_insert_with(|| toml::Value::Table(Default::default()));
    match entry {
        toml::Value::Table(t) => {
            t.insert(key.to_string(), parsed);
            Ok(())
        }
        _ => Err(ConfigError::Env {
            var: var.into(),
            message: format!("[{section}] in the file is not a table"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str, env: &[(&str, &str)]) -> Result<Settings, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, text).unwrap();
        let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        Config::load(Some(&path), env)?.settings()
    }

    fn error(text: &str, env: &[(&str, &str)]) -> String {
        load(text, env).unwrap_err().to_string()
    }

    #[test]
    fn the_documented_example_is_valid() {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cuzk.example.toml");
        let text = std::fs::read_to_string(example).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "0123456789abcdef0123").unwrap();
        let text = text.replace("/etc/cuzk/token", token.to_str().unwrap());
        let s = load(&text, &[]).unwrap();
        assert_eq!(s.socket_mode, 0o600);
        assert!(s.token.is_some());
        assert_eq!(format!("{:?}", s.token), "Some(Secret(***))");
    }

    #[test]
    fn defaults_serve_a_private_unix_socket() {
        let s = load("", &[]).unwrap();
        assert_eq!(s.listen, vec![Listen::Unix("/run/cuzk/cuzk.sock".into())]);
        assert_eq!(s.socket_mode, 0o600);
        assert_eq!(s.max_message_bytes as u64, DEFAULT_MAX_MESSAGE_BYTES);
    }

    #[test]
    fn errors_name_the_key() {
        for (text, key) in [
            ("[engine]\ncpu_workers = 0", "engine.cpu_workers"),
            ("[engine]\nbudget = \"lots\"", "engine.budget"),
            ("[engine]\nrecycle = \"some\"", "engine.recycle"),
            ("[engine]\ntables = \"lots\"", "engine.tables"),
            (
                "[engine]\nbudget = \"1GiB\"\nrecycle = \"2GiB\"",
                "engine.recycle",
            ),
            ("[daemon]\nsocket_mode = \"999\"", "daemon.socket_mode"),
            ("[daemon]\nlisten = [\"nowhere\"]", "daemon.listen"),
            ("[daemon]\nlisten = [\"127.0.0.1:1\"]", "auth.token_file"),
            (
                "[daemon]\nmax_message_bytes = 10",
                "daemon.max_message_bytes",
            ),
            ("[auth]\ntls_cert = \"/x\"", "auth.tls_key"),
            ("[auth]\ntoken_file = \"/nonexistent/t\"", "auth.token_file"),
        ] {
            let e = error(text, &[]);
            assert!(e.starts_with(key), "{text:?}: {e}");
        }
        // Unknown keys and wrong types are named by the TOML reader.
        assert!(error("[engine]\ncpu_wrokers = 2", &[]).contains("cpu_wrokers"));
        assert!(error("[engine]\ncpu_workers = \"two\"", &[]).contains("cpu_workers"));
        assert!(error("[nope]\nx = 1", &[]).contains("nope"));
    }

    #[test]
    fn gpus_and_their_kinds() {
        let s = load("", &[]).unwrap();
        assert_eq!((s.gpus, s.gpu_kinds.len()), (None, 0));
        let s = load(
            "[engine]\nbackend = \"gpu\"\ngpus = [1, 0]\ngpu_kinds = { \"1\" = [\"porep-c2\"] }",
            &[],
        )
        .unwrap();
        assert_eq!(s.gpus, Some(vec![1, 0]));
        assert_eq!(s.gpu_kinds[&1], ["porep-c2"]);
        let s = load("", &[("CUZK_ENGINE_GPUS", "[2]")]).unwrap();
        assert_eq!(s.gpus, Some(vec![2]));
        for (text, wrong) in [
            ("gpus = \"some\"", "\"some\""),
            ("gpus = []", "empty"),
            ("gpus = [0, 0]", "twice"),
            (
                "gpus = [0]\ngpu_kinds = { \"1\" = [\"porep-c2\"] }",
                "not in engine.gpus",
            ),
            (
                "gpu_kinds = { \"x\" = [\"porep-c2\"] }",
                "not a GPU ordinal",
            ),
            ("gpu_kinds = { \"0\" = [] }", "empty list"),
            ("backend_workers = 2", "one worker per GPU"),
        ] {
            let e = error(&format!("[engine]\nbackend = \"gpu\"\n{text}"), &[]);
            assert!(e.starts_with("engine.") && e.contains(wrong), "{text}: {e}");
        }
        let e = error(
            "[engine]\nbackend = \"cpu\"\ngpu_kinds = { \"0\" = [\"x\"] }",
            &[],
        );
        assert!(e.starts_with("engine.gpu_kinds"), "{e}");
    }

    #[test]
    fn the_native_witness_is_the_default_and_can_be_switched_off() {
        assert!(load("", &[]).unwrap().engine.native_witness);
        let s = load("[engine]\nnative_witness = false", &[]).unwrap();
        assert!(!s.engine.native_witness && s.engine.pce);
        let s = load("", &[("CUZK_ENGINE_NATIVE_WITNESS", "false")]).unwrap();
        assert!(!s.engine.native_witness);
    }

    #[test]
    fn the_device_pce_is_the_default_and_can_be_switched_off() {
        assert!(load("", &[]).unwrap().engine.device_pce);
        let s = load("[engine]\ndevice_pce = false", &[]).unwrap();
        assert!(!s.engine.device_pce);
        let s = load("", &[("CUZK_ENGINE_DEVICE_PCE", "false")]).unwrap();
        assert!(!s.engine.device_pce);
    }

    #[test]
    fn seeded_keys_are_off_unless_a_seed_is_given() {
        assert_eq!(load("", &[]).unwrap().engine.seeded_keys, None);
        let s = load("[engine]\nseeded_keys = 7", &[]).unwrap();
        assert_eq!(s.engine.seeded_keys, Some(7));
        let s = load("", &[("CUZK_ENGINE_SEEDED_KEYS", "9")]).unwrap();
        assert_eq!(s.engine.seeded_keys, Some(9));
        assert!(error("[engine]\nseeded_keys = -1", &[]).contains("engine.seeded_keys"));
    }

    #[test]
    fn environment_overrides_the_file() {
        let s = load(
            "[engine]\ncpu_workers = 2\nbudget = \"1GiB\"",
            &[
                ("CUZK_ENGINE_CPU_WORKERS", "4"),
                (
                    "CUZK_DAEMON_LISTEN",
                    "unix:///tmp/a.sock, unix:///tmp/b.sock",
                ),
                ("CUZK_LOG_FORMAT", "json"),
                ("CUZK_GPU_BENCH", "ignored"),
            ],
        )
        .unwrap();
        assert_eq!(s.engine.cpu_workers, 4);
        assert_eq!(s.budget_bytes, Some(1 << 30));
        assert_eq!(s.listen.len(), 2);
        assert_eq!(s.log.format, LogFormat::Json);
        let e = error("", &[("CUZK_ENGINE_CPU_WORKERS", "many")]);
        assert!(e.contains("cpu_workers"), "{e}");
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_bytes("96GiB"), Some(96 << 30));
        assert_eq!(parse_bytes("1.5 KiB"), Some(1536));
        assert_eq!(parse_bytes("42"), Some(42));
        assert_eq!(parse_bytes("-1GiB"), None);
        assert_eq!(parse_bytes("3 parsecs"), None);
    }
}
