//! Shared by the GPU test binaries.

use std::path::PathBuf;

/// A bundled fixture: beside the sources when built here, under the working directory when the
/// test binary was carried to the GPU machine.
pub fn fixture(path: &str) -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(path);
    if here.exists() {
        here
    } else {
        PathBuf::from("fixtures").join(path)
    }
}
