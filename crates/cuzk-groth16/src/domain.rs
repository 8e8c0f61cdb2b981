//! Radix-2 evaluation domains over Fr and their NTTs.
//!
//! A polynomial is held in one of three typed bases so that a coefficient vector can never be
//! passed where evaluations are expected: [`Coefficients`], [`Evaluations`] (at `ω^i`) and
//! [`CosetEvaluations`] (at `g·ω^i`, `g` the field's multiplicative generator).

use ff::{BatchInvert, Field, PrimeField};
use rayon::prelude::*;
use thiserror::Error;

use crate::{fr, Fr};

#[derive(Debug, Error, PartialEq, Eq)]
pub enum DomainError {
    #[error("a domain of {needed} points exceeds the field's two-adicity 2^{max_log}")]
    TooLarge { needed: usize, max_log: u32 },
    #[error("{got} values do not fit a domain of {size} points")]
    TooManyValues { got: usize, size: usize },
}

/// The multiplicative subgroup of size `n = 2^log_n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    log_n: u32,
    omega: Fr,
    omega_inv: Fr,
    n_inv: Fr,
}

macro_rules! basis {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name(Vec<Fr>);

        impl $name {
            pub fn as_slice(&self) -> &[Fr] {
                &self.0
            }
            pub fn as_mut_slice(&mut self) -> &mut [Fr] {
                &mut self.0
            }
            pub fn into_vec(self) -> Vec<Fr> {
                self.0
            }
            pub fn len(&self) -> usize {
                self.0.len()
            }
            pub fn is_empty(&self) -> bool {
                self.0.is_empty()
            }
        }
    };
}

basis!(
    /// Coefficients `c_0 .. c_{n-1}` of a polynomial of degree below `n`.
    Coefficients
);
basis!(
    /// Values at `ω^0 .. ω^{n-1}`.
    Evaluations
);
basis!(
    /// Values at `g·ω^0 .. g·ω^{n-1}`.
    CosetEvaluations
);

impl Domain {
    /// The domain of exactly `2^log_n` points.
    pub fn new(log_n: u32) -> Result<Self, DomainError> {
        if log_n > Fr::S {
            return Err(DomainError::TooLarge {
                needed: 1usize.checked_shl(log_n).unwrap_or(usize::MAX),
                max_log: Fr::S,
            });
        }
        let mut omega = Fr::ROOT_OF_UNITY;
        for _ in log_n..Fr::S {
            omega = omega.square();
        }
        let n = Fr::from(1u64 << log_n);
        Ok(Domain {
            log_n,
            omega,
            omega_inv: omega.invert().unwrap(),
            n_inv: n.invert().unwrap(),
        })
    }

    /// The smallest domain with at least `min` points (and at least one).
    pub fn for_size(min: usize) -> Result<Self, DomainError> {
        let n = min
            .max(1)
            .checked_next_power_of_two()
            .ok_or(DomainError::TooLarge {
                needed: min,
                max_log: Fr::S,
            })?;
        let log_n = n.trailing_zeros();
        if log_n > Fr::S {
            return Err(DomainError::TooLarge {
                needed: min,
                max_log: Fr::S,
            });
        }
        Domain::new(log_n)
    }

    pub fn size(&self) -> usize {
        1 << self.log_n
    }

    pub fn log_size(&self) -> u32 {
        self.log_n
    }

    /// The generator `ω` of the domain.
    pub fn omega(&self) -> Fr {
        self.omega
    }

    /// The coset shift `g`.
    pub fn coset_shift() -> Fr {
        Fr::MULTIPLICATIVE_GENERATOR
    }

    /// `Z(x) = x^n - 1`, the vanishing polynomial of the domain.
    pub fn vanishing_at(&self, x: Fr) -> Fr {
        x.pow_vartime([self.size() as u64]) - Fr::ONE
    }

    /// `Z` on the coset is the constant `g^n - 1`.
    pub fn vanishing_on_coset(&self) -> Fr {
        self.vanishing_at(Self::coset_shift())
    }

    /// Pads `values` with zeros to the domain size.
    pub fn evaluations(&self, values: Vec<Fr>) -> Result<Evaluations, DomainError> {
        self.pad(values).map(Evaluations)
    }

    /// Pads `values` with zeros to the domain size.
    pub fn coefficients(&self, values: Vec<Fr>) -> Result<Coefficients, DomainError> {
        self.pad(values).map(Coefficients)
    }

    /// Pads `values` with zeros to the domain size.
    pub fn coset_evaluations(&self, values: Vec<Fr>) -> Result<CosetEvaluations, DomainError> {
        self.pad(values).map(CosetEvaluations)
    }

    fn pad(&self, mut values: Vec<Fr>) -> Result<Vec<Fr>, DomainError> {
        if values.len() > self.size() {
            return Err(DomainError::TooManyValues {
                got: values.len(),
                size: self.size(),
            });
        }
        values.resize(self.size(), Fr::ZERO);
        Ok(values)
    }

    pub fn fft(&self, Coefficients(mut v): Coefficients) -> Evaluations {
        self.check(&v);
        ntt(&mut v, self.omega);
        Evaluations(v)
    }

    pub fn ifft(&self, Evaluations(mut v): Evaluations) -> Coefficients {
        self.check(&v);
        ntt(&mut v, self.omega_inv);
        scale(&mut v, self.n_inv);
        Coefficients(v)
    }

    pub fn coset_fft(&self, Coefficients(mut v): Coefficients) -> CosetEvaluations {
        self.check(&v);
        distribute_powers(&mut v, Fr::ONE, Self::coset_shift());
        ntt(&mut v, self.omega);
        CosetEvaluations(v)
    }

    pub fn icoset_fft(&self, CosetEvaluations(mut v): CosetEvaluations) -> Coefficients {
        self.check(&v);
        ntt(&mut v, self.omega_inv);
        distribute_powers(&mut v, self.n_inv, Self::coset_shift().invert().unwrap());
        Coefficients(v)
    }

    /// `coset_fft(ifft(e))` with the two scaling passes fused into one: the values of the
    /// same polynomial on the coset.
    pub fn evaluations_to_coset(&self, Evaluations(mut v): Evaluations) -> CosetEvaluations {
        self.check(&v);
        ntt(&mut v, self.omega_inv);
        distribute_powers(&mut v, self.n_inv, Self::coset_shift());
        ntt(&mut v, self.omega);
        CosetEvaluations(v)
    }

    /// The Lagrange basis polynomials of the domain evaluated at `tau`:
    /// `L_j(τ) = Z(τ)·ω^j / (n·(τ − ω^j))`. `None` if `tau` lies in the domain.
    pub fn lagrange_at(&self, tau: Fr) -> Option<Vec<Fr>> {
        let z = self.vanishing_at(tau);
        if bool::from(z.is_zero()) {
            return None;
        }
        let mut w = powers(self.omega, self.size());
        let mut denom: Vec<Fr> = w.par_iter().map(|wj| tau - wj).collect();
        batch_invert(&mut denom);
        let k = z * self.n_inv;
        w.par_iter_mut()
            .zip(denom.par_iter())
            .for_each(|(wj, d)| *wj *= *d * k);
        Some(w)
    }

    fn check(&self, v: &[Fr]) {
        // The basis types can only be built through `Domain`, so a size mismatch is a bug in
        // the caller that mixed two domains.
        assert_eq!(v.len(), self.size(), "vector from another domain");
    }
}

/// Inverts every element in place (zeros stay zero), in parallel chunks.
pub(crate) fn batch_invert(v: &mut [Fr]) {
    v.par_chunks_mut(1 << 12).for_each(|chunk| {
        let mut nonzero: Vec<&mut Fr> = chunk
            .iter_mut()
            .filter(|x| !bool::from(x.is_zero()))
            .collect();
        nonzero.iter_mut().map(|x| &mut **x).batch_invert();
    });
}

/// `[1, x, x^2, ..., x^{len-1}]`, computed in parallel blocks.
pub(crate) fn powers(x: Fr, len: usize) -> Vec<Fr> {
    let mut out = vec![Fr::ZERO; len];
    out.par_chunks_mut(1 << 12)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut acc = x.pow_vartime([(i << 12) as u64]);
            for v in chunk {
                *v = acc;
                acc *= x;
            }
        });
    out
}

fn scale(v: &mut [Fr], k: Fr) {
    v.par_iter_mut().for_each(|x| fr::mul_assign(x, &k));
}

/// `v[i] *= k·g^i`.
fn distribute_powers(v: &mut [Fr], k: Fr, g: Fr) {
    v.par_chunks_mut(1 << 12)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut acc = k * g.pow_vartime([(i << 12) as u64]);
            for x in chunk {
                fr::mul_assign(x, &acc);
                fr::mul_assign(&mut acc, &g);
            }
        });
}

fn bit_reverse(v: &mut [Fr]) {
    let n = v.len();
    if n <= 2 {
        return;
    }
    let shift = usize::BITS - n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> shift;
        if i < j {
            v.swap(i, j);
        }
    }
}

/// Sizes up to this many points are transformed in place, one core each.
const SERIAL_LOG: u32 = 12;

/// `v[i] ← Σ_j v[j]·ω^{ij}`.
///
/// Small sizes use an in-place radix-2 transform. Large ones use the four-step method: with
/// `n = n1·n2`, `n1` transforms of length `n2`, a twiddle pass and `n2` transforms of length
/// `n1`, each on contiguous rows that fit in cache, joined by blocked transposes. That is five
/// passes over memory instead of `log n`, which is what bounds a 2^22-point transform.
fn ntt(v: &mut Vec<Fr>, omega: Fr) {
    let n = v.len();
    debug_assert!(n.is_power_of_two());
    let log = n.trailing_zeros();
    if log <= SERIAL_LOG {
        radix2(v, &powers(omega, n / 2));
        return;
    }
    let (n1, n2) = (1usize << log.div_ceil(2), 1usize << (log / 2));
    // Scratch recycled from an earlier transform where the process keeps vectors (fresh pages
    // are zeroed by the kernel: 3 % of a transform), else fresh, in huge pages where the
    // kernel allows: one thread zero-filling 4 KiB pages cost more than a transpose pass (log
    // #29). Zero-filled in parallel either way.
    let mut t = crate::memory::take(n);
    t.par_extend(rayon::iter::repeat_n(Fr::ZERO, n));
    // v as n2 × n1 (row j2, column j1) → t as n1 × n2: row j1 holds x[j1 + n1·j2] over j2.
    transpose(v, &mut t, n2, n1);
    let tw2 = powers(omega.pow_vartime([n1 as u64]), n2 / 2);
    t.par_chunks_mut(n2).enumerate().for_each(|(j1, row)| {
        radix2(row, &tw2);
        // Twiddle ω^{j1·k2}.
        let step = omega.pow_vartime([j1 as u64]);
        let mut w = Fr::ONE;
        for x in row.iter_mut() {
            fr::mul_assign(x, &w);
            fr::mul_assign(&mut w, &step);
        }
    });
    // t as n1 × n2 → v as n2 × n1: row k2 holds the j1 sequence.
    transpose(&t, v, n1, n2);
    let tw1 = powers(omega.pow_vartime([n2 as u64]), n1 / 2);
    v.par_chunks_mut(n1).for_each(|row| radix2(row, &tw1));
    // v[k2][k1] is X[k2 + n2·k1]: transpose into natural order.
    transpose(v, &mut t, n2, n1);
    std::mem::swap(v, &mut t);
    crate::memory::recycle(t);
}

/// `dst[c·rows + r] = src[r·cols + c]`, in parallel blocks of destination rows.
fn transpose(src: &[Fr], dst: &mut [Fr], rows: usize, cols: usize) {
    const B: usize = 16;
    dst.par_chunks_mut(B * rows)
        .enumerate()
        .for_each(|(blk, out)| {
            let c0 = blk * B;
            let width = out.len() / rows;
            for r in 0..rows {
                let line = &src[r * cols + c0..r * cols + c0 + width];
                for (dc, x) in line.iter().enumerate() {
                    out[dc * rows + r] = *x;
                }
            }
        });
}

/// In-place iterative radix-2 decimation-in-time transform; `tw` holds the first `len/2`
/// powers of the root. Butterflies whose twiddle is 1 (all of the first stage, the first of
/// every block after it) skip the multiplication: about a fifth of them at the row sizes the
/// four-step method uses.
fn radix2(v: &mut [Fr], tw: &[Fr]) {
    let n = v.len();
    bit_reverse(v);
    for pair in v.chunks_exact_mut(2) {
        if let [lo, hi] = pair {
            fr::butterfly_one(lo, hi);
        }
    }
    let mut half = 2;
    while half < n {
        let stride = n / (2 * half);
        for chunk in v.chunks_mut(2 * half) {
            let (lo, hi) = chunk.split_at_mut(half);
            fr::butterfly_one(&mut lo[0], &mut hi[0]);
            for j in 1..half {
                fr::butterfly(&mut lo[j], &mut hi[j], &tw[j * stride]);
            }
        }
        half *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand_chacha::rand_core::SeedableRng;

    fn random_vec(seed: u64, len: usize) -> Vec<Fr> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..len).map(|_| Fr::random(&mut rng)).collect()
    }

    /// Direct `O(n^2)` evaluation: the reference the radix-2 NTT must match.
    fn naive_eval(coeffs: &[Fr], x: Fr) -> Fr {
        coeffs.iter().rev().fold(Fr::ZERO, |acc, c| acc * x + c)
    }

    proptest! {
        /// Both the in-place path (up to 2^12) and the four-step path (above) against direct
        /// evaluation, at a sample of points.
        #[test]
        fn fft_matches_naive(log_n in 0u32..16, seed in any::<u64>()) {
            let d = Domain::new(log_n).unwrap();
            let c = random_vec(seed, d.size());
            let e = d.fft(d.coefficients(c.clone()).unwrap());
            let ce = d.coset_fft(d.coefficients(c.clone()).unwrap());
            let g = Domain::coset_shift();
            let samples = (0..d.size()).step_by((d.size() / 16).max(1)).chain([d.size() - 1]);
            for i in samples {
                let x = d.omega().pow_vartime([i as u64]);
                prop_assert_eq!(e.as_slice()[i], naive_eval(&c, x));
                prop_assert_eq!(ce.as_slice()[i], naive_eval(&c, g * x));
            }
        }

        #[test]
        fn inverses_round_trip(log_n in 0u32..17, seed in any::<u64>()) {
            let d = Domain::new(log_n).unwrap();
            let c = d.coefficients(random_vec(seed, d.size())).unwrap();
            prop_assert_eq!(d.ifft(d.fft(c.clone())), c.clone());
            prop_assert_eq!(d.icoset_fft(d.coset_fft(c.clone())), c.clone());
            let e = d.fft(c.clone());
            prop_assert_eq!(d.evaluations_to_coset(e), d.coset_fft(c));
        }

        #[test]
        fn lagrange_interpolates(log_n in 0u32..7, seed in any::<u64>()) {
            let d = Domain::new(log_n).unwrap();
            let tau = random_vec(seed, 1)[0];
            let evals = d.evaluations(random_vec(seed ^ 1, d.size())).unwrap();
            let l = d.lagrange_at(tau).unwrap();
            let via_lagrange: Fr = evals.as_slice().iter().zip(&l).map(|(e, l)| *e * l).sum();
            let coeffs = d.ifft(evals);
            prop_assert_eq!(via_lagrange, naive_eval(coeffs.as_slice(), tau));
        }
    }

    #[test]
    fn rejects_oversized() {
        assert!(matches!(Domain::new(33), Err(DomainError::TooLarge { .. })));
        let d = Domain::new(2).unwrap();
        assert!(d.evaluations(vec![Fr::ONE; 5]).is_err());
        assert!(d.lagrange_at(d.omega()).is_none());
    }

    #[test]
    fn vanishing_is_zero_on_domain() {
        let d = Domain::new(5).unwrap();
        for i in 0..32u64 {
            assert!(bool::from(
                d.vanishing_at(d.omega().pow_vartime([i])).is_zero()
            ));
        }
    }
}
