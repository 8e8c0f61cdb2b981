//! A key read from its `.params` file keeps only its decoded points resident: each decoded
//! block's file pages are released. (A 32 GiB key read this way counted its 47 GB twice in the
//! daemon's peak RSS.) Its own test binary, so no other test's mappings move the figure.

use cuzk_groth16::conformance::{random_g1, random_g2, tile};
use cuzk_groth16::params::{ProvingKey, Validation, VerifyingKey};

/// This process's resident file-backed memory, in bytes.
fn rss_file() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("RssFile:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb << 10
}

#[cfg(target_os = "linux")]
#[test]
fn decoded_sections_release_their_file_pages() {
    let (g1, g2) = (random_g1(256, 1), random_g2(256, 2));
    let n = 1 << 18;
    let vk = VerifyingKey {
        alpha_g1: g1[0],
        beta_g1: g1[1],
        beta_g2: g2[0],
        gamma_g2: g2[1],
        delta_g1: g1[2],
        delta_g2: g2[2],
        ic: tile(&g1, 3),
    };
    let key = ProvingKey::from_points(
        vk,
        tile(&g1, n - 1),
        tile(&g1, n),
        tile(&g1, n),
        tile(&g1, n),
        tile(&g2, n),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("key.params");
    key.write(&path).unwrap();
    let file = std::fs::metadata(&path).unwrap().len();

    let before = rss_file();
    let read = ProvingKey::read(&path, Validation::Trusted).unwrap();
    read.preload().unwrap();
    let grown = rss_file().saturating_sub(before);
    assert!(
        grown < file / 8,
        "{grown} bytes of the {file}-byte file still resident after decoding"
    );
    // Released pages are read back from the file when touched again: the points are the key's.
    assert_eq!(read.h().unwrap(), key.h().unwrap());
    assert_eq!(read.b_g2().unwrap(), key.b_g2().unwrap());
}
