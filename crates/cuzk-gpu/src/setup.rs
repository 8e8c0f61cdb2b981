//! Parameter generation on the GPU: the fixed-base multiplications of a setup.
//!
//! A 32 GiB PoRep key holds about 600 M G1 and 100 M G2 points, each `s · G` for one of two
//! generators; on the CPU they take most of an hour. [`GpuFixedBase`] runs them on one GPU
//! from the same window table the CPU reference uses (`cuda/fixed_base.cuh`: one thread per
//! scalar, XYZZ accumulation, one inversion to affine), so the points, and so the `.params`
//! file of a seed, are the same byte for byte.

use cuzk_groth16::curve::FixedBase;
use cuzk_groth16::generator::FixedBaseMul;
use cuzk_groth16::{Fr, G1Affine, G1Projective, G2Affine, G2Projective, ProverError};

use crate::sys::cuda;
use crate::{Device, GpuError};

/// Fixed-base multiplication on one GPU.
#[derive(Debug)]
pub struct GpuFixedBase {
    ordinal: usize,
}

impl GpuFixedBase {
    /// Checks that GPU `ordinal` exists.
    pub fn new(ordinal: usize) -> Result<Self, GpuError> {
        Device::open(ordinal)?;
        Ok(GpuFixedBase { ordinal })
    }
}

/// `len` points the device fills: never read before it writes every one.
fn filled<T>(
    len: usize,
    fill: impl FnOnce(*mut T) -> Result<(), GpuError>,
) -> Result<Vec<T>, GpuError> {
    let mut out = Vec::with_capacity(len);
    fill(out.as_mut_ptr())?;
    // SAFETY: on success the device wrote all `len` points (plain coordinates, any bits valid).
    unsafe { out.set_len(len) };
    Ok(out)
}

/// One group's multiplication through its entry point `$f`.
macro_rules! multiply {
    ($self:ident, $table:ident, $scalars:ident, $f:ident) => {{
        let t = $table.table();
        Ok(filled($scalars.len(), |out| {
            cuda!(
                $self.ordinal,
                $f(
                    $self.ordinal as i32,
                    t.as_ptr(),
                    t.len(),
                    $table.window() as u32,
                    $scalars.as_ptr(),
                    $scalars.len(),
                    out
                )
            )
        })?)
    }};
}

impl FixedBaseMul for GpuFixedBase {
    fn name(&self) -> &str {
        "gpu"
    }

    fn g1(
        &self,
        table: &FixedBase<G1Projective>,
        scalars: &[Fr],
    ) -> Result<Vec<G1Affine>, ProverError> {
        multiply!(self, table, scalars, cuzk_fixed_base_g1)
    }

    fn g2(
        &self,
        table: &FixedBase<G2Projective>,
        scalars: &[Fr],
    ) -> Result<Vec<G2Affine>, ProverError> {
        multiply!(self, table, scalars, cuzk_fixed_base_g2)
    }
}
