//! For the bundled 2 KiB and 8 MiB sectors, the PCE paths (witness-only synthesis or the native
//! witness generator, then the mat-vec) yield exactly the witness of full synthesis, the
//! columns-only path its input and aux, and a PCE file survives a round trip.

use std::path::Path;

use cuzk_circuits::{C1Input, SealShape, Synthesis};
use cuzk_pce::Pce;

fn check(size: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/porep")
        .join(size);
    let c1 = C1Input::parse(&std::fs::read(dir.join("c1.json")).unwrap()).unwrap();
    let shape = SealShape::new(c1.registered_proof).unwrap();
    let pce = shape.extract_pce().unwrap();
    let full = shape.witnesses(&c1, Synthesis::Full).unwrap();
    let fast = shape.witnesses(&c1, Synthesis::Pce(&pce)).unwrap();
    let native = shape.witnesses(&c1, Synthesis::Native(&pce)).unwrap();
    assert_eq!(full.len(), fast.len());
    assert_eq!(full.len(), native.len());
    for (k, f) in full.iter().enumerate() {
        let cols = shape.partition_columns(&c1, k).unwrap();
        assert_eq!(cols.public_inputs, f.public_inputs, "{size} partition {k}");
        assert!(
            cols.input == f.witness.input && cols.aux == f.witness.aux,
            "{size} partition {k}: columns differ from full synthesis"
        );
    }
    assert!(shape.partition_columns(&c1, full.len()).is_err());
    for ((f, p), n) in full.iter().zip(&fast).zip(&native) {
        assert_eq!(f.public_inputs, p.public_inputs);
        assert!(
            f.witness == p.witness,
            "{size}: PCE witness differs from full synthesis"
        );
        assert_eq!(f.public_inputs, n.public_inputs);
        assert!(
            f.witness == n.witness,
            "{size}: native witness differs from full synthesis"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(shape.pce_file_name().unwrap());
    pce.write(&path, &shape.pce_identity().unwrap()).unwrap();
    let (loaded, _) = Pce::load(&path, Some(&shape.pce_identity().unwrap())).unwrap();
    assert!(loaded == pce);
    let other = SealShape::from_sector_size(if size == "2KiB" { "8MiB" } else { "2KiB" }).unwrap();
    assert!(Pce::load(&path, Some(&other.pce_identity().unwrap())).is_err());
}

#[test]
fn pce_matches_full_synthesis_2kib() {
    check("2KiB");
}

#[test]
fn pce_matches_full_synthesis_8mib() {
    check("8MiB");
}
