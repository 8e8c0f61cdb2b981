//! GPU figures on the device machine: NTT and MSM sizes, the 2 KiB PoRep C2, and one
//! 32 GiB-shaped partition over a synthetic SRS. Prints medians; run by tools/gpu-tests.sh.
//!
//! `CUZK_GPU_BENCH` picks sections (comma-separated: ntt, msm, porep2k, partition32g; default
//! all) and `CUZK_GPU_BENCH_MAX_LOG` caps the NTT/MSM sizes (default 26).
//!
//! The 32 GiB-shaped SRS is **synthetic**: 2^20 distinct random G1 points and 2^18 distinct G2
//! points tiled to the real query lengths (FACTS.md), with a random witness (2/5 zeros, 2/5
//! ones, 1/5 random aux values). MSM cost does not depend on which points are used, but these
//! proofs prove nothing.

use std::time::{Duration, Instant};

use cuzk_gpu::msm::{DeviceBase, G1, G2};
use cuzk_gpu::{domain, Device, GpuBackend};
use cuzk_groth16::assignment::{Densities, Witness};
use cuzk_groth16::backend::{Backend, Randomness};
use cuzk_groth16::conformance::{random_g1, random_g2};
use cuzk_groth16::density::Density;
use cuzk_groth16::domain::Domain;
use cuzk_groth16::params::{ProvingKey, VerifyingKey};
use cuzk_groth16::Fr;
use ff::Field;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

fn median(mut f: impl FnMut(), runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn scalars(n: usize, seed: u64, witness_like: bool) -> Vec<Fr> {
    let mut out = vec![Fr::ZERO; n];
    out.par_chunks_mut(1 << 16)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut rng = ChaCha20Rng::seed_from_u64(seed ^ ((i as u64) << 20));
            for (j, v) in chunk.iter_mut().enumerate() {
                *v = match (witness_like, j % 5) {
                    (true, 0 | 1) => Fr::ZERO,
                    (true, 2 | 3) => Fr::ONE,
                    _ => Fr::random(&mut rng),
                };
            }
        });
    out
}

fn tile<T: Copy + Send + Sync>(distinct: &[T], n: usize) -> Vec<T> {
    let mut out = vec![distinct[0]; n];
    out.par_chunks_mut(distinct.len())
        .for_each(|c| c.copy_from_slice(&distinct[..c.len()]));
    out
}

fn prefix_density(len: usize, ones: usize) -> Density {
    let mut d = Density::new(len);
    for i in 0..ones {
        d.set(i);
    }
    d
}

fn bench_ntt(d: &Device, max_log: u32) {
    for lg in (20..=max_log).step_by(2) {
        let dom = Domain::new(lg).unwrap();
        let v = scalars(dom.size(), lg as u64, false);
        let t = median(
            || {
                let c = dom.coefficients(v.clone()).unwrap();
                domain::fft(d, &dom, c).unwrap();
            },
            5,
        );
        println!("ntt 2^{lg} (incl. transfers): median {t:.2?}");
    }
}

fn bench_msm(d: &Device, max_log: u32) {
    let (g1, g2) = (random_g1(1 << 20, 1), random_g2(1 << 18, 2));
    for lg in (20..=max_log).step_by(2) {
        let n = 1usize << lg;
        let s = scalars(n, lg as u64, false);
        let mut base = DeviceBase::<G1>::upload(d, &tile(&g1, n)).unwrap();
        let t = median(
            || {
                base.msm(&s).unwrap();
            },
            5,
        );
        println!("msm g1 2^{lg} (resident points, random scalars): median {t:.2?}");
        drop(base);
        let mut base = DeviceBase::<G2>::upload(d, &tile(&g2, n)).unwrap();
        let t = median(
            || {
                base.msm(&s).unwrap();
            },
            3,
        );
        println!("msm g2 2^{lg} (resident points, random scalars): median {t:.2?}");
    }
}

fn bench_porep_2kib(backend: &GpuBackend) {
    use cuzk_circuits::{C1Input, SealShape, Synthesis};
    let path = [
        env!("CARGO_MANIFEST_DIR"),
        "../../fixtures/porep/2KiB/c1.json",
    ]
    .iter()
    .collect::<std::path::PathBuf>();
    // Carried to the GPU machine, the binary runs from the repository root.
    let path = if path.exists() {
        path
    } else {
        "fixtures/porep/2KiB/c1.json".into()
    };
    let c1 = C1Input::parse(&std::fs::read(path).unwrap()).unwrap();
    let shape = SealShape::from_sector_size("2KiB").unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let pk = shape.generate_params(&mut rng).unwrap();
    let parts = shape.witnesses(&c1, Synthesis::Full).unwrap();
    let w: Vec<Witness> = parts.into_iter().map(|p| p.witness).collect();
    let rs: Vec<Randomness> = w.iter().map(|_| Randomness::random(&mut rng)).collect();
    let t = Instant::now();
    backend.preload(&pk).unwrap();
    println!("porep 2KiB: key upload {:.2?}", t.elapsed());
    let t = median(|| drop(backend.prove(&pk, &w, &rs).unwrap()), 5);
    println!(
        "porep 2KiB: GPU prove of {} partitions: median {t:.2?}",
        w.len()
    );
    let t = median(
        || {
            drop(
                cuzk_groth16::backend::CpuBackend
                    .prove(&pk, &w, &rs)
                    .unwrap(),
            )
        },
        3,
    );
    println!(
        "porep 2KiB: CPU prove of {} partitions: median {t:.2?}",
        w.len()
    );
}

/// One 32 GiB PoRep partition's shape (FACTS.md): 130,278,541 constraints + 328 input rows.
fn bench_partition_32gib(backend: &GpuBackend) {
    const INPUTS: usize = 328;
    const AUX: usize = 130_169_893;
    const ROWS: usize = 130_278_541 + INPUTS;
    const A_AUX: usize = 129_753_292;
    const B_AUX: usize = 33_112_281;
    let t = Instant::now();
    let (g1, g2) = (random_g1(1 << 20, 3), random_g2(1 << 18, 4));
    let vk = VerifyingKey {
        alpha_g1: g1[0],
        beta_g1: g1[1],
        beta_g2: g2[0],
        gamma_g2: g2[1],
        delta_g1: g1[2],
        delta_g2: g2[2],
        ic: tile(&g1, INPUTS),
    };
    let domain = Domain::for_size(ROWS).unwrap();
    let pk = ProvingKey::from_points(
        vk,
        tile(&g1, domain.size() - 1),
        tile(&g1, AUX),
        tile(&g1, INPUTS + A_AUX),
        tile(&g1, 1 + B_AUX),
        tile(&g2, 1 + B_AUX),
    );
    let mut input = scalars(INPUTS, 5, false);
    input[0] = Fr::ONE;
    let mut b_input = Density::new(INPUTS);
    b_input.set(0);
    let w = Witness {
        a: scalars(ROWS, 6, false),
        b: scalars(ROWS, 7, false),
        c: scalars(ROWS, 8, false),
        input,
        aux: scalars(AUX, 9, true),
        density: Densities {
            a_aux: prefix_density(AUX, A_AUX),
            b_input,
            b_aux: prefix_density(AUX, B_AUX),
        },
    };
    let rs = [Randomness::random(&mut ChaCha20Rng::seed_from_u64(10))];
    println!(
        "partition 32GiB (synthetic SRS): inputs built in {:.1?}",
        t.elapsed()
    );
    let t = Instant::now();
    backend.preload(&pk).unwrap();
    println!(
        "partition 32GiB (synthetic SRS): key upload {:.2?}",
        t.elapsed()
    );
    let w = [w];
    let t = median(|| drop(backend.prove(&pk, &w, &rs).unwrap()), 3);
    println!("partition 32GiB (synthetic SRS): GPU prove, witness on host: median {t:.2?}");
    backend.evict();
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench --no-run` probes; nothing to list
    }
    let sections =
        std::env::var("CUZK_GPU_BENCH").unwrap_or_else(|_| "ntt,msm,porep2k,partition32g".into());
    let max_log: u32 = std::env::var("CUZK_GPU_BENCH_MAX_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(26);
    let d = match Device::open(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("gpu bench skipped: {e}");
            return;
        }
    };
    println!(
        "device: {} (sm_{}), {} GiB, host threads {}",
        d.name(),
        d.compute_capability(),
        d.total_memory() >> 30,
        rayon::current_num_threads()
    );
    let backend = GpuBackend::new(0).unwrap();
    for s in sections.split(',') {
        match s.trim() {
            "ntt" => bench_ntt(&d, max_log),
            "msm" => bench_msm(&d, max_log),
            "porep2k" => bench_porep_2kib(&backend),
            "partition32g" => bench_partition_32gib(&backend),
            other => eprintln!("unknown section {other}"),
        }
    }
}
