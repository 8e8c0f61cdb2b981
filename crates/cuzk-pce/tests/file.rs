//! The PCE file round-trips, and every damaged, truncated, wrong-version or wrong-circuit file
//! is a typed error, never a panic.

use std::sync::OnceLock;

use cuzk_groth16::conformance::{RandomCircuit, Shape};
use cuzk_pce::file::FileError;
use cuzk_pce::Pce;
use proptest::prelude::*;

fn circuit() -> RandomCircuit {
    let shape = Shape {
        inputs: 3,
        free_aux: 20,
        constraints: 300,
        max_terms: 6,
        zero_witness: false,
        b_only_one: false,
    };
    RandomCircuit::new(shape, 5)
}

/// The file image of one PCE, written once.
fn image() -> &'static (Pce, Vec<u8>) {
    static IMAGE: OnceLock<(Pce, Vec<u8>)> = OnceLock::new();
    IMAGE.get_or_init(|| {
        let pce = Pce::extract(circuit()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.pce");
        pce.write(&path, "test-circuit").unwrap();
        (pce, std::fs::read(&path).unwrap())
    })
}

fn load_bytes(bytes: &[u8], expect: Option<&str>) -> Result<Pce, FileError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.pce");
    std::fs::write(&path, bytes).unwrap();
    Pce::load(&path, expect).map(|(p, _)| p)
}

#[test]
fn round_trip() {
    let (pce, bytes) = image();
    let loaded = load_bytes(bytes, Some("test-circuit")).unwrap();
    assert_eq!(&loaded, pce);
    assert_eq!(
        loaded.witness(circuit()).unwrap(),
        pce.witness(circuit()).unwrap()
    );
    assert!(
        pce.a.escaped() > 0,
        "the test circuit exercises escaped coefficients"
    );
}

#[test]
fn wrong_circuit_version_and_magic() {
    let (_, bytes) = image();
    assert!(matches!(
        load_bytes(bytes, Some("porep-32GiB")),
        Err(FileError::WrongCircuit { .. })
    ));
    let mut v = bytes.clone();
    v[8] = 9;
    assert!(matches!(
        load_bytes(&v, None),
        Err(FileError::Version { found: 9, .. })
    ));
    let mut m = bytes.clone();
    m[0] = b'X';
    assert!(matches!(load_bytes(&m, None), Err(FileError::Magic { .. })));
    let mut e = bytes.clone();
    e[12..16].copy_from_slice(&0x0102_0304u32.to_be_bytes());
    assert!(matches!(
        load_bytes(&e, None),
        Err(FileError::Endianness { .. })
    ));
}

#[test]
fn writes_leave_no_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    image().0.write(dir.path().join("a.pce"), "x").unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    assert!(image()
        .0
        .write(dir.path().join("missing/a.pce"), "x")
        .is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_flipped_bit_is_detected(pos in any::<usize>(), bit in 0u8..8) {
        let (_, bytes) = image();
        let mut b = bytes.clone();
        let pos = pos % b.len();
        b[pos] ^= 1 << bit;
        prop_assert!(load_bytes(&b, None).is_err(), "flip at {} went unnoticed", pos);
    }

    #[test]
    fn truncation_is_detected(cut in any::<usize>()) {
        let (_, bytes) = image();
        let cut = cut % bytes.len();
        prop_assert!(load_bytes(&bytes[..cut], None).is_err());
    }
}
