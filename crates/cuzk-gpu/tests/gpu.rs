//! The GPU backend against the CPU reference. Tests marked `#[ignore]` need an NVIDIA GPU and
//! run on the device machine through `tools/gpu-tests.sh` (see docs/GPU.md).

mod common;

use cuzk_gpu::msm::{msm, prefer, streamed_msm, DeviceBase, Engine, Table, G1, G2};
use cuzk_gpu::{domain, Device, GpuBackend, GpuError};
use cuzk_groth16::backend::{quotient, Backend, CpuBackend, Randomness};
use cuzk_groth16::conformance::{
    check_backend, random_g1, random_g2, random_scalars, standard_shapes, tile, RandomCircuit,
    Shape,
};
use cuzk_groth16::domain::Domain;
use cuzk_groth16::{generator, msm as cpu_msm, Fr};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Curve;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn device() -> Device {
    Device::open(0).expect("GPU 0")
}

/// Random scalars with runs of zeros and ones, as witness-side MSMs have.
fn witness_like(n: usize, seed: u64) -> Vec<Fr> {
    let mut s = random_scalars(n, seed);
    for (i, v) in s.iter_mut().enumerate() {
        match i % 5 {
            0 => *v = Fr::ZERO,
            1 => *v = Fr::ONE,
            _ => {}
        }
    }
    s
}

#[test]
fn missing_gpu_or_kernels_is_a_typed_error() {
    match (cuzk_gpu::BUILT_WITH_CUDA, cuzk_gpu::count()) {
        (true, Ok(n)) => assert!(matches!(
            GpuBackend::new(n + 3),
            Err(GpuError::BadOrdinal { ordinal, count }) if ordinal == n + 3 && count == n
        )),
        (false, Err(GpuError::NotBuilt)) => {}
        (true, Err(GpuError::NoDevice(_))) => {
            assert!(matches!(GpuBackend::new(0), Err(GpuError::NoDevice(_))))
        }
        other => panic!("unexpected answer without a usable GPU: {other:?}"),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn device_reports_itself() {
    let d = device();
    let free = d.free_memory().unwrap();
    println!(
        "GPU 0: {} (sm_{}), {} of {} MiB free",
        d.name(),
        d.compute_capability(),
        free >> 20,
        d.total_memory() >> 20
    );
    assert!(free > 0 && free <= d.total_memory());
    let now = d.free_memory_now().unwrap();
    assert!(now > 0 && now <= d.total_memory());
    assert_eq!(Device::all().unwrap()[0], d);
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn msm_matches_cpu() {
    let d = device();
    for (i, n) in [1usize, 2, 31, 1000, (1 << 16) + 3].into_iter().enumerate() {
        let seed = i as u64;
        let (p1, p2, s) = (
            random_g1(n, seed),
            random_g2(n, seed),
            witness_like(n, seed),
        );
        let g1 = msm::<G1>(&d, &p1, &s).unwrap();
        assert_eq!(
            g1.to_affine(),
            cpu_msm::blst_g1(&p1, &s).to_affine(),
            "G1, n = {n}"
        );
        let g2 = msm::<G2>(&d, &p2, &s).unwrap();
        assert_eq!(
            g2.to_affine(),
            cpu_msm::blst_g2(&p2, &s).to_affine(),
            "G2, n = {n}"
        );
    }
    // A resident base serves many calls and shorter scalar vectors.
    let (points, s) = (random_g1(5000, 9), random_scalars(5000, 10));
    let mut base = DeviceBase::<G1>::upload(&d, &points).unwrap();
    for len in [5000, 4999, 17] {
        let got = base.msm(&s[..len]).unwrap().to_affine();
        assert_eq!(got, cpu_msm::blst_g1(&points[..len], &s[..len]).to_affine());
    }
    assert!(matches!(
        base.msm(&random_scalars(5001, 1)),
        Err(GpuError::Argument(_))
    ));
    assert!(matches!(
        DeviceBase::<G1>::upload(&d, &[]),
        Err(GpuError::Argument(_))
    ));
}

/// A PoRep-like witness: zeros and ones, with `others` in 1000 random values.
fn mostly_bits(n: usize, seed: u64, others: u32) -> Vec<Fr> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..n)
        .map(
            |_| match rand_chacha::rand_core::RngCore::next_u32(&mut rng) % 1000 {
                x if x < others => Fr::random(&mut rng),
                x if x % 2 == 0 => Fr::ZERO,
                _ => Fr::ONE,
            },
        )
        .collect()
}

fn naive<P: group::Group<Scalar = Fr>>(points: &[impl Into<P> + Copy], s: &[Fr]) -> P {
    points.iter().zip(s).map(|(p, s)| (*p).into() * s).sum()
}

/// Witness scalars take the split path (zeros skipped, ones batch-added, the rest through
/// Pippenger): every length around the kernels' 32- and 1024-scalar blocks, all-zero and
/// all-one vectors, points at infinity, and vectors shorter than the base.
#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn witness_msms_match_cpu() {
    let d = device();
    let (mut p1, mut p2) = (random_g1(5000, 21), random_g2(5000, 22));
    for i in (0..5000).step_by(97) {
        p1[i] = cuzk_groth16::G1Affine::identity();
        p2[i] = cuzk_groth16::G2Affine::identity();
    }
    let mut b1 = DeviceBase::<G1>::upload(&d, &p1).unwrap();
    let mut b2 = DeviceBase::<G2>::upload(&d, &p2).unwrap();
    for (k, n) in [1usize, 31, 32, 33, 1023, 1024, 1025, 4999, 5000]
        .into_iter()
        .enumerate()
    {
        for (what, s) in [
            ("zeros", vec![Fr::ZERO; n]),
            ("ones", vec![Fr::ONE; n]),
            ("bits", mostly_bits(n, k as u64, 0)),
            ("1 % others", mostly_bits(n, k as u64, 10)),
            ("20 % others", mostly_bits(n, k as u64, 200)),
            ("random", random_scalars(n, k as u64)),
        ] {
            let want1: cuzk_groth16::G1Projective = naive(&p1[..n], &s);
            assert_eq!(
                b1.msm(&s).unwrap().to_affine(),
                want1.to_affine(),
                "G1 {what}, n = {n}"
            );
            let want2: cuzk_groth16::G2Projective = naive(&p2[..n], &s);
            assert_eq!(
                b2.msm(&s).unwrap().to_affine(),
                want2.to_affine(),
                "G2 {what}, n = {n}"
            );
        }
    }
    let (p, s) = (
        random_g1((1 << 18) + 5, 23),
        mostly_bits((1 << 18) + 5, 24, 20),
    );
    let got = msm::<G1>(&d, &p, &s).unwrap().to_affine();
    assert_eq!(got, cpu_msm::blst_g1(&p, &s).to_affine(), "G1, 2^18 + 5");
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn ntts_match_cpu() {
    let d = device();
    for lg in [0u32, 1, 5, 10, 13, 16, 20] {
        let domain = Domain::new(lg).unwrap();
        let v = random_scalars(domain.size(), lg as u64);
        let c = || domain.coefficients(v.clone()).unwrap();
        let e = || domain.evaluations(v.clone()).unwrap();
        let ce = || domain.coset_evaluations(v.clone()).unwrap();
        assert_eq!(
            domain::fft(&d, &domain, c()).unwrap(),
            domain.fft(c()),
            "fft 2^{lg}"
        );
        assert_eq!(
            domain::ifft(&d, &domain, e()).unwrap(),
            domain.ifft(e()),
            "ifft 2^{lg}"
        );
        assert_eq!(
            domain::coset_fft(&d, &domain, c()).unwrap(),
            domain.coset_fft(c()),
            "coset 2^{lg}"
        );
        assert_eq!(
            domain::icoset_fft(&d, &domain, ce()).unwrap(),
            domain.icoset_fft(ce()),
            "icoset 2^{lg}"
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn quotient_matches_cpu() {
    let d = device();
    for n in [1usize, 2, 3, 100, 1 << 12, (1 << 17) - 5] {
        let (a, b, c) = (
            random_scalars(n, 1),
            witness_like(n, 2),
            random_scalars(n, 3),
        );
        let (_, want) = quotient(&a, &b, &c).unwrap();
        let (_, got) = domain::quotient(&d, &a, &b, &c).unwrap();
        assert_eq!(got, want, "n = {n}");
    }
    let short = random_scalars(3, 4);
    assert!(domain::quotient(&d, &short, &short[..2], &short).is_err());
}

/// Random and adversarial scalars: zeros, ones, r − 1, (r − 1)/2 (the top of the signed digit
/// range), one repeated value, every 8-bit digit equal, and witness-like runs.
fn adversarial_scalars(n: usize) -> Vec<(&'static str, Vec<Fr>)> {
    let mut rng = ChaCha20Rng::seed_from_u64(32);
    // Every 8-bit window digit 1: Σ 2^(8k), k < 31.
    let ones_digits = (0..31).fold(Fr::ZERO, |s, _| s * Fr::from(256) + Fr::ONE);
    let half = -Fr::from(2).invert().unwrap();
    vec![
        ("random", random_scalars(n, 33)),
        ("zeros", vec![Fr::ZERO; n]),
        ("ones", vec![Fr::ONE; n]),
        ("r - 1", vec![-Fr::ONE; n]),
        ("(r - 1)/2", vec![half; n]),
        ("one value", vec![Fr::random(&mut rng); n]),
        ("equal digits", vec![ones_digits; n]),
        ("witness-like", witness_like(n, 34)),
    ]
}

/// G1 points with points at infinity and a run of one repeated point.
fn awkward_g1(n: usize) -> Vec<cuzk_groth16::G1Affine> {
    let mut points = random_g1(n, 31);
    for i in (0..n).step_by(1001) {
        points[i] = cuzk_groth16::G1Affine::identity();
    }
    let repeated = points[7];
    points[100..300].fill(repeated);
    points
}

/// The same for G2.
fn awkward_g2(n: usize) -> Vec<cuzk_groth16::G2Affine> {
    let mut points = random_g2(n, 35);
    points[17] = cuzk_groth16::G2Affine::identity();
    let repeated = points[3];
    points[40..90].fill(repeated);
    points
}

/// Our bucket MSM and sppark's against the CPU on random and adversarial scalars, by size and
/// at forced windows (small windows put thousands of entries in one bucket, so segments end
/// mid-bucket and carries chain), over bases with repeated points and points at infinity, in
/// G1 and G2.
#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn bucket_msm_matches_sppark_and_cpu() {
    let d = device();
    let n = (1 << 16) + 3;
    let points = awkward_g1(n);
    let mut base = DeviceBase::<G1>::upload(&d, &points).unwrap();
    let cases = adversarial_scalars(n);
    let engines = [
        Engine::Sppark,
        Engine::Buckets { window_bits: None },
        Engine::Buckets {
            window_bits: Some(8),
        },
        Engine::Buckets {
            window_bits: Some(13),
        },
        Engine::Buckets {
            window_bits: Some(24),
        },
    ];
    for (what, s) in &cases {
        for len in [1, 2, 33, 1000, n] {
            let want = cpu_msm::blst_g1(&points[..len], &s[..len]).to_affine();
            for engine in engines {
                let got = base.time(&s[..len], engine, 1).unwrap();
                assert_eq!(got.sum.to_affine(), want, "{what}, n = {len}, {engine:?}");
            }
        }
    }
    // G2 (our kernels are instantiated for it too): fewer cases, the same engines.
    let n2 = 5000;
    let p2 = awkward_g2(n2);
    let mut base2 = DeviceBase::<G2>::upload(&d, &p2).unwrap();
    for (what, s) in &cases {
        let s = &s[..n2];
        let want = cpu_msm::blst_g2(&p2, s).to_affine();
        for engine in engines {
            let got = base2.time(s, engine, 1).unwrap();
            assert_eq!(got.sum.to_affine(), want, "G2 {what}, {engine:?}");
        }
    }
    let too_wide = Engine::Buckets {
        window_bits: Some(25),
    };
    assert!(matches!(
        base.time(&cases[0].1, too_wide, 1),
        Err(GpuError::Argument(_))
    ));
    // A base without a table cannot be timed over one.
    assert!(matches!(
        base.time(&cases[0].1, Engine::Table, 1),
        Err(GpuError::Argument(_))
    ));
}

/// sppark's streamed MSM (points and scalars in host memory, the points uploaded a batch at a
/// time), whole and in chunks, against the CPU on the random and adversarial scalars over the
/// awkward bases, in G1 and G2.
#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn streamed_msm_matches_cpu() {
    let d = device();
    let n = (1 << 16) + 3;
    let points = awkward_g1(n);
    let cases = adversarial_scalars(n);
    for (what, s) in &cases {
        for len in [0, 1, 33, 1000, n] {
            let want = cpu_msm::blst_g1(&points[..len], &s[..len]).to_affine();
            for chunk in [n, 4099] {
                let got = streamed_msm::<G1>(&d, &points[..len], &s[..len], chunk).unwrap();
                assert_eq!(got.to_affine(), want, "{what}, n = {len}, chunk {chunk}");
            }
        }
    }
    let n2 = 5000;
    let p2 = awkward_g2(n2);
    for (what, s) in &cases {
        let s = &s[..n2];
        let want = cpu_msm::blst_g2(&p2, s).to_affine();
        for chunk in [n2, 777] {
            let got = streamed_msm::<G2>(&d, &p2, s, chunk).unwrap();
            assert_eq!(got.to_affine(), want, "G2 {what}, chunk {chunk}");
        }
    }
    assert!(matches!(
        streamed_msm::<G1>(&d, &points[..2], &cases[0].1[..3], n),
        Err(GpuError::Argument(_))
    ));
}

/// Batch-affine bucket sums, which only long segments take (2^26 points on the H200), on the
/// random and adversarial scalars over a base with repeated points and points at infinity
/// (P + P and P − P meet in a bucket), in G1 and G2 (a lane pair per segment): against sppark's
/// Pippenger, or for one scalar s everywhere against s·ΣP (sppark would add a whole window's
/// 2^26 points in one thread); a small MSM adds into XYZZ buckets instead.
#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn batch_affine_sums_match_sppark() {
    let d = device();
    let g1 = awkward_g1(1 << 16);
    let sum = g1.iter().map(|p| p.to_curve()).sum();
    batch_affine_agrees::<G1>(&d, &g1, sum);
    let g2 = awkward_g2(1 << 12);
    let sum = g2.iter().map(|p| p.to_curve()).sum();
    batch_affine_agrees::<G2>(&d, &g2, sum);
}

fn batch_affine_agrees<C: cuzk_gpu::msm::Curve>(
    d: &Device,
    points: &[C::Affine],
    sum: C::Projective,
) where
    C::Projective: group::Group<Scalar = Fr> + std::fmt::Debug,
{
    let ours = Engine::Buckets { window_bits: None };
    let mut small = DeviceBase::<C>::upload(d, points).unwrap();
    let steps = small
        .time(&random_scalars(points.len(), 5), ours, 1)
        .unwrap()
        .steps;
    assert!(!steps.unwrap().batch_affine, "a small MSM: XYZZ sums");
    drop(small);
    let n = 1 << 26;
    let mut base = DeviceBase::<C>::upload(d, &tile(points, n)).unwrap();
    let tiles = Fr::from((n / points.len()) as u64);
    for (what, s) in adversarial_scalars(n) {
        let got = base.time(&s, ours, 1).unwrap();
        assert!(got.steps.unwrap().batch_affine, "{what}: batch-affine sums");
        let want = match s.iter().all(|v| *v == s[0]) {
            true => sum * (tiles * s[0]),
            false => base.time(&s, Engine::Sppark, 1).unwrap().sum,
        };
        assert_eq!(got.sum, want, "{what}");
    }
}

/// Our bucket MSM over tables of multiples against the CPU: one-pass tables (8-bit windows:
/// 32 copies, thousands of entries per bucket; and the size's own choice) and a partial one
/// whose last pass is short (13-bit windows, 3 copies: 20 windows in 7 passes), G1 and G2,
/// the same awkward points and scalars, prefixes of the base included; then as the default
/// engine of a base with a table (the prover's path, witness split included). Tables take the
/// XYZZ sums, and every call stays within the scratch the backend charges for it.
#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn table_msm_matches_cpu() {
    let d = device();
    let n = (1 << 16) + 3;
    let points = awkward_g1(n);
    let cases = adversarial_scalars(n);
    let tables = [
        Table::new(8, 32).unwrap(),
        Table::new(13, 3).unwrap(),
        Table::for_points(n),
    ];
    for table in tables {
        let mut base = DeviceBase::<G1>::tabulated(&d, &points, table).unwrap();
        assert_eq!(base.table(), Some(table));
        for (what, s) in &cases {
            for len in [1, 2, 33, 1000, n] {
                let want = cpu_msm::blst_g1(&points[..len], &s[..len]).to_affine();
                let got = base.time(&s[..len], Engine::Table, 1).unwrap();
                assert_eq!(got.sum.to_affine(), want, "{what}, n = {len}, {table:?}");
                let steps = got.steps.unwrap();
                let per_pass = table.copies().min(steps.windows);
                assert_eq!(steps.passes, steps.windows.div_ceil(per_pass), "{table:?}");
                // A table's segments are short: XYZZ sums.
                assert!(!steps.batch_affine, "{table:?}");
                // The backend charges a table MSM this much device memory.
                assert!(
                    steps.scratch_bytes as u64 <= table.scratch::<G1>(len),
                    "{table:?} at {len}: {} bytes",
                    steps.scratch_bytes
                );
            }
            let want = cpu_msm::blst_g1(&points, s).to_affine();
            assert_eq!(base.msm(s).unwrap().to_affine(), want, "default, {what}");
        }
    }
    let n2 = 5000;
    let p2 = awkward_g2(n2);
    for table in [Table::new(13, 3).unwrap(), Table::for_points(n2)] {
        let mut base2 = DeviceBase::<G2>::tabulated(&d, &p2, table).unwrap();
        for (what, s) in &cases {
            let s = &s[..n2];
            let want = cpu_msm::blst_g2(&p2, s).to_affine();
            let got = base2.time(s, Engine::Table, 1).unwrap();
            assert_eq!(got.sum.to_affine(), want, "G2 {what}, {table:?}");
            assert_eq!(
                base2.msm(s).unwrap().to_affine(),
                want,
                "G2 default, {what}"
            );
        }
    }
}

/// The conformance harness passes with every MSM through each engine.
#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn conforms_with_each_msm_engine() {
    let circuits: Vec<RandomCircuit> = standard_shapes()
        .into_iter()
        .enumerate()
        .map(|(i, s)| RandomCircuit::new(s, 50 + i as u64))
        .collect();
    let backend = GpuBackend::new(0).unwrap();
    let engines = [
        Engine::Sppark,
        Engine::Buckets { window_bits: None },
        Engine::Table,
    ];
    for engine in engines {
        prefer(Some(engine)).unwrap();
        let r = check_backend(&backend, &circuits, 2);
        prefer(None).unwrap();
        r.unwrap_or_else(|e| panic!("{engine:?}: {e}"));
    }
}

/// The conformance harness passes with the keys streamed, wholly and in part, in chunks of a
/// few points (G1 eight, G2 four).
#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn conforms_with_streamed_queries() {
    let mut circuits: Vec<RandomCircuit> = standard_shapes()
        .into_iter()
        .enumerate()
        .map(|(i, s)| RandomCircuit::new(s, 70 + i as u64))
        .collect();
    circuits.extend((0..6).map(|i| RandomCircuit::new(Shape::random(300 + i, 300), 3000 + i)));
    for backend in common::streaming_backends(0, 4 * 192) {
        let memory = backend.device_memory();
        check_backend(&backend, &circuits, 2).unwrap_or_else(|e| panic!("{memory:?}: {e}"));
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn conforms_on_random_circuits_on_every_gpu() {
    let mut circuits: Vec<RandomCircuit> = standard_shapes()
        .into_iter()
        .enumerate()
        .map(|(i, s)| RandomCircuit::new(s, i as u64))
        .collect();
    circuits.extend((0..24).map(|i| RandomCircuit::new(Shape::random(100 + i, 300), 1000 + i)));
    let gpus = Device::all().unwrap();
    assert!(!gpus.is_empty());
    for d in gpus {
        let backend = GpuBackend::new(d.ordinal()).unwrap();
        check_backend(&backend, &circuits, 2)
            .unwrap_or_else(|e| panic!("GPU {}: {e}", d.ordinal()));
        println!("GPU {} ({}): conforms", d.ordinal(), d.name());
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn device_memory_is_released_after_100_proofs() {
    let shape = Shape {
        inputs: 4,
        free_aux: 300,
        constraints: 5000,
        max_terms: 4,
        zero_witness: false,
        b_only_one: false,
    };
    let circuit = RandomCircuit::new(shape, 77);
    let mut rng = ChaCha20Rng::seed_from_u64(78);
    let pk = generator::generate(circuit.clone(), &mut rng).unwrap();
    let w = [cuzk_groth16::assignment::Witness::synthesize(circuit).unwrap()];
    let rs = Randomness::random(&mut rng);
    let want = CpuBackend.prove(&pk, &w, &[rs]).unwrap();

    // One warm-up proof creates the context-lifetime state (streams, NTT twiddle tables).
    GpuBackend::new(0).unwrap().prove(&pk, &w, &[rs]).unwrap();
    let d = device();
    let start = d.free_memory().unwrap();
    // The measurement sees allocations: a resident 2^20-point base holds at least 96 MiB.
    let base = DeviceBase::<G1>::upload(&d, &random_g1(1 << 20, 5)).unwrap();
    let held = start - d.free_memory().unwrap();
    assert!(held >= 96 << 20, "only {held} bytes held by a 96 MiB base");
    drop(base);
    assert_eq!(d.free_memory().unwrap(), start);
    {
        let backend = GpuBackend::new(0).unwrap();
        for _ in 0..100 {
            assert_eq!(backend.prove(&pk, &w, &[rs]).unwrap(), want);
        }
    }
    let end = d.free_memory().unwrap();
    println!("free device memory: {start} before, {end} after 100 proofs");
    assert_eq!(end, start);
}

/// Fixed-base multiplication on the GPU gives the CPU reference's points: edge scalars, small
/// and 16-bit windows, G1 and G2, and whole setups of the standard shapes byte for byte.
#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn fixed_base_multiplication_matches_the_cpu() {
    let gpu = cuzk_gpu::setup::GpuFixedBase::new(0).unwrap();
    cuzk_groth16::conformance::check_fixed_base(&gpu).unwrap();
}

/// `cuzk paramgen --gpu` and the CPU path write the same 2 KiB PoRep `.params` file for the
/// same seed.
#[test]
#[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
fn porep_2kib_setup_is_the_same_file_on_gpu_and_cpu() {
    use cuzk_circuits::SealShape;
    let shape = SealShape::from_sector_size("2KiB").unwrap();
    let gpu = cuzk_gpu::setup::GpuFixedBase::new(0).unwrap();
    let file = |mul: &dyn generator::FixedBaseMul| {
        let dir = tempfile::tempdir().unwrap();
        let pk = shape
            .generate_params_with(&mut ChaCha20Rng::seed_from_u64(2048), mul)
            .unwrap();
        shape.write_params(&pk, dir.path()).unwrap();
        let [params, _, _] = shape.file_names().unwrap();
        std::fs::read(dir.path().join(params)).unwrap()
    };
    let (on_gpu, on_cpu) = (file(&gpu), file(&generator::CpuFixedBase));
    assert!(on_gpu.len() > 1 << 20);
    assert!(on_gpu == on_cpu, "the GPU setup wrote another file");
}
