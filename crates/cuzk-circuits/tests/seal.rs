//! Sparsely sealed random sectors (`cuzk_circuits::seal`): the replica id is upstream's, every
//! check passes at every size, and the circuit is satisfied. (That upstream's `verify_seal`
//! accepts their proofs is the daemon's `random_sealed_sectors_prove_and_upstream_verifies`.)

use bellpepper_core::Circuit;
use cuzk_circuits::seal::{random_sector, replica_id};
use cuzk_circuits::{PorepError, RegisteredSealProof, SealShape};
use cuzk_gadgets::test_util::RecordingCs;
use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::Domain;
use rand::{Rng, SeedableRng};
use storage_proofs_porep::stacked::generate_replica_id;

#[test]
fn replica_id_is_upstreams() {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    for proof in [
        RegisteredSealProof::StackedDrg2KiBV1_1,
        RegisteredSealProof::StackedDrg32GiBV1_1,
        RegisteredSealProof::StackedDrg64GiBV1,
    ] {
        for _ in 0..20 {
            let (prover, ticket, comm_d): ([u8; 32], [u8; 32], [u8; 32]) =
                (rng.gen(), rng.gen(), rng.gen());
            let sector: u64 = rng.gen();
            let want = generate_replica_id::<PoseidonHasher, _>(
                &prover,
                sector,
                &ticket,
                comm_d,
                &proof.porep_id(),
            );
            assert_eq!(
                replica_id(proof, &prover, sector, &ticket, &comm_d).to_vec(),
                want.into_bytes(),
                "{proof:?}"
            );
        }
    }
}

/// Every size passes every check (challenges the seed's, paths to one root each); at 2 KiB and
/// 8 MiB the last partition's circuit is satisfied.
#[test]
fn random_sectors_pass_every_check_and_satisfy_the_circuit() {
    use RegisteredSealProof::*;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
    for proof in [
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
    ] {
        let (c1, info) = random_sector(proof, &mut rng).unwrap();
        let shape = SealShape::new(proof).unwrap();
        shape
            .check(&c1)
            .unwrap_or_else(|e| panic!("{proof:?}: {e}"));
        assert_eq!((info.comm_r, info.comm_d), (c1.comm_r, c1.comm_d));
        let json = serde_json::to_vec(&c1).unwrap();
        assert!(cuzk_circuits::C1Input::parse(&json).is_ok());
        if shape.sector_size() <= 8 << 20 {
            let k = shape.partitions() - 1;
            let mut cs = RecordingCs::new();
            let circuit = shape.partition_circuit(&c1, k).unwrap();
            circuit.synthesize(&mut cs).unwrap();
            assert_eq!(cs.which_is_unsatisfied(), None, "{proof:?}");
        }
    }
}

#[test]
fn synthetic_porep_is_refused() {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
    let r = random_sector(
        RegisteredSealProof::StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        &mut rng,
    );
    assert!(matches!(r, Err(PorepError::Unsupported(..))));
}
