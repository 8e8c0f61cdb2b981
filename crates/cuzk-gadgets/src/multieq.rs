//! Batches many small equalities `lhs_i == rhs_i` into one constraint
//! `(sum 2^k_i lhs_i) * 1 = sum 2^k_i rhs_i`, packing as many as fit below the field's capacity.
//!
//! Upstream keeps each equality as a pair of linear combinations and then clones the growing
//! accumulators for every one it adds, inserting hundreds of terms into the middle of sorted
//! vectors. [`MultiEq::enforce_equal_with`] instead lets the caller push its terms, already
//! shifted, onto unsorted [`TermBuffer`]s, which become linear combinations once, in variable
//! order, when the constraint is emitted. Field addition being exact, the merged coefficients
//! (zero ones included) are the ones upstream computes.
//!
//! Under a witness generator (`is_witness_generator`, e.g. the PCE's witness-only system) the
//! equalities are not even collected: the terms would only be thrown away.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use ff::PrimeField;

use crate::boolean::Terms;

/// Terms in the order they were added, duplicates included.
#[derive(Debug, Default)]
pub struct TermBuffer<Scalar>(Vec<(Variable, Scalar)>);

impl<Scalar: PrimeField> Terms<Scalar> for &mut TermBuffer<Scalar> {
    #[inline]
    fn term(self, coeff: Scalar, var: Variable) -> Self {
        self.0.push((var, coeff));
        self
    }
}

impl<Scalar: PrimeField> TermBuffer<Scalar> {
    fn push_scaled(&mut self, lc: &LinearCombination<Scalar>, shift: Scalar) {
        self.0.extend(lc.iter().map(|(v, c)| (v, *c * shift)));
    }

    /// The sum of the terms, emptying the buffer: sorted first (a stable sort, which finds the
    /// ascending runs operand words arrive in), so that every insertion appends.
    fn take_lc(&mut self) -> LinearCombination<Scalar> {
        self.0.sort_by_key(|(v, _)| match v.get_unchecked() {
            Index::Input(i) => (0, i),
            Index::Aux(i) => (1, i),
        });
        self.0
            .drain(..)
            .fold(LinearCombination::zero(), |lc, (v, c)| lc + (c, v))
    }
}

/// A constraint system wrapper that accumulates equalities; pending ones are flushed into a
/// constraint when the next one does not fit, and on drop.
#[derive(Debug)]
pub struct MultiEq<Scalar: PrimeField, CS: ConstraintSystem<Scalar>> {
    cs: CS,
    ops: usize,
    bits_used: usize,
    lhs: TermBuffer<Scalar>,
    rhs: TermBuffer<Scalar>,
}

impl<Scalar: PrimeField, CS: ConstraintSystem<Scalar>> MultiEq<Scalar, CS> {
    /// Wraps `cs`.
    pub fn new(cs: CS) -> Self {
        MultiEq {
            cs,
            ops: 0,
            bits_used: 0,
            lhs: TermBuffer::default(),
            rhs: TermBuffer::default(),
        }
    }

    fn flush(&mut self) {
        let ops = self.ops;
        let lhs = self.lhs.take_lc();
        let rhs = self.rhs.take_lc();
        self.cs.enforce(
            || format!("multieq {ops}"),
            |_| lhs,
            |lc| lc + CS::one(),
            |_| rhs,
        );
        self.bits_used = 0;
        self.ops += 1;
    }

    /// Adds the equality `lhs == rhs` where both sides are below `2^num_bits`. `lhs` and `rhs`
    /// receive their side's buffer and the shift `2^k` to multiply their terms by.
    pub fn enforce_equal_with<L, R>(
        &mut self,
        num_bits: usize,
        lhs: L,
        rhs: R,
    ) -> Result<(), SynthesisError>
    where
        L: FnOnce(&mut TermBuffer<Scalar>, Scalar),
        R: FnOnce(&mut TermBuffer<Scalar>, Scalar),
    {
        let capacity = Scalar::CAPACITY as usize;
        if num_bits >= capacity {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "multieq: a {num_bits}-bit equality does not fit in {capacity} bits"
            )));
        }
        if self.cs.is_witness_generator() {
            return Ok(());
        }
        if self.bits_used + num_bits >= capacity {
            self.flush();
        }
        let shift = Scalar::from(2).pow_vartime([self.bits_used as u64]);
        lhs(&mut self.lhs, shift);
        rhs(&mut self.rhs, shift);
        self.bits_used += num_bits;
        Ok(())
    }

    /// Adds the equality `lhs == rhs` of two ready-made linear combinations.
    pub fn enforce_equal(
        &mut self,
        num_bits: usize,
        lhs: &LinearCombination<Scalar>,
        rhs: &LinearCombination<Scalar>,
    ) -> Result<(), SynthesisError> {
        self.enforce_equal_with(
            num_bits,
            |buf, shift| buf.push_scaled(lhs, shift),
            |buf, shift| buf.push_scaled(rhs, shift),
        )
    }
}

impl<Scalar: PrimeField, CS: ConstraintSystem<Scalar>> Drop for MultiEq<Scalar, CS> {
    fn drop(&mut self) {
        if self.bits_used > 0 {
            self.flush();
        }
    }
}

impl<Scalar: PrimeField, CS: ConstraintSystem<Scalar>> ConstraintSystem<Scalar>
    for MultiEq<Scalar, CS>
{
    type Root = Self;

    fn one() -> Variable {
        CS::one()
    }

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.cs.alloc(annotation, f)
    }

    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.cs.alloc_input(annotation, f)
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.cs.enforce(annotation, a, b, c)
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        self.cs.get_root().push_namespace(name_fn)
    }

    fn pop_namespace(&mut self) {
        self.cs.get_root().pop_namespace()
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_witness_generator(&self) -> bool {
        self.cs.is_witness_generator()
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.cs.extend_inputs(new_inputs)
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.cs.extend_aux(new_aux)
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        self.cs.allocate_empty(aux_n, inputs_n)
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        self.cs.allocate_empty_inputs(n)
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        self.cs.allocate_empty_aux(n)
    }

    fn inputs_slice(&self) -> &[Scalar] {
        self.cs.inputs_slice()
    }

    fn aux_slice(&self) -> &[Scalar] {
        self.cs.aux_slice()
    }
}
