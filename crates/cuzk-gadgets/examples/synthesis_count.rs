//! One synthesis workload, ours or upstream's, for counting instructions with callgrind. Only
//! the synthesis itself is counted (constants are built before `measured`):
//!
//! ```text
//! cargo build --release --example synthesis_count -p cuzk-gadgets
//! valgrind --tool=callgrind --toggle-collect='*measured*' \
//!     target/release/examples/synthesis_count sha256 ours
//! ```
//!
//! Workloads: `sha256` (256-byte message: five compressions), `poseidon8` and `poseidon11`
//! (64 hashes each).

#[path = "../benches/common/mod.rs"]
mod common;

use common::{PoseidonCase, Side};
use typenum::{U11, U8};

#[inline(never)]
fn measured<F: FnOnce() -> usize>(workload: F) -> usize {
    workload()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let side = match args.get(2).map(String::as_str) {
        Some("ours") => Side::Ours,
        Some("upstream") => Side::Upstream,
        _ => {
            eprintln!("usage: synthesis_count <sha256|poseidon8|poseidon11> <ours|upstream>");
            std::process::exit(2);
        }
    };
    const HASHES: usize = 64;
    let constraints = match args[1].as_str() {
        "sha256" => measured(|| common::sha256(side, &[0x5a; 256])),
        "poseidon8" => {
            let case = PoseidonCase::<U8>::new();
            measured(|| case.synthesize(side, HASHES))
        }
        "poseidon11" => {
            let case = PoseidonCase::<U11>::new();
            measured(|| case.synthesize(side, HASHES))
        }
        other => {
            eprintln!("unknown workload {other}");
            std::process::exit(2);
        }
    };
    println!("{} {}: {constraints} constraints", args[1], side.name());
}
