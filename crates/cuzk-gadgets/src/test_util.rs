//! A recording constraint system and the canonical R1CS comparison used by every identity test.
//!
//! [`RecordingCs`] keeps what a prover keeps: every constraint's three linear combinations and,
//! unless built with [`RecordingCs::shape_only`], every variable's value. Two synthesised
//! circuits are the same R1CS when [`assert_same_r1cs`] passes: the same numbers of inputs, aux
//! variables and constraints, and row for row the same A, B and C terms (variables in canonical
//! order, zero coefficients included, because a prover's density tracking sees them) and the
//! same witness. Circuits too large to record (a 32 GiB PoRep partition has 722 M non-zeros)
//! are compared by [`R1csDigest`], which folds the same data into a SHA-256 as it streams past.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use ff::PrimeField;

/// One row of the R1CS: A, B and C.
pub type Row<Scalar> = [LinearCombination<Scalar>; 3];

/// A constraint system that records everything, namespaces excepted.
#[derive(Debug)]
pub struct RecordingCs<Scalar: PrimeField> {
    /// Whether assignment closures are called (a prover) or not (parameter generation).
    witness: bool,
    inputs: Vec<Option<Scalar>>,
    aux: Vec<Option<Scalar>>,
    rows: Vec<Row<Scalar>>,
}

impl<Scalar: PrimeField> Default for RecordingCs<Scalar> {
    fn default() -> Self {
        Self::new()
    }
}

fn terms<Scalar: PrimeField>(lc: &LinearCombination<Scalar>) -> Vec<(Index, Scalar)> {
    lc.iter().map(|(v, c)| (v.get_unchecked(), *c)).collect()
}

impl<Scalar: PrimeField> RecordingCs<Scalar> {
    /// A prover-style system: assignment closures are evaluated and their errors returned.
    pub fn new() -> Self {
        RecordingCs {
            witness: true,
            inputs: vec![Some(Scalar::ONE)],
            aux: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// A parameter-generation-style system: assignments are never evaluated.
    pub fn shape_only() -> Self {
        RecordingCs {
            witness: false,
            ..Self::new()
        }
    }

    /// Number of inputs, the constant one included.
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Number of auxiliary variables.
    pub fn num_aux(&self) -> usize {
        self.aux.len()
    }

    /// Number of constraints.
    pub fn num_constraints(&self) -> usize {
        self.rows.len()
    }

    /// The recorded rows.
    pub fn rows(&self) -> &[Row<Scalar>] {
        &self.rows
    }

    /// The aux assignment (`None` where not evaluated).
    pub fn aux(&self) -> &[Option<Scalar>] {
        &self.aux
    }

    fn eval(&self, lc: &LinearCombination<Scalar>) -> Option<Scalar> {
        lc.iter().try_fold(Scalar::ZERO, |acc, (v, c)| {
            let value = match v.get_unchecked() {
                Index::Input(i) => self.inputs[i]?,
                Index::Aux(i) => self.aux[i]?,
            };
            Some(acc + value * c)
        })
    }

    /// The first row whose `A * B = C` fails under the recorded witness, if any (`None` too when
    /// the witness is unknown).
    pub fn which_is_unsatisfied(&self) -> Option<usize> {
        self.rows.iter().position(
            |[a, b, c]| match (self.eval(a), self.eval(b), self.eval(c)) {
                (Some(a), Some(b), Some(c)) => a * b != c,
                _ => false,
            },
        )
    }

    /// Whether the witness is known and satisfies every row.
    pub fn is_satisfied(&self) -> bool {
        let known = self.inputs.iter().chain(&self.aux).all(Option::is_some);
        known && self.which_is_unsatisfied().is_none()
    }

    fn push_value<F>(&self, f: F) -> Result<Option<Scalar>, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        if self.witness {
            f().map(Some)
        } else {
            Ok(None)
        }
    }
}

/// Panics with the first difference unless `ours` and `theirs` are the same R1CS with the same
/// witness.
pub fn assert_same_r1cs<Scalar: PrimeField>(
    ours: &RecordingCs<Scalar>,
    theirs: &RecordingCs<Scalar>,
) {
    assert_eq!(ours.num_inputs(), theirs.num_inputs(), "number of inputs");
    assert_eq!(ours.num_aux(), theirs.num_aux(), "number of aux variables");
    assert_eq!(
        ours.num_constraints(),
        theirs.num_constraints(),
        "number of constraints"
    );
    for (i, (o, t)) in ours.rows.iter().zip(&theirs.rows).enumerate() {
        for (m, (o, t)) in ["A", "B", "C"].iter().zip(o.iter().zip(t)) {
            assert_eq!(terms(o), terms(t), "constraint {i}, matrix {m}");
        }
    }
    assert_eq!(ours.inputs, theirs.inputs, "input assignment");
    assert_eq!(ours.aux, theirs.aux, "aux assignment");
}

impl<Scalar: PrimeField> ConstraintSystem<Scalar> for RecordingCs<Scalar> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = self.push_value(f)?;
        self.aux.push(value);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = self.push_value(f)?;
        self.inputs.push(value);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.rows.push([
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        ]);
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

/// A constraint system that keeps only counts and a SHA-256 of every row's terms (variable kind,
/// index and coefficient, in order) and of the witness, when it is computed.
#[derive(Debug)]
pub struct R1csDigest {
    witness: bool,
    inputs: usize,
    aux: usize,
    constraints: usize,
    rows: sha2::Sha256,
    values: sha2::Sha256,
    buffer: Vec<u8>,
}

/// What [`R1csDigest`] arrives at: equal for two circuits exactly when their shapes, rows and
/// (if computed) witnesses are equal, up to SHA-256 collisions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digest {
    pub inputs: usize,
    pub aux: usize,
    pub constraints: usize,
    pub rows: [u8; 32],
    pub values: [u8; 32],
}

impl R1csDigest {
    /// A digest of the shape only (assignments are not evaluated) or of the witness too.
    pub fn new(witness: bool) -> Self {
        use sha2::Digest as _;
        R1csDigest {
            witness,
            inputs: 1,
            aux: 0,
            constraints: 0,
            rows: sha2::Sha256::new(),
            values: sha2::Sha256::new(),
            buffer: Vec::with_capacity(1 << 16),
        }
    }

    fn term<Scalar: PrimeField>(&mut self, v: Variable, c: &Scalar) {
        let (kind, index) = match v.get_unchecked() {
            Index::Input(i) => (0u8, i),
            Index::Aux(i) => (1u8, i),
        };
        self.buffer.push(kind);
        self.buffer.extend_from_slice(&(index as u64).to_le_bytes());
        self.buffer.extend_from_slice(c.to_repr().as_ref());
    }

    fn value<Scalar: PrimeField, F>(&mut self, kind: u8, f: F) -> Result<(), SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
    {
        use sha2::Digest as _;
        if self.witness {
            self.values.update([kind]);
            self.values.update(f()?.to_repr().as_ref());
        }
        Ok(())
    }

    /// The counts and hashes.
    pub fn finish(mut self) -> Digest {
        use sha2::Digest as _;
        self.rows.update(&self.buffer);
        Digest {
            inputs: self.inputs,
            aux: self.aux,
            constraints: self.constraints,
            rows: self.rows.finalize().into(),
            values: self.values.finalize().into(),
        }
    }
}

impl<Scalar: PrimeField> ConstraintSystem<Scalar> for R1csDigest {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.value(1, f)?;
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.value(0, f)?;
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        use sha2::Digest as _;
        let rows = [
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        ];
        for lc in rows {
            for (v, coeff) in lc.iter() {
                self.term(v, coeff);
            }
            // Row and matrix separator: a kind byte no term uses.
            self.buffer.push(2);
        }
        self.constraints += 1;
        if self.buffer.len() >= 1 << 16 {
            self.rows.update(&self.buffer);
            self.buffer.clear();
        }
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
