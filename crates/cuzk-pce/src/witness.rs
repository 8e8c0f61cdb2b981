//! Witness-only synthesis: allocation closures run, `enforce` does nothing — its linear
//! combination closures are never even called, which is where full synthesis spends its time.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use cuzk_groth16::Fr;
use ff::Field;

/// Collects the input and aux assignments of a circuit.
#[derive(Debug, Default)]
pub struct WitnessCs {
    input: Vec<Fr>,
    aux: Vec<Fr>,
}

impl WitnessCs {
    /// Runs `circuit`'s witness closures; returns `(input, aux)` with ONE as `input[0]`.
    pub fn assign<C: Circuit<Fr>>(circuit: C) -> Result<(Vec<Fr>, Vec<Fr>), SynthesisError> {
        Self::assign_sized(circuit, 1, 0)
    }

    /// [`WitnessCs::assign`] into vectors made for `inputs` and `aux` values up front, so that
    /// a circuit of known shape never regrows them (each regrowth copies and faults in pages).
    pub fn assign_sized<C: Circuit<Fr>>(
        circuit: C,
        inputs: usize,
        aux: usize,
    ) -> Result<(Vec<Fr>, Vec<Fr>), SynthesisError> {
        let mut cs = WitnessCs {
            input: Vec::with_capacity(inputs.max(1)),
            aux: cuzk_groth16::memory::take(aux),
        };
        cs.input.push(Fr::ONE);
        circuit.synthesize(&mut cs)?;
        Ok((cs.input, cs.aux))
    }
}

impl ConstraintSystem<Fr> for WitnessCs {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
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

    /// Gadgets may then skip building linear combinations that `enforce` would discard.
    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Fr]) {
        self.input.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Fr]) {
        self.aux.extend_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Fr], &mut [Fr]) {
        let (a, i) = (self.aux.len(), self.input.len());
        self.aux.resize(a + aux_n, Fr::ZERO);
        self.input.resize(i + inputs_n, Fr::ZERO);
        (&mut self.aux[a..], &mut self.input[i..])
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Fr] {
        let i = self.input.len();
        self.input.resize(i + n, Fr::ZERO);
        &mut self.input[i..]
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Fr] {
        let a = self.aux.len();
        self.aux.resize(a + n, Fr::ZERO);
        &mut self.aux[a..]
    }

    fn inputs_slice(&self) -> &[Fr] {
        &self.input
    }

    fn aux_slice(&self) -> &[Fr] {
        &self.aux
    }
}
