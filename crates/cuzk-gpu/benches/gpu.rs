//! GPU figures on the device machine: NTT and MSM sizes, the 2 KiB PoRep C2, one 32 GiB-shaped
//! partition over a synthetic SRS, and the throughput of such partitions on one GPU against
//! every GPU of the host. Prints medians; run by tools/gpu-tests.sh.
//!
//! `CUZK_GPU_BENCH` picks sections (comma-separated: ntt, msm, msm-engines, msm-engines-g1,
//! msm-engines-g2, tables, streamed, porep2k, partition32g, multi32g, pce32g, columns;
//! default ntt, msm, porep2k, partition32g). `CUZK_GPU_BENCH_MAX_LOG` caps the NTT/MSM sizes
//! (default 26; 27 for msm-engines, which sets our bucket MSM against sppark's; 24 for tables,
//! which adds ours over tables of multiples, and at 27 partial tables of the 2^27 H MSM), and
//! `CUZK_GPU_BENCH_MIN_LOG` leaves out msm-engines' sizes below it.
//! `CUZK_GPU_BENCH_PARTITIONS` sets the partition count of the multi-GPU runs in multi32g and
//! pce32g (default 4). pce32g extracts the real 32 GiB PCE (about a minute, 15 GB of host
//! memory) and proves a synthetic partition's native witness (also with the allocator pool
//! handed back at every synchronisation, and beside witness generation on the host's cores:
//! on every one, the same at nice 10, all but one);
//! `CUZK_GPU_BENCH_HOST=0` leaves out its host-path comparison. wpost32g and winning32g do
//! the same for one 32 GiB WindowPoSt partition (2349 sectors) and a 32 GiB WinningPoSt: the
//! real circuit's PCE, a random well-formed vanilla set (sparse trees, every check passes),
//! a synthetic key; snap32g for one partition of a 32 GiB SnapDeals update (a random
//! well-formed update: `cuzk_circuits::snap::random`). columns times a 32 GiB PoRep
//! partition's witness upload alone, in full and packed.
//!
//! The 32 GiB-shaped SRS is **synthetic**: 2^20 distinct random G1 points and 2^18 distinct G2
//! points tiled to the real query lengths (FACTS.md), with a random witness (2/5 zeros, 2/5
//! ones, 1/5 random aux values). MSM cost does not depend on which points are used, but these
//! proofs prove nothing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cuzk_gpu::msm::{msm, prefer, streamed_msm, Curve, DeviceBase, Engine, Table, G1, G2};
use cuzk_gpu::{domain, Device, GpuBackend};
use cuzk_groth16::assignment::{Densities, Witness};
use cuzk_groth16::backend::{Backend, Randomness};
use cuzk_groth16::conformance::{random_g1, random_g2, tile, tiled_key};
use cuzk_groth16::density::Density;
use cuzk_groth16::domain::Domain;
use cuzk_groth16::params::ProvingKey;
use cuzk_groth16::Fr;
use cuzk_pce::{Columns, PceBackend, Values};
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

/// A query streamed from host memory at every proof (`placement`): the 32 GiB WindowPoSt's
/// B G2 (91.9 M points, in an H100's 5.2 GB chunks) and 2^26 G1 points (in quarters), each
/// four ways: resident; each chunk uploaded, then summed (aeb4085's way); and by sppark's
/// overlapped streaming (`streamed_msm`, the backend's way since), whole and in the same
/// chunks. Medians of 3; every way must give the same point.
fn bench_streamed(d: &Device) {
    fn compare<C: Curve>(d: &Device, name: &str, points: &[C::Affine], chunk: usize)
    where
        C::Projective: PartialEq + std::fmt::Debug,
    {
        let n = points.len();
        let s = scalars(n, n as u64, false);
        let mut sums = Vec::new();
        let mut time = |what: &str, f: &mut dyn FnMut() -> C::Projective| {
            let mut sum = None;
            let t = median(|| sum = Some(f()), 3);
            println!("streamed {name} n={n} chunk={chunk}: {what} median {t:.2?}");
            sums.push(sum.unwrap());
        };
        let mut base = DeviceBase::<C>::upload(d, points).unwrap();
        time("resident", &mut || base.msm(&s).unwrap());
        drop(base);
        time("chunks uploaded then summed", &mut || {
            let chunks = points.chunks(chunk).zip(s.chunks(chunk));
            chunks.map(|(p, s)| msm::<C>(d, p, s).unwrap()).sum()
        });
        time("sppark streamed, whole", &mut || {
            streamed_msm::<C>(d, points, &s, n).unwrap()
        });
        time("sppark streamed, in chunks", &mut || {
            streamed_msm::<C>(d, points, &s, chunk).unwrap()
        });
        assert!(
            sums.iter().all(|x| *x == sums[0]),
            "{name}: the sums differ"
        );
    }
    let g2 = tile(&random_g2(1 << 18, 2), 91_925_767);
    compare::<G2>(d, "b_g2 (32 GiB WindowPoSt)", &g2, 5_246_484_480 / 192);
    drop(g2);
    let g1 = tile(&random_g1(1 << 20, 1), 1 << 26);
    compare::<G1>(d, "g1 2^26", &g1, 1 << 24);
}

/// Our bucket MSM against sppark's in one process, on the same resident base and device-resident
/// random scalars (the H MSM's case): medians of 5 runs at 2^20 … 2^`max_log` G1 points, from
/// 2^`min_log`, the steps and addition rate of ours, the scratch each allocates; then a window
/// sweep at the largest size. Every run must give the same point.
fn bench_msm_engines_g1(min_log: u32, max_log: u32) {
    let d = Device::open(0).unwrap();
    let g1 = random_g1(1 << 20, 1);
    let logs: Vec<u32> = [20, 22, 24, 26, 27]
        .into_iter()
        .filter(|l| (min_log..=max_log).contains(l))
        .collect();
    for &lg in &logs {
        let n = 1usize << lg;
        let s = scalars(n, lg as u64, false);
        let mut base = DeviceBase::<G1>::upload(&d, &tile(&g1, n)).unwrap();
        let want = compare_engines(&format!("g1 2^{lg}"), &mut base, &s);
        if Some(&lg) == logs.last() {
            for bits in 20..=24 {
                let e = Engine::Buckets {
                    window_bits: Some(bits),
                };
                let r = base.time(&s, e, 3).unwrap();
                assert_eq!(r.sum, want, "window {bits} disagrees at 2^{lg}");
                let st = r.steps.unwrap();
                println!(
                    "msm-engines g1 2^{lg} c={bits}: median {:.1} ms (sort {:.1}, accumulate \
                     {:.1}, reduce {:.1} ms of the last run)",
                    median_ms(&r.ms),
                    st.sort_ms,
                    st.accumulate_ms,
                    st.reduce_ms
                );
            }
        }
    }
}

/// [`bench_msm_engines_g1`] for G2: 2^22, 2^24, 2^26 points and a 32 GiB WindowPoSt's B G2
/// (counted as 2^27 against the bounds), no window sweep.
fn bench_msm_engines_g2(min_log: u32, max_log: u32) {
    let d = Device::open(0).unwrap();
    let g2 = random_g2(1 << 18, 2);
    // The last: the B G2 query of a 32 GiB WindowPoSt partition.
    let sizes = [22, 24, 26].map(|lg| (format!("2^{lg}"), 1usize << lg, lg));
    let wpost = (
        "91,925,767 (B G2 of a 32 GiB WindowPoSt)".to_string(),
        91_925_767,
        27,
    );
    for (name, n, lg) in sizes.into_iter().chain([wpost]) {
        if !(min_log..=max_log).contains(&lg) {
            continue;
        }
        let s = scalars(n, lg as u64, false);
        let mut base = DeviceBase::<G2>::upload(&d, &tile(&g2, n)).unwrap();
        compare_engines(&format!("g2 {name}"), &mut base, &s);
    }
}

/// sppark's, our plain and our table MSM over one tabulated base, by size (the 32 GiB
/// WinningPoSt's queries are 0.27-0.52 M points), with the table's build time and memory; and
/// a partial table at 2^24 (four passes of five windows).
fn bench_tables(max_log: u32) {
    let d = Device::open(0).unwrap();
    let g1 = random_g1(1 << 20, 1);
    for lg in [10, 14, 16, 18, 19, 20, 22]
        .into_iter()
        .filter(|&l| l <= max_log)
    {
        let n = 1usize << lg;
        table_line::<G1>(
            &d,
            &format!("g1 2^{lg}"),
            &tile(&g1, n),
            Table::for_points(n),
        );
    }
    if max_log >= 24 {
        let n = 1 << 24;
        table_line::<G1>(
            &d,
            "g1 2^24 partial",
            &tile(&g1, n),
            Table::new(20, 4).unwrap(),
        );
    }
    if max_log >= 27 {
        partial_tables_2_27(&tile(&g1, 1 << 27));
    }
    let g2 = random_g2(1 << 18, 2);
    for lg in [14, 16, 18].into_iter().filter(|&l| l <= max_log) {
        let n = 1usize << lg;
        table_line::<G2>(
            &d,
            &format!("g2 2^{lg}"),
            &tile(&g2, n),
            Table::for_points(n),
        );
    }
}

/// [gpu-msm]: the 2^27 H MSM over partial tables (`CUZK_GPU_BENCH_TABLES27`, `c:copies,...`;
/// default 22:4,24:4,24:3), each pass of `copies` windows paying one weighted sum, against
/// sppark's and our plain MSM (timed once) on the same scalars.
fn partial_tables_2_27(points: &[<G1 as Curve>::Affine]) {
    let n = points.len();
    let s = scalars(n, 27, false);
    let configs =
        std::env::var("CUZK_GPU_BENCH_TABLES27").unwrap_or_else(|_| "22:4,24:4,24:3".into());
    let d = Device::open(0).unwrap();
    let mut baseline = None;
    for cfg in configs.split(',') {
        let (c, k) = cfg.split_once(':').expect("c:copies");
        let table = Table::new(c.parse().unwrap(), k.parse().unwrap()).expect("a valid table");
        let t0 = Instant::now();
        let mut base = DeviceBase::<G1>::tabulated(&d, points, table).unwrap();
        let build = t0.elapsed();
        let (sp, plain) = baseline.get_or_insert_with(|| {
            let sp = base.time(&s, Engine::Sppark, 5).unwrap();
            let plain = base
                .time(&s, Engine::Buckets { window_bits: None }, 5)
                .unwrap();
            assert_eq!(sp.sum, plain.sum, "plain disagrees at 2^27");
            (sp, plain)
        });
        let tab = base.time(&s, Engine::Table, 5).unwrap();
        assert_eq!(sp.sum, tab.sum, "table c={c} x{k} disagrees at 2^27");
        let st = tab.steps.unwrap();
        println!(
            "tables g1 2^27 partial: c={c} x{k} copies ({} passes, {} windows), built in \
             {build:.2?}, {} MiB past the base; median sppark {:.2} ms, ours plain {:.2} ms, ours \
             table {:.2} ms; table sort {:.2} / accumulate {:.2} / reduce {:.2} ms ({:.2} G \
             additions/s, batch-affine {}), scratch {} MiB; raw ms table {:?}",
            st.passes,
            st.windows,
            table.bytes::<G1>(n) >> 20,
            median_ms(&sp.ms),
            median_ms(&plain.ms),
            median_ms(&tab.ms),
            st.sort_ms,
            st.accumulate_ms,
            st.reduce_ms,
            (n as f64 * st.windows as f64) / (st.accumulate_ms * 1e6),
            st.batch_affine,
            st.scratch_bytes >> 20,
            tab.ms,
        );
    }
}

fn table_line<C: Curve>(d: &Device, label: &str, points: &[C::Affine], table: Table)
where
    C::Projective: std::fmt::Debug + PartialEq,
{
    let n = points.len();
    let s = scalars(n, n as u64, false);
    let t0 = Instant::now();
    let mut base = DeviceBase::<C>::tabulated(d, points, table).unwrap();
    let build = t0.elapsed();
    let sp = base.time(&s, Engine::Sppark, 5).unwrap();
    let plain = base
        .time(&s, Engine::Buckets { window_bits: None }, 5)
        .unwrap();
    let tab = base.time(&s, Engine::Table, 5).unwrap();
    assert_eq!(sp.sum, tab.sum, "table disagrees: {label}");
    assert_eq!(plain.sum, tab.sum, "plain disagrees: {label}");
    let (a, b, c) = (median_ms(&sp.ms), median_ms(&plain.ms), median_ms(&tab.ms));
    let st = tab.steps.unwrap();
    let round = |v: &[f64]| {
        v.iter()
            .map(|x| (x * 10.0).round() / 10.0)
            .collect::<Vec<_>>()
    };
    println!(
        "tables {label}: table c={} x{} copies ({} passes), built in {build:.2?}, {} MiB past \
         the base; median sppark {a:.2} ms, ours plain {b:.2} ms, ours table {c:.2} ms \
         ({:.2}x sppark, {:.2}x plain); table sort {:.2} / accumulate {:.2} / reduce {:.2} ms \
         ({:.2} G additions/s), scratch {} MiB; raw ms sppark {:?} plain {:?} table {:?}",
        table.window_bits(),
        table.copies(),
        st.passes,
        table.bytes::<C>(n) >> 20,
        a / c,
        b / c,
        st.sort_ms,
        st.accumulate_ms,
        st.reduce_ms,
        (n as f64 * st.windows as f64) / (st.accumulate_ms * 1e6),
        st.scratch_bytes >> 20,
        round(&sp.ms),
        round(&plain.ms),
        round(&tab.ms),
    );
}

fn median_ms(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// sppark's and our MSM over `base` and `s`, 5 runs each: prints medians, ours' steps and
/// addition rate, and each one's scratch; returns the (agreed) sum.
fn compare_engines<C: Curve>(label: &str, base: &mut DeviceBase<C>, s: &[Fr]) -> C::Projective
where
    C::Projective: std::fmt::Debug,
{
    let n = s.len();
    let sp = base.time(s, Engine::Sppark, 5).unwrap();
    let us = base
        .time(s, Engine::Buckets { window_bits: None }, 5)
        .unwrap();
    assert_eq!(sp.sum, us.sum, "engines disagree: {label}");
    let (a, b) = (median_ms(&sp.ms), median_ms(&us.ms));
    let st = us.steps.unwrap();
    // sppark's msm_t: 2^(c−1) XYZZ buckets (and a histogram word) per window, resident, and
    // per batch of ≤ 2^24 points the scalars' copy, the sort's temporaries and the digits.
    let bucket = 4 * std::mem::size_of::<C::Affine>() / 2;
    let c_sp = ((n + n / 2).ilog2().saturating_sub(8)).clamp(10, 18) as usize;
    let w_sp = 254 / c_sp + 1;
    let stride = n.min(1 << 24);
    let sp_scratch = w_sp * (1 << (c_sp - 1)) * (bucket + 4) + stride * (32 + 4 * w_sp);
    let round = |v: &[f64]| v.iter().map(|x| x.round() as u64).collect::<Vec<_>>();
    println!(
        "msm-engines {label}: sppark median {a:.1} ms, ours median {b:.1} ms ({:.2}x); ours \
         c={} x{} windows, {} sums: sort {:.1} ms, accumulate {:.1} ms ({:.2} G additions/s), reduce \
         {:.1} ms; scratch: ours {} MiB, sppark {} MiB; raw ms sppark {:?} ours {:?}",
        a / b,
        st.window_bits,
        st.windows,
        if st.batch_affine { "batch-affine" } else { "XYZZ" },
        st.sort_ms,
        st.accumulate_ms,
        (n as f64 * st.windows as f64) / (st.accumulate_ms * 1e6),
        st.reduce_ms,
        st.scratch_bytes >> 20,
        sp_scratch >> 20,
        round(&sp.ms),
        round(&us.ms),
    );
    us.sum
}

/// Runs `f` (median of 3) with every MSM through sppark's Pippenger, then with the default
/// choice (ours from the crossover on), and prints both.
fn by_engine(label: &str, mut f: impl FnMut()) {
    prefer(Some(Engine::Sppark)).unwrap();
    let sp = median(&mut f, 3);
    prefer(None).unwrap();
    let us = median(&mut f, 3);
    println!(
        "{label}: median {us:.2?} (sppark for every MSM: {sp:.2?}, {:.2}x)",
        sp.as_secs_f64() / us.as_secs_f64()
    );
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
    let pce = std::sync::Arc::new(shape.extract_pce().unwrap());
    let columns: Vec<Columns> = (w.iter())
        .map(|w| Columns::new(w.input.clone(), w.aux.clone()))
        .collect();
    let assigned = || {
        for (c, rs) in columns.iter().zip(&rs) {
            backend.prove_assigned(&pk, &pce, c, rs).unwrap();
        }
    };
    let t = Instant::now();
    assigned();
    println!(
        "porep 2KiB: first prove_assigned (PCE upload): {:.2?}",
        t.elapsed()
    );
    let t = median(assigned, 5);
    println!(
        "porep 2KiB: GPU prove_assigned (a, b, c on the device) of {} partitions: median {t:.2?}",
        w.len()
    );
    backend.release(&pk);
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

/// One 32 GiB PoRep partition's shape (FACTS.md): 130,278,541 constraints + 328 input rows,
/// with a synthetic key and a random witness.
fn partition_32gib() -> (ProvingKey, [Witness; 1], [Randomness; 1]) {
    const INPUTS: usize = 328;
    const AUX: usize = 130_169_893;
    const ROWS: usize = 130_278_541 + INPUTS;
    const A_AUX: usize = 129_753_292;
    const B_AUX: usize = 33_112_281;
    let t = Instant::now();
    let pk = tiled_key(INPUTS, ROWS, AUX, INPUTS + A_AUX, 1 + B_AUX);
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
    (pk, [w], rs)
}

fn bench_partition_32gib(backend: &GpuBackend) {
    let (pk, w, rs) = partition_32gib();
    let t = Instant::now();
    backend.preload(&pk).unwrap();
    println!(
        "partition 32GiB (synthetic SRS): key upload {:.2?}",
        t.elapsed()
    );
    let t = median(|| drop(backend.prove(&pk, &w, &rs).unwrap()), 3);
    println!("partition 32GiB (synthetic SRS): GPU prove, witness on host: median {t:.2?}");
    backend.release(&pk);
}

/// The real 32 GiB PoRep circuit (its PCE, extracted here) with a synthetic partition's native
/// witness and a synthetic key: the host path (mat-vec on the CPU, then `prove`) against
/// `prove_assigned` (a, b, c on the device), the same proof from both, the bytes each sends
/// over the bus; then `n` such partitions on one GPU against every GPU.
fn bench_pce_32gib(n: usize) {
    use cuzk_circuits::SealShape;
    use std::sync::Arc;
    let shape = SealShape::from_sector_size("32GiB").unwrap();
    let t = Instant::now();
    let pce = Arc::new(shape.extract_pce().unwrap());
    println!("pce32g: PCE extracted in {:.1?}", t.elapsed());
    let t = Instant::now();
    let circuit = shape
        .stacked()
        .synthetic(&mut rand_chacha::ChaCha8Rng::seed_from_u64(32));
    let (input, aux) = circuit.native_witness().unwrap();
    println!(
        "pce32g: native witness of a synthetic partition: {:.2?}",
        t.elapsed()
    );
    let t = Instant::now();
    let pk = pce.tiled_key();
    println!("pce32g: synthetic key built in {:.1?}", t.elapsed());
    let d = &pce.density;
    let [_, _, a_len, b_len, _] = pk.lengths();
    let (ni, rows) = (pce.num_inputs, pce.num_constraints() + pce.num_inputs);
    let rs = [Randomness::random(&mut ChaCha20Rng::seed_from_u64(11))];
    let gib = |bytes: usize| bytes as f64 / (1u64 << 30) as f64;
    println!(
        "pce32g: bus bytes per proof: host path {:.2} GiB (a, b, c + L, A, B, B scalars), \
         prove_assigned {:.2} GiB (input ‖ aux)",
        gib(32 * (3 * rows + pce.num_aux + a_len + 2 * b_len)),
        gib(32 * (ni + pce.num_aux))
    );
    let a_vals = d.a_aux.select(&aux);
    let b_vals: Vec<Fr> = d.b_input.select(&input);
    let b_vals = [b_vals, d.b_aux.select(&aux)].concat();
    for (name, v) in [("L", &aux), ("A", &a_vals), ("B", &b_vals)] {
        let (zeros, ones) = classes(v);
        let other = v.len() - zeros - ones;
        println!(
            "pce32g: {name} scalars: {} ({zeros} zeros, {ones} ones, {other} others: {:.1} %)",
            v.len(),
            other as f64 * 100.0 / v.len() as f64
        );
    }
    let backend = GpuBackend::new(0).unwrap();
    let t = Instant::now();
    backend.preload(&pk).unwrap();
    println!("pce32g: key upload {:.2?}", t.elapsed());
    let mut host_proof = None;
    if std::env::var("CUZK_GPU_BENCH_HOST").as_deref() != Ok("0") {
        let t = median(
            || {
                let t = Instant::now();
                let w = pce.evaluate(input.clone(), aux.clone()).unwrap();
                let matvec = t.elapsed();
                host_proof = Some(backend.prove(&pk, std::slice::from_ref(&w), &rs).unwrap());
                println!(
                    "pce32g: host mat-vec {matvec:.2?}, then prove {:.2?}",
                    t.elapsed() - matvec
                );
            },
            3,
        );
        println!("pce32g: host path (CPU mat-vec + prove): median {t:.2?}");
    }
    let (full, packed) = both_forms("pce32g", input, aux);
    let t = Instant::now();
    let first = backend.prove_assigned(&pk, &pce, &full, &rs[0]).unwrap();
    println!(
        "pce32g: first prove_assigned (PCE upload): {:.2?}",
        t.elapsed()
    );
    let from_packed = backend.prove_assigned(&pk, &pce, &packed, &rs[0]).unwrap();
    assert_eq!(first, from_packed, "packed and full columns disagree");
    if let Some(host) = host_proof {
        assert_eq!(vec![first], host, "device and host paths disagree");
        println!("pce32g: prove_assigned gives the host path's proof");
    }
    for (form, columns) in [("full", &full), ("packed", &packed)] {
        by_engine(&format!("pce32g: prove_assigned, {form} columns"), || {
            backend.prove_assigned(&pk, &pce, columns, &rs[0]).unwrap();
        });
    }
    // The allocator pool kept between proofs (the backend's setting) against handed back at
    // every synchronisation (CUDA's default), alternating.
    for round in 0..2 {
        for keep in [true, false] {
            backend.device().keep_pool(keep).unwrap();
            let times: Vec<Duration> = (0..3)
                .map(|_| {
                    let t = Instant::now();
                    backend.prove_assigned(&pk, &pce, &packed, &rs[0]).unwrap();
                    t.elapsed()
                })
                .collect();
            let how = if keep { "kept" } else { "handed back" };
            println!("pce32g: pool {how}, round {round}: {times:.2?}");
        }
    }
    backend.device().keep_pool(true).unwrap();
    // The same call while the host does what a daemon's CPU workers do beside it: the next
    // partitions' native witness and packed columns, over and over. Hypothesis: the proof's
    // host thread, which launches each step after the last one's synchronisation, loses its
    // core to them. Variants: workers on every core, the same at nice 10, one core left free.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    for (label, threads, nice) in [
        ("idle host", 0, 0),
        ("workers on every core", cores, 0),
        ("workers on every core at nice 10", cores, 10),
        ("workers on all cores but one", cores - 1, 0),
    ] {
        let busy = AtomicBool::new(threads > 0);
        let workers = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .start_handler(move |_| lower_priority(nice))
            .build()
            .unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                workers.install(|| {
                    while busy.load(Ordering::Relaxed) {
                        let (input, aux) = circuit.native_witness().unwrap();
                        drop(Columns::new(input, aux));
                    }
                })
            });
            let t = median(
                || {
                    backend.prove_assigned(&pk, &pce, &packed, &rs[0]).unwrap();
                },
                5,
            );
            busy.store(false, Ordering::Relaxed);
            println!("pce32g: prove_assigned, {label}: median {t:.2?}");
        });
    }
    drop(backend);
    let columns = packed;

    let gpus = Device::all().unwrap();
    if gpus.len() < 2 {
        return;
    }
    let backends: Vec<GpuBackend> = gpus
        .iter()
        .map(|d| GpuBackend::new(d.ordinal()).unwrap())
        .collect();
    std::thread::scope(|s| {
        for b in &backends {
            s.spawn(|| b.prove_assigned(&pk, &pce, &columns, &rs[0]).unwrap());
        }
    });
    let rates = shared_out(&backends, n, |b| {
        b.prove_assigned(&pk, &pce, &columns, &rs[0]).unwrap();
    });
    for (k, el) in rates.iter() {
        println!(
            "pce32g: {n} partitions, prove_assigned on {k} GPU(s): {el:.2?}, {:.2} partitions/min",
            n as f64 / el.as_secs_f64() * 60.0
        );
    }
    if let [(_, one), (k, all)] = rates[..] {
        println!(
            "pce32g: throughput {:.2}x on {k} GPUs",
            one.as_secs_f64() / all.as_secs_f64()
        );
    }
}

/// Sets the calling thread's nice value (Linux: per thread).
fn lower_priority(nice: i32) {
    // SAFETY: setpriority takes plain integers; the thread id is the caller's own.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, nice) };
    assert_eq!(rc, 0, "setpriority");
}

/// One PoSt partition of FFI proof type `id` at 32 GiB on the real circuit, from a random
/// well-formed vanilla set (see [`bench_fixed_32gib`]).
fn bench_post_32gib(id: u64) {
    use cuzk_circuits::post::random;
    use cuzk_circuits::{PostPartition, PostShape, RegisteredPostProof};
    let proof = RegisteredPostProof::from_id(id).unwrap();
    let label = proof.circuit_id();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(id);
    let t = Instant::now();
    let req = random::request(proof, proof.sectors(), 0, &mut rng);
    println!(
        "{label}: random vanilla set of {} sectors in {:.1?}",
        proof.sectors(),
        t.elapsed()
    );
    let t = Instant::now();
    let p = PostPartition::new(&req).unwrap();
    println!("{label}: request parsed and checked in {:.2?}", t.elapsed());
    bench_fixed_32gib(&PostShape::new(proof), id, 1, |_| p.columns().unwrap());
}

/// A 32 GiB SnapDeals update on the real circuit, from a random well-formed update (see
/// [`bench_fixed_32gib`]): one partition, then all 16.
fn bench_snap_32gib() {
    use cuzk_circuits::snap::{random, RegisteredUpdateProof, SnapShape, SnapUpdate};
    let proof = RegisteredUpdateProof::parse(3).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let t = Instant::now();
    let req = random::update(proof, &mut rng);
    println!("snap-32g: random update in {:.1?}", t.elapsed());
    let t = Instant::now();
    let u = SnapUpdate::new(&req).unwrap();
    println!(
        "snap-32g: 16 partitions parsed and checked in {:.2?}",
        t.elapsed()
    );
    bench_fixed_32gib(&SnapShape::new(proof), 3, u.partitions(), |k| {
        u.columns(k).unwrap()
    });
}

/// A fixed circuit at 32 GiB: PCE extraction, a checked request's native witness
/// (`columns(k)` of partition k), the L/A/B scalar classes, then `prove_assigned` (first, with
/// the PCE upload, and the median of three; `RUST_LOG=cuzk_gpu=debug` prints the stage
/// times); with several partitions, all of them back to back, each witness made on the host
/// while the GPU proves the one before (the engine's pipeline with one partition ahead). The
/// key is **synthetic** (random points tiled to the query lengths).
fn bench_fixed_32gib<S: cuzk_circuits::CircuitShape>(
    shape: &S,
    seed: u64,
    partitions: usize,
    columns: impl Fn(usize) -> cuzk_circuits::PartitionColumns + Sync,
) where
    S::Error: std::fmt::Debug,
{
    use std::sync::Arc;
    let label = shape.circuit_id();
    let t = Instant::now();
    let pce = Arc::new(shape.extract_pce().unwrap());
    println!(
        "{label}: PCE extracted in {:.1?} ({} constraints, {} inputs, {} aux)",
        t.elapsed(),
        pce.num_constraints(),
        pce.num_inputs,
        pce.num_aux
    );
    let t = Instant::now();
    let cols = columns(0);
    println!("{label}: native witness in {:.2?}", t.elapsed());
    let t = Instant::now();
    let pk = pce.tiled_key();
    println!("{label}: synthetic key built in {:.1?}", t.elapsed());
    let d = &pce.density;
    let a_vals = d.a_aux.select(&cols.aux);
    let b_vals = [d.b_input.select(&cols.input), d.b_aux.select(&cols.aux)].concat();
    for (name, v) in [("L", &cols.aux), ("A", &a_vals), ("B", &b_vals)] {
        let (zeros, ones) = classes(v);
        let other = v.len() - zeros - ones;
        println!(
            "{label}: {name} scalars: {} ({zeros} zeros, {ones} ones, {other} others: {:.1} %)",
            v.len(),
            other as f64 * 100.0 / v.len() as f64
        );
    }
    let backend = GpuBackend::new(0).unwrap();
    let t = Instant::now();
    backend.preload(&pk).unwrap();
    println!("{label}: key upload {:.2?}", t.elapsed());
    let rs = Randomness::random(&mut ChaCha20Rng::seed_from_u64(seed));
    let cols = Columns::new(cols.input, cols.aux);
    let packed = matches!(cols.values(), Values::Packed(_));
    println!("{label}: columns packed: {packed}");
    let t = Instant::now();
    backend.prove_assigned(&pk, &pce, &cols, &rs).unwrap();
    println!(
        "{label}: first prove_assigned (PCE upload): {:.2?}",
        t.elapsed()
    );
    by_engine(&format!("{label}: prove_assigned"), || {
        backend.prove_assigned(&pk, &pce, &cols, &rs).unwrap();
    });
    if partitions > 1 {
        drop(cols);
        let t = Instant::now();
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            let columns = &columns;
            s.spawn(move || {
                for k in 0..partitions {
                    let c = columns(k);
                    tx.send(Columns::new(c.input, c.aux)).unwrap();
                }
            });
            for cols in rx {
                backend.prove_assigned(&pk, &pce, &cols, &rs).unwrap();
            }
        });
        println!(
            "{label}: all {partitions} partitions back to back: {:.2?}",
            t.elapsed()
        );
    }
}

/// How many of `v` are zero and one (the witness MSMs skip zeros and batch-add ones).
fn classes(v: &[Fr]) -> (usize, usize) {
    v.par_iter()
        .fold(
            || (0, 0),
            |(z, o), x| {
                (
                    z + x.is_zero_vartime() as usize,
                    o + (*x == Fr::ONE) as usize,
                )
            },
        )
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// `input ‖ aux` in full and packed, printing how long `Columns::new` took (on a copy made
/// before the clock starts) and what the packed form uploads.
fn both_forms(label: &str, input: Vec<Fr>, aux: Vec<Fr>) -> (Columns, Columns) {
    let copy = (input.clone(), aux.clone());
    let t = Instant::now();
    let packed = Columns::new(copy.0, copy.1);
    let took = t.elapsed();
    if let Values::Packed(p) = packed.values() {
        let bytes = 32 * p.others().len() + 20 * p.zero_words().len();
        println!(
            "{label}: columns packed in {took:.2?} on {} threads: {} others, {:.1} MiB to upload",
            rayon::current_num_threads(),
            p.others().len(),
            bytes as f64 / (1 << 20) as f64
        );
    }
    (Columns::full(input, aux), packed)
}

/// The "witness upload" stage of a 32 GiB PoRep partition alone: its 130,169,893 aux values
/// (pce32g's mix: 51 % zeros, 47 % ones, 1.3 % others) into a `DevicePce`, in full and packed
/// (`Columns::new`, whose time on this host's cores is printed too). The circuit is a small
/// random one widened to that many aux columns: only `input ‖ aux` matters to the upload.
fn bench_columns_upload(d: &Device) {
    use cuzk_gpu::pce::DevicePce;
    use cuzk_groth16::conformance::{RandomCircuit, Shape};
    const AUX: usize = 130_169_893;
    let mut pce = cuzk_pce::Pce::extract(RandomCircuit::new(Shape::random(1, 8), 1)).unwrap();
    pce.num_aux = AUX;
    pce.density.a_aux = Density::new(AUX);
    pce.density.b_aux = Density::new(AUX);
    let input = vec![Fr::ONE; pce.num_inputs];
    let aux: Vec<Fr> = (0..AUX as u64)
        .into_par_iter()
        .map(|i| {
            // splitmix64: a fixed pseudo-random class per column.
            let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            match z % 1000 {
                0..513 => Fr::ZERO,
                513..987 => Fr::ONE,
                _ => Fr::from(z | 2),
            }
        })
        .collect();
    let (full, packed) = both_forms("columns", input, aux);
    let mut dp = DevicePce::upload(d, &pce).unwrap();
    for (form, c) in [("full", &full), ("packed", &packed)] {
        let t = median(|| dp.load(c).unwrap(), 5);
        println!("columns: upload of {AUX} aux values, {form}: median {t:.2?}");
    }
}

/// `n` proofs on the first backend alone, then on all of them (each takes the next proof when
/// it is free, as the engine's device workers do): (backends used, wall time) per run.
fn shared_out(
    backends: &[GpuBackend],
    n: usize,
    prove: impl Fn(&GpuBackend) + Sync,
) -> Vec<(usize, Duration)> {
    let counts = if backends.len() > 1 {
        vec![1, backends.len()]
    } else {
        vec![1]
    };
    counts
        .into_iter()
        .map(|k| {
            let next = AtomicUsize::new(0);
            let t = Instant::now();
            std::thread::scope(|s| {
                for b in &backends[..k] {
                    let (next, prove) = (&next, &prove);
                    s.spawn(move || {
                        while next.fetch_add(1, Ordering::SeqCst) < n {
                            prove(b);
                        }
                    });
                }
            });
            (k, t.elapsed())
        })
        .collect()
}

/// `n` 32 GiB-shaped partitions on GPU 0 alone, then shared out over every GPU (each takes
/// the next partition when it is free, as the engine's device workers do): the multi-GPU
/// scaling of the proving work itself.
fn bench_multi_32gib(n: usize) {
    let gpus = Device::all().unwrap();
    let (pk, w, rs) = partition_32gib();
    let backends: Vec<GpuBackend> = gpus
        .iter()
        .map(|d| GpuBackend::new(d.ordinal()).unwrap())
        .collect();
    if let Some(f) = backends[0].footprint(&pk) {
        println!(
            "multi32g: planned device memory per GPU: resident {:.1} GiB + {:.1} GiB per proof",
            f.resident as f64 / (1u64 << 30) as f64,
            f.per_proof as f64 / (1u64 << 30) as f64
        );
    }
    let t = Instant::now();
    std::thread::scope(|s| {
        for b in &backends {
            s.spawn(|| b.preload(&pk).unwrap());
        }
    });
    println!(
        "multi32g: key uploaded to {} GPUs at once in {:.2?}",
        backends.len(),
        t.elapsed()
    );
    let runs = shared_out(&backends, n, |b| drop(b.prove(&pk, &w, &rs).unwrap()));
    for (k, el) in &runs {
        let rate = n as f64 / el.as_secs_f64() * 60.0;
        println!(
            "multi32g: {n} partitions (synthetic SRS) on {k} GPU(s): {el:.2?}, {rate:.2} partitions/min"
        );
    }
    if let [(_, one), (k, all)] = runs[..] {
        println!(
            "multi32g: throughput {:.2}x on {k} GPUs",
            one.as_secs_f64() / all.as_secs_f64()
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench --no-run` probes; nothing to list
    }
    // RUST_LOG=cuzk_gpu=debug prints each proof's stage times.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let sections =
        std::env::var("CUZK_GPU_BENCH").unwrap_or_else(|_| "ntt,msm,porep2k,partition32g".into());
    let partitions: usize = std::env::var("CUZK_GPU_BENCH_PARTITIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let max_log_set: Option<u32> = std::env::var("CUZK_GPU_BENCH_MAX_LOG")
        .ok()
        .and_then(|v| v.parse().ok());
    let max_log = max_log_set.unwrap_or(26);
    let min_log: u32 = std::env::var("CUZK_GPU_BENCH_MIN_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
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
            "msm-engines" => {
                bench_msm_engines_g1(min_log, max_log_set.unwrap_or(27));
                bench_msm_engines_g2(min_log, max_log_set.unwrap_or(27));
            }
            "msm-engines-g1" => bench_msm_engines_g1(min_log, max_log_set.unwrap_or(27)),
            "msm-engines-g2" => bench_msm_engines_g2(min_log, max_log_set.unwrap_or(27)),
            "tables" => bench_tables(max_log_set.unwrap_or(24)),
            "streamed" => bench_streamed(&d),
            "porep2k" => bench_porep_2kib(&backend),
            "partition32g" => bench_partition_32gib(&backend),
            "multi32g" => bench_multi_32gib(partitions),
            "pce32g" => bench_pce_32gib(partitions),
            "wpost32g" => bench_post_32gib(13),
            "winning32g" => bench_post_32gib(3),
            "snap32g" => bench_snap_32gib(),
            "columns" => bench_columns_upload(&d),
            other => eprintln!("unknown section {other}"),
        }
    }
}
