//! Oracle tests against upstream bellperson 0.27: same parameters, circuit and (r, s) give the
//! same proof bytes; each side reads the other's parameter files; upstream verifies our proofs.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::{multipack, sha256::sha256};
use bellperson::groth16 as bp;
use blstrs::Bls12;
use cuzk_groth16::backend::{CpuBackend, Randomness};
use cuzk_groth16::conformance::{RandomCircuit, Shape};
use cuzk_groth16::params::{ProvingKey, Validation, VerifyingKey};
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::{generator, prover, Fr, Proof};
use ff::Field;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn shapes() -> impl Strategy<Value = Shape> {
    any::<u64>().prop_map(|seed| Shape::random(seed, 70))
}

fn bp_bytes(p: &bp::Proof<Bls12>) -> Vec<u8> {
    let mut out = vec![];
    p.write(&mut out).unwrap();
    out
}

/// Proves `circuit` with both provers under the same key and randomness; returns our proof
/// after checking byte equality and upstream verification.
fn prove_both<C: Circuit<Fr> + Clone + Send>(
    circuit: C,
    ours: &ProvingKey,
    theirs: &bp::Parameters<Bls12>,
    inputs: &[Fr],
    rng: &mut ChaCha20Rng,
) -> Proof {
    let rs = Randomness::random(rng);
    let upstream = bp::create_proof(circuit.clone(), theirs, rs.r, rs.s).unwrap();
    let mine = prover::create_proof(circuit, ours, rs, &CpuBackend).unwrap();
    assert_eq!(
        mine.to_bytes().to_vec(),
        bp_bytes(&upstream),
        "proof bytes differ from bellperson"
    );
    let pvk = bp::prepare_verifying_key(&theirs.vk);
    let parsed = bp::Proof::<Bls12>::read(&mine.to_bytes()[..]).unwrap();
    assert!(
        bp::verify_proof(&pvk, &parsed, inputs).unwrap(),
        "bellperson rejects our proof"
    );
    mine
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10))]

    /// Our setup, written in bellperson's format, is read by bellperson; both provers agree.
    #[test]
    fn bellperson_reads_our_parameters(shape in shapes(), seed in any::<u64>()) {
        let circuit = RandomCircuit::new(shape, seed);
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let pk = generator::generate(circuit.clone(), &mut rng).unwrap();
        let mut bytes = vec![];
        pk.write_to(&mut bytes).unwrap();
        let theirs = bp::Parameters::<Bls12>::read(&bytes[..], true).unwrap();
        let vk = VerifyingKey::from_bytes(&bytes[..pk.vk.to_bytes().len()]).unwrap();
        prop_assert_eq!(&vk, &pk.vk);
        let mut their_vk = vec![];
        theirs.vk.write(&mut their_vk).unwrap();
        prop_assert_eq!(their_vk, pk.vk.to_bytes());
        prove_both(circuit.clone(), &pk, &theirs, &circuit.public_inputs(), &mut rng);
    }

    /// bellperson's setup is read by our reader; both provers agree; our verifier accepts.
    #[test]
    fn we_read_bellperson_parameters(shape in shapes(), seed in any::<u64>()) {
        let circuit = RandomCircuit::new(shape, seed);
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let theirs = bp::generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut rng).unwrap();
        let mut bytes = vec![];
        theirs.write(&mut bytes).unwrap();
        let pk = ProvingKey::from_bytes(bytes.clone(), Validation::Full).unwrap();
        let proof = prove_both(circuit.clone(), &pk, &theirs, &circuit.public_inputs(), &mut rng);
        let pvk = PreparedVerifyingKey::new(&pk.vk);
        prop_assert!(verify_proof(&pvk, &proof, &circuit.public_inputs()).unwrap());
        // Writing what we read reproduces the file exactly, decoded or not.
        let mut again = vec![];
        pk.write_to(&mut again).unwrap();
        prop_assert!(again == bytes);
        pk.preload().unwrap();
        let mut decoded = vec![];
        pk.write_to(&mut decoded).unwrap();
        prop_assert!(decoded == bytes);
    }
}

/// Knowledge of a SHA-256 preimage whose digest is packed into public inputs.
#[derive(Clone)]
struct Sha256Preimage {
    preimage: Vec<u8>,
}

fn bytes_to_bits_be(bytes: &[u8]) -> Vec<bool> {
    bytes
        .iter()
        .flat_map(|b| (0..8).rev().map(move |i| (b >> i) & 1 == 1))
        .collect()
}

impl Circuit<Fr> for Sha256Preimage {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let bits = bytes_to_bits_be(&self.preimage)
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                Ok(Boolean::from(AllocatedBit::alloc(
                    cs.namespace(|| format!("bit {i}")),
                    Some(b),
                )?))
            })
            .collect::<Result<Vec<_>, SynthesisError>>()?;
        let digest = sha256(cs.namespace(|| "sha256"), &bits)?;
        multipack::pack_into_inputs(cs.namespace(|| "pack"), &digest)
    }
}

#[test]
fn sha256_preimage_matches_bellperson() {
    use sha2::Digest;
    let mut rng = ChaCha20Rng::seed_from_u64(42);
    let circuit = Sha256Preimage {
        preimage: (0..64u8).collect(),
    };
    let pk = generator::generate(circuit.clone(), &mut rng).unwrap();
    let mut bytes = vec![];
    pk.write_to(&mut bytes).unwrap();
    let theirs = bp::Parameters::<Bls12>::read(&bytes[..], false).unwrap();
    let digest = sha2::Sha256::digest(&circuit.preimage);
    let inputs = multipack::compute_multipacking::<Fr>(&bytes_to_bits_be(&digest));
    let proof = prove_both(circuit, &pk, &theirs, &inputs, &mut rng);
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    assert!(verify_proof(&pvk, &proof, &inputs).unwrap());
    let mut wrong = inputs.clone();
    wrong[0] += Fr::ONE;
    assert!(!verify_proof(&pvk, &proof, &wrong).unwrap());
}
