//! From a circuit to the numbers the prover needs: per-row values of A·w, B·w, C·w, the input
//! and aux assignments, and the density bitmaps that index the A and B queries.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use ff::Field;

use crate::density::Density;
use crate::Fr;

/// Which input and aux columns appear (with a non-zero coefficient) in A and B.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Densities {
    /// Aux columns present in A. Every input is present in A through the `input · 0 = 0` rows.
    pub a_aux: Density,
    /// Input columns present in B.
    pub b_input: Density,
    /// Aux columns present in B.
    pub b_aux: Density,
}

/// A complete assignment of one circuit, ready for a [`crate::backend::Backend`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    /// `A·w` per row: the circuit's constraints, then one row per input.
    pub a: Vec<Fr>,
    /// `B·w` per row.
    pub b: Vec<Fr>,
    /// `C·w` per row.
    pub c: Vec<Fr>,
    /// Input column values; `input[0]` is the constant ONE.
    pub input: Vec<Fr>,
    /// Aux column values.
    pub aux: Vec<Fr>,
    pub density: Densities,
}

impl Witness {
    /// Synthesises `circuit` with full constraint evaluation (the reference path).
    pub fn synthesize<C: Circuit<Fr>>(circuit: C) -> Result<Self, SynthesisError> {
        let mut cs = ProvingAssignment::new();
        cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
        circuit.synthesize(&mut cs)?;
        Ok(cs.finish())
    }

    /// The public inputs, without the leading ONE.
    pub fn public_inputs(&self) -> &[Fr] {
        self.input.get(1..).unwrap_or(&[])
    }
}

/// A constraint system that evaluates every constraint as it is enforced.
#[derive(Debug, Default)]
pub struct ProvingAssignment {
    w: Witness,
}

impl ProvingAssignment {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the `input_i · 0 = 0` rows the Groth16 setup adds so that inputs are
    /// independent in the QAP, and returns the finished witness.
    pub fn finish(mut self) -> Witness {
        for v in &self.w.input {
            self.w.a.push(*v);
            self.w.b.push(Fr::ZERO);
            self.w.c.push(Fr::ZERO);
        }
        self.w
    }
}

/// Evaluates `lc` at the assignment, marking the columns it uses in the given bitmaps.
fn eval(
    lc: &LinearCombination<Fr>,
    input: &[Fr],
    aux: &[Fr],
    mut input_density: Option<&mut Density>,
    mut aux_density: Option<&mut Density>,
) -> Fr {
    let mut acc = Fr::ZERO;
    for (&i, coeff) in lc.iter_inputs() {
        if !bool::from(coeff.is_zero()) {
            acc += mul(input[i], coeff);
            if let Some(d) = input_density.as_deref_mut() {
                d.set(i);
            }
        }
    }
    for (&i, coeff) in lc.iter_aux() {
        if !bool::from(coeff.is_zero()) {
            acc += mul(aux[i], coeff);
            if let Some(d) = aux_density.as_deref_mut() {
                d.set(i);
            }
        }
    }
    acc
}

#[inline]
fn mul(v: Fr, coeff: &Fr) -> Fr {
    if *coeff == Fr::ONE {
        v
    } else {
        v * coeff
    }
}

impl ConstraintSystem<Fr> for ProvingAssignment {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.w.aux.push(f()?);
        self.w.density.a_aux.push();
        self.w.density.b_aux.push();
        Ok(Variable::new_unchecked(Index::Aux(self.w.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.w.input.push(f()?);
        self.w.density.b_input.push();
        Ok(Variable::new_unchecked(Index::Input(
            self.w.input.len() - 1,
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let w = &mut self.w;
        let a = eval(
            &a(LinearCombination::zero()),
            &w.input,
            &w.aux,
            None,
            Some(&mut w.density.a_aux),
        );
        let b = eval(
            &b(LinearCombination::zero()),
            &w.input,
            &w.aux,
            Some(&mut w.density.b_input),
            Some(&mut w.density.b_aux),
        );
        let c = eval(&c(LinearCombination::zero()), &w.input, &w.aux, None, None);
        w.a.push(a);
        w.b.push(b);
        w.c.push(c);
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}
