//! PoRep C2 through the engine on the real CPU backend: the bundled 2 KiB sector, submitted in
//! Curio's envelope, comes back as a proof upstream's `verify_seal` accepts.
//!
//! Needs the 2 KiB parameters in `$FIL_PROOFS_PARAMETER_CACHE` (`.cache/params` through
//! `.cargo/config.toml`); a missing set is generated first (about 40 s on 2 cores), under the
//! same lock folder the daemon's end-to-end test uses, so the two never generate at once.
//! The proof itself takes about 20 s on 2 cores.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuzk_circuits::{C1Input, SealShape};
use cuzk_engine::kind::{CircuitId, PorepKind, Registry};
use cuzk_engine::residency::Tier;
use cuzk_engine::{Engine, EngineConfig, Outcome, Priority, Request, Wait};
use cuzk_groth16::backend::CpuBackend;
use filecoin_proofs_api::seal::verify_seal;
use filecoin_proofs_api::{RegisteredSealProof, SectorId};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/porep/2KiB")
}

fn params_dir() -> PathBuf {
    std::env::var_os("FIL_PROOFS_PARAMETER_CACHE").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("params"),
        PathBuf::from,
    )
}

/// What `fixtures/porep/2KiB/sector.json` records about the sealed sector.
#[derive(serde::Deserialize)]
struct Sector {
    registered_proof: RegisteredSealProof,
    comm_r: [u8; 32],
    comm_d: [u8; 32],
    prover_id: [u8; 32],
    sector_id: u64,
    ticket: [u8; 32],
    seed: [u8; 32],
}

struct Lock(PathBuf);

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn ensure_params(dir: &Path, shape: &SealShape) {
    std::fs::create_dir_all(dir).unwrap();
    let lock = dir.with_extension("lock");
    let _held = loop {
        if std::fs::create_dir(&lock).is_ok() {
            break Lock(lock);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let [params, _, _] = shape.file_names().unwrap();
    if !dir.join(params).exists() {
        let pk = shape.generate_params(&mut rand::rngs::OsRng).unwrap();
        shape.write_params(&pk, dir).unwrap();
    }
}

#[test]
fn porep_2kib_c2_through_the_engine_verifies_upstream() {
    let raw = std::fs::read(fixture().join("c1.json")).unwrap();
    let c1 = C1Input::parse(&raw).unwrap();
    let shape = SealShape::new(c1.registered_proof).unwrap();
    let params = params_dir();
    ensure_params(&params, &shape);

    let store = tempfile::tempdir().unwrap();
    let registry = Registry::new().with(PorepKind::new(&params, true));
    let engine = Engine::start(EngineConfig::new(
        store.path(),
        registry,
        Arc::new(CpuBackend),
    ))
    .unwrap();
    let job = engine
        .submit(Request {
            request_id: "sector-7".into(),
            kind: PorepKind::NAME.into(),
            priority: Priority::Normal,
            payload: C1Input::envelope(&raw, 7, 2048),
        })
        .unwrap();
    let proof = match engine.await_job(job, Wait::Forever).unwrap() {
        Outcome::Succeeded { proof, .. } => proof,
        other => panic!("{other:?}"),
    };
    assert_eq!(proof.len(), 192);
    let hot = engine.status().resident;
    assert_eq!(hot.len(), 1);
    assert_eq!(
        (&hot[0].circuit, hot[0].tier),
        (&CircuitId::from("porep-2k"), Tier::Hot)
    );

    let sector: Sector =
        serde_json::from_slice(&std::fs::read(fixture().join("sector.json")).unwrap()).unwrap();
    let verdict = verify_seal(
        sector.registered_proof,
        sector.comm_r,
        sector.comm_d,
        sector.prover_id,
        SectorId::from(sector.sector_id),
        sector.ticket,
        sector.seed,
        &proof,
    );
    assert!(
        verdict.unwrap(),
        "upstream verify_seal rejects the engine's proof"
    );
}
