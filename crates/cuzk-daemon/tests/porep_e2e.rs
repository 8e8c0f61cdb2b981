//! End to end: `cuzk prove porep` on the bundled 2 KiB fixture, raw and in Curio's envelope, and
//! on freshly sealed 2 KiB and 8 MiB sectors, with parameters from `cuzk paramgen`; upstream
//! `verify_seal` must accept the proofs.
//!
//! The first run generates the 2 KiB and 8 MiB parameters (about 40 s and 60 s on a 2-core
//! machine) into `$FIL_PROOFS_PARAMETER_CACHE` (`.cache/params` through `.cargo/config.toml`),
//! where later runs and `cuzk demo` find them.

mod common;

use common::*;
use cuzk_circuits::C1Input;

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

/// The native witness generator is the default; both reference paths stay selectable, and
/// every path's proof verifies.
#[test]
fn every_witness_path_proves_2kib_and_upstream_verifies() {
    let params = params_dir();
    ensure_params(&params);
    let tmp = tempfile::tempdir().unwrap();
    let c1 = fixture("2KiB").join("c1.json");
    for (extra, name) in [
        (&[][..], "native"),
        (&["--synthesis", "pce"][..], "pce"),
        (&["--synthesis", "full"][..], "full"),
    ] {
        let (proof, out) = prove_with(&c1, &params, &tmp.path().join(name), extra);
        assert!(out.contains(&format!("synthesis={name} ")), "{out}");
        assert_eq!(upstream_verdict("2KiB", &proof), Ok(true), "{name}");
    }
}

/// The first proof decodes the parameters and writes the point cache beside them; the next
/// maps the points from it; `--no-point-cache` decodes again. Every proof verifies. (The
/// engine logs where each load's points came from.)
#[test]
fn point_cache_is_written_then_used_and_proofs_verify() {
    let shared = params_dir();
    ensure_params(&shared);
    // A private directory of links to the shared files (same inode and modification time),
    // so that this test sees its own cache appear.
    let dir = tempfile::tempdir_in(shared.parent().unwrap()).unwrap();
    for entry in std::fs::read_dir(&shared).unwrap() {
        let path = entry.unwrap().path();
        if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("params" | "vk" | "pce")
        ) {
            std::fs::hard_link(&path, dir.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    let c1 = fixture("2KiB").join("c1.json");
    let caches = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension() == Some("cuzk-points".as_ref()))
            .count()
    };
    for (extra, points, after) in [
        (&[][..], "decoded+cached", 1),
        (&[][..], "cached", 1),
        (&["--no-point-cache"][..], "decoded", 1),
    ] {
        let (proof, _, log) = prove_logged(&c1, dir.path(), &dir.path().join("proof"), extra);
        assert!(log.contains(&format!(" points={points} ")), "{log}");
        assert_eq!(upstream_verdict("2KiB", &proof), Ok(true), "{points}");
        assert_eq!(caches(), after, "{points}");
    }
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
fn fresh_2kib_sector_proves_and_upstream_verifies() {
    let params = params_dir();
    ensure_params_for(&params, "2KiB");
    assert_eq!(prove_fresh_sector("2KiB", &params), Ok(true));
}

#[test]
fn fresh_8mib_sector_proves_and_upstream_verifies() {
    let params = params_dir();
    ensure_params_for(&params, "8MiB");
    assert_eq!(prove_fresh_sector("8MiB", &params), Ok(true));
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
    // Valid input but no parameters: says where they are missing and how to make them.
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
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("no parameters at") && err.contains("cuzk paramgen"),
        "{err}"
    );
}

/// `cuzk random-c1` sectors (sealed sparsely, no upstream seal) prove, and upstream
/// `verify_seal` accepts the proofs with the `sector.json` written beside them: their replica
/// ids, challenges and trees are a real sector's. A changed sector id is refused.
#[test]
fn random_sealed_sectors_prove_and_upstream_verifies() {
    let params = params_dir();
    for size in ["2KiB", "8MiB"] {
        ensure_params_for(&params, size);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_str().unwrap();
        let made = cuzk(&[
            "random-c1",
            "--sector-size",
            size,
            "--seed",
            "7",
            "--out",
            dir,
        ]);
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let proof = prove(
            &tmp.path().join("c1.json"),
            &params,
            &tmp.path().join("proof"),
        );
        let info = cuzk_upstream_tools::SectorInfo::read(&tmp.path().join("sector.json")).unwrap();
        assert_eq!(info.verify(&proof), Ok(true), "{size}");
        let other = cuzk_upstream_tools::SectorInfo {
            sector_id: info.sector_id ^ 1,
            ..info
        };
        assert_eq!(other.verify(&proof), Ok(false), "{size}");
    }
}
