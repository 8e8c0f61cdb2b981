//! Poseidon as `crate::poseidon::poseidon_hash` allocates it: per S-box its input (unless it
//! is already a variable), square, fourth power and output, then the hash result.

use bellpepper_core::SynthesisError;
use ff::PrimeField;

use super::Sink;
use crate::poseidon::{sbox, PoseidonConstants};

/// The state before an S-box: a value already held by a variable, or a combination that the
/// S-box allocates first.
#[derive(Clone, Copy)]
struct Elt<F> {
    value: F,
    allocated: bool,
}

/// `(l + pre)^5 + post`, allocating `l` when it is a combination, then `(l + pre)^2`,
/// its square and the result.
fn quintic<F: PrimeField>(s: &mut impl Sink<F>, e: Elt<F>, pre: Option<F>, post: Option<F>) -> F {
    let l = e.value;
    if !e.allocated {
        s.push(l);
    }
    let shifted = l + pre.unwrap_or(F::ZERO);
    let l2 = shifted.square();
    let l4 = l2.square();
    let l5 = shifted * l4 + post.unwrap_or(F::ZERO);
    s.push(l2);
    s.push(l4);
    s.push(l5);
    l5
}

/// `v · m` for a square matrix given by rows.
fn vec_mat<F: PrimeField>(v: &[F], m: &[Vec<F>], out: &mut [F]) {
    for (j, o) in out.iter_mut().enumerate() {
        *o = v.iter().zip(m).map(|(x, row)| *x * row[j]).sum();
    }
}

/// The hash of `preimage` (already variables), with its witness written to `s`.
pub fn hash<F: PrimeField>(
    s: &mut impl Sink<F>,
    preimage: &[F],
    constants: &PoseidonConstants<F>,
) -> Result<F, SynthesisError> {
    if preimage.len() != constants.arity {
        return Err(crate::poseidon::preimage_error(
            constants.arity,
            preimage.len(),
        ));
    }
    let width = constants.width();
    let half = constants.full_rounds / 2;
    let partial = constants.partial_rounds;
    let rounds = constants.full_rounds + partial;
    let mut keys = constants.compressed_round_constants.iter().copied();
    let mut take = || keys.next().unwrap_or(F::ZERO);

    let mut state: Vec<F> = Vec::with_capacity(width);
    state.push(constants.domain_tag);
    state.extend_from_slice(preimage);
    let mut next = vec![F::ZERO; width];
    for round in 0..rounds {
        let is_full = round < half || round >= half + partial;
        if round == 0 {
            let pre: Vec<F> = (0..width).map(|_| take()).collect();
            let post: Vec<F> = (0..width).map(|_| take()).collect();
            state[0] = sbox(constants.domain_tag + pre[0]) + post[0];
            for i in 1..width {
                let e = Elt {
                    value: state[i],
                    allocated: true,
                };
                state[i] = quintic(s, e, Some(pre[i]), Some(post[i]));
            }
        } else if is_full {
            // The last round adds no constants after its S-boxes.
            let last = round == rounds - 1;
            for x in state.iter_mut() {
                let e = Elt {
                    value: *x,
                    allocated: false,
                };
                *x = quintic(s, e, None, (!last).then(&mut take));
            }
        } else {
            let key = take();
            let e = Elt {
                value: state[0],
                allocated: false,
            };
            state[0] = quintic(s, e, None, Some(key));
        }

        if round + 1 == half {
            vec_mat(&state, &constants.pre_sparse, &mut next);
            std::mem::swap(&mut state, &mut next);
        } else if round >= half && round < half + partial {
            let m = &constants.sparse[round - half];
            let first = state.iter().zip(&m.w_hat).map(|(x, w)| *x * w).sum();
            let e0 = state[0];
            for (x, v) in state[1..].iter_mut().zip(&m.v_rest) {
                *x += e0 * v;
            }
            state[0] = first;
        } else {
            vec_mat(&state, &constants.mds, &mut next);
            std::mem::swap(&mut state, &mut next);
        }
    }
    s.push(state[1]);
    Ok(state[1])
}
