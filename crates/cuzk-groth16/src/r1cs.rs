//! Recording a circuit's R1CS once: the setup evaluates it at τ, the PCE compiles it.
//!
//! Recording keeps 8 bytes per non-zero (a raw column and a coefficient id), so even a 32 GiB
//! PoRep partition (722 M non-zeros) records in about 6 GB.

use std::collections::HashMap;

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use ff::{Field, PrimeField};

use crate::assignment::Densities;
use crate::density::Density;
use crate::{Fr, ProverError};

/// Marks an input column while recording; columns are renumbered (inputs first) at the end,
/// because `alloc_input` may come after aux allocations and constraints.
pub const INPUT: u32 = 1 << 31;

/// One recorded matrix: CSR rows of raw columns (inputs tagged with [`INPUT`]) and ids into
/// a table of the distinct coefficients, 8 bytes per non-zero.
#[derive(Debug, Default)]
pub struct MatrixRecording {
    /// `rows + 1` offsets into `cols` / `ids`.
    pub row_starts: Vec<u32>,
    pub cols: Vec<u32>,
    pub ids: Vec<u32>,
    /// Distinct coefficients; ids 0 and 1 are always 1 and −1.
    pub values: Vec<Fr>,
    /// How often each coefficient occurs.
    pub counts: Vec<u64>,
    index: HashMap<[u8; 32], u32>,
    overflow: bool,
}

impl MatrixRecording {
    fn new() -> Self {
        let mut b = MatrixRecording {
            row_starts: vec![0],
            ..Default::default()
        };
        // ±1 get the fixed ids 0 and 1 and skip the hash lookup.
        for c in [Fr::ONE, -Fr::ONE] {
            b.index.insert(c.to_repr(), b.values.len() as u32);
            b.values.push(c);
            b.counts.push(0);
        }
        b
    }

    fn intern(&mut self, c: Fr) -> u32 {
        if c == Fr::ONE {
            return 0;
        }
        if c == -Fr::ONE {
            return 1;
        }
        let next = self.values.len() as u32;
        let id = *self.index.entry(c.to_repr()).or_insert(next);
        if id == next {
            self.values.push(c);
            self.counts.push(0);
        }
        id
    }

    fn push_lc(&mut self, lc: &LinearCombination<Fr>) {
        for (&i, c) in lc.iter_inputs() {
            self.push(i as u32 | INPUT, i, c);
        }
        for (&i, c) in lc.iter_aux() {
            self.push(i as u32, i, c);
        }
        if self.cols.len() > u32::MAX as usize {
            self.overflow = true;
        }
        self.row_starts.push(self.cols.len() as u32);
    }

    #[inline]
    fn push(&mut self, col: u32, raw: usize, c: &Fr) {
        if bool::from(c.is_zero()) {
            return;
        }
        if raw >= INPUT as usize {
            self.overflow = true;
            return;
        }
        let id = self.intern(*c);
        self.counts[id as usize] += 1;
        self.cols.push(col);
        self.ids.push(id);
    }

    /// Whether a matrix outgrew 32-bit offsets or 31-bit columns.
    pub fn overflowed(&self) -> bool {
        self.overflow
    }

    /// `Σ_row weights[row]·M[row][col]` for every column, with the columns that occur.
    pub fn column_values(&self, weights: &[Fr], num_inputs: usize, num_aux: usize) -> ColumnValues {
        let mut out = ColumnValues {
            input: vec![Fr::ZERO; num_inputs],
            aux: vec![Fr::ZERO; num_aux],
            input_density: Density::new(num_inputs),
            aux_density: Density::new(num_aux),
        };
        for (row, w) in self.row_starts.windows(2).enumerate() {
            for k in w[0] as usize..w[1] as usize {
                let v = self.values[self.ids[k] as usize] * weights[row];
                let c = self.cols[k];
                if c & INPUT != 0 {
                    let i = (c & !INPUT) as usize;
                    out.input[i] += v;
                    out.input_density.set(i);
                } else {
                    out.aux[c as usize] += v;
                    out.aux_density.set(c as usize);
                }
            }
        }
        out
    }
}

/// One matrix's columns weighted by a row vector, split by column kind.
#[derive(Debug)]
pub struct ColumnValues {
    pub input: Vec<Fr>,
    pub aux: Vec<Fr>,
    pub input_density: Density,
    pub aux_density: Density,
}

/// A recorded circuit: sizes, the three matrices and the prover's densities.
#[derive(Debug)]
pub struct Recording {
    /// Input columns, ONE included.
    pub num_inputs: usize,
    pub num_aux: usize,
    pub a: MatrixRecording,
    pub b: MatrixRecording,
    pub c: MatrixRecording,
    pub density: Densities,
}

impl Recording {
    /// Constraints recorded (without the prover's `input·0 = 0` rows).
    pub fn num_constraints(&self) -> usize {
        self.a.row_starts.len() - 1
    }
}

/// Records `circuit`'s constraints; its witness closures are not run.
pub fn record<C: Circuit<Fr>>(circuit: C) -> Result<Recording, ProverError> {
    let mut cs = Recorder {
        inputs: 0,
        aux: 0,
        m: [
            MatrixRecording::new(),
            MatrixRecording::new(),
            MatrixRecording::new(),
        ],
        density: Densities::default(),
    };
    cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
    circuit.synthesize(&mut cs)?;
    let Recorder {
        inputs,
        aux,
        m,
        density,
    } = cs;
    if m.iter().any(MatrixRecording::overflowed) {
        return Err(ProverError::TooLarge {
            what: "non-zeros or columns of one matrix",
            max: u32::MAX as usize,
        });
    }
    let [a, b, c] = m;
    Ok(Recording {
        num_inputs: inputs,
        num_aux: aux,
        a,
        b,
        c,
        density,
    })
}

struct Recorder {
    inputs: usize,
    aux: usize,
    m: [MatrixRecording; 3],
    density: Densities,
}

fn mark(lc: &LinearCombination<Fr>, inputs: Option<&mut Density>, aux: Option<&mut Density>) {
    if let Some(d) = inputs {
        lc.iter_inputs()
            .filter(|(_, c)| !bool::from(c.is_zero()))
            .for_each(|(&i, _)| d.set(i));
    }
    if let Some(d) = aux {
        lc.iter_aux()
            .filter(|(_, c)| !bool::from(c.is_zero()))
            .for_each(|(&i, _)| d.set(i));
    }
}

impl ConstraintSystem<Fr> for Recorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        self.density.a_aux.push();
        self.density.b_aux.push();
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        self.density.b_input.push();
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let (a, b, c) = (
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        );
        mark(&a, None, Some(&mut self.density.a_aux));
        mark(
            &b,
            Some(&mut self.density.b_input),
            Some(&mut self.density.b_aux),
        );
        self.m[0].push_lc(&a);
        self.m[1].push_lc(&b);
        self.m[2].push_lc(&c);
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
