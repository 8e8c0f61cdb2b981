//! Poseidon over a prime field (BLS12-381's scalar field for Filecoin): the native hash and the
//! circuit gadget, R1CS-identical to neptune's `circuit::poseidon_hash` (the gadget Filecoin's
//! Merkle trees and column hashes use).
//!
//! The circuit keeps the state as linear combinations between S-boxes. Upstream builds every
//! output of a linear layer by scaling copies of the inputs and summing the copies; here each
//! output is one linear combination that the inputs' terms are appended to.

mod constants;

use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError};
use ff::PrimeField;

pub use constants::PoseidonConstants;
use constants::{vec_mat, Matrix, SparseMatrix};

use crate::num::{AllocatedNum, Num};

pub(crate) fn preimage_error(arity: usize, got: usize) -> SynthesisError {
    SynthesisError::IncompatibleLengthVector(format!(
        "poseidon: expected {arity} inputs, got {got}"
    ))
}

pub(crate) fn sbox<F: PrimeField>(x: F) -> F {
    x.square().square() * x
}

impl<F: PrimeField> PoseidonConstants<F> {
    /// The native hash of exactly `arity` elements.
    pub fn hash(&self, preimage: &[F]) -> Result<F, SynthesisError> {
        if preimage.len() != self.arity {
            return Err(preimage_error(self.arity, preimage.len()));
        }
        let width = self.width();
        let mut state = Vec::with_capacity(width);
        state.push(self.domain_tag);
        state.extend_from_slice(preimage);
        let half = self.full_rounds / 2;
        let rounds = self.full_rounds + self.partial_rounds;
        for (r, keys) in self.round_constants.chunks(width).take(rounds).enumerate() {
            for (s, k) in state.iter_mut().zip(keys) {
                *s += k;
            }
            if r < half || r >= half + self.partial_rounds {
                state.iter_mut().for_each(|s| *s = sbox(*s));
            } else {
                state[0] = sbox(state[0]);
            }
            state = vec_mat(&state, &self.mds);
        }
        Ok(state[1])
    }
}

/// A state element: a variable, or a linear combination not yet allocated.
#[derive(Clone, Debug)]
enum Elt<F: PrimeField> {
    Allocated(AllocatedNum<F>),
    Num(Num<F>),
}

impl<F: PrimeField> Elt<F> {
    fn constant<CS: ConstraintSystem<F>>(c: F) -> Self {
        Elt::Num(Num::from_parts(
            Some(c),
            LinearCombination::zero() + (c, CS::one()),
        ))
    }

    fn value(&self) -> Option<F> {
        match self {
            Elt::Allocated(a) => a.get_value(),
            Elt::Num(n) => n.get_value(),
        }
    }

    fn add_to_lc(&self, coeff: F, lc: LinearCombination<F>) -> LinearCombination<F> {
        match self {
            Elt::Allocated(a) => lc + (coeff, a.get_variable()),
            Elt::Num(n) => n.add_to_lc(coeff, lc),
        }
    }

    fn into_lc(self) -> LinearCombination<F> {
        match self {
            Elt::Allocated(a) => LinearCombination::from_variable(a.get_variable()),
            Elt::Num(n) => n.into_lc(),
        }
    }

    /// A variable for the element; a combination is allocated and tied to it by
    /// `lc * 1 = v`.
    fn allocate<CS: ConstraintSystem<F>>(
        self,
        mut cs: CS,
    ) -> Result<AllocatedNum<F>, SynthesisError> {
        let num = match self {
            Elt::Allocated(a) => return Ok(a),
            Elt::Num(n) => n,
        };
        let value = num.get_value();
        let v = AllocatedNum::alloc(cs.namespace(|| "allocate for Elt::Num"), || {
            value.ok_or(SynthesisError::AssignmentMissing)
        })?;
        cs.enforce(
            || "enforce num allocation preserves lc",
            |_| num.into_lc(),
            |lc| lc + CS::one(),
            |lc| lc + v.get_variable(),
        );
        Ok(v)
    }
}

/// `sum_i coeffs[i] * elts[i]` as one combination. Unknown values are left out of the sum, as
/// upstream's `Num` addition does. Without `lcs` (a witness generator, which discards
/// constraints) only the value is computed.
fn scalar_product<F: PrimeField>(
    elts: &[Elt<F>],
    coeffs: impl Iterator<Item = F>,
    lcs: bool,
) -> Elt<F> {
    let mut lc = LinearCombination::zero();
    let mut value = F::ZERO;
    for (e, c) in elts.iter().zip(coeffs) {
        if lcs {
            lc = e.add_to_lc(c, lc);
        }
        if let Some(v) = e.value() {
            value += v * c;
        }
    }
    Elt::Num(Num::from_parts(Some(value), lc))
}

fn dense_product<F: PrimeField>(state: &[Elt<F>], m: &Matrix<F>, lcs: bool) -> Vec<Elt<F>> {
    (0..state.len())
        .map(|j| scalar_product(state, m.iter().map(|row| row[j]), lcs))
        .collect()
}

/// The sparse layer: element 0 becomes `w_hat . state`, element `j` gains
/// `v_rest[j - 1] * state[0]`.
fn sparse_product<F: PrimeField>(
    state: Vec<Elt<F>>,
    m: &SparseMatrix<F>,
    lcs: bool,
) -> Vec<Elt<F>> {
    let first = scalar_product(&state, m.w_hat.iter().copied(), lcs);
    let mut state = state.into_iter();
    let Some(e0) = state.next() else {
        return vec![first];
    };
    let mut out = Vec::with_capacity(m.w_hat.len());
    out.push(first);
    for (e, v) in state.zip(&m.v_rest) {
        let scaled = e0.value().map(|x| x * v);
        let value = match (e.value(), scaled) {
            (Some(a), Some(b)) => Some(a + b),
            (known, None) | (None, known) => known,
        };
        let lc = if lcs {
            e0.add_to_lc(*v, e.into_lc())
        } else {
            LinearCombination::zero()
        };
        out.push(Elt::Num(Num::from_parts(value, lc)));
    }
    out
}

/// Allocates `(b + pre) * a + post` under `(b + pre) * a = res - post`.
fn mul_sum<F, CS>(
    mut cs: CS,
    a: &AllocatedNum<F>,
    b: &AllocatedNum<F>,
    pre: Option<F>,
    post: Option<F>,
) -> Result<AllocatedNum<F>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    let res = AllocatedNum::alloc(cs.namespace(|| "mul_sum"), || {
        let a = a.get_value().ok_or(SynthesisError::AssignmentMissing)?;
        let b = b.get_value().ok_or(SynthesisError::AssignmentMissing)?;
        Ok((b + pre.unwrap_or(F::ZERO)) * a + post.unwrap_or(F::ZERO))
    })?;
    let one = CS::one();
    cs.enforce(
        || "mul sum constraint",
        |lc| match pre {
            Some(pre) => lc + b.get_variable() + (pre, one),
            None => lc + b.get_variable(),
        },
        |lc| lc + a.get_variable(),
        |lc| match post {
            Some(post) => lc + res.get_variable() + (-post, one),
            None => lc + res.get_variable(),
        },
    );
    Ok(res)
}

/// Allocates `(x + k)^2` under `(x + k) * (x + k) = res`.
fn square_sum<F, CS>(
    mut cs: CS,
    k: F,
    x: &AllocatedNum<F>,
) -> Result<AllocatedNum<F>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    let res = AllocatedNum::alloc(cs.namespace(|| "squared sum"), || {
        Ok((x.get_value().ok_or(SynthesisError::AssignmentMissing)? + k).square())
    })?;
    let one = CS::one();
    cs.enforce(
        || "squared sum constraint",
        |lc| lc + x.get_variable() + (k, one),
        |lc| lc + x.get_variable() + (k, one),
        |lc| lc + res.get_variable(),
    );
    Ok(res)
}

/// `(e + pre)^5 + post` in three constraints (plus one if `e` is not yet a variable).
fn quintic_sbox<F, CS>(
    mut cs: CS,
    e: Elt<F>,
    pre: Option<F>,
    post: Option<F>,
) -> Result<Elt<F>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    let l = e.allocate(cs.namespace(|| "S-box input"))?;
    let l2 = match pre {
        Some(k) => square_sum(cs.namespace(|| "(l+rk)^2"), k, &l)?,
        None => l.square(cs.namespace(|| "l^2"))?,
    };
    let l4 = l2.square(cs.namespace(|| "l^4"))?;
    let l5 = mul_sum(cs.namespace(|| "(l4 * l) + rk)"), &l4, &l, pre, post)?;
    Ok(Elt::Allocated(l5))
}

/// Poseidon of exactly `arity` variables in a circuit.
pub fn poseidon_hash<F, CS>(
    mut cs: CS,
    preimage: &[AllocatedNum<F>],
    constants: &PoseidonConstants<F>,
) -> Result<AllocatedNum<F>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    if preimage.len() != constants.arity {
        return Err(preimage_error(constants.arity, preimage.len()));
    }
    let width = constants.width();
    let half = constants.full_rounds / 2;
    let partial = constants.partial_rounds;
    let rc = &constants.compressed_round_constants;
    let mut offset = 0;
    let mut take = |n: usize| {
        let keys = &rc[offset..offset + n];
        offset += n;
        keys
    };

    // A witness generator discards constraints: skip building their linear combinations.
    let lcs = !cs.is_witness_generator();
    let mut state = Vec::with_capacity(width);
    state.push(Elt::constant::<CS>(constants.domain_tag));
    state.extend(preimage.iter().copied().map(Elt::Allocated));

    let rounds = constants.full_rounds + partial;
    for round in 0..rounds {
        let mut cs = cs.namespace(|| format!("round {round}"));
        let is_full = round < half || round >= half + partial;
        if round == 0 {
            // The first round adds the raw constants before its S-boxes and the next round's
            // (through M^-1) after them; the tag is a constant, so its S-box is computed here.
            let (pre, post) = (take(width).to_vec(), take(width));
            let mut next = Vec::with_capacity(width);
            for (i, e) in state.into_iter().enumerate() {
                next.push(if i == 0 {
                    Elt::constant::<CS>(sbox(constants.domain_tag + pre[0]) + post[0])
                } else {
                    quintic_sbox(
                        cs.namespace(|| format!("quintic s-box {i}")),
                        e,
                        Some(pre[i]),
                        Some(post[i]),
                    )?
                });
            }
            state = next;
        } else if is_full {
            let last = round == rounds - 1;
            let post = if last { None } else { Some(take(width)) };
            let mut next = Vec::with_capacity(width);
            for (i, e) in state.into_iter().enumerate() {
                next.push(quintic_sbox(
                    cs.namespace(|| format!("quintic s-box {i}")),
                    e,
                    None,
                    post.map(|k| k[i]),
                )?);
            }
            state = next;
        } else {
            let key = take(1)[0];
            let e0 = std::mem::replace(&mut state[0], Elt::Num(Num::zero()));
            state[0] = quintic_sbox(
                cs.namespace(|| "solitary quintic s-box"),
                e0,
                None,
                Some(key),
            )?;
        }

        state = if round + 1 == half {
            dense_product(&state, &constants.pre_sparse, lcs)
        } else if round >= half && round < half + partial {
            sparse_product(state, &constants.sparse[round - half], lcs)
        } else {
            dense_product(&state, &constants.mds, lcs)
        };
    }

    let result = state.swap_remove(1);
    result.allocate(cs.namespace(|| "hash result"))
}
