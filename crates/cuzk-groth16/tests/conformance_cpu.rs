//! The reference backend passes its own conformance harness (the harness itself is what GPU
//! and other backends run), and the verifier rejects what it must.

use cuzk_groth16::assignment::Witness;
use cuzk_groth16::backend::{Backend, CpuBackend, Randomness};
use cuzk_groth16::conformance::{check_backend, standard_shapes, Nonconformance, RandomCircuit};
use cuzk_groth16::params::ProvingKey;
use cuzk_groth16::verifier::{verify_proof, verify_proofs_batch, PreparedVerifyingKey};
use cuzk_groth16::{generator, Fr, Proof, ProverError, VerifyError};
use ff::Field;
use proptest::prelude::*;
use rand::SeedableRng;

#[test]
fn cpu_backend_conforms() {
    let circuits: Vec<_> = standard_shapes()
        .into_iter()
        .enumerate()
        .map(|(i, s)| RandomCircuit::new(s, i as u64))
        .collect();
    check_backend(&CpuBackend, &circuits, 2).unwrap();
}

/// The CPU backend behind a hook that sees the key and may change the randomness: how the
/// tests below make other backends.
struct Hooked<F>(&'static str, F);

impl<F> Backend for Hooked<F>
where
    F: Fn(&ProvingKey, &[Randomness]) -> Result<Vec<Randomness>, ProverError> + Send + Sync,
{
    fn name(&self) -> &'static str {
        self.0
    }
    fn prove(
        &self,
        pk: &ProvingKey,
        w: &[Witness],
        rs: &[Randomness],
    ) -> Result<Vec<Proof>, ProverError> {
        CpuBackend.prove(pk, w, &(self.1)(pk, rs)?)
    }
}

/// The CPU backend over a key with fixed-base tables (made after the harness's reference
/// proof) gives the reference's proof bytes.
#[test]
fn cpu_backend_with_fixed_base_tables_conforms() {
    let circuits: Vec<_> = standard_shapes()
        .into_iter()
        .enumerate()
        .map(|(i, s)| RandomCircuit::new(s, 40 + i as u64))
        .collect();
    let tabulated = Hooked("cpu+tables", |pk: &ProvingKey, rs: &[Randomness]| {
        assert!(pk.tabulate(u64::MAX)? > 0 || pk.lengths()[0] < 256);
        Ok(rs.to_vec())
    });
    check_backend(&tabulated, &circuits, 2).unwrap();
}

/// A backend whose proofs use other randomness must be caught by the harness.
fn broken() -> impl Backend {
    Hooked("broken", |_: &ProvingKey, rs: &[Randomness]| {
        Ok(rs
            .iter()
            .map(|r| Randomness {
                r: r.r + Fr::ONE,
                s: r.s,
            })
            .collect())
    })
}

#[test]
fn harness_catches_a_wrong_backend() {
    let c = RandomCircuit::new(standard_shapes()[0], 9);
    assert!(matches!(
        check_backend(&broken(), &[c], 1),
        Err(Nonconformance::Differs { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]
    #[test]
    fn verifier_rejects_tampering(seed in any::<u64>(), byte in 0usize..192, bit in 0u8..8) {
        let circuit = RandomCircuit::new(standard_shapes()[2], seed);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let pk = generator::generate(circuit.clone(), &mut rng).unwrap();
        let w = Witness::synthesize(circuit.clone()).unwrap();
        let rs: Vec<_> = (0..3).map(|_| Randomness::random(&mut rng)).collect();
        let proofs = CpuBackend.prove(&pk, &vec![w; 3], &rs).unwrap();
        let pvk = PreparedVerifyingKey::new(&pk.vk);
        let inputs = circuit.public_inputs();
        prop_assert!(verify_proof(&pvk, &proofs[0], &inputs).unwrap());
        let all_inputs = vec![inputs.clone(); 3];
        prop_assert!(verify_proofs_batch(&pvk, &proofs, &all_inputs, &mut rng).unwrap());

        // A flipped bit either fails to decode or fails to verify.
        let mut bytes = proofs[0].to_bytes();
        bytes[byte] ^= 1 << bit;
        if let Ok(p) = Proof::from_bytes(&bytes) {
            prop_assert!(!verify_proof(&pvk, &p, &inputs).unwrap());
            let mut bad = proofs.clone();
            bad[1] = p;
            prop_assert!(!verify_proofs_batch(&pvk, &bad, &all_inputs, &mut rng).unwrap());
        }
        // Wrong public inputs.
        let mut wrong = inputs.clone();
        wrong[0] += Fr::ONE;
        prop_assert!(!verify_proof(&pvk, &proofs[0], &wrong).unwrap());
        prop_assert_eq!(
            verify_proof(&pvk, &proofs[0], &inputs[1..]),
            Err(VerifyError::InputCount { expected: inputs.len(), got: inputs.len() - 1 })
        );
        // Encoding round-trips.
        prop_assert_eq!(Proof::from_bytes(&proofs[0].to_bytes()).unwrap(), proofs[0]);
    }
}

#[test]
fn mismatched_parameters_are_a_typed_error() {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let shapes = standard_shapes();
    let pk = generator::generate(RandomCircuit::new(shapes[0], 1), &mut rng).unwrap();
    let other = Witness::synthesize(RandomCircuit::new(shapes[2], 1)).unwrap();
    let err = CpuBackend
        .prove(&pk, &[other], &[Randomness::random(&mut rng)])
        .unwrap_err();
    assert!(matches!(err, ProverError::ParamsMismatch { .. }), "{err}");
    assert!(matches!(
        CpuBackend.prove(&pk, &[], &[Randomness::random(&mut rng)]),
        Err(ProverError::BatchShape { .. })
    ));
    assert!(Proof::from_bytes(&[0u8; 10]).is_err());
}

#[test]
fn prover_entry_points_agree_with_the_backend() {
    use cuzk_groth16::prover::{create_proof, create_proofs, create_random_proof};
    let shapes = standard_shapes();
    // One circuit (the seed fixes its structure), proved three times.
    let circuits = vec![RandomCircuit::new(shapes[2], 0); 3];
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(8);
    let pk = generator::generate(circuits[0].clone(), &mut rng).unwrap();
    let rs: Vec<_> = (0..3).map(|_| Randomness::random(&mut rng)).collect();
    let batch = create_proofs(circuits.clone(), &pk, &rs, &CpuBackend).unwrap();
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    for ((c, r), p) in circuits.iter().zip(&rs).zip(&batch) {
        assert_eq!(create_proof(c.clone(), &pk, *r, &CpuBackend).unwrap(), *p);
        assert!(verify_proof(&pvk, p, &c.public_inputs()).unwrap());
    }
    let p = create_random_proof(circuits[1].clone(), &pk, &mut rng, &CpuBackend).unwrap();
    assert!(verify_proof(&pvk, &p, &circuits[1].public_inputs()).unwrap());
    assert!(matches!(
        create_proofs(circuits, &pk, &rs[..1], &CpuBackend),
        Err(ProverError::BatchShape { .. })
    ));
}

/// The fixed-base harness passes the reference, and catches a multiplier that is wrong for one
/// scalar only.
#[test]
fn fixed_base_harness_passes_the_reference_and_catches_one_wrong_point() {
    use cuzk_groth16::conformance::check_fixed_base;
    use cuzk_groth16::curve::FixedBase;
    use cuzk_groth16::generator::{CpuFixedBase, FixedBaseMul};
    use cuzk_groth16::{G1Affine, G1Projective, G2Affine, G2Projective};

    check_fixed_base(&CpuFixedBase).unwrap();

    /// The reference, with the last G1 point of every call negated.
    struct LastNegated;
    impl FixedBaseMul for LastNegated {
        fn name(&self) -> &str {
            "last-negated"
        }
        fn g1(&self, t: &FixedBase<G1Projective>, s: &[Fr]) -> Result<Vec<G1Affine>, ProverError> {
            let mut v = CpuFixedBase.g1(t, s)?;
            if let Some(p) = v.last_mut() {
                *p = -*p;
            }
            Ok(v)
        }
        fn g2(&self, t: &FixedBase<G2Projective>, s: &[Fr]) -> Result<Vec<G2Affine>, ProverError> {
            CpuFixedBase.g2(t, s)
        }
    }
    let e = check_fixed_base(&LastNegated).unwrap_err();
    assert!(e.starts_with("G1, ") && e.contains("scalar 3257"), "{e}");
}
