//! Merkle inclusion as `crate::por` allocates it: per level the index bits, the siblings, the
//! insertion's picks and the node hash.

use bellpepper_core::SynthesisError;
use ff::PrimeField;

use super::Sink;
use crate::insertion::{schedule, Cond, Src};
use crate::multipack::compute_multipacking;
use crate::por::{PathElement, TreeHash, TreeShape};

fn missing() -> SynthesisError {
    SynthesisError::AssignmentMissing
}

/// `insertion::insert`: `element` placed among `siblings` at the position `bits` gives (little
/// endian, allocated). Returns the children in order.
pub fn insert<F: PrimeField>(
    s: &mut impl Sink<F>,
    element: F,
    bits: &[bool],
    siblings: &[F],
) -> Result<Vec<F>, SynthesisError> {
    let size = siblings.len() + 1;
    if 1usize.checked_shl(bits.len() as u32) != Some(size) {
        return Err(SynthesisError::IncompatibleLengthVector(format!(
            "insert: {} siblings for {} bits",
            siblings.len(),
            bits.len()
        )));
    }
    let input = |i: usize| if i == 0 { element } else { siblings[i - 1] };
    let Some((steps, outputs)) = schedule(size) else {
        return Ok((0..size)
            .map(|pos| select_output(s, pos, bits, &input))
            .collect());
    };
    let derived = steps
        .iter()
        .any(|(c, _, _)| matches!(c, Cond::Nor01 | Cond::And01));
    // `b0 NOR b1` and `b0 AND b1`, allocated first when the schedule uses them.
    let (nor, and) = match bits {
        [b0, b1, ..] if derived => {
            let (nor, and) = (!b0 & !b1, b0 & b1);
            s.push(bit(nor));
            s.push(bit(and));
            (nor, and)
        }
        _ => (false, false),
    };
    let mut results: Vec<F> = Vec::with_capacity(steps.len());
    for &(cond, a, b) in steps {
        let c = match cond {
            Cond::Bit(i) => bits[i],
            Cond::Nor01 => nor,
            Cond::And01 => and,
        };
        let r = match if c { a } else { b } {
            Src::In(i) => input(i),
            Src::Tmp(i) => results[i],
        };
        s.push(r);
        results.push(r);
    }
    Ok(outputs.iter().map(|&i| results[i]).collect())
}

fn bit<F: PrimeField>(b: bool) -> F {
    if b {
        F::ONE
    } else {
        F::ZERO
    }
}

/// `insertion::select` of the choices for output `pos`.
fn select_output<F: PrimeField>(
    s: &mut impl Sink<F>,
    pos: usize,
    bits: &[bool],
    input: &impl Fn(usize) -> F,
) -> F {
    let size = 1 << bits.len();
    let from = (0..size)
        .map(|i| match pos.cmp(&i) {
            std::cmp::Ordering::Equal => input(0),
            std::cmp::Ordering::Greater => input(pos),
            std::cmp::Ordering::Less => input(pos + 1),
        })
        .collect();
    select(s, from, bits)
}

/// `insertion::select`: `from[index]` for `bits` read least significant first, by halving
/// picks from the top bit down.
pub fn select<F: PrimeField>(s: &mut impl Sink<F>, from: Vec<F>, bits: &[bool]) -> F {
    let mut state = from;
    for &b in bits.iter().rev() {
        let half = state.len() / 2;
        state = (0..half)
            .map(|j| {
                let r = if b { state[half + j] } else { state[j] };
                s.push(r);
                r
            })
            .collect();
    }
    state[0]
}

/// `por::por` for a leaf and root that are already variables: writes the witness, appends the
/// packed index bits to `inputs` and returns the root the path computes.
pub fn por<F, S, H>(
    s: &mut S,
    inputs: &mut Vec<F>,
    shape: TreeShape,
    leaf: F,
    path: &[PathElement<F>],
    hasher: &H,
) -> Result<F, SynthesisError>
where
    F: PrimeField,
    S: Sink<F>,
    H: TreeHash<F> + ?Sized,
{
    let arities = shape.level_arities(path.len())?;
    let mut cur = leaf;
    let mut index_bits = Vec::new();
    let mut siblings = Vec::new();
    for (element, &arity) in path.iter().zip(&arities) {
        if element.siblings.len() + 1 != arity {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "por: {} siblings at a level of arity {arity}",
                element.siblings.len()
            )));
        }
        let index = element.index.ok_or_else(missing)?;
        let n = arity.trailing_zeros() as usize;
        let bits: Vec<bool> = (0..n).map(|i| index >> i & 1 == 1).collect();
        s.bits(index as u64, (1u64 << n) - 1);
        siblings.clear();
        for v in &element.siblings {
            let v = v.ok_or_else(missing)?;
            s.push(v);
            siblings.push(v);
        }
        let children = insert(s, cur, &bits, &siblings)?;
        cur = hasher.native(s, &children)?;
        index_bits.extend(bits);
    }
    inputs.extend(compute_multipacking::<F>(&index_bits));
    Ok(cur)
}

/// `por::por_no_challenge_input`: the index bits and siblings are already variables, so per
/// level only the insertion's picks and the node hash are written. Returns the root the path
/// computes.
pub fn por_no_challenge_input<F, S, H>(
    s: &mut S,
    shape: TreeShape,
    index_bits: &[bool],
    leaf: F,
    path: &[Vec<F>],
    hasher: &H,
) -> Result<F, SynthesisError>
where
    F: PrimeField,
    S: Sink<F>,
    H: TreeHash<F> + ?Sized,
{
    let arities = shape.level_arities(path.len())?;
    let mut bits = index_bits.iter().copied();
    let mut cur = leaf;
    for (siblings, &arity) in path.iter().zip(&arities) {
        let level: Vec<bool> = bits
            .by_ref()
            .take(arity.trailing_zeros() as usize)
            .collect();
        let children = insert(s, cur, &level, siblings)?;
        cur = hasher.native(s, &children)?;
    }
    Ok(cur)
}
