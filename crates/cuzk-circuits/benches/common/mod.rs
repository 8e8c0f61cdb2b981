//! The bundled C1 outputs the benches measure.

use std::path::PathBuf;

use cuzk_circuits::C1Input;

/// The C1 output bundled for `size` (`2KiB`, `8MiB`).
pub fn fixture(size: &str) -> C1Input {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "../../fixtures/porep",
        size,
        "c1.json",
    ]
    .iter()
    .collect();
    C1Input::parse(&std::fs::read(path).unwrap()).unwrap()
}
