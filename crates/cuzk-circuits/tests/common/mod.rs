//! Upstream (storage-proofs-porep, filecoin-proofs) as the oracle the circuit tests compare
//! against: proof types, public parameters and public inputs in upstream's own types.

#![allow(dead_code)] // each test binary uses its own part of this module

use cuzk_circuits::{RegisteredSealProof, SectorIds};
use filecoin_hashers::sha256::Sha256Hasher;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs_api::RegisteredSealProof as Upstream;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::{self, StackedCompound, StackedDrg};

pub type Compound<Tree> = StackedCompound<Tree, Sha256Hasher>;

/// Upstream's enum value of the same proof type (by its serde name).
pub fn upstream(proof: RegisteredSealProof) -> Upstream {
    serde_json::from_value(serde_json::to_value(proof).unwrap()).unwrap()
}

pub fn public_params<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
) -> compound_proof::PublicParams<'static, StackedDrg<'static, Tree, Sha256Hasher>> {
    let config = upstream(proof).as_v1_config();
    let setup = compound_proof::SetupParams {
        vanilla_params: setup_params(&config).unwrap(),
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, Sha256Hasher>, _>>::setup(&setup).unwrap()
}

/// Upstream's public inputs value for these sector ids.
pub fn pub_in<Tree: 'static + MerkleTreeTrait>(
    ids: &SectorIds,
    k: Option<usize>,
) -> stacked::PublicInputs<<Tree::Hasher as Hasher>::Domain, <Sha256Hasher as Hasher>::Domain> {
    stacked::PublicInputs {
        replica_id: <Tree::Hasher as Hasher>::Domain::try_from_bytes(&ids.replica_id).unwrap(),
        tau: Some(stacked::Tau {
            comm_d: <Sha256Hasher as Hasher>::Domain::try_from_bytes(&ids.comm_d).unwrap(),
            comm_r: <Tree::Hasher as Hasher>::Domain::try_from_bytes(&ids.comm_r).unwrap(),
        }),
        k,
        seed: Some(ids.seed),
    }
}
