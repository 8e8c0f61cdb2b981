//! Oracle tests: proof types, the graph, challenges and public inputs against upstream
//! (filecoin-proofs-api, storage-proofs-porep), which the verifier on chain uses.

mod common;

use blstrs::Scalar as Fr;
use common::{pub_in, public_params, upstream, Compound};
use cuzk_circuits::registry::{ApiVersion, ChallengeKind};
use cuzk_circuits::{RegisteredSealProof, SealShape, SectorIds};
use ff::PrimeField;
use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_proofs::constants::{
    SectorShape2KiB, SectorShape32GiB, SectorShape64GiB, SectorShape8MiB,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use storage_proofs_core::api_version::ApiVersion as UpApi;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::drgraph::{Graph, BASE_DEGREE};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::{StackedBucketGraph, EXP_DEGREE};

#[test]
fn proof_types_match_upstream() {
    for proof in RegisteredSealProof::ALL {
        let up = upstream(proof);
        assert_eq!(
            serde_json::to_string(&proof).unwrap(),
            serde_json::to_string(&up).unwrap()
        );
        assert_eq!(
            proof.sector_size(),
            u64::from(up.sector_size()),
            "{proof:?}"
        );
        let api = match up.version() {
            UpApi::V1_0_0 => ApiVersion::V1_0_0,
            UpApi::V1_1_0 => ApiVersion::V1_1_0,
            UpApi::V1_2_0 => ApiVersion::V1_2_0,
        };
        assert_eq!(proof.api_version(), api, "{proof:?}");
        assert_eq!(
            proof.circuit_identifier(),
            up.circuit_identifier().unwrap(),
            "{proof:?}"
        );
        if proof.challenge_kind() == ChallengeKind::NonInteractive {
            continue;
        }
        let config = up.as_v1_config();
        assert_eq!(
            proof.partitions(),
            usize::from(config.partitions),
            "{proof:?}"
        );
        assert_eq!(proof.porep_id(), config.porep_id, "{proof:?}");
    }
}

fn up_api(proof: RegisteredSealProof) -> UpApi {
    upstream(proof).version()
}

/// Every node of the small sectors, and a sample (with both ends) of the large ones.
#[test]
fn graph_parents_match_upstream() {
    use RegisteredSealProof::*;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for proof in [
        StackedDrg2KiBV1,
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg32GiBV1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
    ] {
        let ours = SealShape::new(proof).unwrap().graph();
        let nodes = ours.nodes();
        let theirs = StackedBucketGraph::<PoseidonHasher>::new_stacked(
            nodes as usize,
            BASE_DEGREE,
            EXP_DEGREE,
            proof.porep_id(),
            up_api(proof),
        )
        .unwrap();
        let sample: Vec<u32> = if nodes <= 1 << 18 {
            (0..nodes).collect()
        } else {
            (0..4)
                .chain(nodes - 4..nodes)
                .chain((0..4000).map(|_| rng.gen_range(0..nodes)))
                .collect()
        };
        for node in sample {
            let mut up = [0u32; BASE_DEGREE + EXP_DEGREE];
            theirs.parents(node as usize, &mut up).unwrap();
            assert_eq!(
                ours.drg_parents(node)[..],
                up[..BASE_DEGREE],
                "{proof:?} {node}"
            );
            assert_eq!(
                ours.exp_parents(node)[..],
                up[BASE_DEGREE..],
                "{proof:?} {node}"
            );
        }
    }
}

fn upstream_inputs<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
    ids: &SectorIds,
    k: usize,
) -> Vec<Fr> {
    let pp = public_params::<Tree>(proof);
    Compound::<Tree>::generate_public_inputs(
        &pub_in::<Tree>(ids, Some(k)),
        &pp.vanilla_params,
        Some(k),
    )
    .unwrap()
}

/// A random canonical field element's bytes.
fn element() -> impl Strategy<Value = [u8; 32]> {
    any::<[u8; 32]>().prop_map(|mut b| {
        b[31] &= 0x3f;
        b[0] |= 1; // never all zero
        assert!(bool::from(Fr::from_repr(b).is_some()));
        b
    })
}

fn ids() -> impl Strategy<Value = SectorIds> {
    (element(), element(), element(), element()).prop_map(|(replica_id, comm_d, comm_r, seed)| {
        SectorIds {
            replica_id,
            comm_d,
            comm_r,
            seed,
        }
    })
}

fn check(proof: RegisteredSealProof, ids: &SectorIds, k: usize) {
    let shape = SealShape::new(proof).unwrap();
    let ours = shape.public_inputs(ids, k).unwrap();
    let theirs = match proof.sector_size() {
        2048 => upstream_inputs::<SectorShape2KiB>(proof, ids, k),
        0x80_0000 => upstream_inputs::<SectorShape8MiB>(proof, ids, k),
        0x8_0000_0000 => upstream_inputs::<SectorShape32GiB>(proof, ids, k),
        _ => upstream_inputs::<SectorShape64GiB>(proof, ids, k),
    };
    assert_eq!(ours, theirs, "{proof:?} partition {k}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn public_inputs_match_upstream(ids in ids(), k in 0..10usize) {
        use RegisteredSealProof::*;
        for proof in [
            StackedDrg2KiBV1,
            StackedDrg2KiBV1_1,
            StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
            StackedDrg8MiBV1_1,
            StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        ] {
            check(proof, &ids, 0);
        }
        for proof in [
            StackedDrg32GiBV1,
            StackedDrg32GiBV1_1,
            StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
            StackedDrg64GiBV1_1,
        ] {
            check(proof, &ids, k);
        }
    }
}
