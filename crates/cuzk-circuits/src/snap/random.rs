//! Random but well-formed sector updates, for benchmarks at sizes no test can seal (32 GiB,
//! 64 GiB) and for tests.
//!
//! The old replica holds one random label everywhere and the new data one random element
//! everywhere, so a new replica label depends only on its node's rho block (the high `h` bits
//! of its index): every subtree inside one block is uniform. Each tree then hashes up in a few
//! thousand hashes with every node openable, the challenges can be derived from the real
//! comm_r_new, and the request passes every check and satisfies the circuit. Only the values'
//! repetition differs from a real update, which no prover cost depends on.

use blstrs::Scalar as Fr;
use cuzk_gadgets::native::Count;
use cuzk_gadgets::por::{Sha256Hash, TreeHash};
use ff::{Field, PrimeField};
use rand_core::RngCore;

use super::vanilla::{ChallengeProofs, PartitionProof};
use super::{RegisteredUpdateProof, SnapRequest, SnapShape};
use crate::sparse::{fr32, BlockTree};
use crate::stacked::StackedShape;

/// A random update of `proof`'s sector size: every partition's vanilla proof.
pub fn update(proof: RegisteredUpdateProof, rng: &mut impl RngCore) -> SnapRequest {
    let shape = SnapShape::new(proof);
    let sector = shape.sector;
    let (old, data, comm_c) = (Fr::random(&mut *rng), fr32(rng), Fr::random(&mut *rng));
    let poseidon = |children: &[Fr]| sector.tree_hash(children);
    let sha = |children: &[Fr]| Sha256Hash.native(&mut Count(0), children).expect("two");
    let nodes = proof.nodes() as u64;
    let old_leaf = |_| old;
    let data_leaf = |_| data;
    let mut tree_r_old = BlockTree::new(sector.tree_arities(), &poseidon, nodes, &old_leaf);
    let mut tree_d = BlockTree::new(vec![2; shape.challenge_bits()], &sha, nodes, &data_leaf);
    let comm_r_old = sector.pair.hash(&[comm_c, tree_r_old.root()]).expect("two");
    let comm_d_new = tree_d.root();
    let phi = shape.phi(comm_d_new, comm_r_old);
    let block = 1u64 << (shape.challenge_bits() - proof.h());
    let new_leaf = |b: u64| old + data * shape.rho(phi, b * block);
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
