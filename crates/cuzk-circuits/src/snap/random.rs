//! Random but well-formed sector updates, for benchmarks at sizes no test can seal (32 GiB,
//! 64 GiB) and for tests.
//!
//! The sector is cut into at most 1,024 aligned blocks (single nodes up to 32 KiB), each
//! with its own random old label and data element, so that a new replica label is constant
//! on a block too (blocks lie inside one rho block). Each tree then hashes up from its blocks
//! with every node openable, the challenges can be derived from the real comm_r_new, and the
//! request passes every check and satisfies the circuit.
//!
//! The values of one challenge's path repeat within its block, as an all-zero piece of real
//! data would (at most 516 times in a 32 GiB partition's witness); values do not repeat
//! across challenges, as they do not in an update of random data. That matters to the GPU:
//! sppark sums each bucket on one thread, and when every node held one label and one data
//! element, a 32 GiB partition's witness repeated one value 11,136 times (its 86 challenges'
//! apex-leaf picks), which made its Pippenger tails 4x slower than PoRep's (PERFORMANCE.md,
//! log #64).

use blstrs::Scalar as Fr;
use cuzk_gadgets::native::Count;
use cuzk_gadgets::por::{Sha256Hash, TreeHash};
use ff::{Field, PrimeField};
use rand_core::RngCore;

use super::vanilla::{ChallengeProofs, PartitionProof};
use super::{RegisteredUpdateProof, SnapRequest, SnapShape};
use crate::sparse::{fr32, BlockTree};
use crate::stacked::StackedShape;

/// The most blocks of constant values per tree: more cost more hashes (4 s at 32 GiB with
/// 1,024) for fewer repeats within a path.
const BLOCKS: u64 = 1 << 10;

/// A random update of `proof`'s sector size: every partition's vanilla proof.
pub fn update(proof: RegisteredUpdateProof, rng: &mut impl RngCore) -> SnapRequest {
    let shape = SnapShape::new(proof);
    let sector = shape.sector;
    let nodes = proof.nodes() as u64;
    let rho_block = 1u64 << (shape.challenge_bits() - proof.h());
    let block = rho_block.min((nodes / BLOCKS).max(1));
    let old: Vec<Fr> = (0..nodes / block).map(|_| Fr::random(&mut *rng)).collect();
    let data: Vec<Fr> = (0..nodes / block).map(|_| fr32(rng)).collect();
    let comm_c = Fr::random(&mut *rng);
    let poseidon = |children: &[Fr]| sector.tree_hash(children);
    let sha = |children: &[Fr]| Sha256Hash.native(&mut Count(0), children).expect("two");
    let old_leaf = |b: u64| old[b as usize];
    let data_leaf = |b: u64| data[b as usize];
    let mut tree_r_old = BlockTree::new(sector.tree_arities(), &poseidon, block, &old_leaf);
    let mut tree_d = BlockTree::new(vec![2; shape.challenge_bits()], &sha, block, &data_leaf);
    let comm_r_old = sector.pair.hash(&[comm_c, tree_r_old.root()]).expect("two");
    let comm_d_new = tree_d.root();
    let phi = shape.phi(comm_d_new, comm_r_old);
    let new_leaf = |b: u64| old[b as usize] + data[b as usize] * shape.rho(phi, b * block);
    let mut tree_r_new = BlockTree::new(sector.tree_arities(), &poseidon, block, &new_leaf);
    let comm_r_new = sector.pair.hash(&[comm_c, tree_r_new.root()]).expect("two");
    let vanilla_proofs = (0..shape.partitions())
        .map(|k| {
            let apex_level = shape.apex_depth();
            let apex_leaves = (0..shape.apex_leaves() as u64)
                .map(|i| {
                    tree_d
                        .node(apex_level, k as u64 * shape.apex_leaves() as u64 + i)
                        .to_repr()
                })
                .collect();
            let challenges = shape
                .challenge_nodes(comm_r_new, k)
                .into_iter()
                .map(|c| ChallengeProofs {
                    r_old: tree_r_old.proof(sector.tree, c),
                    d_new: tree_d.proof(StackedShape::COMM_D_TREE, c),
                    r_new: tree_r_new.proof(sector.tree, c),
                })
                .collect();
            PartitionProof {
                comm_c: comm_c.to_repr(),
                apex_leaves,
                challenges,
            }
            .to_bytes()
        })
        .collect();
    SnapRequest {
        registered_proof: proof.id(),
        comm_r_old: comm_r_old.to_repr().to_vec(),
        comm_r_new: comm_r_new.to_repr().to_vec(),
        comm_d_new: comm_d_new.to_repr().to_vec(),
        vanilla_proofs,
    }
}
