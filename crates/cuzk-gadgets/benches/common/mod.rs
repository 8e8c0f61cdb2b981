//! The synthesis workloads shared by the criterion benchmark and the callgrind example: the same
//! circuit through our gadgets and through upstream's, into a constraint system that keeps rows
//! and witness as a prover does.

use bellpepper_core::ConstraintSystem;
use blstrs::Scalar as Fr;
use cuzk_gadgets::multipack::bytes_to_bits;
use cuzk_gadgets::test_util::RecordingCs;

/// Which implementation a workload runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Ours,
    Upstream,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Ours => "ours",
            Side::Upstream => "upstream",
        }
    }
}

/// SHA-256 (padded) of `message`, its bits allocated as private inputs; returns the number of
/// constraints.
pub fn sha256(side: Side, message: &[u8]) -> usize {
    let mut cs = RecordingCs::<Fr>::new();
    let bits = bytes_to_bits(message);
    match side {
        Side::Ours => {
            use cuzk_gadgets::boolean::{AllocatedBit, Boolean};
            let bits: Vec<Boolean> = bits
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    AllocatedBit::alloc(cs.namespace(|| format!("m {i}")), Some(*b))
                        .map(Boolean::Is)
                })
                .collect::<Result<_, _>>()
                .unwrap();
            cuzk_gadgets::sha256::sha256(&mut cs, &bits).unwrap();
        }
        Side::Upstream => {
            use bellpepper::gadgets::boolean::{AllocatedBit, Boolean};
            let bits: Vec<Boolean> = bits
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    AllocatedBit::alloc(cs.namespace(|| format!("m {i}")), Some(*b))
                        .map(Boolean::Is)
                })
                .collect::<Result<_, _>>()
                .unwrap();
            bellpepper::gadgets::sha256::sha256(&mut cs, &bits).unwrap();
        }
    }
    cs.num_constraints()
}

/// A Poseidon workload: `hashes` hashes of one arity, each of freshly allocated inputs.
pub struct PoseidonCase<A: neptune::Arity<Fr>> {
    ours: cuzk_gadgets::poseidon::PoseidonConstants<Fr>,
    theirs: neptune::poseidon::PoseidonConstants<Fr, A>,
    preimage: Vec<Fr>,
}

impl<A: neptune::Arity<Fr>> PoseidonCase<A> {
    pub fn new() -> Self {
        let arity = A::to_usize();
        PoseidonCase {
            ours: cuzk_gadgets::poseidon::PoseidonConstants::new(arity).unwrap(),
            theirs: neptune::poseidon::PoseidonConstants::new(),
            preimage: (0..arity as u64)
                .map(|i| Fr::from(i * 0x9e37_79b9 + 7))
                .collect(),
        }
    }

    /// Synthesises the hashes; returns the number of constraints.
    pub fn synthesize(&self, side: Side, hashes: usize) -> usize {
        let mut cs = RecordingCs::<Fr>::new();
        for h in 0..hashes {
            let mut cs = cs.namespace(|| format!("hash {h}"));
            match side {
                Side::Ours => {
                    use cuzk_gadgets::num::AllocatedNum;
                    let nums = self
                        .preimage
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            AllocatedNum::alloc(cs.namespace(|| format!("in {i}")), || Ok(*v))
                        })
                        .collect::<Result<Vec<_>, _>>()
                        .unwrap();
                    cuzk_gadgets::poseidon::poseidon_hash(&mut cs, &nums, &self.ours).unwrap();
                }
                Side::Upstream => {
                    use bellpepper_core::num::AllocatedNum;
                    let nums = self
                        .preimage
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            AllocatedNum::alloc(cs.namespace(|| format!("in {i}")), || Ok(*v))
                        })
                        .collect::<Result<Vec<_>, _>>()
                        .unwrap();
                    neptune::circuit::poseidon_hash(&mut cs, nums, &self.theirs).unwrap();
                }
            }
        }
        cs.num_constraints()
    }
}
