//! Oracle tests: cuzk's StackedDRG circuit against storage-proofs-porep's `StackedCircuit`.
//!
//! Two circuits are the same when [`R1csDigest`] gives the same counts, the same hash of every
//! row's terms (variable, index, coefficient, in order) and, with values, the same witness.

mod common;

use std::path::Path;

use bellpepper_core::Circuit;
use blstrs::Scalar as Fr;
use common::{pub_in, public_params, upstream, Compound};
use cuzk_circuits::{C1Input, RegisteredSealProof, SealShape, SectorIds, StackedShape, Synthesis};
use cuzk_gadgets::test_util::{Digest, R1csDigest};
use filecoin_hashers::sha256::Sha256Hasher;
use filecoin_proofs::constants::{
    SectorShape2KiB, SectorShape32GiB, SectorShape512MiB, SectorShape64GiB, SectorShape8MiB,
};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::types::VanillaSealProof;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::StackedDrg;

fn digest<C: Circuit<Fr>>(circuit: C, witness: bool) -> Digest {
    let mut cs = R1csDigest::new(witness);
    circuit.synthesize(&mut cs).expect("synthesis");
    cs.finish()
}

fn upstream_blank<Tree: 'static + MerkleTreeTrait>(proof: RegisteredSealProof) -> Digest {
    let pp = public_params::<Tree>(proof);
    let blank =
        <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, Sha256Hasher>, _>>::blank_circuit(
            &pp.vanilla_params,
        );
    digest(blank, false)
}

fn ours_blank(proof: RegisteredSealProof) -> Digest {
    let shape = SealShape::new(proof).unwrap();
    digest(shape.stacked().blank(), false)
}

/// Every interactive PoRep proof type: our shape table agrees with upstream's setup.
#[test]
fn shapes_match_upstream_setup() {
    use RegisteredSealProof::*;
    for proof in [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
    ] {
        let up = setup_params(&upstream(proof).as_v1_config()).unwrap();
        let ours = SealShape::new(proof).unwrap().stacked();
        assert_eq!(ours.nodes, up.nodes, "{proof:?} nodes");
        assert_eq!(ours.layers, up.num_layers, "{proof:?} layers");
        assert_eq!(
            ours.challenges,
            up.challenges.num_challenges_per_partition(),
            "{proof:?} challenges"
        );
        assert_eq!(ours.drg_parents, up.degree, "{proof:?} degree");
        assert_eq!(ours.exp_parents, up.expansion_degree, "{proof:?} expansion");
    }
}

#[test]
fn blank_circuit_is_upstreams_2kib() {
    let proof = RegisteredSealProof::StackedDrg2KiBV1_1;
    assert_eq!(ours_blank(proof), upstream_blank::<SectorShape2KiB>(proof));
}

#[test]
fn blank_circuit_is_upstreams_8mib() {
    let proof = RegisteredSealProof::StackedDrg8MiBV1_1;
    assert_eq!(ours_blank(proof), upstream_blank::<SectorShape8MiB>(proof));
}

#[test]
#[ignore = "about a minute of synthesis per circuit in release; run with --release -- --ignored"]
fn blank_circuit_is_upstreams_512mib() {
    let proof = RegisteredSealProof::StackedDrg512MiBV1_1;
    assert_eq!(
        ours_blank(proof),
        upstream_blank::<SectorShape512MiB>(proof)
    );
}

#[test]
#[ignore = "130 M constraints per circuit: minutes in release; run with --release -- --ignored"]
fn blank_circuit_is_upstreams_32gib() {
    let proof = RegisteredSealProof::StackedDrg32GiBV1_1;
    let ours = ours_blank(proof);
    // FACTS.md's counts for one 32 GiB partition.
    assert_eq!(
        (ours.constraints, ours.inputs, ours.aux),
        (130_278_541, 328, 130_169_893)
    );
    assert_eq!(ours, upstream_blank::<SectorShape32GiB>(proof));
}

#[test]
#[ignore = "130 M constraints per circuit: minutes in release; run with --release -- --ignored"]
fn blank_circuit_is_upstreams_64gib() {
    let proof = RegisteredSealProof::StackedDrg64GiBV1_1;
    assert_eq!(ours_blank(proof), upstream_blank::<SectorShape64GiB>(proof));
}

fn fixture(size: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/porep")
        .join(size)
        .join("c1.json");
    std::fs::read(path).unwrap()
}

/// The same rows and the same witness on a real sealed sector, and public inputs that the
/// circuit's own input variables agree with.
fn witness_is_upstreams<Tree: 'static + MerkleTreeTrait>(size: &str) {
    let bytes = fixture(size);
    let ours_c1 = C1Input::parse(&bytes).unwrap();
    let shape = SealShape::new(ours_c1.registered_proof).unwrap();

    let c1: SealCommitPhase1Output = serde_json::from_slice(&bytes).unwrap();
    let vanilla: Vec<Vec<VanillaSealProof<Tree>>> = c1.vanilla_proofs.try_into().unwrap();
    let pub_in = pub_in::<Tree>(&SectorIds::of(&ours_c1), None);
    let pp = public_params::<Tree>(ours_c1.registered_proof);
    let witnesses = shape.witnesses(&ours_c1, Synthesis::Full).unwrap();
    for (k, proofs) in vanilla.iter().enumerate() {
        let theirs =
            Compound::<Tree>::circuit(&pub_in, (), proofs, &pp.vanilla_params, Some(k)).unwrap();
        let ours = shape.partition_circuit(&ours_c1, k).unwrap();
        assert_eq!(
            digest(ours, true),
            digest(theirs, true),
            "{size} partition {k}"
        );
        let expected =
            Compound::<Tree>::generate_public_inputs(&pub_in, &pp.vanilla_params, Some(k)).unwrap();
        assert_eq!(witnesses[k].public_inputs, expected);
        assert_eq!(witnesses[k].witness.input[1..], expected[..]);
    }
}

#[test]
fn witness_is_upstreams_2kib() {
    witness_is_upstreams::<SectorShape2KiB>("2KiB");
}

#[test]
fn witness_is_upstreams_8mib() {
    witness_is_upstreams::<SectorShape8MiB>("8MiB");
}

#[test]
fn blank_shape_has_the_published_size() {
    // FACTS.md: one 2 KiB partition has 2,687,921 constraints, 40 inputs with ONE, 2,685,673 aux.
    let d = ours_blank(RegisteredSealProof::StackedDrg2KiBV1_1);
    assert_eq!((d.constraints, d.inputs, d.aux), (2_687_921, 40, 2_685_673));
    let shape = StackedShape::for_sector_size(32 << 30).unwrap();
    assert_eq!((shape.tree_levels(), shape.comm_d_levels()), (10, 30));
}

/// Random well-formed C1 outputs (`C1Input::random`) in upstream's JSON format: upstream's own
/// parser reads them into its typed vanilla proofs, ours reads them too, and the partition
/// circuits both build are the same rows with the same witness.
fn random_c1_is_read_alike<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
    partitions: &[usize],
) {
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(proof as u64);
    let json = serde_json::to_vec(&C1Input::random(proof, &mut rng)).unwrap();
    let ours_c1 = C1Input::parse(&json).unwrap();
    let shape = SealShape::new(proof).unwrap();
    let c1: SealCommitPhase1Output = serde_json::from_slice(&json).unwrap();
    let vanilla: Vec<Vec<VanillaSealProof<Tree>>> = c1.vanilla_proofs.try_into().unwrap();
    assert_eq!(vanilla.len(), proof.partitions());
    let pp = public_params::<Tree>(proof);
    let pub_in = pub_in::<Tree>(&SectorIds::of(&ours_c1), None);
    for &k in partitions {
        let theirs =
            Compound::<Tree>::circuit(&pub_in, (), &vanilla[k], &pp.vanilla_params, Some(k))
                .unwrap();
        let ours = shape.partition_circuit(&ours_c1, k).unwrap();
        assert_eq!(
            digest(ours, true),
            digest(theirs, true),
            "{proof:?} partition {k}"
        );
    }
}

#[test]
fn random_c1_is_read_alike_small_sizes() {
    use RegisteredSealProof::*;
    random_c1_is_read_alike::<SectorShape2KiB>(StackedDrg2KiBV1, &[0]);
    random_c1_is_read_alike::<SectorShape2KiB>(StackedDrg2KiBV1_1_Feat_SyntheticPoRep, &[0]);
    random_c1_is_read_alike::<SectorShape8MiB>(StackedDrg8MiBV1_1, &[0]);
}

#[test]
fn random_c1_of_large_sectors_parses_alike() {
    use RegisteredSealProof::*;
    random_c1_is_read_alike::<SectorShape32GiB>(StackedDrg32GiBV1_1, &[]);
    random_c1_is_read_alike::<SectorShape64GiB>(StackedDrg64GiBV1_1_Feat_SyntheticPoRep, &[]);
}

#[test]
#[ignore = "one 32 GiB / 64 GiB partition synthesised with witness on both sides: minutes in release"]
fn random_c1_is_read_alike_large_sectors() {
    use RegisteredSealProof::*;
    random_c1_is_read_alike::<SectorShape32GiB>(StackedDrg32GiBV1_1, &[9]);
    random_c1_is_read_alike::<SectorShape64GiB>(StackedDrg64GiBV1, &[0]);
}
