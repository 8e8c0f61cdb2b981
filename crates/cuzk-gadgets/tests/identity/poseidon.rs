use std::sync::LazyLock;

use bellpepper_core::num::AllocatedNum as UpNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use cuzk_gadgets::num::AllocatedNum;
use cuzk_gadgets::poseidon::{poseidon_hash, PoseidonConstants};
use neptune::poseidon::{Poseidon, PoseidonConstants as Up};
use proptest::prelude::*;
use typenum::{U11, U2, U4, U8};

use crate::harness::*;

/// Ours and neptune's constants for one arity, built once.
struct Arity<A: neptune::Arity<Fr>> {
    ours: LazyLock<PoseidonConstants<Fr>>,
    theirs: LazyLock<Up<Fr, A>>,
}

macro_rules! arity {
    ($name:ident, $n:expr, $u:ty) => {
        static $name: Arity<$u> = Arity {
            ours: LazyLock::new(|| PoseidonConstants::new($n).unwrap()),
            theirs: LazyLock::new(Up::new),
        };
    };
}
arity!(A2, 2, U2);
arity!(A4, 4, U4);
arity!(A8, 8, U8);
arity!(A11, 11, U11);

/// SnapDeals' randomness hash: arity 2 with neptune's custom domain tag 1.
static GEN_RANDOMNESS: Arity<U2> = Arity {
    ours: LazyLock::new(|| PoseidonConstants::custom(2, 1).unwrap()),
    theirs: LazyLock::new(|| {
        use neptune::hash_type::{CType, HashType};
        Up::new_with_strength_and_type(
            neptune::Strength::Standard,
            HashType::Custom(CType::Arbitrary(1)),
        )
    }),
};

impl<A: neptune::Arity<Fr>> Arity<A> {
    fn check_native(&self, preimage: &[Fr]) {
        let theirs = Poseidon::new_with_preimage(preimage, &self.theirs).hash();
        assert_eq!(self.ours.hash(preimage).unwrap(), theirs);
        assert_eq!(self.ours.full_rounds(), self.theirs.full_rounds);
        assert_eq!(self.ours.partial_rounds(), self.theirs.partial_rounds);
    }

    fn check_circuit(&self, preimage: &[Option<Fr>]) {
        let value = |v: Option<Fr>| move || v.ok_or(SynthesisError::AssignmentMissing);
        let (o, t) = compare(
            |cs| {
                let nums = preimage
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        AllocatedNum::alloc(cs.namespace(|| format!("in {i}")), value(*v))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                poseidon_hash(cs, &nums, &self.ours)
            },
            |cs| {
                let nums = preimage
                    .iter()
                    .enumerate()
                    .map(|(i, v)| UpNum::alloc(cs.namespace(|| format!("in {i}")), value(*v)))
                    .collect::<Result<Vec<_>, _>>()?;
                neptune::circuit::poseidon_hash(cs, nums, &self.theirs)
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            assert_eq!(o.get_value(), t.get_value());
            let known: Vec<Fr> = preimage.iter().map(|v| v.unwrap()).collect();
            assert_eq!(o.get_value(), Some(self.ours.hash(&known).unwrap()));
        }
    }
}

fn preimage(n: usize) -> impl Strategy<Value = Vec<Fr>> {
    prop::collection::vec(scalar(), n)
}

fn maybe_preimage(n: usize) -> impl Strategy<Value = Vec<Option<Fr>>> {
    prop::collection::vec(prop::option::weighted(0.98, scalar()), n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn native(p2 in preimage(2), p4 in preimage(4), p8 in preimage(8), p11 in preimage(11)) {
        A2.check_native(&p2);
        A4.check_native(&p4);
        A8.check_native(&p8);
        A11.check_native(&p11);
        GEN_RANDOMNESS.check_native(&p2);
    }

    #[test]
    fn circuit(p2 in maybe_preimage(2), p4 in maybe_preimage(4), p8 in maybe_preimage(8), p11 in maybe_preimage(11)) {
        A2.check_circuit(&p2);
        A4.check_circuit(&p4);
        A8.check_circuit(&p8);
        A11.check_circuit(&p11);
        GEN_RANDOMNESS.check_circuit(&p2);
    }
}

#[test]
fn rejects_bad_arities_and_lengths() {
    assert!(PoseidonConstants::<Fr>::new(3).is_err());
    assert!(PoseidonConstants::<Fr>::custom(2, 0).is_err());
    assert!(PoseidonConstants::<Fr>::custom(2, 257).is_err());
    assert!(A2.ours.hash(&[Fr::from(1)]).is_err());
    let mut cs = cuzk_gadgets::test_util::RecordingCs::<Fr>::new();
    assert!(poseidon_hash(&mut cs, &[], &A2.ours).is_err());
}
