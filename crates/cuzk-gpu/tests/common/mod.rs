//! Shared by the GPU test binaries.

use std::path::PathBuf;

/// Backends on GPU `ordinal` whose keys stream in chunks of `chunk` bytes: with no room, every
/// query; with 2 GiB, the queries past what fits beside one proof's scratch (one or two fit).
#[allow(dead_code)] // each test binary compiles this module; not all of them use this
pub fn streaming_backends(ordinal: usize, chunk: u64) -> Vec<cuzk_gpu::GpuBackend> {
    [0, 2 << 30]
        .into_iter()
        .map(|usable| {
            let memory = cuzk_gpu::DeviceMemory::new(usable, chunk).unwrap();
            cuzk_gpu::GpuBackend::with_memory(ordinal, Some(memory)).unwrap()
        })
        .collect()
}

/// A bundled fixture: beside the sources when built here, under the working directory when the
/// test binary was carried to the GPU machine.
#[allow(dead_code)] // each test binary compiles this module; not all of them use this
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

/// A fixed circuit's 2 KiB partition on every GPU: a fresh key, then the CPU reference proof
/// (which must verify) against `prove` (witness from the host) and `prove_assigned` (columns,
/// packed and in full, PCE on the device): the same bytes, with the key resident and streamed
/// in 64 MiB chunks.
#[allow(dead_code)] // each test binary compiles this module; not all of them use this
pub fn gpu_proofs_equal_the_cpu_reference<S>(
    shape: &S,
    witness: impl Fn(&cuzk_pce::Pce) -> cuzk_circuits::PartitionWitness,
    columns: cuzk_circuits::PartitionColumns,
    seed: u64,
) where
    S: cuzk_circuits::CircuitShape,
    S::Error: std::fmt::Debug,
{
    use cuzk_gpu::GpuBackend;
    use cuzk_groth16::backend::{Backend, CpuBackend, Randomness};
    use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
    use cuzk_pce::PceBackend;
    use rand_chacha::rand_core::SeedableRng;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let label = shape.circuit_id();
    let pk = shape.generate_params(&mut rng).unwrap();
    let pce = std::sync::Arc::new(shape.extract_pce().unwrap());
    let w = witness(&pce);
    let rs = [Randomness::random(&mut rng)];
    let want = CpuBackend
        .prove(&pk, std::slice::from_ref(&w.witness), &rs)
        .unwrap();
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    assert!(
        verify_proof(&pvk, &want[0], &w.public_inputs).unwrap(),
        "{label}"
    );
    // As the engine makes them (packed when mostly bits), and in full.
    let (input, aux) = (columns.input, columns.aux);
    let forms = [
        cuzk_pce::Columns::new(input.clone(), aux.clone()),
        cuzk_pce::Columns::full(input, aux),
    ];
    for ordinal in 0..cuzk_gpu::count().unwrap() {
        let mut backends = vec![GpuBackend::new(ordinal).unwrap()];
        backends.extend(streaming_backends(ordinal, 64 << 20));
        for gpu in &backends {
            let memory = gpu.device_memory();
            let got = gpu
                .prove(&pk, std::slice::from_ref(&w.witness), &rs)
                .unwrap();
            assert_eq!(got, want, "{label}, GPU {ordinal} ({memory:?}), prove");
            for c in &forms {
                let got = gpu.prove_assigned(&pk, &pce, c, &rs[0]).unwrap();
                let packed = matches!(c.values(), cuzk_pce::Values::Packed(_));
                assert_eq!(
                    vec![got],
                    want,
                    "{label}, GPU {ordinal} ({memory:?}), prove_assigned, packed {packed}"
                );
            }
        }
    }
}
