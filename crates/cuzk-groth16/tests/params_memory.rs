//! A key read from its `.params` file keeps only its decoded points resident: each decoded
//! block's file pages are released. (A 32 GiB key read this way counted its 47 GB twice in the
//! daemon's peak RSS.) Its own test binary, so no other test's mappings move the figure.

use cuzk_groth16::conformance::tiled_key;
use cuzk_groth16::params::{ProvingKey, Validation};

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
    let n = 1 << 18;
    let key = tiled_key(3, n, n, n, n);
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
