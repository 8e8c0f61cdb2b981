//! A point cache: a parameter file's query points as they lie in memory once decoded.
//!
//! Decoding is one Montgomery multiplication per coordinate (11 M points, about a second on
//! 2 cores, for the 2 KiB PoRep key; minutes for 32 GiB). The cache holds blst's own
//! representation, so a later reader maps it and uses the points where they lie. Its header
//! ties it to one parameter file (length and modification time), to the section lengths, to
//! this build's point representation (the G1 generator as this process lays it out) and to a
//! validation at least as strict as the reader asks for; anything else is a miss, and the
//! reader decodes the file and writes a fresh cache. A damaged cache that still matches gives
//! wrong points, hence proofs that fail verification, never a wrong accepted proof.

use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use group::prime::PrimeCurveAffine;

use super::{io_err, write_atomically, ParamsError, ProvingKey, Stored, Validation};
use crate::G1Affine;

/// Header bytes before the first section; a multiple of 8, so that every point is aligned.
pub(super) const HEADER: usize = 256;
const MAGIC: &[u8; 8] = b"cuzkpts1";
/// Byte range of the validation field, the one field compared by order, not equality.
const VALIDATION: std::ops::Range<usize> = 12..16;

/// How [`ProvingKey::read_cached`] got its points.
#[derive(Debug)]
pub enum PointCache {
    /// Mapped from a matching cache: nothing was decoded.
    Hit,
    /// Decoded from the parameter file. The cache is not written yet: [`CacheWrite::write`]
    /// does that, as many bytes as the parameter file plus a sync, so callers can run it
    /// beside the work that needs the key.
    Miss(CacheWrite),
}

/// A point cache still to be written, for the key whose read missed it.
#[derive(Debug)]
pub struct CacheWrite {
    path: PathBuf,
    source: PathBuf,
    header: Box<[u8; HEADER]>,
}

/// Bytes written between progress events (a 32 GiB key's cache is 47 GB, a minute or more).
const PROGRESS_BYTES: usize = 256 << 20;

/// Space left free on the cache's file system after writing it, so that a cache never takes
/// the last of an operator's disk.
const SPARE: u64 = 1 << 30;

impl CacheWrite {
    pub(super) fn new(path: &Path, source: &Path, header: [u8; HEADER]) -> Self {
        CacheWrite {
            path: path.to_path_buf(),
            source: source.to_path_buf(),
            header: Box::new(header),
        }
    }

    /// Where the cache goes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the cache of `pk` would leave at least 1 GiB free on its file system now
    /// ([`ParamsError::NoSpace`] otherwise), so a caller can say at once that none is written.
    pub fn check_space(&self, pk: &ProvingKey) -> Result<(), ParamsError> {
        let need = pk.decoded_len() as u64;
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let free = free_bytes(dir).map_err(io_err(dir))?;
        if free < need + SPARE {
            return Err(ParamsError::NoSpace {
                path: self.path.clone(),
                need,
                free,
            });
        }
        Ok(())
    }

    /// Writes `pk`'s points to the cache (temporary file, sync, rename), unless that would
    /// leave less than 1 GiB free on its file system ([`ParamsError::NoSpace`]).
    ///
    /// # Panics
    /// If `pk` is not the key whose read produced this write.
    pub fn write(self, pk: &ProvingKey) -> Result<(), ParamsError> {
        let src = pk.source.as_ref().map(|s| s.path.as_path());
        assert!(
            src == Some(self.source.as_path()) && self.header[40..80] == lengths(pk.lengths()),
            "a point cache written for another key"
        );
        self.check_space(pk)?;
        let need = pk.decoded_len() as u64;
        let cache = self.path.as_path();
        write_atomically(cache, |w| {
            w.write_all(&self.header[..]).map_err(io_err(cache))?;
            let mut written = HEADER as u64;
            for bytes in [
                raw(pk.h()?),
                raw(pk.l()?),
                raw(pk.a()?),
                raw(pk.b_g1()?),
                raw(pk.b_g2()?),
            ] {
                for chunk in bytes.chunks(PROGRESS_BYTES) {
                    w.write_all(chunk).map_err(io_err(cache))?;
                    written += chunk.len() as u64;
                    tracing::debug!(
                        written_bytes = written,
                        total_bytes = need,
                        "point cache progress"
                    );
                }
            }
            Ok(())
        })
    }
}

/// Bytes an unprivileged writer may still use on the file system holding `dir`.
fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: a NUL-terminated path and a buffer statvfs fills on success.
    if unsafe { libc::statvfs(path.as_ptr(), st.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: statvfs returned 0, so it filled the buffer.
    let st = unsafe { st.assume_init() };
    // The field types are narrower than u64 on some targets.
    #[allow(clippy::unnecessary_cast)]
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// The header's section-length field.
fn lengths(lengths: [usize; 5]) -> [u8; 40] {
    let mut out = [0u8; 40];
    for (o, len) in out.chunks_exact_mut(8).zip(lengths) {
        o.copy_from_slice(&(len as u64).to_le_bytes());
    }
    out
}

fn rank(v: Validation) -> u32 {
    match v {
        Validation::Trusted => 0,
        Validation::OnCurve => 1,
        Validation::Full => 2,
    }
}

/// The header a cache of this parameter file must carry.
pub(super) fn header(
    source: &Metadata,
    validation: Validation,
    lengths: [usize; 5],
) -> [u8; HEADER] {
    let mtime = source
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .unwrap_or_default();
    let mut h = [0u8; HEADER];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&1u32.to_le_bytes());
    h[VALIDATION].copy_from_slice(&rank(validation).to_le_bytes());
    h[16..24].copy_from_slice(&source.len().to_le_bytes());
    h[24..32].copy_from_slice(&mtime.as_secs().to_le_bytes());
    h[32..36].copy_from_slice(&mtime.subsec_nanos().to_le_bytes());
    h[40..80].copy_from_slice(&self::lengths(lengths));
    h[80..176].copy_from_slice(raw(&[G1Affine::generator()]));
    h
}

/// Maps the cache at `path` if its header matches `expected` (a validation at least as strict
/// is accepted) and it holds exactly `len` bytes.
pub(super) fn open(path: &Path, expected: &[u8; HEADER], len: usize) -> Option<memmap2::Mmap> {
    let mut file = File::open(path).ok()?;
    if file.metadata().ok()?.len() != len as u64 {
        return None;
    }
    let mut h = [0u8; HEADER];
    file.read_exact(&mut h).ok()?;
    let field = |b: &[u8; HEADER]| u32::from_le_bytes(b[VALIDATION].try_into().expect("4 bytes"));
    let matches = h[..VALIDATION.start] == expected[..VALIDATION.start]
        && h[VALIDATION.end..] == expected[VALIDATION.end..]
        && field(&h) >= field(expected);
    if !matches {
        return None;
    }
    // SAFETY: caches are written to a temporary file and renamed into place, never changed
    // in place, so the mapping stays as read.
    unsafe { memmap2::Mmap::map(&file) }.ok()
}

/// The bytes of decoded points, as they lie in memory.
pub(super) fn raw<P: Stored>(points: &[P]) -> &[u8] {
    // SAFETY: `G1Affine` and `G2Affine` (the only `Stored` types) are `repr(transparent)`
    // over blst's affine points: u64 limbs without padding, so every byte is initialised.
    unsafe { std::slice::from_raw_parts(points.as_ptr().cast(), std::mem::size_of_val(points)) }
}

/// `len` points at `offset` of a mapped cache.
pub(super) fn points<P: Stored>(map: &memmap2::Mmap, offset: usize, len: usize) -> &[P] {
    let bytes = &map[offset..offset + len * std::mem::size_of::<P>()];
    assert_eq!(
        bytes.as_ptr() as usize % std::mem::align_of::<P>(),
        0,
        "sections are aligned"
    );
    // SAFETY: in bounds (sliced above) and aligned (mappings are page aligned, the header
    // and every section a multiple of 8 bytes); any limb values form a valid blst point
    // value (a wrong one only makes a proof fail verification).
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast(), len) }
}
