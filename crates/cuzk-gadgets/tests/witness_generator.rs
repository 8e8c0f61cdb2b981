//! Under a witness generator (cuzk-pce's `WitnessCs`, which reports `is_witness_generator`
//! and discards constraints) the gadgets skip building linear combinations; the witness they
//! allocate must still be exactly what a recording constraint system gets.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use cuzk_gadgets::boolean::{AllocatedBit, Boolean};
use cuzk_gadgets::multieq::MultiEq;
use cuzk_gadgets::num::AllocatedNum;
use cuzk_gadgets::poseidon::{poseidon_hash, PoseidonConstants};
use cuzk_gadgets::sha256::sha256;
use cuzk_gadgets::test_util::RecordingCs;
use cuzk_gadgets::uint32::UInt32;
use cuzk_pce::WitnessCs;
use ff::Field;
use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;

/// SHA-256 of a message, a modular sum of words (through `MultiEq`) and a Poseidon hash.
#[derive(Clone, Debug)]
struct Gadgets {
    message: Vec<u8>,
    words: Vec<u32>,
    preimage: Vec<Fr>,
}

impl Circuit<Fr> for Gadgets {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let bits = self
            .message
            .iter()
            .flat_map(|b| (0..8).rev().map(move |i| (b >> i) & 1 == 1))
            .enumerate()
            .map(|(i, v)| {
                AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(v)).map(Boolean::Is)
            })
            .collect::<Result<Vec<_>, _>>()?;
        sha256(cs.namespace(|| "sha256"), &bits)?;
        let words = self
            .words
            .iter()
            .enumerate()
            .map(|(i, w)| UInt32::alloc(cs.namespace(|| format!("word {i}")), Some(*w)))
            .collect::<Result<Vec<_>, _>>()?;
        {
            let mut eq = MultiEq::new(cs.namespace(|| "multieq"));
            UInt32::addmany(eq.namespace(|| "sum"), &words)?;
        }
        let preimage = self
            .preimage
            .iter()
            .enumerate()
            .map(|(i, v)| AllocatedNum::alloc(cs.namespace(|| format!("element {i}")), || Ok(*v)))
            .collect::<Result<Vec<_>, _>>()?;
        let constants = PoseidonConstants::new(preimage.len())?;
        poseidon_hash(cs.namespace(|| "poseidon"), &preimage, &constants)?;
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn witness_generator_allocates_the_recorded_witness(
        message in prop::collection::vec(any::<u8>(), 0..150),
        words in prop::collection::vec(any::<u32>(), 2..11),
        arity in prop::sample::select(vec![2usize, 4, 8, 11]),
        seed in any::<u64>(),
    ) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let preimage = (0..arity).map(|_| Fr::random(&mut rng)).collect();
        let gadgets = Gadgets { message, words, preimage };
        let mut recorded = RecordingCs::new();
        gadgets.clone().synthesize(&mut recorded).unwrap();
        let (input, aux) = WitnessCs::assign(gadgets).unwrap();
        prop_assert_eq!(input, vec![Fr::ONE]);
        let want: Vec<Fr> = recorded.aux().iter().map(|v| v.unwrap()).collect();
        prop_assert_eq!(aux, want);
    }
}
