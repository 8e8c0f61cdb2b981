//! The parameter reader never panics: truncation, corruption and wrong-kind files give typed
//! errors that name the section and the offset.

use std::path::Path;
use std::sync::OnceLock;

use cuzk_groth16::conformance::{RandomCircuit, Shape};
use cuzk_groth16::generator;
use cuzk_groth16::params::{ParamsError, PointCache, ProvingKey, Validation, VerifyingKey};
use cuzk_groth16::{G1Affine, G2Affine};
use proptest::prelude::*;
use rand::SeedableRng;

/// One small key's file image, shared by all cases.
fn image() -> &'static (Vec<u8>, usize) {
    static IMAGE: OnceLock<(Vec<u8>, usize)> = OnceLock::new();
    IMAGE.get_or_init(|| key_image(3))
}

/// A small key's file image and its verifying key's length; the shape is the same for every
/// seed.
fn key_image(seed: u64) -> (Vec<u8>, usize) {
    let shape = Shape {
        inputs: 2,
        free_aux: 4,
        constraints: 9,
        max_terms: 3,
        zero_witness: false,
        b_only_one: false,
    };
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let pk = generator::generate(RandomCircuit::new(shape, 3), &mut rng).unwrap();
    let mut bytes = vec![];
    pk.write_to(&mut bytes).unwrap();
    (bytes, pk.vk.to_bytes().len())
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

/// Every query section of a key, decoded.
fn points(pk: &ProvingKey) -> (Vec<Vec<G1Affine>>, Vec<G2Affine>) {
    let g1 = [pk.h(), pk.l(), pk.a(), pk.b_g1()];
    (
        g1.into_iter().map(|s| s.unwrap().to_vec()).collect(),
        pk.b_g2().unwrap().to_vec(),
    )
}

/// Reads through the cache, writing it on a miss; true for a hit.
fn read_cached(path: &Path, v: Validation, cache: &Path) -> (ProvingKey, bool) {
    match ProvingKey::read_cached(path, v, cache).unwrap() {
        (pk, PointCache::Hit) => (pk, true),
        (pk, PointCache::Miss(write)) => {
            assert_eq!(write.path(), cache);
            write.write(&pk).unwrap();
            (pk, false)
        }
    }
}

#[test]
fn point_cache_gives_the_files_points_and_follows_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (path, cache) = (
        dir.path().join("k.params"),
        dir.path().join("k.cuzk-points"),
    );
    let (full, _) = image();
    std::fs::write(&path, full).unwrap();
    let want = points(&load_all(full.clone(), Validation::Full).unwrap());
    let hit = |v| {
        let (pk, hit) = read_cached(&path, v, &cache);
        assert_eq!(points(&pk), want, "hit: {hit}");
        hit
    };
    assert!(!hit(Validation::Trusted));
    assert!(hit(Validation::Trusted));
    // A stricter reader than the writer decodes (and rewrites at its level); a laxer one maps.
    assert!(!hit(Validation::Full));
    assert!(hit(Validation::OnCurve));
    assert!(hit(Validation::Full));
    // A truncated or foreign cache is a miss, rewritten.
    let bytes = std::fs::read(&cache).unwrap();
    std::fs::write(&cache, &bytes[..bytes.len() - 1]).unwrap();
    assert!(!hit(Validation::Trusted));
    let bytes = std::fs::read(&cache).unwrap();
    let mut foreign = bytes.clone();
    foreign[0] ^= 1;
    std::fs::write(&cache, &foreign).unwrap();
    assert!(!hit(Validation::Trusted));
    assert_eq!(std::fs::read(&cache).unwrap(), bytes);
    // Another key of the same shape in place of the file (another modification time): miss.
    let (other, _) = key_image(4);
    assert_eq!(other.len(), full.len());
    std::fs::write(&path, &other).unwrap();
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30))
        .unwrap();
    let (pk, hit) = read_cached(&path, Validation::Trusted, &cache);
    assert!(!hit);
    assert_eq!(
        points(&pk),
        points(&load_all(other, Validation::Full).unwrap())
    );
    // An unwritable cache is an error of the write alone: the key stays intact.
    std::fs::write(&path, full).unwrap();
    let nowhere = dir.path().join("missing").join("k.cuzk-points");
    let (pk, status) = ProvingKey::read_cached(&path, Validation::Trusted, &nowhere).unwrap();
    let PointCache::Miss(write) = status else {
        panic!("a cache that does not exist cannot hit")
    };
    assert!(matches!(write.write(&pk), Err(ParamsError::Io { .. })));
    assert_eq!(points(&pk), want);
    // No temporary files are left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
#[should_panic(expected = "another key")]
fn a_cache_write_takes_only_its_own_key() {
    let dir = tempfile::tempdir().unwrap();
    let (path, cache) = (
        dir.path().join("k.params"),
        dir.path().join("k.cuzk-points"),
    );
    std::fs::write(&path, &image().0).unwrap();
    let (_, PointCache::Miss(write)) =
        ProvingKey::read_cached(&path, Validation::Trusted, &cache).unwrap()
    else {
        panic!("no cache yet")
    };
    let other = load_all(key_image(5).0, Validation::Trusted).unwrap();
    let _ = write.write(&other);
}
