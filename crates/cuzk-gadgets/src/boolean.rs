//! Bits: [`AllocatedBit`] (a variable constrained to 0 or 1) and [`Boolean`] (a bit, its negation
//! or a constant).
//!
//! Every gadget here emits the same rows as `bellpepper_core::boolean`. What differs is how the
//! rows are built: [`Boolean::add_to_lc`] and [`Boolean::sub_from_lc`] append a bit's terms to the
//! linear combination being built instead of materialising a temporary one per bit, and both types
//! are `Copy`, so words of bits live in arrays rather than vectors.

use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError, Variable};
use ff::{PrimeField, PrimeFieldBits};

/// The field element 0 or 1.
pub(crate) fn bit_scalar<Scalar: PrimeField>(bit: bool) -> Scalar {
    if bit {
        Scalar::ONE
    } else {
        Scalar::ZERO
    }
}

/// A variable with a boolean constraint (or derived from booleans so that it is one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocatedBit {
    variable: Variable,
    value: Option<bool>,
}

impl AllocatedBit {
    /// The witness value, if known.
    pub fn get_value(&self) -> Option<bool> {
        self.value
    }

    /// The underlying variable.
    pub fn get_variable(&self) -> Variable {
        self.variable
    }

    /// Allocates a variable for `value` without constraining it; callers add the constraint that
    /// makes it a bit.
    fn alloc_unconstrained<Scalar, CS>(
        cs: &mut CS,
        annotation: &'static str,
        value: Option<bool>,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let variable = cs.alloc(
            || annotation,
            || {
                value
                    .map(bit_scalar)
                    .ok_or(SynthesisError::AssignmentMissing)
            },
        )?;
        Ok(AllocatedBit { variable, value })
    }

    /// Allocates a bit: `(1 - b) * b = 0`.
    pub fn alloc<Scalar, CS>(mut cs: CS, value: Option<bool>) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let bit = Self::alloc_unconstrained(&mut cs, "boolean", value)?;
        let var = bit.variable;
        cs.enforce(
            || "boolean constraint",
            |lc| lc + CS::one() - var,
            |lc| lc + var,
            |lc| lc,
        );
        Ok(bit)
    }

    /// Allocates a bit that must be zero whenever `must_be_false` is one:
    /// `(1 - must_be_false - b) * b = 0`.
    pub fn alloc_conditionally<Scalar, CS>(
        mut cs: CS,
        value: Option<bool>,
        must_be_false: &AllocatedBit,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let bit = Self::alloc_unconstrained(&mut cs, "boolean", value)?;
        let var = bit.variable;
        cs.enforce(
            || "boolean constraint",
            |lc| lc + CS::one() - must_be_false.variable - var,
            |lc| lc + var,
            |lc| lc,
        );
        Ok(bit)
    }

    /// `a XOR b`: `(2a) * b = a + b - c`.
    pub fn xor<Scalar, CS>(mut cs: CS, a: &Self, b: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let value = a.value.zip(b.value).map(|(a, b)| a ^ b);
        let c = Self::alloc_unconstrained(&mut cs, "xor result", value)?;
        cs.enforce(
            || "xor constraint",
            |lc| lc + a.variable + a.variable,
            |lc| lc + b.variable,
            |lc| lc + a.variable + b.variable - c.variable,
        );
        Ok(c)
    }

    /// `a AND b`: `a * b = c`.
    pub fn and<Scalar, CS>(mut cs: CS, a: &Self, b: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let value = a.value.zip(b.value).map(|(a, b)| a & b);
        let c = Self::alloc_unconstrained(&mut cs, "and result", value)?;
        cs.enforce(
            || "and constraint",
            |lc| lc + a.variable,
            |lc| lc + b.variable,
            |lc| lc + c.variable,
        );
        Ok(c)
    }

    /// `a AND NOT b`: `a * (1 - b) = c`.
    pub fn and_not<Scalar, CS>(mut cs: CS, a: &Self, b: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let value = a.value.zip(b.value).map(|(a, b)| a & !b);
        let c = Self::alloc_unconstrained(&mut cs, "and not result", value)?;
        cs.enforce(
            || "and not constraint",
            |lc| lc + a.variable,
            |lc| lc + CS::one() - b.variable,
            |lc| lc + c.variable,
        );
        Ok(c)
    }

    /// `NOT a AND NOT b`: `(1 - a) * (1 - b) = c`.
    pub fn nor<Scalar, CS>(mut cs: CS, a: &Self, b: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let value = a.value.zip(b.value).map(|(a, b)| !a & !b);
        let c = Self::alloc_unconstrained(&mut cs, "nor result", value)?;
        cs.enforce(
            || "nor constraint",
            |lc| lc + CS::one() - a.variable,
            |lc| lc + CS::one() - b.variable,
            |lc| lc + c.variable,
        );
        Ok(c)
    }
}

/// Allocates `n` bits holding the low `n` bits of `value`, least significant first.
pub(crate) fn alloc_bits_le<Scalar, CS>(
    mut cs: CS,
    value: Option<u64>,
    n: usize,
) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    (0..n)
        .map(|i| {
            let bit = value.map(|v| (v >> i) & 1 == 1);
            AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), bit).map(Boolean::Is)
        })
        .collect()
}

/// The value of little-endian `bits` (at most 64), if every bit's value is known.
pub(crate) fn value_from_bits_le(bits: &[Boolean]) -> Option<u64> {
    bits.iter().enumerate().try_fold(0u64, |acc, (i, b)| {
        Some(acc | (u64::from(b.get_value()?) << i))
    })
}

/// Allocates the 64 bits of `value`, least significant first.
pub fn u64_into_boolean_vec_le<Scalar, CS>(
    cs: CS,
    value: Option<u64>,
) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    alloc_bits_le(cs, value, 64)
}

/// Allocates the `NUM_BITS` bits of a field element, least significant first. The bits are not
/// tied to any variable and are not checked to encode a canonical element.
pub fn field_into_allocated_bits_le<Scalar, CS>(
    mut cs: CS,
    value: Option<Scalar>,
) -> Result<Vec<AllocatedBit>, SynthesisError>
where
    Scalar: PrimeFieldBits,
    CS: ConstraintSystem<Scalar>,
{
    let n = Scalar::NUM_BITS as usize;
    let bits = value.map(|v| v.to_le_bits());
    (0..n)
        .map(|i| {
            let bit = bits.as_ref().map(|b| b[i]);
            AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), bit)
        })
        .collect()
}

/// [`field_into_allocated_bits_le`], as [`Boolean`]s.
pub fn field_into_boolean_vec_le<Scalar, CS>(
    cs: CS,
    value: Option<Scalar>,
) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeFieldBits,
    CS: ConstraintSystem<Scalar>,
{
    Ok(field_into_allocated_bits_le(cs, value)?
        .into_iter()
        .map(Boolean::Is)
        .collect())
}

/// Where a bit's terms can be appended: a [`LinearCombination`], or a buffer that builds one later
/// (see [`crate::multieq`]).
pub trait Terms<Scalar: PrimeField> {
    /// Appends `coeff * var`.
    fn term(self, coeff: Scalar, var: Variable) -> Self;
}

impl<Scalar: PrimeField> Terms<Scalar> for LinearCombination<Scalar> {
    #[inline]
    fn term(self, coeff: Scalar, var: Variable) -> Self {
        self + (coeff, var)
    }
}

/// A bit in a circuit: an allocated bit, the negation of one, or a constant. Negation and
/// constants cost no constraints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boolean {
    /// The allocated bit itself.
    Is(AllocatedBit),
    /// One minus the allocated bit.
    Not(AllocatedBit),
    /// A constant.
    Constant(bool),
}

impl From<AllocatedBit> for Boolean {
    fn from(bit: AllocatedBit) -> Self {
        Boolean::Is(bit)
    }
}

impl Boolean {
    /// A constant bit.
    pub fn constant(b: bool) -> Self {
        Boolean::Constant(b)
    }

    /// Whether the bit is a constant.
    pub fn is_constant(&self) -> bool {
        matches!(self, Boolean::Constant(_))
    }

    /// The witness value, if known.
    pub fn get_value(&self) -> Option<bool> {
        match self {
            Boolean::Constant(c) => Some(*c),
            Boolean::Is(v) => v.value,
            Boolean::Not(v) => v.value.map(|b| !b),
        }
    }

    /// The negation (free).
    #[allow(clippy::should_implement_trait)]
    pub fn not(&self) -> Self {
        match *self {
            Boolean::Constant(c) => Boolean::Constant(!c),
            Boolean::Is(v) => Boolean::Not(v),
            Boolean::Not(v) => Boolean::Is(v),
        }
    }

    /// Appends `coeff * self` to `lc`: the term-for-term equivalent of `lc + &self.lc(one, coeff)`
    /// without the temporary.
    #[inline]
    pub fn add_to_lc<Scalar: PrimeField, T: Terms<Scalar>>(
        &self,
        one: Variable,
        coeff: Scalar,
        lc: T,
    ) -> T {
        match *self {
            Boolean::Constant(false) => lc,
            Boolean::Constant(true) => lc.term(coeff, one),
            Boolean::Is(ref v) => lc.term(coeff, v.variable),
            Boolean::Not(ref v) => lc.term(coeff, one).term(-coeff, v.variable),
        }
    }

    /// Appends `-coeff * self` to `lc`: the equivalent of `lc - &self.lc(one, coeff)`.
    #[inline]
    pub fn sub_from_lc<Scalar: PrimeField, T: Terms<Scalar>>(
        &self,
        one: Variable,
        coeff: Scalar,
        lc: T,
    ) -> T {
        self.add_to_lc(one, -coeff, lc)
    }

    /// `coeff * self` as a fresh linear combination, for callers that need one on its own.
    pub fn lc<Scalar: PrimeField>(
        &self,
        one: Variable,
        coeff: Scalar,
    ) -> LinearCombination<Scalar> {
        self.add_to_lc(one, coeff, LinearCombination::zero())
    }

    /// Enforces `a == b`. Two different constants are [`SynthesisError::Unsatisfiable`].
    pub fn enforce_equal<Scalar, CS>(mut cs: CS, a: &Self, b: &Self) -> Result<(), SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let one = CS::one();
        match (a, b) {
            (Boolean::Constant(a), Boolean::Constant(b)) => {
                return if a == b {
                    Ok(())
                } else {
                    Err(SynthesisError::Unsatisfiable)
                };
            }
            (Boolean::Constant(true), x) | (x, Boolean::Constant(true)) => cs.enforce(
                || "enforce equal to one",
                |lc| lc,
                |lc| lc,
                |lc| x.sub_from_lc(one, Scalar::ONE, lc + one),
            ),
            (Boolean::Constant(false), x) | (x, Boolean::Constant(false)) => cs.enforce(
                || "enforce equal to zero",
                |lc| lc,
                |lc| lc,
                |lc| x.add_to_lc(one, Scalar::ONE, lc),
            ),
            (a, b) => cs.enforce(
                || "enforce equal",
                |lc| lc,
                |lc| lc,
                |lc| b.sub_from_lc(one, Scalar::ONE, a.add_to_lc(one, Scalar::ONE, lc)),
            ),
        }
        Ok(())
    }

    /// `a XOR b`; at most one constraint, none if either side is constant.
    pub fn xor<Scalar, CS>(cs: CS, a: &Self, b: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        match (a, b) {
            (Boolean::Constant(false), x) | (x, Boolean::Constant(false)) => Ok(*x),
            (Boolean::Constant(true), x) | (x, Boolean::Constant(true)) => Ok(x.not()),
            // a ^ !b = !(a ^ b)
            (Boolean::Is(is), Boolean::Not(not)) | (Boolean::Not(not), Boolean::Is(is)) => {
                Ok(Boolean::Not(AllocatedBit::xor(cs, is, not)?))
            }
            (Boolean::Is(a), Boolean::Is(b)) | (Boolean::Not(a), Boolean::Not(b)) => {
                Ok(Boolean::Is(AllocatedBit::xor(cs, a, b)?))
            }
        }
    }

    /// `a AND b`; at most one constraint, none if either side is constant.
    pub fn and<Scalar, CS>(cs: CS, a: &Self, b: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        match (a, b) {
            (Boolean::Constant(false), _) | (_, Boolean::Constant(false)) => {
                Ok(Boolean::Constant(false))
            }
            (Boolean::Constant(true), x) | (x, Boolean::Constant(true)) => Ok(*x),
            (Boolean::Is(is), Boolean::Not(not)) | (Boolean::Not(not), Boolean::Is(is)) => {
                Ok(Boolean::Is(AllocatedBit::and_not(cs, is, not)?))
            }
            (Boolean::Not(a), Boolean::Not(b)) => Ok(Boolean::Is(AllocatedBit::nor(cs, a, b)?)),
            (Boolean::Is(a), Boolean::Is(b)) => Ok(Boolean::Is(AllocatedBit::and(cs, a, b)?)),
        }
    }

    /// SHA-256's choose, `(a AND b) XOR (NOT a AND c)`, in one constraint:
    /// `(b - c) * a = ch - c`. Constant operands reduce to [`Boolean::and`] exactly as upstream.
    pub fn sha256_ch<Scalar, CS>(
        mut cs: CS,
        a: &Self,
        b: &Self,
        c: &Self,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let value = match (a.get_value(), b.get_value(), c.get_value()) {
            (Some(a), Some(b), Some(c)) => Some((a & b) ^ (!a & c)),
            _ => None,
        };
        match (a, b, c) {
            (Boolean::Constant(_), Boolean::Constant(_), Boolean::Constant(_)) => {
                return value
                    .map(Boolean::Constant)
                    .ok_or(SynthesisError::AssignmentMissing);
            }
            (Boolean::Constant(false), _, c) => return Ok(*c),
            (a, Boolean::Constant(false), c) => return Boolean::and(cs, &a.not(), c),
            (a, b, Boolean::Constant(false)) => return Boolean::and(cs, a, b),
            (a, b, Boolean::Constant(true)) => return Ok(Boolean::and(cs, a, &b.not())?.not()),
            (a, Boolean::Constant(true), c) => {
                return Ok(Boolean::and(cs, &a.not(), &c.not())?.not());
            }
            // `a` constant one still takes the general constraint, as upstream does.
            _ => {}
        }

        let ch = AllocatedBit::alloc_unconstrained(&mut cs, "ch", value)?;
        let one = CS::one();
        cs.enforce(
            || "ch computation",
            |lc| c.sub_from_lc(one, Scalar::ONE, b.add_to_lc(one, Scalar::ONE, lc)),
            |lc| a.add_to_lc(one, Scalar::ONE, lc),
            |lc| c.sub_from_lc(one, Scalar::ONE, lc + ch.variable),
        );
        Ok(Boolean::Is(ch))
    }

    /// SHA-256's majority, `(a AND b) XOR (a AND c) XOR (b AND c)`, in two constraints:
    /// `bc = b AND c` and `(2bc - b - c) * a = bc - maj`.
    pub fn sha256_maj<Scalar, CS>(
        mut cs: CS,
        a: &Self,
        b: &Self,
        c: &Self,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let value = match (a.get_value(), b.get_value(), c.get_value()) {
            (Some(a), Some(b), Some(c)) => Some((a & b) ^ (a & c) ^ (b & c)),
            _ => None,
        };
        match (a, b, c) {
            (Boolean::Constant(_), Boolean::Constant(_), Boolean::Constant(_)) => {
                return value
                    .map(Boolean::Constant)
                    .ok_or(SynthesisError::AssignmentMissing);
            }
            (Boolean::Constant(false), b, c) => return Boolean::and(cs, b, c),
            (a, Boolean::Constant(false), c) => return Boolean::and(cs, a, c),
            (a, b, Boolean::Constant(false)) => return Boolean::and(cs, a, b),
            (a, b, Boolean::Constant(true)) => {
                return Ok(Boolean::and(cs, &a.not(), &b.not())?.not());
            }
            (a, Boolean::Constant(true), c) => {
                return Ok(Boolean::and(cs, &a.not(), &c.not())?.not());
            }
            (Boolean::Constant(true), b, c) => {
                return Ok(Boolean::and(cs, &b.not(), &c.not())?.not());
            }
            _ => {}
        }

        let maj = AllocatedBit::alloc_unconstrained(&mut cs, "maj", value)?;
        let bc = Self::and(cs.namespace(|| "b and c"), b, c)?;
        let one = CS::one();
        let two = Scalar::ONE.double();
        cs.enforce(
            || "maj computation",
            |lc| {
                let lc = bc.add_to_lc(one, two, lc);
                c.sub_from_lc(one, Scalar::ONE, b.sub_from_lc(one, Scalar::ONE, lc))
            },
            |lc| a.add_to_lc(one, Scalar::ONE, lc),
            |lc| bc.add_to_lc(one, Scalar::ONE, lc) - maj.variable,
        );
        Ok(Boolean::Is(maj))
    }
}

/// `input[i] XOR key[i mod 256]`: Filecoin's bitwise XOR of data with a 32-byte key.
pub fn xor_with_key<Scalar, CS>(
    mut cs: CS,
    key: &[Boolean],
    input: &[Boolean],
) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    if key.len() != 256 {
        return Err(SynthesisError::IncompatibleLengthVector(format!(
            "xor: key of {} bits, expected 256",
            key.len()
        )));
    }
    input
        .iter()
        .zip(key.iter().cycle())
        .enumerate()
        .map(|(i, (bit, k))| Boolean::xor(cs.namespace(|| format!("xor bit: {i}")), bit, k))
        .collect()
}
