//! Poseidon parameters computed from first principles, matching neptune's `PoseidonConstants`
//! for the Merkle-tree hash type at standard strength (what Filecoin uses):
//!
//! - round constants from the Grain LFSR of the Poseidon reference implementation;
//! - the Cauchy MDS matrix `M[i][j] = 1 / (x_i + y_j)` with `x = 0..t`, `y = t..2t`;
//! - the optimised form the circuit uses: round constants pushed through `M^-1` so partial rounds
//!   add one constant, and the partial rounds' matrices factored into one dense "pre-sparse"
//!   matrix and one sparse matrix (first row and column dense, identity elsewhere) per round.
//!
//! Every value here is determined by exact field arithmetic, so computing it afresh gives exactly
//! neptune's values; the identity tests check that.

use bellpepper_core::SynthesisError;
use ff::PrimeField;

/// A square matrix, row-major.
pub(crate) type Matrix<F> = Vec<Vec<F>>;

/// The sparse matrix of one partial round: column 0 is `w_hat`, row 0 past column 0 is
/// `v_rest`, and the rest is the identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SparseMatrix<F> {
    pub(crate) w_hat: Vec<F>,
    pub(crate) v_rest: Vec<F>,
}

/// `v * m` for a row vector `v`.
pub(crate) fn vec_mat<F: PrimeField>(v: &[F], m: &Matrix<F>) -> Vec<F> {
    (0..m.len())
        .map(|j| v.iter().zip(m).map(|(x, row)| *x * row[j]).sum())
        .collect()
}

fn mat_mul<F: PrimeField>(a: &Matrix<F>, b: &Matrix<F>) -> Matrix<F> {
    a.iter().map(|row| vec_mat(row, b)).collect()
}

/// The inverse by Gauss-Jordan elimination; `None` if singular.
fn invert<F: PrimeField>(m: &Matrix<F>) -> Option<Matrix<F>> {
    let n = m.len();
    let mut a: Matrix<F> = m.clone();
    let mut inv: Matrix<F> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| if i == j { F::ONE } else { F::ZERO })
                .collect()
        })
        .collect();
    for col in 0..n {
        let pivot = (col..n).find(|&r| !bool::from(a[r][col].is_zero()))?;
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let scale = Option::<F>::from(a[col][col].invert())?;
        for k in 0..n {
            a[col][k] *= scale;
            inv[col][k] *= scale;
        }
        for r in (0..n).filter(|&r| r != col) {
            let factor = a[r][col];
            if bool::from(factor.is_zero()) {
                continue;
            }
            for k in 0..n {
                let (ak, ik) = (a[col][k], inv[col][k]);
                a[r][k] -= factor * ak;
                inv[r][k] -= factor * ik;
            }
        }
    }
    Some(inv)
}

/// `m` without row 0 and column 0.
fn minor00<F: PrimeField>(m: &Matrix<F>) -> Matrix<F> {
    m[1..].iter().map(|row| row[1..].to_vec()).collect()
}

/// The Grain LFSR in self-shrinking mode, as the Poseidon reference uses it.
struct Grain {
    state: [bool; 80],
    head: usize,
}

impl Grain {
    fn new(field_size: u16, t: u16, r_f: u16, r_p: u16) -> Self {
        // (value, width) fields, most significant bit first: prime field, x^5 S-box, sizes, and
        // thirty ones.
        let fields: [(u64, u32); 7] = [
            (1, 2),
            (1, 4),
            (field_size.into(), 12),
            (t.into(), 12),
            (r_f.into(), 10),
            (r_p.into(), 10),
            ((1 << 30) - 1, 30),
        ];
        let mut state = [false; 80];
        let bits = fields
            .iter()
            .flat_map(|&(v, w)| (0..w).rev().map(move |i| (v >> i) & 1 == 1));
        for (s, b) in state.iter_mut().zip(bits) {
            *s = b;
        }
        let mut grain = Grain { state, head: 0 };
        for _ in 0..160 {
            grain.step();
        }
        grain
    }

    fn bit(&self, i: usize) -> bool {
        self.state[(self.head + i) % 80]
    }

    fn step(&mut self) -> bool {
        let b =
            self.bit(62) ^ self.bit(51) ^ self.bit(38) ^ self.bit(23) ^ self.bit(13) ^ self.bit(0);
        self.state[self.head] = b;
        self.head = (self.head + 1) % 80;
        b
    }

    /// Pairs of bits: the second is output when the first is one.
    fn next_bit(&mut self) -> bool {
        loop {
            let keep = self.step();
            let bit = self.step();
            if keep {
                return bit;
            }
        }
    }

    fn next_bits(&mut self, n: usize) -> u8 {
        (0..n).fold(0, |acc, _| (acc << 1) | u8::from(self.next_bit()))
    }

    /// The next field element by rejection sampling: `field_size` bits, big-endian, the first
    /// byte holding the `field_size % 8` leftover bits.
    fn next_field_element<F: PrimeField>(&mut self, field_size: usize) -> F {
        loop {
            let mut repr = F::Repr::default();
            let bytes = repr.as_mut();
            let first = match field_size % 8 {
                0 => 8,
                r => r,
            };
            for (k, byte) in bytes.iter_mut().enumerate() {
                *byte = self.next_bits(if k == 0 { first } else { 8 });
            }
            bytes.reverse();
            if let Some(f) = F::from_repr_vartime(repr) {
                return f;
            }
        }
    }
}

/// Full and partial round counts for 128-bit security with the x^5 S-box over a 255-bit field,
/// including the Poseidon paper's security margin (as neptune computes them).
fn round_numbers(arity: usize) -> Option<(usize, usize)> {
    let partial = match arity {
        2 => 55,
        4 => 56,
        8 => 57,
        11 => 57,
        _ => return None,
    };
    Some((8, partial))
}

/// Round constants `c[round * width + i]`.
fn round_constants<F: PrimeField>(width: usize, full: usize, partial: usize) -> Vec<F> {
    let field_size = F::NUM_BITS as usize;
    let mut grain = Grain::new(
        F::NUM_BITS as u16,
        width as u16,
        full as u16,
        partial as u16,
    );
    (0..(full + partial) * width)
        .map(|_| grain.next_field_element(field_size))
        .collect()
}

fn cauchy_mds<F: PrimeField>(t: usize) -> Option<Matrix<F>> {
    (0..t as u64)
        .map(|x| {
            (t as u64..2 * t as u64)
                .map(|y| Option::from(F::from(x + y).invert()))
                .collect()
        })
        .collect()
}

/// Factors the partial rounds' products by `m` into `pre_sparse` (applied once, at the last
/// initial full round) followed by one sparse matrix per partial round.
fn sparse_factorization<F: PrimeField>(
    m: &Matrix<F>,
    partial: usize,
) -> Option<(Matrix<F>, Vec<SparseMatrix<F>>)> {
    let mut current = m.clone();
    let mut sparse = Vec::with_capacity(partial);
    for _ in 0..partial {
        // current = m' * m'' with m' = diag(1, minor00(current)) and m'' sparse.
        let hat_inv = invert(&minor00(&current))?;
        let w: Vec<F> = current[1..].iter().map(|row| row[0]).collect();
        let mut w_hat = vec![current[0][0]];
        w_hat.extend(vec_mat(&w, &hat_inv));
        sparse.push(SparseMatrix {
            w_hat,
            v_rest: current[0][1..].to_vec(),
        });
        let prime: Matrix<F> = current
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let mut r = vec![F::ZERO; row.len()];
                if i == 0 {
                    r[0] = F::ONE;
                } else {
                    r[1..].copy_from_slice(&row[1..]);
                }
                r
            })
            .collect();
        current = mat_mul(m, &prime);
    }
    sparse.reverse();
    Some((current, sparse))
}

/// Round constants rewritten for the optimised rounds: the first round adds `c_0` before its
/// S-boxes, every later full round adds its constants (pushed through `M^-1`) after the previous
/// S-boxes, and each partial round adds one constant to element 0 only.
fn compress_round_constants<F: PrimeField>(
    width: usize,
    full: usize,
    partial: usize,
    rc: &[F],
    m_inv: &Matrix<F>,
) -> Vec<F> {
    let keys = |r: usize| &rc[r * width..(r + 1) * width];
    let half = full / 2;
    let mut out = keys(0).to_vec();
    for r in 1..half {
        out.extend(vec_mat(keys(r), m_inv));
    }
    // Walk the partial rounds backwards, moving each round's constants (but the one entering
    // the S-box) through the matrix into the round before.
    let last = half + partial;
    let mut acc = keys(last).to_vec();
    let mut singles = Vec::with_capacity(partial);
    for r in (last - partial..last).rev() {
        let mut moved = vec_mat(&acc, m_inv);
        singles.push(moved[0]);
        moved[0] = F::ZERO;
        acc = keys(r).iter().zip(&moved).map(|(a, b)| *a + b).collect();
    }
    out.extend(vec_mat(&acc, m_inv));
    out.extend(singles.into_iter().rev());
    for r in last + 1..last + half {
        out.extend(vec_mat(keys(r), m_inv));
    }
    out
}

/// Everything a Poseidon instance of one arity needs, natively and in a circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoseidonConstants<F: PrimeField> {
    pub(crate) arity: usize,
    pub(crate) full_rounds: usize,
    pub(crate) partial_rounds: usize,
    /// The capacity element: `2^arity - 1` for Merkle-tree hashing.
    pub(crate) domain_tag: F,
    pub(crate) round_constants: Vec<F>,
    pub(crate) mds: Matrix<F>,
    pub(crate) compressed_round_constants: Vec<F>,
    pub(crate) pre_sparse: Matrix<F>,
    pub(crate) sparse: Vec<SparseMatrix<F>>,
}

fn unsupported(what: String) -> SynthesisError {
    SynthesisError::IncompatibleLengthVector(what)
}

impl<F: PrimeField> PoseidonConstants<F> {
    /// The Merkle-tree constants for `arity` (2, 4, 8 or 11) over a field with 32-byte
    /// representations, as neptune's `PoseidonConstants::new()`.
    pub fn new(arity: usize) -> Result<Self, SynthesisError> {
        let (full, partial) = round_numbers(arity)
            .ok_or_else(|| unsupported(format!("poseidon: unsupported arity {arity}")))?;
        if F::Repr::default().as_ref().len() != 32 || F::NUM_BITS > 256 {
            return Err(unsupported(
                "poseidon: field must have 32-byte elements".into(),
            ));
        }
        let width = arity + 1;
        let round_constants = round_constants::<F>(width, full, partial);
        let singular = || unsupported("poseidon: singular MDS matrix".into());
        let mds = cauchy_mds::<F>(width).ok_or_else(singular)?;
        let m_inv = invert(&mds).ok_or_else(singular)?;
        let compressed_round_constants =
            compress_round_constants(width, full, partial, &round_constants, &m_inv);
        let (pre_sparse, sparse) = sparse_factorization(&mds, partial).ok_or_else(singular)?;
        Ok(PoseidonConstants {
            arity,
            full_rounds: full,
            partial_rounds: partial,
            domain_tag: F::from((1u64 << arity) - 1),
            round_constants,
            mds,
            compressed_round_constants,
            pre_sparse,
            sparse,
        })
    }

    /// The constants for `arity` with neptune's custom domain tag `id · 2^40` (`HashType::Custom(
    /// CType::Arbitrary(id))`, `id` in 1..=256), which SnapDeals uses to derive its randomness.
    /// Round constants and matrices are those of [`Self::new`]: only the capacity element differs.
    pub fn custom(arity: usize, id: u64) -> Result<Self, SynthesisError> {
        if !(1..=256).contains(&id) {
            return Err(unsupported(format!(
                "poseidon: custom domain tag id {id} is outside 1..=256"
            )));
        }
        Ok(PoseidonConstants {
            domain_tag: F::from(id) * F::from(1u64 << 40),
            ..Self::new(arity)?
        })
    }

    /// The number of inputs per hash.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// The state width, `arity + 1`.
    pub fn width(&self) -> usize {
        self.arity + 1
    }

    /// The number of full rounds.
    pub fn full_rounds(&self) -> usize {
        self.full_rounds
    }

    /// The number of partial rounds.
    pub fn partial_rounds(&self) -> usize {
        self.partial_rounds
    }
}
