//! The native witness generator against witness-only synthesis of the same circuit: for random
//! partitions of every interactive PoRep shape (random challenge, leaves, siblings, positions,
//! labels and ids), `StackedCircuit::native_witness` returns exactly the inputs and aux values
//! synthesis assigns. The bundled sectors are covered in `porep_pce.rs`, where the native path
//! also matches full synthesis.

use cuzk_circuits::StackedShape;
use cuzk_pce::WitnessCs;
use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;

fn check(bytes: u64, seed: u64) -> Result<(), TestCaseError> {
    let shape = StackedShape::for_sector_size(bytes).unwrap();
    let circuit = shape.synthetic(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    let (input, aux) = circuit.native_witness().unwrap();
    let (want_input, want_aux) = WitnessCs::assign(circuit).unwrap();
    prop_assert_eq!(input, want_input);
    prop_assert_eq!(aux.len(), want_aux.len());
    let first = aux.iter().zip(&want_aux).position(|(a, b)| a != b);
    prop_assert_eq!(first, None, "first differing aux value");
    prop_assert_eq!(shape.witness_layout().unwrap().aux(), aux.len());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn native_witness_is_synthesis_witness(
        bytes in prop::sample::select(vec![2u64 << 10, 8 << 20, 512 << 20]),
        seed in any::<u64>(),
    ) {
        check(bytes, seed)?;
    }
}

/// A wrong challenge count is a typed error, not a panic.
#[test]
fn malformed_partition_is_an_error() {
    let shape = StackedShape::for_sector_size(2 << 10).unwrap();
    let mut circuit = shape.synthetic(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
    circuit.proofs.pop();
    assert!(circuit.native_witness().is_err());
    let mut circuit = shape.synthetic(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
    circuit.proofs[1].comm_c_path[0].siblings[3] = None;
    assert!(circuit.native_witness().is_err());
}

#[test]
#[ignore = "slow: witness-only synthesis of a 130M-variable 32 GiB partition (~15 s in release); run with --release --ignored"]
fn native_witness_is_synthesis_witness_32gib() {
    check(32 << 30, 32).unwrap();
}

#[test]
#[ignore = "slow: a 64 GiB partition, 8-8-2 trees (~15 s in release); run with --release --ignored"]
fn native_witness_is_synthesis_witness_64gib() {
    check(64 << 30, 64).unwrap();
}
