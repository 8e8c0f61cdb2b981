//! Groth16 keys in bellperson's file format.
//!
//! Layout (all integers big-endian u32, points uncompressed): `alpha_g1, beta_g1, beta_g2,
//! gamma_g2, delta_g1, delta_g2, |ic|, ic[]` — this prefix alone is the `.vk` file — then
//! `|h|, h[], |l|, l[], |a|, a[], |b_g1|, b_g1[], |b_g2|, b_g2[]`.
//!
//! Reading maps the file and checks its whole layout at once (so truncation is found before
//! any work starts); each query section is decoded on first use, in parallel, and cached.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use group::prime::PrimeCurveAffine;
use rayon::prelude::*;
use thiserror::Error;

use blstrs::{Fp, Fp2};

use crate::{G1Affine, G2Affine};

mod cache;
pub use cache::{CacheWrite, PointCache};

/// How much to trust a parameter file's points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Validation {
    /// On-curve and subgroup checks on every point (slow for large files: seconds per million).
    #[default]
    Full,
    /// On-curve checks only (what upstream does when proving).
    OnCurve,
    /// Coordinates are only checked to be field elements: for files whose origin is trusted,
    /// where a damaged point would still be caught by verifying the proof it went into.
    Trusted,
}

#[derive(Debug, Error)]
pub enum ParamsError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: section {section}: needs {need} bytes at offset {offset}, but the file has {have} bytes", .path.display())]
    Truncated {
        path: PathBuf,
        section: &'static str,
        offset: u64,
        need: u64,
        have: u64,
    },
    #[error("{}: section {section}: point {index} at offset {offset}: {reason}", .path.display())]
    BadPoint {
        path: PathBuf,
        section: &'static str,
        index: usize,
        offset: u64,
        reason: &'static str,
    },
    #[error("{}: needs {need} bytes and 1 GiB to spare, but only {free} bytes are free", .path.display())]
    NoSpace { path: PathBuf, need: u64, free: u64 },
    #[error("{}: {extra} unexpected bytes at offset {offset} after the last section (not a {kind} file?)", .path.display())]
    Trailing {
        path: PathBuf,
        offset: u64,
        extra: u64,
        kind: &'static str,
    },
}

/// A point type as it is stored in a parameter file.
pub(crate) trait Stored: PrimeCurveAffine + Copy + Send + Sync {
    const SIZE: usize;
    fn decode(bytes: &[u8], v: Validation) -> Result<Self, &'static str>;
    fn encode(&self, out: &mut [u8]);
}

/// Splits an uncompressed encoding's flag bits off its first byte: the compression flag must
/// be clear, and infinity is refused as upstream does.
fn strip_flags<const N: usize>(raw: &[u8; N]) -> Result<[u8; N], &'static str> {
    match raw[0] >> 5 {
        0 => Ok(*raw),
        2 => Err("point at infinity"),
        _ => Err("compressed or malformed encoding flags"),
    }
}

fn fp(bytes: &[u8]) -> Result<Fp, &'static str> {
    Option::from(Fp::from_bytes_be(bytes.try_into().expect("48 bytes")))
        .ok_or("coordinate is not a field element")
}

/// Builds a point from its raw uncompressed coordinates without any curve check.
trait FromCoordinates: Sized {
    fn from_coordinates(raw: &[u8]) -> Result<Self, &'static str>;
}

impl FromCoordinates for G1Affine {
    fn from_coordinates(raw: &[u8]) -> Result<Self, &'static str> {
        Ok(G1Affine::from_raw_unchecked(
            fp(&raw[..48])?,
            fp(&raw[48..])?,
            false,
        ))
    }
}

impl FromCoordinates for G2Affine {
    fn from_coordinates(raw: &[u8]) -> Result<Self, &'static str> {
        // G2 coordinates are written c1 then c0.
        let x = Fp2::new(fp(&raw[48..96])?, fp(&raw[..48])?);
        let y = Fp2::new(fp(&raw[144..])?, fp(&raw[96..144])?);
        Ok(G2Affine::from_raw_unchecked(x, y, false))
    }
}

macro_rules! stored {
    ($t:ty, $n:literal) => {
        impl Stored for $t {
            const SIZE: usize = $n;
            fn decode(bytes: &[u8], v: Validation) -> Result<Self, &'static str> {
                let raw: &[u8; $n] = bytes.try_into().map_err(|_| "short point")?;
                let p: $t = match v {
                    Validation::Full => Option::from(<$t>::from_uncompressed(raw))
                        .ok_or("not an encoded point of the prime-order subgroup")?,
                    Validation::OnCurve => Option::from(<$t>::from_uncompressed_unchecked(raw))
                        .ok_or("not an encoded curve point")?,
                    Validation::Trusted => {
                        let raw = strip_flags(raw)?;
                        <$t>::from_coordinates(&raw)?
                    }
                };
                if bool::from(p.is_identity()) {
                    return Err("point at infinity");
                }
                Ok(p)
            }
            fn encode(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_uncompressed());
            }
        }
    };
}
stored!(G1Affine, 96);
stored!(G2Affine, 192);

/// The verifying key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    pub alpha_g1: G1Affine,
    pub beta_g1: G1Affine,
    pub beta_g2: G2Affine,
    pub gamma_g2: G2Affine,
    pub delta_g1: G1Affine,
    pub delta_g2: G2Affine,
    /// One point per input (ONE first): `(β·u_i + α·v_i + w_i)/γ · G1`.
    pub ic: Vec<G1Affine>,
}

enum Backing {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Owned(v) => v,
        }
    }

    /// Drops this process's pages of `len` mapped bytes at `offset` once they are decoded: a
    /// key file's pages otherwise stay resident beside the decoded points (a 32 GiB key read
    /// from its `.params` counted 47 GB twice in the daemon's RSS).
    fn release(&self, offset: usize, len: usize) {
        #[cfg(unix)]
        if let Backing::Mapped(m) = self {
            // SAFETY: the map is shared and read-only: a dropped page that is touched again is
            // read back from the file, so no data is lost.
            let _ = unsafe {
                m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, offset, len)
            };
        }
        #[cfg(not(unix))]
        let _ = (offset, len);
    }
}

/// Input bytes decoded between two [`Backing::release`] calls: what a decode holds of the file.
const DECODE_BLOCK: usize = 256 << 20;

struct Source {
    path: PathBuf,
    backing: Backing,
    validation: Validation,
    /// Every section's points already decoded, mapped from a point cache ([`cache`]).
    decoded: Option<memmap2::Mmap>,
}

/// One query of the proving key: points either given in memory or decoded from a file on
/// first use.
struct Section<P> {
    name: &'static str,
    len: usize,
    offset: u64,
    /// Where its points start in a point cache.
    decoded_offset: usize,
    points: OnceLock<Vec<P>>,
}

impl<P: Stored> Section<P> {
    fn from_points(name: &'static str, points: Vec<P>) -> Self {
        let s = Section {
            name,
            len: points.len(),
            offset: 0,
            decoded_offset: 0,
            points: OnceLock::new(),
        };
        let _ = s.points.set(points);
        s
    }

    fn get<'a>(&'a self, src: Option<&'a Source>) -> Result<&'a [P], ParamsError> {
        if let Some(p) = self.points.get() {
            return Ok(p);
        }
        let src = src.expect("a section without points always has a source");
        if let Some(map) = &src.decoded {
            return Ok(cache::points(map, self.decoded_offset, self.len));
        }
        let start = self.offset as usize;
        let bytes = &src.backing.bytes()[start..start + self.len * P::SIZE];
        // Decoded straight into their slots of one huge-page vector: collecting a
        // `Result<Vec<_>>` in parallel goes through a list of pieces and copies them again into
        // fresh 4 KiB pages (perf: 3 % of a 2 KiB proof in page clears under that copy). Block
        // by block, each block's file pages released once decoded.
        let bad = Mutex::new(None::<(usize, &'static str)>);
        let mut points = crate::memory::large_vec(self.len);
        let per_block = DECODE_BLOCK / P::SIZE;
        for (k, block) in bytes.chunks(per_block * P::SIZE).enumerate() {
            points.par_extend(block.par_chunks(P::SIZE).enumerate().map(|(j, b)| {
                let i = k * per_block + j;
                P::decode(b, src.validation).unwrap_or_else(|reason| {
                    let mut bad = bad.lock().unwrap_or_else(|e| e.into_inner());
                    // Report the first bad point, whichever thread finds it.
                    if bad.map_or(true, |(j, _)| i < j) {
                        *bad = Some((i, reason));
                    }
                    P::identity()
                })
            }));
            src.backing
                .release(start + k * per_block * P::SIZE, block.len());
        }
        if let Some((index, reason)) = bad.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(ParamsError::BadPoint {
                path: src.path.clone(),
                section: self.name,
                index,
                offset: self.offset + (index * P::SIZE) as u64,
                reason,
            });
        }
        let _ = self.points.set(points);
        Ok(self.points.get().expect("just set"))
    }

    fn write(&self, src: Option<&Source>, w: &mut impl Write) -> Result<(), ParamsError> {
        let io = |source| ParamsError::Io {
            path: PathBuf::from("<output>"),
            source,
        };
        w.write_all(&(self.len as u32).to_be_bytes()).map_err(io)?;
        // Copy undecoded file bytes verbatim; encode decoded points in parallel blocks.
        if let (None, Some(src)) = (self.points.get(), src) {
            let start = self.offset as usize;
            return w
                .write_all(&src.backing.bytes()[start..start + self.len * P::SIZE])
                .map_err(io);
        }
        for block in self.get(src)?.chunks(1 << 16) {
            let mut buf = vec![0u8; block.len() * P::SIZE];
            buf.par_chunks_mut(P::SIZE)
                .zip(block.par_iter())
                .for_each(|(o, p)| p.encode(o));
            w.write_all(&buf).map_err(io)?;
        }
        Ok(())
    }
}

/// The proving key (bellperson's `Parameters`).
pub struct ProvingKey {
    pub vk: VerifyingKey,
    source: Option<Source>,
    h: Section<G1Affine>,
    l: Section<G1Affine>,
    a: Section<G1Affine>,
    b_g1: Section<G1Affine>,
    b_g2: Section<G2Affine>,
    /// Fixed-base tables of the queries, once [`ProvingKey::tabulate`] made them.
    tables: std::sync::OnceLock<crate::msm::Tables>,
}

impl std::fmt::Debug for ProvingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProvingKey")
            .field("file", &self.source.as_ref().map(|s| &s.path))
            .field("ic", &self.vk.ic.len())
            .field("h", &self.h.len)
            .field("l", &self.l.len)
            .field("a", &self.a.len)
            .field("b_g1", &self.b_g1.len)
            .field("b_g2", &self.b_g2.len)
            .finish()
    }
}

/// Reads a byte layout front to back, turning every shortfall into a typed error.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: &'a Path,
    /// Bytes of decoded points before the next section, in a point cache's layout.
    decoded: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, section: &'static str, need: usize) -> Result<&'a [u8], ParamsError> {
        let have = self.bytes.len();
        if have.saturating_sub(self.pos) < need {
            return Err(ParamsError::Truncated {
                path: self.path.to_path_buf(),
                section,
                offset: self.pos as u64,
                need: need as u64,
                have: have as u64,
            });
        }
        let out = &self.bytes[self.pos..self.pos + need];
        self.pos += need;
        Ok(out)
    }

    fn len(&mut self, section: &'static str) -> Result<usize, ParamsError> {
        let b = self.take(section, 4)?;
        Ok(u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
    }

    fn point<P: Stored>(&mut self, section: &'static str, index: usize) -> Result<P, ParamsError> {
        let offset = self.pos as u64;
        let b = self.take(section, P::SIZE)?;
        P::decode(b, Validation::Full).map_err(|reason| ParamsError::BadPoint {
            path: self.path.to_path_buf(),
            section,
            index,
            offset,
            reason,
        })
    }

    /// Skips over a length-prefixed section, returning where its points start.
    fn section<P: Stored>(&mut self, name: &'static str) -> Result<Section<P>, ParamsError> {
        let len = self.len(name)?;
        let offset = self.pos as u64;
        let need = len.saturating_mul(P::SIZE);
        self.take(name, need)?;
        let decoded_offset = self.decoded;
        self.decoded += len * std::mem::size_of::<P>();
        Ok(Section {
            name,
            len,
            offset,
            decoded_offset,
            points: OnceLock::new(),
        })
    }

    fn finish(&self, kind: &'static str) -> Result<(), ParamsError> {
        let extra = self.bytes.len() - self.pos;
        if extra != 0 {
            return Err(ParamsError::Trailing {
                path: self.path.to_path_buf(),
                offset: self.pos as u64,
                extra: extra as u64,
                kind,
            });
        }
        Ok(())
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ParamsError + '_ {
    move |source| ParamsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn map_file(path: &Path) -> Result<Backing, ParamsError> {
    let file = File::open(path).map_err(io_err(path))?;
    // SAFETY: parameter files are treated as immutable while mapped; a concurrent writer of
    // ours always writes a temporary file and renames it into place.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err(path))?;
    Ok(Backing::Mapped(map))
}

/// Writes through a temporary file in the same directory, renamed into place once complete.
fn write_atomically(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<File>) -> Result<(), ParamsError>,
) -> Result<(), ParamsError> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let result = (|| {
        let file = File::create(&tmp).map_err(io_err(&tmp))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        body(&mut w)?;
        let file = w.into_inner().map_err(|e| io_err(&tmp)(e.into_error()))?;
        file.sync_all().map_err(io_err(&tmp))?;
        std::fs::rename(&tmp, path).map_err(io_err(path))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

impl VerifyingKey {
    fn parse(c: &mut Cursor<'_>) -> Result<Self, ParamsError> {
        let alpha_g1 = c.point("vk.alpha_g1", 0)?;
        let beta_g1 = c.point("vk.beta_g1", 0)?;
        let beta_g2 = c.point("vk.beta_g2", 0)?;
        let gamma_g2 = c.point("vk.gamma_g2", 0)?;
        let delta_g1 = c.point("vk.delta_g1", 0)?;
        let delta_g2 = c.point("vk.delta_g2", 0)?;
        let n = c.len("vk.ic")?;
        // Check the whole section is there before allocating for it.
        let start = c.pos;
        c.take("vk.ic", n.saturating_mul(G1Affine::SIZE))?;
        c.pos = start;
        let ic = (0..n)
            .map(|i| c.point("vk.ic", i))
            .collect::<Result<_, _>>()?;
        Ok(VerifyingKey {
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
            ic,
        })
    }

    /// Parses a `.vk` file's bytes (all points fully checked).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ParamsError> {
        Self::from_bytes_named(bytes, Path::new("<memory>"))
    }

    fn from_bytes_named(bytes: &[u8], path: &Path) -> Result<Self, ParamsError> {
        let mut c = Cursor {
            bytes,
            pos: 0,
            path,
            decoded: cache::HEADER,
        };
        let vk = Self::parse(&mut c)?;
        c.finish("vk")?;
        Ok(vk)
    }

    /// Reads a `.vk` file.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, ParamsError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(io_err(path))?;
        Self::from_bytes_named(&bytes, path)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + 3 * 96 + 3 * 192 + self.ic.len() * 96);
        for p in [self.alpha_g1, self.beta_g1] {
            out.extend_from_slice(&p.to_uncompressed());
        }
        for p in [self.beta_g2, self.gamma_g2] {
            out.extend_from_slice(&p.to_uncompressed());
        }
        out.extend_from_slice(&self.delta_g1.to_uncompressed());
        out.extend_from_slice(&self.delta_g2.to_uncompressed());
        out.extend_from_slice(&(self.ic.len() as u32).to_be_bytes());
        for p in &self.ic {
            out.extend_from_slice(&p.to_uncompressed());
        }
        out
    }

    /// Writes a `.vk` file atomically.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ParamsError> {
        let path = path.as_ref();
        write_atomically(path, |w| {
            w.write_all(&self.to_bytes()).map_err(io_err(path))
        })
    }
}

impl ProvingKey {
    /// A key held in memory (what the generator produces).
    pub fn from_points(
        vk: VerifyingKey,
        h: Vec<G1Affine>,
        l: Vec<G1Affine>,
        a: Vec<G1Affine>,
        b_g1: Vec<G1Affine>,
        b_g2: Vec<G2Affine>,
    ) -> Self {
        ProvingKey {
            vk,
            source: None,
            h: Section::from_points("h", h),
            l: Section::from_points("l", l),
            a: Section::from_points("a", a),
            b_g1: Section::from_points("b_g1", b_g1),
            b_g2: Section::from_points("b_g2", b_g2),
            tables: Default::default(),
        }
    }

    /// Maps a `.params` file. The layout and the verifying key are checked now; query points
    /// are decoded (and validated as `validation` says) when first used.
    pub fn read(path: impl AsRef<Path>, validation: Validation) -> Result<Self, ParamsError> {
        let path = path.as_ref();
        Self::parse(path.to_path_buf(), map_file(path)?, validation)
    }

    /// [`read`](Self::read) with a point cache at `cache` (see [`PointCache`]): where it
    /// matches this file, the points are mapped from it and nothing is decoded; otherwise
    /// every section is decoded now, and the returned [`CacheWrite`] writes the cache for the
    /// next reader.
    pub fn read_cached(
        path: impl AsRef<Path>,
        validation: Validation,
        cache: impl AsRef<Path>,
    ) -> Result<(Self, PointCache), ParamsError> {
        let (path, cache) = (path.as_ref(), cache.as_ref());
        // The file's metadata before it is mapped: a file replaced in between gives a header
        // that no later reader of the new file matches.
        let meta = std::fs::metadata(path).map_err(io_err(path))?;
        let mut pk = Self::read(path, validation)?;
        let header = cache::header(&meta, validation, pk.lengths());
        if let Some(map) = cache::open(cache, &header, pk.decoded_len()) {
            let src = pk
                .source
                .as_mut()
                .expect("a key read from a file has a source");
            src.decoded = Some(map);
            return Ok((pk, PointCache::Hit));
        }
        pk.preload()?;
        Ok((pk, PointCache::Miss(CacheWrite::new(cache, path, header))))
    }

    /// Bytes of a point cache of this key.
    fn decoded_len(&self) -> usize {
        let [h, l, a, b_g1, b_g2] = self.lengths();
        cache::HEADER
            + (h + l + a + b_g1) * std::mem::size_of::<G1Affine>()
            + b_g2 * std::mem::size_of::<G2Affine>()
    }

    /// Parses a `.params` image held in memory.
    pub fn from_bytes(bytes: Vec<u8>, validation: Validation) -> Result<Self, ParamsError> {
        Self::parse(PathBuf::from("<memory>"), Backing::Owned(bytes), validation)
    }

    fn parse(path: PathBuf, backing: Backing, validation: Validation) -> Result<Self, ParamsError> {
        let mut c = Cursor {
            bytes: backing.bytes(),
            pos: 0,
            path: &path,
            decoded: cache::HEADER,
        };
        let vk = VerifyingKey::parse(&mut c)?;
        let h = c.section("h")?;
        let l = c.section("l")?;
        let a = c.section("a")?;
        let b_g1 = c.section("b_g1")?;
        let b_g2 = c.section("b_g2")?;
        c.finish("params")?;
        Ok(ProvingKey {
            vk,
            h,
            l,
            a,
            b_g1,
            b_g2,
            tables: Default::default(),
            source: Some(Source {
                path,
                backing,
                validation,
                decoded: None,
            }),
        })
    }

    /// `τ^i·Z(τ)/δ · G1` for `i < n − 1`.
    pub fn h(&self) -> Result<&[G1Affine], ParamsError> {
        self.h.get(self.source.as_ref())
    }
    /// `(β·u_i + α·v_i + w_i)/δ · G1` per aux column.
    pub fn l(&self) -> Result<&[G1Affine], ParamsError> {
        self.l.get(self.source.as_ref())
    }
    /// `u_i(τ) · G1` for every input, then for the aux columns present in A.
    pub fn a(&self) -> Result<&[G1Affine], ParamsError> {
        self.a.get(self.source.as_ref())
    }
    /// `v_i(τ) · G1` for the input, then aux, columns present in B.
    pub fn b_g1(&self) -> Result<&[G1Affine], ParamsError> {
        self.b_g1.get(self.source.as_ref())
    }
    /// `v_i(τ) · G2` for the input, then aux, columns present in B.
    pub fn b_g2(&self) -> Result<&[G2Affine], ParamsError> {
        self.b_g2.get(self.source.as_ref())
    }

    /// The `.params` file it was read from; `None` for a key made in memory (a setup's),
    /// whose points are all decoded already.
    pub fn file(&self) -> Option<&Path> {
        self.source.as_ref().map(|s| s.path.as_path())
    }

    /// Section lengths `(h, l, a, b_g1, b_g2)`, known without decoding.
    pub fn lengths(&self) -> [usize; 5] {
        [
            self.h.len,
            self.l.len,
            self.a.len,
            self.b_g1.len,
            self.b_g2.len,
        ]
    }

    /// Builds fixed-base tables of the queries that fit `limit` bytes
    /// ([`crate::msm::Tables::plan`]); the CPU backend's MSMs use them from then on. Returns the
    /// bytes they hold. The tables are made once: a later call returns the first ones' size.
    pub fn tabulate(&self, limit: u64) -> Result<u64, ParamsError> {
        if let Some(t) = self.tables.get() {
            return Ok(t.bytes());
        }
        let tables = crate::msm::Tables::new(self, limit)?;
        Ok(self.tables.get_or_init(|| tables).bytes())
    }

    /// Bytes of the tables [`ProvingKey::tabulate`] made; 0 before.
    pub fn tables_bytes(&self) -> u64 {
        self.tables.get().map_or(0, crate::msm::Tables::bytes)
    }

    /// The tables [`ProvingKey::tabulate`] made, if it ran.
    pub(crate) fn tables(&self) -> Option<&crate::msm::Tables> {
        self.tables.get()
    }

    /// Decodes and validates every section now.
    pub fn preload(&self) -> Result<(), ParamsError> {
        self.h()?;
        self.l()?;
        self.a()?;
        self.b_g1()?;
        self.b_g2()?;
        Ok(())
    }

    /// Writes the bellperson `.params` layout.
    pub fn write_to(&self, w: &mut impl Write) -> Result<(), ParamsError> {
        let src = self.source.as_ref();
        let io = |source| ParamsError::Io {
            path: PathBuf::from("<output>"),
            source,
        };
        w.write_all(&self.vk.to_bytes()).map_err(io)?;
        self.h.write(src, w)?;
        self.l.write(src, w)?;
        self.a.write(src, w)?;
        self.b_g1.write(src, w)?;
        self.b_g2.write(src, w)
    }

    /// Writes a `.params` file atomically (temporary file, then rename).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ParamsError> {
        write_atomically(path.as_ref(), |w| self.write_to(w))
    }
}
