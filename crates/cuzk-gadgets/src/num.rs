//! Field elements in a circuit: [`AllocatedNum`] (one variable) and [`Num`] (a linear combination
//! with its value), mirroring `bellpepper_core::num` row for row.

use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError, Variable};
use ff::{PrimeField, PrimeFieldBits};

use crate::boolean::{field_into_allocated_bits_le, AllocatedBit, Boolean};

/// A variable holding a field element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocatedNum<Scalar: PrimeField> {
    value: Option<Scalar>,
    variable: Variable,
}

/// `sum 2^i bits[i] - var` (bits least significant first): zero when the bits encode `var`.
fn unpacking_lc<Scalar: PrimeField>(
    bits: &[AllocatedBit],
    var: Variable,
) -> LinearCombination<Scalar> {
    let mut lc = LinearCombination::zero();
    let mut coeff = Scalar::ONE;
    for bit in bits {
        lc = lc + (coeff, bit.get_variable());
        coeff = coeff.double();
    }
    lc - var
}

/// `v[0] AND v[1] AND ...`, one constraint per extra operand.
fn kary_and<Scalar, CS>(mut cs: CS, v: &[AllocatedBit]) -> Result<AllocatedBit, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    let (first, rest) = v.split_first().ok_or_else(|| {
        SynthesisError::IncompatibleLengthVector("kary_and of no bits".to_string())
    })?;
    rest.iter().enumerate().try_fold(*first, |acc, (i, bit)| {
        AllocatedBit::and(cs.namespace(|| format!("and {}", i + 1)), &acc, bit)
    })
}

/// Wraps a witness closure so the value it yields is also kept in `known`.
fn remember<'a, Scalar: PrimeField>(
    value: impl FnOnce() -> Result<Scalar, SynthesisError> + 'a,
    known: &'a mut Option<Scalar>,
) -> impl FnOnce() -> Result<Scalar, SynthesisError> + 'a {
    move || {
        let v = value()?;
        *known = Some(v);
        Ok(v)
    }
}

impl<Scalar: PrimeField> AllocatedNum<Scalar> {
    /// Allocates a private variable; `value` is only called when the witness is being computed.
    pub fn alloc<CS, F>(mut cs: CS, value: F) -> Result<Self, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        let mut known = None;
        let variable = cs.alloc(|| "num", remember(value, &mut known))?;
        Ok(AllocatedNum {
            value: known,
            variable,
        })
    }

    /// Allocates a public input.
    pub fn alloc_input<CS, F>(mut cs: CS, value: F) -> Result<Self, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        let mut known = None;
        let variable = cs.alloc_input(|| "input num", remember(value, &mut known))?;
        Ok(AllocatedNum {
            value: known,
            variable,
        })
    }

    /// [`Self::alloc_input`] if `is_input`, else [`Self::alloc`].
    pub fn alloc_maybe_input<CS, F>(
        cs: CS,
        is_input: bool,
        value: F,
    ) -> Result<Self, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        if is_input {
            Self::alloc_input(cs, value)
        } else {
            Self::alloc(cs, value)
        }
    }

    /// Exposes the value as a new public input: `input * 1 = self`.
    pub fn inputize<CS>(&self, mut cs: CS) -> Result<(), SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
    {
        let input = cs.alloc_input(
            || "input variable",
            || self.value.ok_or(SynthesisError::AssignmentMissing),
        )?;
        cs.enforce(
            || "enforce input is correct",
            |lc| lc + input,
            |lc| lc + CS::one(),
            |lc| lc + self.variable,
        );
        Ok(())
    }

    /// The canonical little-endian bits: also proves the bits encode a value below the modulus,
    /// by walking the bits of `p - 1` and forbidding a one wherever every higher one-bit of
    /// `p - 1` is matched and `p - 1` has a zero.
    pub fn to_bits_le_strict<CS>(&self, mut cs: CS) -> Result<Vec<Boolean>, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
        Scalar: PrimeFieldBits,
    {
        let max = (-Scalar::ONE).to_le_bits();
        let value = self.value.map(|v| v.to_le_bits());
        let top = max.iter().rposition(|b| *b).unwrap_or(0);

        // Most significant first.
        let mut result = Vec::with_capacity(top + 1);
        let mut current_run = Vec::new();
        let mut last_run: Option<AllocatedBit> = None;
        for (i, pos) in (0..=top).rev().enumerate() {
            let bit = value.as_ref().map(|v| v[pos]);
            if max[pos] {
                let b = AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), bit)?;
                current_run.push(b);
                result.push(b);
                continue;
            }
            if !current_run.is_empty() {
                current_run.extend(last_run);
                last_run = Some(kary_and(
                    cs.namespace(|| format!("run ending at {i}")),
                    &current_run,
                )?);
                current_run.clear();
            }
            let guard = last_run.as_ref().ok_or_else(|| {
                SynthesisError::IncompatibleLengthVector("modulus starts with a zero".to_string())
            })?;
            result.push(AllocatedBit::alloc_conditionally(
                cs.namespace(|| format!("bit {i}")),
                bit,
                guard,
            )?);
        }
        result.reverse();

        let lc = unpacking_lc(&result, self.variable);
        cs.enforce(|| "unpacking constraint", |lc| lc, |lc| lc, |_| lc);
        Ok(result.into_iter().map(Boolean::Is).collect())
    }

    /// The `NUM_BITS` little-endian bits, without the canonicity check.
    pub fn to_bits_le<CS>(&self, mut cs: CS) -> Result<Vec<Boolean>, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
        Scalar: PrimeFieldBits,
    {
        let bits = field_into_allocated_bits_le(&mut cs, self.value)?;
        let lc = unpacking_lc(&bits, self.variable);
        cs.enforce(|| "unpacking constraint", |lc| lc, |lc| lc, |_| lc);
        Ok(bits.into_iter().map(Boolean::Is).collect())
    }

    /// Allocates `self * other` under `self * other = product`.
    pub fn mul<CS>(&self, mut cs: CS, other: &Self) -> Result<Self, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
    {
        let product = Self::alloc(cs.namespace(|| "product num"), || {
            let a = self.value.ok_or(SynthesisError::AssignmentMissing)?;
            let b = other.value.ok_or(SynthesisError::AssignmentMissing)?;
            Ok(a * b)
        })?;
        cs.enforce(
            || "multiplication constraint",
            |lc| lc + self.variable,
            |lc| lc + other.variable,
            |lc| lc + product.variable,
        );
        Ok(product)
    }

    /// Allocates `self^2` under `self * self = square`.
    pub fn square<CS>(&self, mut cs: CS) -> Result<Self, SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
    {
        let square = Self::alloc(cs.namespace(|| "squared num"), || {
            Ok(self
                .value
                .ok_or(SynthesisError::AssignmentMissing)?
                .square())
        })?;
        cs.enforce(
            || "squaring constraint",
            |lc| lc + self.variable,
            |lc| lc + self.variable,
            |lc| lc + square.variable,
        );
        Ok(square)
    }

    /// Proves `self != 0` by witnessing its inverse: `self * inv = 1`.
    pub fn assert_nonzero<CS>(&self, mut cs: CS) -> Result<(), SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
    {
        let inv = cs.alloc(
            || "ephemeral inverse",
            || {
                let v = self.value.ok_or(SynthesisError::AssignmentMissing)?;
                Option::from(v.invert()).ok_or(SynthesisError::DivisionByZero)
            },
        )?;
        cs.enforce(
            || "nonzero assertion constraint",
            |lc| lc + self.variable,
            |lc| lc + inv,
            |lc| lc + CS::one(),
        );
        Ok(())
    }

    /// `(a, b)` if `condition` is false, `(b, a)` if true: the conditional swap Merkle paths use.
    pub fn conditionally_reverse<CS>(
        mut cs: CS,
        a: &Self,
        b: &Self,
        condition: &Boolean,
    ) -> Result<(Self, Self), SynthesisError>
    where
        CS: ConstraintSystem<Scalar>,
    {
        let one = CS::one();
        let pick = |first: &Self, second: &Self| {
            let swap = condition
                .get_value()
                .ok_or(SynthesisError::AssignmentMissing)?;
            let chosen = if swap { second } else { first };
            chosen.value.ok_or(SynthesisError::AssignmentMissing)
        };

        let c = Self::alloc(cs.namespace(|| "conditional reversal result 1"), || {
            pick(a, b)
        })?;
        cs.enforce(
            || "first conditional reversal",
            |lc| lc + a.variable - b.variable,
            |lc| condition.add_to_lc(one, Scalar::ONE, lc),
            |lc| lc + a.variable - c.variable,
        );

        let d = Self::alloc(cs.namespace(|| "conditional reversal result 2"), || {
            pick(b, a)
        })?;
        cs.enforce(
            || "second conditional reversal",
            |lc| lc + b.variable - a.variable,
            |lc| condition.add_to_lc(one, Scalar::ONE, lc),
            |lc| lc + b.variable - d.variable,
        );

        Ok((c, d))
    }

    /// The witness value, if known.
    pub fn get_value(&self) -> Option<Scalar> {
        self.value
    }

    /// The underlying variable.
    pub fn get_variable(&self) -> Variable {
        self.variable
    }
}

/// A linear combination together with its value.
#[derive(Clone, Debug)]
pub struct Num<Scalar: PrimeField> {
    value: Option<Scalar>,
    lc: LinearCombination<Scalar>,
}

impl<Scalar: PrimeField> From<AllocatedNum<Scalar>> for Num<Scalar> {
    fn from(num: AllocatedNum<Scalar>) -> Self {
        Num {
            value: num.value,
            lc: LinearCombination::from_variable(num.variable),
        }
    }
}

impl<Scalar: PrimeField> Num<Scalar> {
    /// The empty combination, value zero.
    pub fn zero() -> Self {
        Num {
            value: Some(Scalar::ZERO),
            lc: LinearCombination::zero(),
        }
    }

    /// A combination with a value the caller vouches for.
    pub(crate) fn from_parts(value: Option<Scalar>, lc: LinearCombination<Scalar>) -> Self {
        Num { value, lc }
    }

    /// The value, if known.
    pub fn get_value(&self) -> Option<Scalar> {
        self.value
    }

    /// `coeff * self` as a fresh linear combination.
    pub fn lc(&self, coeff: Scalar) -> LinearCombination<Scalar> {
        self.add_to_lc(coeff, LinearCombination::zero())
    }

    /// Appends `coeff * self` to `lc`.
    pub fn add_to_lc(
        &self,
        coeff: Scalar,
        lc: LinearCombination<Scalar>,
    ) -> LinearCombination<Scalar> {
        lc + (coeff, &self.lc)
    }

    /// The linear combination itself, without a copy.
    pub fn into_lc(self) -> LinearCombination<Scalar> {
        self.lc
    }

    /// `self + coeff * bit`, appending the bit's terms in place.
    pub fn add_bool_with_coeff(self, one: Variable, bit: &Boolean, coeff: Scalar) -> Self {
        let value = match (self.value, bit.get_value()) {
            (Some(v), Some(true)) => Some(v + coeff),
            (Some(v), Some(false)) => Some(v),
            _ => None,
        };
        Num {
            value,
            lc: bit.add_to_lc(one, coeff, self.lc),
        }
    }

    /// `self + other`. As upstream, a sum with one unknown side takes the known side's value.
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, other: &Self) -> Self {
        let value = match (self.value, other.value) {
            (Some(a), Some(b)) => Some(a + b),
            (known, None) | (None, known) => known,
        };
        Num {
            value,
            lc: self.lc + &other.lc,
        }
    }

    /// `scalar * self`.
    pub fn scale(mut self, scalar: Scalar) -> Self {
        for (_, coeff) in self.lc.iter_mut() {
            *coeff *= scalar;
        }
        Num {
            value: self.value.map(|v| v * scalar),
            lc: self.lc,
        }
    }
}
