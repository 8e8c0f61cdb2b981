//! Shared inputs and the two-system comparison the identity tests are built on.

use bellpepper::gadgets::boolean as up;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use cuzk_gadgets::boolean::{AllocatedBit, Boolean};
use cuzk_gadgets::test_util::{assert_same_r1cs, RecordingCs};
use cuzk_gadgets::uint32::UInt32;
use proptest::prelude::*;

/// Synthesises `ours` and `theirs` twice, once proving-style and once shape-only, and asserts
/// that each pair records the same R1CS and witness and fails (if at all) the same way. (Whether
/// the witness satisfies the rows is then the same on both sides too.) Returns the proving-style
/// results.
pub fn compare<T, U>(
    ours: impl Fn(&mut RecordingCs<Fr>) -> Result<T, SynthesisError>,
    theirs: impl Fn(&mut RecordingCs<Fr>) -> Result<U, SynthesisError>,
) -> (Result<T, SynthesisError>, Result<U, SynthesisError>) {
    let run = |mut o: RecordingCs<Fr>, mut t: RecordingCs<Fr>| {
        let ro = ours(&mut o);
        let rt = theirs(&mut t);
        match (&ro, &rt) {
            (Ok(_), Ok(_)) => {}
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "errors differ"),
            (a, b) => panic!(
                "one side failed: ours {:?}, theirs {:?}",
                a.as_ref().err(),
                b.as_ref().err()
            ),
        }
        assert_same_r1cs(&o, &t);
        (ro, rt)
    };
    let _ = run(RecordingCs::shape_only(), RecordingCs::shape_only());
    run(RecordingCs::new(), RecordingCs::new())
}

/// How one input bit is made: a constant, or an allocated bit (value possibly unknown) used
/// as is or negated.
#[derive(Clone, Copy, Debug)]
pub enum BitSpec {
    Const(bool),
    Is(Option<bool>),
    Not(Option<bool>),
}

pub fn known_bit() -> impl Strategy<Value = Option<bool>> {
    prop::option::weighted(0.97, any::<bool>())
}

pub fn bit_spec() -> impl Strategy<Value = BitSpec> {
    prop_oneof![
        1 => any::<bool>().prop_map(BitSpec::Const),
        3 => known_bit().prop_map(BitSpec::Is),
        2 => known_bit().prop_map(BitSpec::Not),
    ]
}

type Res<T> = Result<T, SynthesisError>;

pub fn ours_bit<CS: ConstraintSystem<Fr>>(cs: &mut CS, i: usize, s: BitSpec) -> Res<Boolean> {
    let mut alloc = |v| AllocatedBit::alloc(cs.namespace(|| format!("in {i}")), v);
    Ok(match s {
        BitSpec::Const(b) => Boolean::Constant(b),
        BitSpec::Is(v) => Boolean::Is(alloc(v)?),
        BitSpec::Not(v) => Boolean::Not(alloc(v)?),
    })
}

pub fn theirs_bit<CS: ConstraintSystem<Fr>>(cs: &mut CS, i: usize, s: BitSpec) -> Res<up::Boolean> {
    let mut alloc = |v| up::AllocatedBit::alloc(cs.namespace(|| format!("in {i}")), v);
    Ok(match s {
        BitSpec::Const(b) => up::Boolean::Constant(b),
        BitSpec::Is(v) => up::Boolean::Is(alloc(v)?),
        BitSpec::Not(v) => up::Boolean::Not(alloc(v)?),
    })
}

pub fn ours_bits<CS: ConstraintSystem<Fr>>(cs: &mut CS, specs: &[BitSpec]) -> Res<Vec<Boolean>> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| ours_bit(cs, i, *s))
        .collect()
}

pub fn theirs_bits<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    specs: &[BitSpec],
) -> Res<Vec<up::Boolean>> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| theirs_bit(cs, i, *s))
        .collect()
}

pub fn values(bits: &[Boolean]) -> Vec<Option<bool>> {
    bits.iter().map(Boolean::get_value).collect()
}

pub fn up_values(bits: &[up::Boolean]) -> Vec<Option<bool>> {
    bits.iter().map(up::Boolean::get_value).collect()
}

/// How one 32-bit word is made.
#[derive(Clone, Debug)]
pub enum WordSpec {
    Const(u32),
    Alloc(Option<u32>),
    Bits(Vec<BitSpec>),
}

pub fn word_spec() -> impl Strategy<Value = WordSpec> {
    prop_oneof![
        1 => any::<u32>().prop_map(WordSpec::Const),
        2 => prop::option::weighted(0.97, any::<u32>()).prop_map(WordSpec::Alloc),
        2 => prop::collection::vec(bit_spec(), 32).prop_map(WordSpec::Bits),
    ]
}

pub fn ours_word<CS: ConstraintSystem<Fr>>(cs: &mut CS, i: usize, s: &WordSpec) -> Res<UInt32> {
    let mut cs = cs.namespace(|| format!("word {i}"));
    match s {
        WordSpec::Const(v) => Ok(UInt32::constant(*v)),
        WordSpec::Alloc(v) => UInt32::alloc(cs, *v),
        WordSpec::Bits(b) => UInt32::from_bits(&ours_bits(&mut cs, b)?),
    }
}

pub fn theirs_word<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    i: usize,
    s: &WordSpec,
) -> Res<bellpepper::gadgets::uint32::UInt32> {
    use bellpepper::gadgets::uint32::UInt32 as Up;
    let mut cs = cs.namespace(|| format!("word {i}"));
    match s {
        WordSpec::Const(v) => Ok(Up::constant(*v)),
        WordSpec::Alloc(v) => Up::alloc(cs, *v),
        WordSpec::Bits(b) => Ok(Up::from_bits(&theirs_bits(&mut cs, b)?)),
    }
}

/// Field elements that include zero, small values and full-width ones.
pub fn scalar() -> impl Strategy<Value = Fr> {
    prop_oneof![
        1 => Just(Fr::from(0)),
        1 => (0u64..4).prop_map(Fr::from),
        1 => Just(-Fr::from(1)),
        4 => any::<[u64; 3]>().prop_map(|[a, b, c]| Fr::from(a) * Fr::from(b) * Fr::from(b) + Fr::from(c)),
    ]
}
