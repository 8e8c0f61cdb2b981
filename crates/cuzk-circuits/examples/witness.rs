//! One synthetic partition's witness by one method, for measuring time and peak memory from
//! outside (`/usr/bin/time -v`):
//!
//! ```sh
//! cargo run --release -p cuzk-circuits --example witness -- 32GiB native
//! cargo run --release -p cuzk-circuits --example witness -- 32GiB synthesis
//! ```
//!
//! Prints the aux vector's size, so the peak resident set can be compared with it.

use std::time::Instant;

use cuzk_circuits::{SealShape, StackedShape};
use cuzk_pce::WitnessCs;
use rand_chacha::rand_core::SeedableRng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [size, method] = args.as_slice() else {
        return Err("usage: witness <2KiB|8MiB|512MiB|32GiB|64GiB> <native|synthesis>".into());
    };
    let bytes = SealShape::from_sector_size(size)?.sector_size();
    let shape = StackedShape::for_sector_size(bytes).ok_or("no shape")?;
    let circuit = shape.synthetic(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
    let layout = shape.witness_layout()?;
    for _ in 0..std::env::var("RUNS").map_or(Ok(1), |r| r.parse())? {
        let t = Instant::now();
        let aux = match method.as_str() {
            "native" => circuit.native_witness()?.1.len(),
            "synthesis" => WitnessCs::assign_sized(circuit.clone(), 1, layout.aux())?
                .1
                .len(),
            other => return Err(format!("unknown method {other}").into()),
        };
        println!(
            "{size} {method}: {:.3} s, {aux} aux values = {:.1} MiB",
            t.elapsed().as_secs_f64(),
            (aux * 32) as f64 / (1 << 20) as f64
        );
    }
    Ok(())
}
