//! The parameter reader never panics: truncation, corruption and wrong-kind files give typed
//! errors that name the section and the offset.

use std::sync::OnceLock;

use cuzk_groth16::conformance::{RandomCircuit, Shape};
use cuzk_groth16::generator;
use cuzk_groth16::params::{ParamsError, ProvingKey, Validation, VerifyingKey};
use proptest::prelude::*;
use rand::SeedableRng;

/// One small key's file image, shared by all cases.
fn image() -> &'static (Vec<u8>, usize) {
    static IMAGE: OnceLock<(Vec<u8>, usize)> = OnceLock::new();
    IMAGE.get_or_init(|| {
        let shape = Shape {
            inputs: 2,
            free_aux: 4,
            constraints: 9,
            max_terms: 3,
            zero_witness: false,
            b_only_one: false,
        };
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let pk = generator::generate(RandomCircuit::new(shape, 3), &mut rng).unwrap();
        let mut bytes = vec![];
        pk.write_to(&mut bytes).unwrap();
        (bytes, pk.vk.to_bytes().len())
    })
}

fn load_all(bytes: Vec<u8>, v: Validation) -> Result<ProvingKey, ParamsError> {
    let pk = ProvingKey::from_bytes(bytes, v)?;
    pk.preload()?;
    Ok(pk)
}

proptest! {
    #[test]
    fn truncation_is_reported_with_its_offset(cut in 0usize..100_000) {
        let (full, _) = image();
        let cut = cut % full.len();
        match ProvingKey::from_bytes(full[..cut].to_vec(), Validation::Full) {
            Err(ParamsError::Truncated { offset, have, .. }) => {
                prop_assert_eq!(have as usize, cut);
                prop_assert!(offset as usize <= cut);
            }
            other => prop_assert!(false, "cut at {}: {:?}", cut, other.map(|_| ())),
        }
    }

    #[test]
    fn flipped_bytes_never_panic(pos in 0usize..100_000, bit in 0u8..8) {
        let (full, _) = image();
        let mut bytes = full.clone();
        let pos = pos % bytes.len();
        bytes[pos] ^= 1 << bit;
        for v in [Validation::Full, Validation::OnCurve, Validation::Trusted] {
            if let Err(e) = load_all(bytes.clone(), v) {
                // Every error names where it happened.
                let msg = e.to_string();
                prop_assert!(msg.contains("offset") || msg.contains("section"), "{}", msg);
            }
        }
    }
}

#[test]
fn a_corrupt_point_names_section_index_and_offset() {
    let (full, vk_len) = image();
    // The first h point starts after the vk and the 4-byte length of h.
    let first_h = vk_len + 4;
    let mut bytes = full.clone();
    bytes[first_h + 95] ^= 1; // last byte of the y coordinate: no longer on the curve
    let pk = ProvingKey::from_bytes(bytes, Validation::OnCurve).expect("layout is intact");
    match pk.h() {
        Err(ParamsError::BadPoint {
            section,
            index,
            offset,
            ..
        }) => {
            assert_eq!((section, index, offset as usize), ("h", 0, first_h));
        }
        other => panic!("expected a bad point in h, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn wrong_kind_files_are_refused() {
    let (full, vk_len) = image();
    // A .vk file handed to the .params reader: the h section is missing.
    match ProvingKey::from_bytes(full[..*vk_len].to_vec(), Validation::Full) {
        Err(ParamsError::Truncated {
            section, offset, ..
        }) => {
            assert_eq!((section, offset as usize), ("h", *vk_len));
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    // A .params file handed to the .vk reader: trailing sections.
    assert!(matches!(
        VerifyingKey::from_bytes(full),
        Err(ParamsError::Trailing { .. })
    ));
    // Random bytes.
    let junk: Vec<u8> = (0..5000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 7) as u8)
        .collect();
    assert!(ProvingKey::from_bytes(junk, Validation::Full).is_err());
}

#[test]
fn files_round_trip_through_disk() {
    let (full, _) = image();
    let dir = tempfile::tempdir().unwrap();
    let pk = ProvingKey::from_bytes(full.clone(), Validation::Full).unwrap();
    let path = dir.path().join("k.params");
    pk.write(&path).unwrap();
    assert_eq!(&std::fs::read(&path).unwrap(), full);
    let mapped = ProvingKey::read(&path, Validation::Full).unwrap();
    mapped.preload().unwrap();
    assert_eq!(mapped.vk, pk.vk);
    // The trusted decoder yields the very same points.
    let trusted = ProvingKey::read(&path, Validation::Trusted).unwrap();
    assert_eq!(trusted.h().unwrap(), pk.h().unwrap());
    assert_eq!(trusted.a().unwrap(), pk.a().unwrap());
    assert_eq!(trusted.b_g2().unwrap(), pk.b_g2().unwrap());
    pk.vk.write(dir.path().join("k.vk")).unwrap();
    assert_eq!(VerifyingKey::read(dir.path().join("k.vk")).unwrap(), pk.vk);
    // No temporary files are left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    match ProvingKey::read(dir.path().join("missing.params"), Validation::Full) {
        Err(ParamsError::Io { path, .. }) => assert!(path.ends_with("missing.params")),
        other => panic!("{:?}", other.map(|_| ())),
    }
}
