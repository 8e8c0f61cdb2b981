//! Inserting a node into its siblings at a position given by bits (the Merkle path step), and the
//! conditional selections it is built from. Mirrors storage-proofs-core's `insertion` row for
//! row: arities 2, 4 and 8 use its hand-scheduled selection networks, others a generic one.

use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;

use crate::boolean::{AllocatedBit, Boolean};
use crate::num::AllocatedNum;

fn length_error(what: String) -> SynthesisError {
    SynthesisError::IncompatibleLengthVector(what)
}

/// `if condition { a } else { b }` in one constraint: `(b - a) * condition = b - result`.
pub fn pick<F, CS>(
    mut cs: CS,
    condition: &Boolean,
    a: &AllocatedNum<F>,
    b: &AllocatedNum<F>,
) -> Result<AllocatedNum<F>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    let c = AllocatedNum::alloc(cs.namespace(|| "pick result"), || {
        let chosen = if condition
            .get_value()
            .ok_or(SynthesisError::AssignmentMissing)?
        {
            a
        } else {
            b
        };
        chosen.get_value().ok_or(SynthesisError::AssignmentMissing)
    })?;
    let (av, bv, cv) = (a.get_variable(), b.get_variable(), c.get_variable());
    cs.enforce(
        || "pick",
        |lc| lc + bv - av,
        |lc| condition.add_to_lc(CS::one(), F::ONE, lc),
        |lc| lc + bv - cv,
    );
    Ok(c)
}

/// `from[index]` where `index` is `path_bits` read least significant first: a binary tree of
/// picks, most significant bit first.
pub fn select<F, CS>(
    mut cs: CS,
    from: &[AllocatedNum<F>],
    path_bits: &[Boolean],
) -> Result<AllocatedNum<F>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    if 1usize.checked_shl(path_bits.len() as u32) != Some(from.len()) {
        return Err(length_error(format!(
            "select: {} elements for {} bits",
            from.len(),
            path_bits.len()
        )));
    }
    let mut state = from.to_vec();
    for (i, bit) in path_bits.iter().rev().enumerate() {
        let half = state.len() / 2;
        state = (0..half)
            .map(|j| {
                pick(
                    cs.namespace(|| format!("pick {i}, {j}")),
                    bit,
                    &state[half + j],
                    &state[j],
                )
            })
            .collect::<Result<_, _>>()?;
    }
    Ok(state[0])
}

/// An operand of a scheduled pick: the inserted element (`In(0)`), a sibling (`In(k)` is
/// `elements[k - 1]`), or an earlier pick's result.
#[derive(Clone, Copy)]
pub(crate) enum Src {
    In(usize),
    Tmp(usize),
}

/// A pick's condition: a path bit, or `b0 NOR b1` / `b0 AND b1` (arity 8 only).
#[derive(Clone, Copy)]
pub(crate) enum Cond {
    Bit(usize),
    Nor01,
    And01,
}

/// `if cond { a } else { b }`.
pub(crate) type Step = (Cond, Src, Src);

use Cond::{And01, Bit, Nor01};
use Src::{In, Tmp};

/// Position `p` receives the element if the index is `p`, its left neighbour's sibling if the
/// index is greater, its own if smaller.
const INSERT_2: ([Step; 2], [usize; 2]) =
    ([(Bit(0), In(1), In(0)), (Bit(0), In(0), In(1))], [0, 1]);

const INSERT_4: ([Step; 8], [usize; 4]) = (
    [
        (Bit(0), In(1), In(0)),
        (Bit(1), In(1), Tmp(0)),
        (Bit(0), In(0), In(1)),
        (Bit(1), In(2), Tmp(2)),
        (Bit(0), In(3), In(0)),
        (Bit(1), Tmp(4), In(2)),
        (Bit(0), In(0), In(3)),
        (Bit(1), Tmp(6), In(3)),
    ],
    [1, 3, 5, 7],
);

const INSERT_8: ([Step; 20], [usize; 8]) = (
    [
        (Nor01, In(0), In(1)),
        (Bit(2), In(1), Tmp(0)),
        (Bit(0), In(0), In(1)),
        (Bit(1), In(2), Tmp(2)),
        (Bit(2), In(2), Tmp(3)),
        (Bit(0), In(3), In(0)),
        (Bit(1), Tmp(5), In(2)),
        (Bit(2), In(3), Tmp(6)),
        (And01, In(0), In(3)),
        (Bit(2), In(4), Tmp(8)),
        (Nor01, In(0), In(5)),
        (Bit(2), Tmp(10), In(4)),
        (Bit(0), In(0), In(5)),
        (Bit(1), In(6), Tmp(12)),
        (Bit(2), Tmp(13), In(5)),
        (Bit(0), In(7), In(0)),
        (Bit(1), Tmp(15), In(6)),
        (Bit(2), Tmp(16), In(6)),
        (And01, In(0), In(7)),
        (Bit(2), Tmp(18), In(7)),
    ],
    [1, 4, 7, 9, 11, 14, 17, 19],
);

/// Runs a pick schedule and returns the results at `outputs`.
/// The pick schedule (and which results are the outputs) of an insertion into `size` elements,
/// for the sizes that have one; other sizes select each output from all inputs.
pub(crate) fn schedule(size: usize) -> Option<(&'static [Step], &'static [usize])> {
    match size {
        2 => Some((&INSERT_2.0, &INSERT_2.1)),
        4 => Some((&INSERT_4.0, &INSERT_4.1)),
        8 => Some((&INSERT_8.0, &INSERT_8.1)),
        _ => None,
    }
}

fn scheduled<F, CS>(
    cs: &mut CS,
    element: &AllocatedNum<F>,
    bits: &[Boolean],
    elements: &[AllocatedNum<F>],
    steps: &[Step],
    outputs: &[usize],
) -> Result<Vec<AllocatedNum<F>>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    // b0 NOR b1 and b0 AND b1, allocated first when the schedule uses them.
    let mut derived = None;
    if steps.iter().any(|(c, _, _)| matches!(c, Nor01 | And01)) {
        let (Boolean::Is(b0), Boolean::Is(b1)) = (&bits[0], &bits[1]) else {
            return Err(length_error(
                "insert: the two low index bits must be allocated and not negated".into(),
            ));
        };
        let nor = AllocatedBit::nor(cs.namespace(|| "b0 nor b1"), b0, b1)?;
        let and = AllocatedBit::and(cs.namespace(|| "b0 and b1"), b0, b1)?;
        derived = Some((Boolean::Is(nor), Boolean::Is(and)));
    }

    let mut results: Vec<AllocatedNum<F>> = Vec::with_capacity(steps.len());
    for (k, &(cond, a, b)) in steps.iter().enumerate() {
        let src = |s: Src| match s {
            In(0) => element,
            In(i) => &elements[i - 1],
            Tmp(i) => &results[i],
        };
        let condition = match (cond, &derived) {
            (Bit(i), _) => &bits[i],
            (Nor01, Some((nor, _))) => nor,
            (And01, Some((_, and))) => and,
            (Nor01 | And01, None) => {
                return Err(length_error("insert: missing derived bit".into()))
            }
        };
        let r = pick(
            cs.namespace(|| format!("step {k}")),
            condition,
            src(a),
            src(b),
        )?;
        results.push(r);
    }
    Ok(outputs.iter().map(|&i| results[i]).collect())
}

/// Inserts `element` into `elements` at the index given by `bits` (least significant first):
/// `elements.len() + 1` must be `2^bits.len()`.
pub fn insert<F, CS>(
    cs: &mut CS,
    element: &AllocatedNum<F>,
    bits: &[Boolean],
    elements: &[AllocatedNum<F>],
) -> Result<Vec<AllocatedNum<F>>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    let size = elements.len() + 1;
    if 1usize.checked_shl(bits.len() as u32) != Some(size) {
        return Err(length_error(format!(
            "insert: {} siblings for {} bits",
            elements.len(),
            bits.len()
        )));
    }
    match schedule(size) {
        Some((steps, outputs)) => scheduled(cs, element, bits, elements, steps, outputs),
        None => (0..size)
            .map(|pos| {
                // At index `i` the element sits at `i`: position `pos` holds the element when
                // i == pos, elements[pos - 1] when i < pos, elements[pos] when i > pos.
                let choices: Vec<AllocatedNum<F>> = (0..size)
                    .map(|i| match pos.cmp(&i) {
                        std::cmp::Ordering::Equal => *element,
                        std::cmp::Ordering::Greater => elements[pos - 1],
                        std::cmp::Ordering::Less => elements[pos],
                    })
                    .collect();
                select(cs.namespace(|| format!("choice at {pos}")), &choices, bits)
            })
            .collect(),
    }
}
