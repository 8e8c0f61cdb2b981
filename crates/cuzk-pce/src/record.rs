//! Recording a circuit's constraints into compact matrices.

use std::collections::HashMap;

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use cuzk_groth16::assignment::Densities;
use cuzk_groth16::Fr;
use ff::{Field, PrimeField};

use crate::matrix::{Matrix, Words, CHUNK_ROWS, ESCAPE, MAX_COLUMNS};
use crate::{Pce, PceError};

/// Marks an input column while recording; columns are renumbered (inputs first) at the end,
/// because `alloc_input` may come after aux allocations and constraints.
const INPUT: u32 = 1 << 31;

/// A matrix under construction: raw columns and interned coefficient ids.
#[derive(Default)]
struct Builder {
    row_starts: Vec<u32>,
    cols: Vec<u32>,
    ids: Vec<u32>,
    values: Vec<Fr>,
    counts: Vec<u64>,
    index: HashMap<[u8; 32], u32>,
    overflow: bool,
}

impl Builder {
    fn new() -> Self {
        let mut b = Builder {
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
        if raw >= MAX_COLUMNS {
            self.overflow = true;
            return;
        }
        let id = self.intern(*c);
        self.counts[id as usize] += 1;
        self.cols.push(col);
        self.ids.push(id);
    }

    /// Ranks coefficients by frequency, assigns tags, renumbers columns inputs-first.
    fn finish(self, num_inputs: usize) -> Result<Matrix, PceError> {
        let Builder {
            row_starts,
            mut cols,
            ids,
            values,
            counts,
            overflow,
            ..
        } = self;
        if overflow {
            return Err(PceError::TooLarge {
                what: "non-zeros or columns of one matrix",
                got: cols.len(),
                max: u32::MAX as usize,
            });
        }
        let mut order: Vec<u32> = (0..values.len() as u32).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(counts[i as usize]), i));
        let mut rank = vec![0u32; values.len()];
        for (r, &id) in order.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        let dict: Vec<Fr> = order.iter().map(|&id| values[id as usize]).collect();
        let rows = row_starts.len() - 1;
        let mut escapes = Vec::new();
        let mut marks = Vec::with_capacity(rows / CHUNK_ROWS + 2);
        for r in 0..rows {
            if r % CHUNK_ROWS == 0 {
                marks.push(escapes.len() as u32);
            }
            for k in row_starts[r] as usize..row_starts[r + 1] as usize {
                let rk = rank[ids[k] as usize];
                let tag = if rk < ESCAPE {
                    rk
                } else {
                    escapes.push(rk);
                    ESCAPE
                };
                let c = cols[k];
                let col = if c & INPUT != 0 {
                    (c & !INPUT) as usize
                } else {
                    num_inputs + c as usize
                };
                if col >= MAX_COLUMNS {
                    return Err(PceError::TooLarge {
                        what: "columns",
                        got: col + 1,
                        max: MAX_COLUMNS,
                    });
                }
                cols[k] = (col as u32) << 4 | tag;
            }
        }
        marks.push(escapes.len() as u32);
        Ok(Matrix {
            row_starts: Words::Owned(row_starts),
            entries: Words::Owned(cols),
            escapes: Words::Owned(escapes),
            escape_marks: Words::Owned(marks),
            dict,
        })
    }
}

struct Recorder {
    inputs: usize,
    aux: usize,
    m: [Builder; 3],
    density: Densities,
}

fn mark(
    lc: &LinearCombination<Fr>,
    inputs: Option<&mut cuzk_groth16::density::Density>,
    aux: Option<&mut cuzk_groth16::density::Density>,
) {
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

pub(crate) fn extract<C: Circuit<Fr>>(circuit: C) -> Result<Pce, PceError> {
    let mut cs = Recorder {
        inputs: 0,
        aux: 0,
        m: [Builder::new(), Builder::new(), Builder::new()],
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
    let [a, b, c] = m;
    let (a, (b, c)) = rayon::join(
        || a.finish(inputs),
        || rayon::join(|| b.finish(inputs), || c.finish(inputs)),
    );
    Ok(Pce {
        num_inputs: inputs,
        num_aux: aux,
        a: a?,
        b: b?,
        c: c?,
        density,
    })
}
