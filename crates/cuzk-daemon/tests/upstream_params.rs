//! End to end with parameters from bellperson's own generator: upstream seals a fresh sector,
//! `cuzk prove porep` proves it with upstream's `.params`, upstream `verify_seal` checks it
//! against upstream's `.vk`.
//!
//! Ignored by default: bellperson takes about 7 minutes (2 KiB) and 10 minutes (8 MiB) on a
//! 2-core machine to generate the parameters, which are then kept in `.cache/params-upstream`.
//! Run with `cargo test --release -p cuzk-daemon --test upstream_params -- --ignored`.

mod common;

use std::path::PathBuf;

use common::*;

/// Upstream's parameters, in their own folder: `verify_seal` reads the `.vk` from
/// `FIL_PROOFS_PARAMETER_CACHE`, which this test binary points there.
fn upstream_params(size: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cache/params-upstream");
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &dir);
    let _guard = lock(&dir.join(size));
    if !has_params(&dir, size) {
        let took = cuzk_upstream_tools::paramgen(size, &dir).expect("upstream paramgen");
        eprintln!("upstream paramgen {size}: {took:?}");
    }
    dir
}

#[test]
#[ignore = "bellperson's generator needs ~7 min on 2 cores; see the module docs"]
fn fresh_2kib_sector_with_upstream_parameters() {
    let params = upstream_params("2KiB");
    assert_eq!(prove_fresh_sector("2KiB", &params), Ok(true));
}

#[test]
#[ignore = "bellperson's generator needs ~10 min on 2 cores; see the module docs"]
fn fresh_8mib_sector_with_upstream_parameters() {
    let params = upstream_params("8MiB");
    assert_eq!(prove_fresh_sector("8MiB", &params), Ok(true));
}
