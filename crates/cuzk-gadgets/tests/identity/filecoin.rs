//! The Filecoin helpers and Merkle-path gadgets against storage-proofs-core and filecoin-hashers.

use std::sync::LazyLock;

use bellpepper_core::boolean::AllocatedBit as UpBit;
use bellpepper_core::num::AllocatedNum as UpNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use cuzk_gadgets::boolean::{xor_with_key, AllocatedBit};
use cuzk_gadgets::num::AllocatedNum;
use cuzk_gadgets::por::{self, PathElement, Root, Sha256Hash, TreeHash, TreeShape};
use cuzk_gadgets::poseidon::PoseidonConstants;
use cuzk_gadgets::uint64::UInt64;
use cuzk_gadgets::{constraint, insertion};
use filecoin_hashers::poseidon::{PoseidonFunction, PoseidonHasher};
use filecoin_hashers::sha256::{Sha256Function, Sha256Hasher};
use filecoin_hashers::HashFunction;
use proptest::prelude::*;
use storage_proofs_core::gadgets as up;
use storage_proofs_core::merkle::{DiskTree, MerkleTreeTrait};
use typenum::{U0, U2, U8};

use crate::harness::*;

type Res<T> = Result<T, SynthesisError>;

fn maybe_scalar() -> impl Strategy<Value = Option<Fr>> {
    prop::option::weighted(0.97, scalar())
}

fn missing(v: Option<Fr>) -> impl FnOnce() -> Res<Fr> {
    move || v.ok_or(SynthesisError::AssignmentMissing)
}

fn ours_nums<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    vals: &[Option<Fr>],
) -> Res<Vec<AllocatedNum<Fr>>> {
    vals.iter()
        .enumerate()
        .map(|(i, v)| AllocatedNum::alloc(cs.namespace(|| format!("n {i}")), missing(*v)))
        .collect()
}

fn theirs_nums<CS: ConstraintSystem<Fr>>(cs: &mut CS, vals: &[Option<Fr>]) -> Res<Vec<UpNum<Fr>>> {
    vals.iter()
        .enumerate()
        .map(|(i, v)| UpNum::alloc(cs.namespace(|| format!("n {i}")), missing(*v)))
        .collect()
}

static POSEIDON: LazyLock<Vec<PoseidonConstants<Fr>>> =
    LazyLock::new(|| [2, 8].map(|a| PoseidonConstants::new(a).unwrap()).to_vec());

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arithmetic(op in 0..7usize, vals in prop::collection::vec(maybe_scalar(), 3)) {
        let (o, t) = compare(
            |cs| {
                let n = ours_nums(cs, &vals)?;
                let mut cs = cs.namespace(|| "op");
                Ok(match op {
                    0 => { constraint::equal(&mut cs, || "eq", &n[0], &n[1]); None }
                    1 => { constraint::sum(&mut cs, || "sum", &n[0], &n[1], &n[2]); None }
                    2 => { constraint::difference(&mut cs, || "diff", &n[0], &n[1], &n[2]); None }
                    3 => constraint::add(cs, &n[0], &n[1])?.get_value(),
                    4 => constraint::sub(cs, &n[0], &n[1])?.get_value(),
                    5 => constraint::encode(cs, &n[0], &n[1])?.get_value(),
                    _ => constraint::decode(cs, &n[0], &n[1])?.get_value(),
                })
            },
            |cs| {
                let n = theirs_nums(cs, &vals)?;
                let mut cs = cs.namespace(|| "op");
                Ok(match op {
                    0 => { up::constraint::equal(&mut cs, || "eq", &n[0], &n[1]); None }
                    1 => { up::constraint::sum(&mut cs, || "sum", &n[0], &n[1], &n[2]); None }
                    2 => { up::constraint::difference(&mut cs, || "diff", &n[0], &n[1], &n[2]); None }
                    3 => up::constraint::add(cs, &n[0], &n[1])?.get_value(),
                    4 => up::constraint::sub(cs, &n[0], &n[1])?.get_value(),
                    5 => up::encode::encode(cs, &n[0], &n[1])?.get_value(),
                    _ => up::encode::decode(cs, &n[0], &n[1])?.get_value(),
                })
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(o, t);
        }
    }

    #[test]
    fn xor(key in prop::collection::vec(bit_spec(), 256), input in prop::collection::vec(bit_spec(), 0..600)) {
        let (o, t) = compare(
            |cs| {
                let (k, i) = (ours_bits(cs, &key)?, ours_bits(cs, &input)?);
                xor_with_key(cs, &k, &i)
            },
            |cs| {
                let (k, i) = (theirs_bits(cs, &key)?, theirs_bits(cs, &input)?);
                up::xor::xor(cs, &k, &i)
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(values(&o), up_values(&t));
        }
    }

    #[test]
    fn uint64(value in prop::option::weighted(0.95, any::<u64>()), constant in any::<bool>()) {
        let (o, t) = compare(
            |cs| {
                let w = if constant { UInt64::constant(value.unwrap_or(7)) } else { UInt64::alloc(&mut *cs, value)? };
                w.pack_into_input(&mut *cs)?;
                let be = UInt64::from_bits_be(&w.to_bits_be())?;
                Ok((be.get_value(), values(&w.to_bits_le())))
            },
            |cs| {
                let w = if constant { up::uint64::UInt64::constant(value.unwrap_or(7)) } else { up::uint64::UInt64::alloc(&mut *cs, value)? };
                w.pack_into_input(&mut *cs)?;
                let be = up::uint64::UInt64::from_bits_be(&w.to_bits_be());
                Ok((be.get_value(), up_values(&w.to_bits_le())))
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(o, t);
        }
    }

    /// Insertion at arities 2, 4, 8 (scheduled networks) and 16 (generic), and select.
    #[test]
    fn insert(log in 1..5usize, vals in prop::collection::vec(maybe_scalar(), 16), index in 0..16usize, selecting in any::<bool>(), negate in any::<bool>()) {
        let size = 1 << log;
        let bits: Vec<BitSpec> = (0..log).map(|i| {
            let b = Some((index >> i) & 1 == 1);
            // Only the arity-8 network's two low bits must be plain allocated bits.
            if negate && i == log - 1 { BitSpec::Not(b) } else { BitSpec::Is(b) }
        }).collect();
        let (o, t) = compare(
            |cs| {
                let b = ours_bits(cs, &bits)?;
                let n = ours_nums(cs, &vals[..size])?;
                let out = if selecting {
                    vec![insertion::select(cs.namespace(|| "select"), &n, &b)?]
                } else {
                    insertion::insert(cs, &n[0], &b, &n[1..])?
                };
                Ok(out.iter().map(AllocatedNum::get_value).collect::<Vec<_>>())
            },
            |cs| {
                let b = theirs_bits(cs, &bits)?;
                let n = theirs_nums(cs, &vals[..size])?;
                let out = if selecting {
                    vec![up::insertion::select(cs.namespace(|| "select"), &n, &b)?]
                } else {
                    up::insertion::insert(cs, &n[0], &b, &n[1..])?
                };
                Ok(out.iter().map(UpNum::get_value).collect::<Vec<_>>())
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(o, t);
        }
    }
}

/// Node hashes: SHA-256 of two leaves and Poseidon of 2 and 8.
fn check_node_hash(leaves: &[Option<Fr>], sha: bool) {
    let (o, t) = compare(
        |cs| {
            let n = ours_nums(cs, leaves)?;
            if sha {
                Sha256Hash.hash_leaves(cs, &n)
            } else {
                POSEIDON[..].hash_leaves(cs, &n)
            }
        },
        |cs| {
            let n = theirs_nums(cs, leaves)?;
            match (sha, n.len()) {
                (true, _) => Sha256Function::hash_multi_leaf_circuit::<U2, _>(cs, &n, 0),
                (false, 2) => PoseidonFunction::hash2_circuit(cs, &n[0], &n[1]),
                _ => PoseidonFunction::hash_multi_leaf_circuit::<U8, _>(cs, &n, 0),
            }
        },
    );
    if let (Ok(o), Ok(t)) = (o, t) {
        assert_eq!(o.get_value(), t.get_value());
    }
}

/// A Merkle path for `shape`: `base_levels` levels of the base arity, then the sub and top
/// levels.
fn path(shape: TreeShape, base_levels: usize) -> impl Strategy<Value = Vec<PathElement<Fr>>> {
    let arities: Vec<usize> = std::iter::repeat(shape.base)
        .take(base_levels)
        .chain([shape.sub, shape.top].into_iter().filter(|&a| a > 0))
        .collect();
    arities
        .into_iter()
        .map(|a| {
            (
                prop::collection::vec(maybe_scalar(), a - 1),
                prop::option::weighted(0.97, 0..a),
            )
                .prop_map(|(siblings, index)| PathElement { siblings, index })
        })
        .collect::<Vec<_>>()
}

#[derive(Debug, Clone)]
struct PorCase {
    value: Option<Fr>,
    path: Vec<PathElement<Fr>>,
    root: Option<Fr>,
    private: bool,
}

fn por_case(shape: TreeShape, max_base_levels: usize) -> impl Strategy<Value = PorCase> {
    (1..=max_base_levels)
        .prop_flat_map(move |levels| {
            (
                maybe_scalar(),
                path(shape, levels),
                maybe_scalar(),
                any::<bool>(),
            )
        })
        .prop_map(|(value, path, root, private)| PorCase {
            value,
            path,
            root,
            private,
        })
}

fn check_por<Tree: MerkleTreeTrait, H: TreeHash<Fr> + ?Sized>(
    shape: TreeShape,
    hasher: &H,
    case: &PorCase,
) {
    let upstream_path: Vec<(Vec<Option<Fr>>, Option<usize>)> = case
        .path
        .iter()
        .map(|e| (e.siblings.clone(), e.index))
        .collect();
    let _ = compare(
        |cs| {
            por::por(
                cs,
                shape,
                &Root::Val(case.value),
                &case.path,
                &Root::Val(case.root),
                case.private,
                hasher,
            )
        },
        |cs| {
            up::por::PoRCircuit::<Tree>::synthesize(
                cs,
                up::variables::Root::Val(case.value),
                upstream_path.clone().into(),
                up::variables::Root::Val(case.root),
                case.private,
            )
        },
    );
}

/// SnapDeals' inclusion proof: index bits and siblings allocated by the caller, no inputs.
fn check_por_no_challenge_input<Tree: MerkleTreeTrait, H: TreeHash<Fr> + ?Sized>(
    shape: TreeShape,
    hasher: &H,
    case: &PorCase,
) {
    let bits: Vec<Option<bool>> = case
        .path
        .iter()
        .flat_map(|e| {
            let arity = e.siblings.len() + 1;
            (0..arity.trailing_zeros()).map(move |i| e.index.map(|x| (x >> i) & 1 == 1))
        })
        .collect();
    let _ = compare(
        |cs| {
            let bits = bits
                .iter()
                .enumerate()
                .map(|(i, b)| AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), *b))
                .collect::<Res<Vec<_>>>()?;
            let leaf = AllocatedNum::alloc(cs.namespace(|| "leaf"), missing(case.value))?;
            let path = case
                .path
                .iter()
                .map(|e| ours_nums(cs, &e.siblings))
                .collect::<Res<Vec<_>>>()?;
            let root = AllocatedNum::alloc(cs.namespace(|| "root"), missing(case.root))?;
            por::por_no_challenge_input(cs, shape, &bits, &leaf, &path, &root, hasher)
        },
        |cs| {
            let bits = bits
                .iter()
                .enumerate()
                .map(|(i, b)| UpBit::alloc(cs.namespace(|| format!("bit {i}")), *b))
                .collect::<Res<Vec<_>>>()?;
            let leaf = UpNum::alloc(cs.namespace(|| "leaf"), missing(case.value))?;
            let path = case
                .path
                .iter()
                .map(|e| theirs_nums(cs, &e.siblings))
                .collect::<Res<Vec<_>>>()?;
            let root = UpNum::alloc(cs.namespace(|| "root"), missing(case.root))?;
            up::por::por_no_challenge_input::<Tree, _>(cs, bits, leaf, path, root)
        },
    );
}

const fn shape(base: usize, sub: usize, top: usize) -> TreeShape {
    TreeShape { base, sub, top }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn node_hashes(leaves in prop::collection::vec(maybe_scalar(), 8)) {
        check_node_hash(&leaves[..2], true);
        check_node_hash(&leaves[..2], false);
        check_node_hash(&leaves, false);
    }

    #[test]
    fn por_sha256_binary(case in por_case(shape(2, 0, 0), 3)) {
        check_por::<DiskTree<Sha256Hasher, U2, U0, U0>, _>(shape(2, 0, 0), &Sha256Hash, &case);
    }

    #[test]
    fn por_poseidon_8_0_0(case in por_case(shape(8, 0, 0), 3)) {
        check_por::<DiskTree<PoseidonHasher, U8, U0, U0>, _>(shape(8, 0, 0), &POSEIDON[..], &case);
    }

    #[test]
    fn por_poseidon_8_8_0(case in por_case(shape(8, 8, 0), 2)) {
        check_por::<DiskTree<PoseidonHasher, U8, U8, U0>, _>(shape(8, 8, 0), &POSEIDON[..], &case);
    }

    #[test]
    fn por_poseidon_8_8_2(case in por_case(shape(8, 8, 2), 2)) {
        check_por::<DiskTree<PoseidonHasher, U8, U8, U2>, _>(shape(8, 8, 2), &POSEIDON[..], &case);
    }

    #[test]
    fn por_no_challenge_input_poseidon_binary(case in por_case(shape(2, 0, 0), 4)) {
        check_por_no_challenge_input::<DiskTree<PoseidonHasher, U2, U0, U0>, _>(shape(2, 0, 0), &POSEIDON[..], &case);
    }

    #[test]
    fn por_no_challenge_input_poseidon_8_8_2(case in por_case(shape(8, 8, 2), 2)) {
        check_por_no_challenge_input::<DiskTree<PoseidonHasher, U8, U8, U2>, _>(shape(8, 8, 2), &POSEIDON[..], &case);
    }

    #[test]
    fn por_no_challenge_input_poseidon_8_8_0(case in por_case(shape(8, 8, 0), 2)) {
        check_por_no_challenge_input::<DiskTree<PoseidonHasher, U8, U8, U0>, _>(shape(8, 8, 0), &POSEIDON[..], &case);
    }

    #[test]
    fn challenge_bits(log in 0..20u32, challenge in any::<usize>()) {
        let leaves = 1usize << log;
        let challenge = challenge % leaves;
        prop_assert_eq!(
            por::challenge_into_auth_path_bits(challenge, leaves).unwrap(),
            up::por::challenge_into_auth_path_bits(challenge, leaves)
        );
    }
}

#[test]
fn rejects_bad_shapes() {
    let mut cs = cuzk_gadgets::test_util::RecordingCs::<Fr>::new();
    let element = PathElement {
        siblings: vec![Some(Fr::from(1)); 7],
        index: Some(0),
    };
    let v = Root::Val(Some(Fr::from(1)));
    for bad in [shape(3, 0, 0), shape(8, 0, 2), shape(8, 8, 2)] {
        let path = vec![element.clone()];
        assert!(
            por::por(&mut cs, bad, &v, &path, &v, true, &POSEIDON[..]).is_err(),
            "{bad:?}"
        );
    }
    // Wrong sibling count for the level.
    assert!(por::por(
        &mut cs,
        shape(2, 0, 0),
        &v,
        &[element],
        &v,
        true,
        &POSEIDON[..]
    )
    .is_err());
    assert!(por::challenge_into_auth_path_bits(1, 3).is_err());
    let bits = [cuzk_gadgets::boolean::Boolean::Constant(true); 3];
    let n = AllocatedNum::alloc(&mut cs, || Ok(Fr::from(1))).unwrap();
    assert!(
        insertion::insert(&mut cs, &n, &bits, &[n; 7]).is_err(),
        "constant bits at arity 8"
    );
    assert!(insertion::insert(&mut cs, &n, &bits[..2], &[n; 7]).is_err());
    let bit = AllocatedBit::alloc(&mut cs, Some(true)).unwrap();
    let octal = shape(8, 0, 0);
    let no_input = |cs: &mut _, bits: &[AllocatedBit], siblings: usize| {
        por::por_no_challenge_input(cs, octal, bits, &n, &[vec![n; siblings]], &n, &POSEIDON[..])
    };
    assert!(
        no_input(&mut cs, &[bit; 2], 7).is_err(),
        "too few index bits"
    );
    assert!(no_input(&mut cs, &[bit; 3], 6).is_err(), "too few siblings");
    assert!(no_input(&mut cs, &[bit; 3], 7).is_ok());
    assert!(xor_with_key(&mut cs, &bits, &bits).is_err());
}
