//! NTTs and the Groth16 quotient `h = (a·b − c)/Z` on the GPU, with [`cuzk_groth16::domain`]'s
//! typed vectors so that coefficient and evaluation forms cannot be mixed up.

use cuzk_groth16::domain::{Coefficients, CosetEvaluations, Domain, Evaluations};
use cuzk_groth16::{Fr, G1Projective, ProverError};
use ff::Field;

use crate::msm::{DeviceBase, G1};
use crate::sys::{cuda, QuotientTimes};
use crate::{Device, GpuError};

fn ntt(
    device: &Device,
    domain: &Domain,
    mut v: Vec<Fr>,
    inverse: bool,
    coset: bool,
) -> Result<Vec<Fr>, GpuError> {
    if v.len() != domain.size() {
        return Err(GpuError::Argument(format!(
            "{} values for a domain of {}",
            v.len(),
            domain.size()
        )));
    }
    cuda!(
        device.ordinal(),
        cuzk_ntt(
            device.id(),
            v.as_mut_ptr(),
            domain.log_size(),
            inverse as i32,
            coset as i32
        )
    )?;
    Ok(v)
}

/// Evaluates on the domain.
pub fn fft(device: &Device, domain: &Domain, c: Coefficients) -> Result<Evaluations, ProverError> {
    let v = ntt(device, domain, c.into_vec(), false, false)?;
    Ok(domain.evaluations(v)?)
}

/// Interpolates from the domain.
pub fn ifft(device: &Device, domain: &Domain, e: Evaluations) -> Result<Coefficients, ProverError> {
    let v = ntt(device, domain, e.into_vec(), true, false)?;
    Ok(domain.coefficients(v)?)
}

/// Evaluates on the coset `g·⟨ω⟩`.
pub fn coset_fft(
    device: &Device,
    domain: &Domain,
    c: Coefficients,
) -> Result<CosetEvaluations, ProverError> {
    let v = ntt(device, domain, c.into_vec(), false, true)?;
    Ok(domain.coset_evaluations(v)?)
}

/// Interpolates from the coset `g·⟨ω⟩`.
pub fn icoset_fft(
    device: &Device,
    domain: &Domain,
    e: CosetEvaluations,
) -> Result<Coefficients, ProverError> {
    let v = ntt(device, domain, e.into_vec(), true, true)?;
    Ok(domain.coefficients(v)?)
}

fn prepare(a: &[Fr], b: &[Fr], c: &[Fr]) -> Result<(Domain, Fr), ProverError> {
    if a.len() != b.len() || a.len() != c.len() {
        return Err(GpuError::Argument(format!(
            "a, b, c have lengths {}, {}, {}",
            a.len(),
            b.len(),
            c.len()
        ))
        .into());
    }
    vanishing_inverse(a.len())
}

/// A device call's step times (`QuotientTimes`, `SplitTimes`), asked for only while `debug`
/// events are on (asking makes every step wait for the device).
pub(crate) struct StepTimes<T>(Option<T>);

impl<T: Default> StepTimes<T> {
    pub(crate) fn wanted() -> Self {
        StepTimes(tracing::enabled!(tracing::Level::DEBUG).then(T::default))
    }

    /// Where the C side writes the times, when they are wanted.
    pub(crate) fn slot(&mut self) -> Option<&mut T> {
        self.0.as_mut()
    }

    /// [`StepTimes::slot`] as the C side takes it: null when they are not wanted.
    pub(crate) fn ptr(&mut self) -> *mut T {
        self.slot().map_or(std::ptr::null_mut(), |t| t as *mut T)
    }

    /// The times, if they were wanted.
    pub(crate) fn taken(self) -> Option<T> {
        self.0
    }
}

impl StepTimes<QuotientTimes> {
    pub(crate) fn report(self) {
        if let Some(t) = self.0 {
            tracing::debug!(
                abc_ms = t.abc,
                coset_ms = t.coset,
                combine_ms = t.combine,
                coefficients_ms = t.coefficients,
                h_msm_ms = t.msm,
                "quotient steps"
            );
        }
    }
}

/// The domain for `n` rows, and `1/Z` on its coset (the quotient's divisor).
pub(crate) fn vanishing_inverse(n: usize) -> Result<(Domain, Fr), ProverError> {
    let domain = Domain::for_size(n)?;
    let z_inv = domain.vanishing_on_coset().invert().unwrap();
    Ok((domain, z_inv))
}

/// The H query's length for `domain` (its size − 1), checked against the query's `len`.
pub(crate) fn check_h(len: usize, domain: &Domain) -> Result<usize, ProverError> {
    let h_len = domain.size() - 1;
    if len != h_len {
        return Err(ProverError::ParamsMismatch {
            section: "h",
            expected: h_len,
            got: len,
        });
    }
    Ok(h_len)
}

/// The quotient's coefficients, as [`cuzk_groth16::backend::quotient`] computes them on the CPU.
pub fn quotient(
    device: &Device,
    a: &[Fr],
    b: &[Fr],
    c: &[Fr],
) -> Result<(Domain, Coefficients), ProverError> {
    let (domain, z_inv) = prepare(a, b, c)?;
    let mut h = vec![Fr::ZERO; domain.size()];
    let mut times = StepTimes::<QuotientTimes>::wanted();
    cuda!(
        device.ordinal(),
        cuzk_quotient(
            device.id(),
            a.as_ptr(),
            b.as_ptr(),
            c.as_ptr(),
            a.len(),
            domain.log_size(),
            &z_inv,
            h.as_mut_ptr(),
            std::ptr::null_mut::<std::ffi::c_void>(),
            0,
            std::ptr::null_mut::<G1Projective>(),
            times.ptr(),
        )
    )?;
    times.report();
    let h = domain.coefficients(h)?;
    Ok((domain, h))
}

/// `Σ h_i · H_i` with `h` computed and kept on the device: a, b, c go up once, one point comes
/// back. `base` is the key's H query (domain size − 1 points).
pub fn quotient_msm(
    base: &mut DeviceBase<G1>,
    a: &[Fr],
    b: &[Fr],
    c: &[Fr],
) -> Result<G1Projective, ProverError> {
    let (domain, z_inv) = prepare(a, b, c)?;
    let h_len = check_h(base.len(), &domain)?;
    let mut out = <G1Projective as group::Group>::identity();
    let ordinal = base.ordinal();
    let mut times = StepTimes::<QuotientTimes>::wanted();
    cuda!(
        ordinal,
        cuzk_quotient(
            ordinal as i32,
            a.as_ptr(),
            b.as_ptr(),
            c.as_ptr(),
            a.len(),
            domain.log_size(),
            &z_inv,
            std::ptr::null_mut::<Fr>(),
            base.raw().as_ptr(),
            h_len,
            &mut out,
            times.ptr(),
        )
    )?;
    times.report();
    Ok(out)
}
