//! Compiling a recorded circuit into compact matrices.

use bellpepper_core::Circuit;
use cuzk_groth16::r1cs::{self, MatrixRecording, INPUT};
use cuzk_groth16::Fr;

use crate::matrix::{Matrix, Words, CHUNK_ROWS, ESCAPE, MAX_COLUMNS};
use crate::{Pce, PceError};

/// Ranks coefficients by frequency, assigns tags, renumbers columns inputs-first.
fn finish(m: MatrixRecording, num_inputs: usize) -> Result<Matrix, PceError> {
    let MatrixRecording {
        row_starts,
        mut cols,
        ids,
        values,
        counts,
        ..
    } = m;
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

pub(crate) fn extract<C: Circuit<Fr>>(circuit: C) -> Result<Pce, PceError> {
    let r = r1cs::record(circuit)?;
    let n = r.num_inputs;
    let (a, (b, c)) = rayon::join(
        || finish(r.a, n),
        || rayon::join(|| finish(r.b, n), || finish(r.c, n)),
    );
    Ok(Pce {
        num_inputs: r.num_inputs,
        num_aux: r.num_aux,
        a: a?,
        b: b?,
        c: c?,
        density: r.density,
    })
}
