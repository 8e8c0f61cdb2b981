//! PCE output equals full synthesis exactly, for random circuits and awkward allocation
//! orders; proofs from either path are byte-identical.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use cuzk_groth16::assignment::Witness;
use cuzk_groth16::backend::{Backend, CpuBackend, Randomness};
use cuzk_groth16::conformance::{RandomCircuit, Shape};
use cuzk_groth16::{generator, Fr};
use cuzk_pce::Pce;
use ff::Field;
use proptest::prelude::*;
use rand::SeedableRng;

fn shapes() -> impl Strategy<Value = Shape> {
    any::<u64>().prop_map(|seed| Shape::random(seed, 200))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn pce_equals_full_synthesis(shape in shapes(), seed in any::<u64>()) {
        let circuit = RandomCircuit::new(shape, seed);
        let pce = Pce::extract(circuit.clone()).unwrap();
        let full = Witness::synthesize(circuit.clone()).unwrap();
        prop_assert_eq!(pce.num_constraints() + full.input.len(), full.a.len());
        let via_pce = pce.witness(circuit).unwrap();
        prop_assert_eq!(via_pce, full);
    }
}

#[test]
fn proofs_from_either_path_are_identical() {
    let shape = Shape {
        inputs: 4,
        free_aux: 50,
        constraints: 700,
        max_terms: 6,
        zero_witness: false,
        b_only_one: false,
    };
    let circuit = RandomCircuit::new(shape, 77);
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let pk = generator::generate(circuit.clone(), &mut rng).unwrap();
    let pce = Pce::extract(circuit.clone()).unwrap();
    let rs = [Randomness::random(&mut rng)];
    let a = CpuBackend
        .prove(&pk, &[Witness::synthesize(circuit.clone()).unwrap()], &rs)
        .unwrap();
    let b = CpuBackend
        .prove(&pk, &[pce.witness(circuit).unwrap()], &rs)
        .unwrap();
    assert_eq!(a[0].to_bytes(), b[0].to_bytes());
}

/// Inputs allocated after constraints, namespaces, coefficients that cancel, an empty row.
#[derive(Clone)]
struct Interleaved(Fr);

impl Circuit<Fr> for Interleaved {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(self.0))?;
        let y = cs.alloc(|| "y", || Ok(self.0.square()))?;
        cs.enforce(|| "x*x=y", |lc| lc + x, |lc| lc + x, |lc| lc + y);
        let out = cs.alloc_input(|| "out", || Ok(self.0.square() + self.0))?;
        let mut ns = cs.namespace(|| "inner");
        let z = ns.alloc(|| "z", || Ok(Fr::ONE))?;
        ns.enforce(
            || "y+x=out",
            |lc| lc + y + x,
            |lc| lc + CS::one(),
            |lc| lc + out,
        );
        // w appears in A only with cancelling coefficients: not in the A density.
        let w = ns.alloc(|| "w", || Ok(Fr::ONE))?;
        ns.enforce(|| "cancel", |lc| lc + w - w + z, |lc| lc + w, |lc| lc + z);
        ns.enforce(|| "empty", |lc| lc, |lc| lc, |lc| lc);
        drop(ns);
        let late = cs.alloc_input(|| "late", || Ok(Fr::from(5u64)))?;
        cs.enforce(
            || "late",
            |lc| lc + late,
            |lc| lc + CS::one(),
            |lc| lc + (Fr::from(5u64), CS::one()),
        );
        Ok(())
    }
}

#[test]
fn interleaved_allocation_and_namespaces() {
    for v in [Fr::ZERO, Fr::ONE, Fr::from(3u64), -Fr::ONE] {
        let pce = Pce::extract(Interleaved(v)).unwrap();
        assert_eq!((pce.num_inputs, pce.num_aux), (3, 4));
        assert!(
            !pce.density.a_aux.get(3) && pce.density.b_aux.get(3),
            "w cancels out of A"
        );
        assert_eq!(
            pce.witness(Interleaved(v)).unwrap(),
            Witness::synthesize(Interleaved(v)).unwrap()
        );
    }
}

#[test]
fn wrong_witness_shape_is_an_error() {
    let pce = Pce::extract(Interleaved(Fr::ONE)).unwrap();
    assert!(pce.evaluate(vec![Fr::ONE], vec![]).is_err());
    assert!(pce.product(cuzk_pce::Which::B, &[Fr::ONE], &[]).is_err());
}

#[test]
fn single_products_match_evaluate() {
    let circuit = RandomCircuit::new(
        Shape {
            inputs: 2,
            free_aux: 9,
            constraints: 99,
            max_terms: 5,
            zero_witness: false,
            b_only_one: false,
        },
        4,
    );
    let pce = Pce::extract(circuit.clone()).unwrap();
    let (input, aux) = cuzk_pce::WitnessCs::assign(circuit).unwrap();
    let w = pce.evaluate(input.clone(), aux.clone()).unwrap();
    let rows = pce.num_constraints();
    assert_eq!(
        pce.product(cuzk_pce::Which::A, &input, &aux).unwrap(),
        w.a[..rows]
    );
    assert_eq!(
        pce.product(cuzk_pce::Which::B, &input, &aux).unwrap(),
        w.b[..rows]
    );
    assert_eq!(
        pce.product(cuzk_pce::Which::C, &input, &aux).unwrap(),
        w.c[..rows]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]
    /// The benchmarks' stand-in key has the generated key's shape, so backends take it.
    #[test]
    fn tiled_key_has_the_generated_keys_shape(shape in shapes(), seed in any::<u64>()) {
        let circuit = RandomCircuit::new(shape, seed);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let real = generator::generate(circuit.clone(), &mut rng).unwrap();
        let pce = Pce::extract(circuit.clone()).unwrap();
        let tiled = pce.tiled_key();
        prop_assert_eq!(tiled.lengths(), real.lengths());
        prop_assert_eq!(tiled.vk.ic.len(), real.vk.ic.len());
        let rs = [Randomness::random(&mut rng)];
        prop_assert!(CpuBackend.prove(&tiled, &[pce.witness(circuit).unwrap()], &rs).is_ok());
    }
}
