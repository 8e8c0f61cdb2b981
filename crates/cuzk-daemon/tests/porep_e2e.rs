//! End to end: `cuzk prove porep` on the bundled 2 KiB fixture, raw and in Curio's envelope,
//! with parameters from `cuzk paramgen`; upstream `verify_seal` must accept the proofs.
//!
//! The first run generates the 2 KiB parameters (about 70 s on a 2-core machine) into
//! `$FIL_PROOFS_PARAMETER_CACHE` (`.cache/params` through `.cargo/config.toml`), where later
//! runs and `cuzk demo` find them.

use std::path::{Path, PathBuf};
use std::process::Command;

use cuzk_circuits::C1Input;
use filecoin_proofs_api::seal::verify_seal;
use filecoin_proofs_api::{RegisteredSealProof, SectorId};

fn fixture(size: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/porep")
        .join(size)
}

fn params_dir() -> PathBuf {
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

fn cuzk(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(args)
        .output()
        .expect("run cuzk")
}

fn ensure_params(dir: &Path) {
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

struct Lock(PathBuf);
impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Upstream's verdict; `Err` when it cannot even parse the proof.
fn upstream_verdict(size: &str, proof: &[u8]) -> Result<bool, String> {
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

fn prove(c1: &Path, params: &Path, out: &Path) -> Vec<u8> {
    let run = cuzk(&[
        "prove",
        "porep",
        "--c1",
        c1.to_str().unwrap(),
        "--params",
        params.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "prove failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::read(out).unwrap()
}

#[test]
fn proves_2kib_raw_c1_and_upstream_verifies() {
    let params = params_dir();
    ensure_params(&params);
    let tmp = tempfile::tempdir().unwrap();
    let proof = prove(
        &fixture("2KiB").join("c1.json"),
        &params,
        &tmp.path().join("proof"),
    );
    assert_eq!(proof.len(), 192);
    assert_eq!(upstream_verdict("2KiB", &proof), Ok(true));
    // A flipped bit is rejected (as an unparseable point or a failed pairing check).
    let mut flipped = proof.clone();
    flipped[100] ^= 4;
    assert_ne!(upstream_verdict("2KiB", &flipped), Ok(true));
}

#[test]
fn proves_2kib_curio_envelope_and_upstream_verifies() {
    let params = params_dir();
    ensure_params(&params);
    let tmp = tempfile::tempdir().unwrap();
    let raw = std::fs::read(fixture("2KiB").join("c1.json")).unwrap();
    let env_path = tmp.path().join("envelope.json");
    std::fs::write(&env_path, C1Input::envelope(&raw, 7, 2048)).unwrap();
    let proof = prove(&env_path, &params, &tmp.path().join("proof"));
    assert_eq!(upstream_verdict("2KiB", &proof), Ok(true));
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let params = tmp.path().to_str().unwrap().to_string();
    let cases: [(&str, &[u8], &str); 4] = [
        ("garbage", b"\x00\x01not json", "not JSON"),
        (
            "wrong-shape",
            br#"{"registered_proof":"StackedDrg2KiBV1_1"}"#,
            "SealCommitPhase1Output",
        ),
        (
            "bad-envelope",
            br#"{"SectorNum":1,"Phase1Out":"%%%","SectorSize":2048}"#,
            "Phase1Out",
        ),
        (
            "size-mismatch",
            &C1Input::envelope(
                &std::fs::read(fixture("2KiB").join("c1.json")).unwrap(),
                1,
                4096,
            ),
            "sector size mismatch",
        ),
    ];
    for (name, bytes, expect) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let run = cuzk(&[
            "prove",
            "porep",
            "--c1",
            path.to_str().unwrap(),
            "--params",
            &params,
            "--out",
            "/dev/null",
        ]);
        let err = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(expect), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    // Valid input but no parameters: says how to make them.
    let run = cuzk(&[
        "prove",
        "porep",
        "--c1",
        fixture("2KiB").join("c1.json").to_str().unwrap(),
        "--params",
        &params,
        "--out",
        "/dev/null",
    ]);
    assert!(String::from_utf8_lossy(&run.stderr).contains("cuzk paramgen porep"));
}
