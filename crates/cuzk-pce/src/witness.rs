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
        let mut cs = WitnessCs {
            input: vec![Fr::ONE],
            aux: vec![],
        };
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
}
