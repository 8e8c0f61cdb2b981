//! Shared by the daemon's end-to-end tests: fixtures, the 2 KiB parameters (generated once,
//! under a lock, when missing), the `cuzk` binary, and upstream's verdict on a proof.

#![allow(dead_code)] // each test binary uses its own part of this module

use std::path::{Path, PathBuf};
use std::process::Command;

use filecoin_proofs_api::seal::verify_seal;
use filecoin_proofs_api::{RegisteredSealProof, SectorId};

pub fn fixture(size: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/porep")
        .join(size)
}

pub fn params_dir() -> PathBuf {
    match std::env::var_os("FIL_PROOFS_PARAMETER_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("params");
            // Both the CLI (through --params) and upstream (through the env) use this folder.
            std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &dir);
            dir
        }
    }
}

pub fn cuzk(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(args)
        .output()
        .expect("run cuzk")
}

pub fn ensure_params(dir: &Path) {
    let lock = dir.with_extension("lock");
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    // Tests in this file run in parallel; one generates while the others wait.
    let _guard = loop {
        match std::fs::create_dir(&lock) {
            Ok(()) => break Lock(lock.clone()),
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(200)),
        }
    };
    let has = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "params"))
        })
        .unwrap_or(false);
    if !has {
        let out = cuzk(&[
            "paramgen",
            "porep",
            "--sector-size",
            "2KiB",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "paramgen failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

pub struct Lock(PathBuf);
impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Upstream's verdict; `Err` when it cannot even parse the proof.
pub fn upstream_verdict(size: &str, proof: &[u8]) -> Result<bool, String> {
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture(size).join("sector.json")).unwrap()).unwrap();
    let b32 = |k: &str| -> [u8; 32] { serde_json::from_value(info[k].clone()).unwrap() };
    let proof_type: RegisteredSealProof =
        serde_json::from_value(info["registered_proof"].clone()).unwrap();
    verify_seal(
        proof_type,
        b32("comm_r"),
        b32("comm_d"),
        b32("prover_id"),
        SectorId::from(info["sector_id"].as_u64().unwrap()),
        b32("ticket"),
        b32("seed"),
        proof,
    )
    .map_err(|e| format!("{e:#}"))
}

/// A `cuzk daemon` child process on a unix socket in `dir`, killed when dropped.
pub struct Daemon {
    child: std::process::Child,
    pub socket: PathBuf,
    pub log: PathBuf,
}

impl Daemon {
    /// Starts the daemon with the 2 KiB parameters and a store in `dir`, and waits until its
    /// socket accepts connections.
    pub fn start(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Daemon {
        let params = params_dir();
        ensure_params(&params);
        let socket = dir.join("cuzk.sock");
        let n = std::fs::read_dir(dir).map_or(0, |d| d.count());
        let log = dir.join(format!("daemon-{n}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_cuzk"))
            .args(["daemon", "--params", params.to_str().unwrap()])
            .args(["--store", dir.join("store").to_str().unwrap()])
            .args(args)
            .args(if args.contains(&"--listen") {
                vec![]
            } else {
                vec![
                    "--listen".to_string(),
                    format!("unix://{}", socket.display()),
                ]
            })
            .envs(env.iter().copied())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start cuzk daemon");
        let mut d = Daemon { child, socket, log };
        d.wait_ready(args.contains(&"--listen"));
        d
    }

    fn wait_ready(&mut self, custom_listen: bool) {
        for _ in 0..600 {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("daemon exited with {status}: {}", self.log_text());
            }
            let ready = if custom_listen {
                self.log_text().contains("cuzk daemon ready")
            } else {
                std::os::unix::net::UnixStream::connect(&self.socket).is_ok()
            };
            if ready {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("daemon not ready after 60 s: {}", self.log_text());
    }

    pub fn addr(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig}");
    }

    /// SIGKILL, as a crash would.
    pub fn kill(mut self) {
        self.signal("-KILL");
        let _ = self.child.wait();
    }

    /// SIGTERM; returns the exit status once it has drained.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        self.signal("-TERM");
        self.child.wait().unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
