//! A circuit's PCE resident on one GPU.
//!
//! The compact matrices ([`cuzk_pce::Matrix`]) and the A/B gather lists (fixed by the circuit's
//! densities) go up once. Per proof only the witness `input ‖ aux` crosses the bus (through
//! pinned staging buffers); a, b and c are evaluated by a sparse mat-vec in device memory and
//! feed the quotient there, and the L, A and B MSMs read their scalars from the same upload.
//! For a 32 GiB partition that is 4.2 GB per proof instead of 12.9 GB of a, b, c plus 9.5 GB of
//! MSM scalars.

use std::ffi::c_void;
use std::ptr::NonNull;

use cuzk_groth16::domain::{Coefficients, Domain};
use cuzk_groth16::{Fr, G1Projective, ProverError};
use cuzk_pce::matrix::{Parts, CHUNK_ROWS};
use cuzk_pce::{Columns, Matrix, Pce, Values};
use ff::Field;

use crate::domain::{check_h, vanishing_inverse, StepTimes};
use crate::msm::{Curve, DeviceBase, G1};
use crate::sys::{cuda, QuotientTimes, SplitTimes};
use crate::{Device, GpuError};

/// `cuzk_matrix_host`: one matrix's sections as the kernels read them.
#[repr(C)]
pub(crate) struct MatrixHost {
    row_starts: *const u32,
    rows: usize,
    entries: *const u32,
    nnz: usize,
    escapes: *const u32,
    nescapes: usize,
    marks: *const u32,
    nmarks: usize,
    dict: *const Fr,
    ndict: usize,
    chunk_rows: u32,
    one: u32,
    minus_one: u32,
}

impl MatrixHost {
    fn of(m: &Matrix) -> Self {
        let Parts {
            row_starts,
            entries,
            escapes,
            escape_marks,
            dict,
        } = m.parts();
        let index = |v: Fr| {
            dict.iter()
                .position(|c| *c == v)
                .map_or(u32::MAX, |i| i as u32)
        };
        MatrixHost {
            row_starts: row_starts.as_ptr(),
            rows: m.rows(),
            entries: entries.as_ptr(),
            nnz: entries.len(),
            escapes: escapes.as_ptr(),
            nescapes: escapes.len(),
            marks: escape_marks.as_ptr(),
            nmarks: escape_marks.len(),
            dict: dict.as_ptr(),
            ndict: dict.len(),
            chunk_rows: CHUNK_ROWS as u32,
            one: index(Fr::ONE),
            minus_one: index(-Fr::ONE),
        }
    }
}

/// Which scalars of the loaded witness an MSM takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Scalars {
    /// The aux values (the key's L query).
    L = 0,
    /// The inputs, then the aux values in A (the A query).
    A = 1,
    /// The inputs in B, then the aux values in B (both B queries).
    B = 2,
}

/// Lengths of the three scalar sets, fixed by the circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Lengths {
    l: usize,
    a: usize,
    b: usize,
}

/// A [`Pce`] in one GPU's memory, with room for one witness. Like [`DeviceBase`], one call at
/// a time (`&mut self`).
#[derive(Debug)]
pub struct DevicePce {
    raw: NonNull<c_void>,
    ordinal: usize,
    num_inputs: usize,
    num_aux: usize,
    rows: usize,
    lengths: Lengths,
    loaded: bool,
}

// SAFETY: the handle is only used through `&mut self` (or dropped), so never concurrently.
unsafe impl Send for DevicePce {}

/// Positions in `input ‖ aux` of the A and B scalars, as [`cuzk_groth16::density`] selects them.
fn gathers(pce: &Pce) -> Result<(Vec<u32>, Vec<u32>), GpuError> {
    let (ni, d) = (pce.num_inputs, &pce.density);
    if d.a_aux.len() != pce.num_aux || d.b_aux.len() != pce.num_aux || d.b_input.len() != ni {
        return Err(GpuError::Argument(
            "the PCE's densities do not match its columns".into(),
        ));
    }
    let aux = |j: usize| (ni + j) as u32;
    let a = (0..ni as u32).chain(d.a_aux.iter_ones().map(aux)).collect();
    let b = (d.b_input.iter_ones().map(|i| i as u32))
        .chain(d.b_aux.iter_ones().map(aux))
        .collect();
    Ok((a, b))
}

impl DevicePce {
    /// Uploads `pce` to `device`.
    pub fn upload(device: &Device, pce: &Pce) -> Result<Self, GpuError> {
        let (a_idx, b_idx) = gathers(pce)?;
        let m = [&pce.a, &pce.b, &pce.c].map(MatrixHost::of);
        let mut raw = std::ptr::null_mut::<c_void>();
        cuda!(
            device.ordinal(),
            cuzk_pce_new(
                device.id(),
                m.as_ptr(),
                pce.num_inputs,
                pce.num_aux,
                a_idx.as_ptr(),
                a_idx.len(),
                b_idx.as_ptr(),
                b_idx.len(),
                &mut raw
            )
        )?;
        Ok(DevicePce {
            raw: NonNull::new(raw).ok_or_else(|| GpuError::Argument("no PCE handle".into()))?,
            ordinal: device.ordinal(),
            num_inputs: pce.num_inputs,
            num_aux: pce.num_aux,
            rows: pce.num_constraints(),
            lengths: Lengths {
                l: pce.num_aux,
                a: a_idx.len(),
                b: b_idx.len(),
            },
            loaded: false,
        })
    }

    /// Device bytes an upload of `pce` holds: the matrices, a row-escape index per row, the
    /// gather lists, one witness and the 128 MiB of pinned staging (host memory, not counted).
    pub fn device_bytes(pce: &Pce) -> u64 {
        let d = &pce.density;
        let gathers = pce.num_inputs + d.a_aux.count() + d.b_input.count() + d.b_aux.count();
        (pce.heap_bytes() + 3 * 4 * pce.num_constraints() + 4 * gathers) as u64
            + 32 * (pce.num_inputs + pce.num_aux) as u64
    }

    /// Uploads one witness (`input[0]` is ONE), replacing the previous one. Packed columns
    /// cross the bus packed and are expanded on the device.
    pub fn load(&mut self, columns: &Columns) -> Result<(), GpuError> {
        let (ni, na) = (columns.num_inputs(), columns.num_aux());
        if ni != self.num_inputs || na != self.num_aux {
            return Err(GpuError::Argument(format!(
                "witness of {ni} inputs and {na} aux for a circuit of {} and {}",
                self.num_inputs, self.num_aux
            )));
        }
        self.loaded = false;
        let raw = self.raw.as_ptr();
        match columns.values() {
            Values::Full { input, aux } => cuda!(
                self.ordinal,
                cuzk_pce_upload(raw, input.as_ptr(), aux.as_ptr())
            )?,
            // The expansion's transient device memory (the packed form, at most about 4.3
            // bytes a value) is far below the quotient's, which the plan charges per proof
            // and which is not allocated yet.
            Values::Packed(p) => cuda!(
                self.ordinal,
                cuzk_pce_upload_packed(
                    raw,
                    p.zero_words().as_ptr(),
                    p.one_words().as_ptr(),
                    p.starts().as_ptr(),
                    p.others().as_ptr(),
                    p.others().len()
                )
            )?,
        }
        self.loaded = true;
        Ok(())
    }

    fn loaded(&self) -> Result<(), GpuError> {
        if self.loaded {
            Ok(())
        } else {
            Err(GpuError::Argument("no witness loaded".into()))
        }
    }

    /// `A·w`, `B·w`, `C·w` of the loaded witness, one value per constraint, copied back (what
    /// [`Pce::product`] computes on the host).
    pub fn products(&mut self) -> Result<[Vec<Fr>; 3], GpuError> {
        self.loaded()?;
        let mut out = [(); 3].map(|_| vec![Fr::ZERO; self.rows]);
        let [a, b, c] = &mut out;
        cuda!(
            self.ordinal,
            cuzk_pce_products(
                self.raw.as_ptr(),
                a.as_mut_ptr(),
                b.as_mut_ptr(),
                c.as_mut_ptr()
            )
        )?;
        Ok(out)
    }

    /// The domain of the loaded witness's a, b, c (constraints plus one row per input).
    fn domain(&self) -> Result<(Domain, Fr), ProverError> {
        vanishing_inverse(self.rows + self.num_inputs)
    }

    /// The quotient's coefficients, copied back (as [`crate::domain::quotient`] gives them).
    pub fn quotient(&mut self) -> Result<(Domain, Coefficients), ProverError> {
        self.loaded()?;
        let (domain, z_inv) = self.domain()?;
        let mut h = vec![Fr::ZERO; domain.size()];
        let mut times = StepTimes::<QuotientTimes>::wanted();
        cuda!(
            self.ordinal,
            cuzk_pce_quotient(
                self.raw.as_ptr(),
                domain.log_size(),
                &z_inv,
                h.as_mut_ptr(),
                std::ptr::null_mut::<c_void>(),
                0,
                std::ptr::null_mut::<G1Projective>(),
                times.ptr()
            )
        )?;
        times.report();
        let h = domain.coefficients(h)?;
        Ok((domain, h))
    }

    /// `Σ h_i · H_i` for the loaded witness, everything in device memory.
    pub fn quotient_msm(&mut self, base: &mut DeviceBase<G1>) -> Result<G1Projective, ProverError> {
        self.loaded()?;
        let (domain, z_inv) = self.domain()?;
        let h_len = check_h(base.len(), &domain)?;
        let mut out = <G1Projective as group::Group>::identity();
        let mut times = StepTimes::<QuotientTimes>::wanted();
        cuda!(
            self.ordinal,
            cuzk_pce_quotient(
                self.raw.as_ptr(),
                domain.log_size(),
                &z_inv,
                std::ptr::null_mut::<Fr>(),
                base.raw().as_ptr(),
                h_len,
                &mut out,
                times.ptr()
            )
        )?;
        times.report();
        Ok(out)
    }

    /// `base`'s MSM over scalar set `which` of the loaded witness.
    pub fn msm<C: Curve>(
        &mut self,
        base: &mut DeviceBase<C>,
        which: Scalars,
    ) -> Result<C::Projective, GpuError> {
        self.loaded()?;
        let n = match which {
            Scalars::L => self.lengths.l,
            Scalars::A => self.lengths.a,
            Scalars::B => self.lengths.b,
        };
        if n != base.len() {
            return Err(GpuError::Argument(format!(
                "{which:?} has {n} scalars for a base of {} points",
                base.len()
            )));
        }
        let mut times = StepTimes::<SplitTimes>::wanted();
        let sum = C::run_pce(
            base.raw(),
            self.raw,
            self.ordinal,
            which as i32,
            times.slot(),
        )?;
        if let Some(t) = times.taken() {
            tracing::debug!(
                scalars = ?which,
                gather_ms = t.gather,
                classes_ms = t.classes,
                ones_ms = t.ones,
                others_ms = t.others,
                ones = t.ones_n,
                others = t.others_n,
                "witness msm steps"
            );
        }
        Ok(sum)
    }

    /// Inputs, aux, constraints: the circuit this upload serves.
    pub fn shape(&self) -> (usize, usize, usize) {
        (self.num_inputs, self.num_aux, self.rows)
    }
}

impl Drop for DevicePce {
    fn drop(&mut self) {
        #[cfg(cuzk_cuda)]
        // SAFETY: `raw` came from `cuzk_pce_new` and is freed exactly once.
        unsafe {
            crate::sys::ffi::cuzk_pce_free(self.raw.as_ptr())
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_groth16::conformance::{standard_shapes, RandomCircuit, Shape};

    /// The gather lists pick what the CPU backend's density selections pick.
    #[test]
    fn gathers_select_what_the_densities_select() {
        let mut shapes = standard_shapes();
        shapes.extend((0..8).map(|i| Shape::random(40 + i, 200)));
        for (i, shape) in shapes.into_iter().enumerate() {
            let circuit = RandomCircuit::new(shape, i as u64);
            let pce = Pce::extract(circuit.clone()).unwrap();
            let w = pce.witness(circuit).unwrap();
            let all: Vec<Fr> = w.input.iter().chain(&w.aux).copied().collect();
            let pick = |idx: &[u32]| idx.iter().map(|&i| all[i as usize]).collect::<Vec<_>>();
            let (a, b) = gathers(&pce).unwrap();
            let d = &pce.density;
            let want_a: Vec<Fr> = w
                .input
                .iter()
                .copied()
                .chain(d.a_aux.select(&w.aux))
                .collect();
            let mut want_b = d.b_input.select(&w.input);
            want_b.extend(d.b_aux.select(&w.aux));
            assert_eq!(pick(&a), want_a, "{shape:?}");
            assert_eq!(pick(&b), want_b, "{shape:?}");
        }
    }

    #[test]
    fn mismatched_densities_are_refused() {
        let circuit = RandomCircuit::new(standard_shapes()[0], 1);
        let mut pce = Pce::extract(circuit).unwrap();
        pce.density.b_aux.push();
        assert!(matches!(gathers(&pce), Err(GpuError::Argument(_))));
    }
}
