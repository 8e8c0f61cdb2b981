//! The PCE file: everything [`Pce`] holds, laid out for mmap and checksummed.
//!
//! ```text
//! 0   magic "CUZKPCE\0"
//! 8   version u32
//! 12  endianness tag u32 (0x01020304 as written by the host)
//! 16  digest [32]: chunked SHA-256 of bytes 48..end (identity, sizes, table, sections)
//! 48  identity length u32, identity (UTF-8: the proof type / circuit id the caller names)
//!     num_inputs u64, num_aux u64, then 18 × (offset u64, byte length u64):
//!     for A, B, C: row_starts, entries, escapes, escape_marks, dictionary; then the
//!     densities a_aux, b_input, b_aux
//!     sections, each starting on a 64-byte boundary
//! ```
//! All integers little-endian. The digest is both the checksum and the circuit's identity:
//! two files with equal digests hold the same matrices. Loading checks the digest, then every
//! structural invariant the evaluator relies on, so a file that loads can never make it index
//! out of bounds.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuzk_groth16::assignment::Densities;
use cuzk_groth16::density::Density;
use cuzk_groth16::Fr;
use ff::PrimeField;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::matrix::{Matrix, Words, CHUNK_ROWS, ESCAPE};
use crate::Pce;

pub const MAGIC: [u8; 8] = *b"CUZKPCE\0";
pub const VERSION: u32 = 1;
const ENDIAN: u32 = 0x0102_0304;
const DIGEST_AT: usize = 16;
const BODY_AT: usize = 48;
const SECTIONS: usize = 18;
const ALIGN: usize = 64;

#[derive(Debug, Error)]
pub enum FileError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: not a cuzk PCE file (bad magic)", .path.display())]
    Magic { path: PathBuf },
    #[error("{}: PCE format version {found}, this build reads version {VERSION}", .path.display())]
    Version { path: PathBuf, found: u32 },
    #[error("{}: written on a host of the other endianness", .path.display())]
    Endianness { path: PathBuf },
    #[error("{}: truncated: {what} needs bytes up to {need}, the file has {have}", .path.display())]
    Truncated {
        path: PathBuf,
        what: String,
        need: u64,
        have: u64,
    },
    #[error("{}: checksum mismatch (file damaged or incomplete)", .path.display())]
    Checksum { path: PathBuf },
    #[error("{}: corrupt {what}: {reason}", .path.display())]
    Corrupt {
        path: PathBuf,
        what: String,
        reason: String,
    },
    #[error("{}: holds circuit {found:?}, expected {expected:?}", .path.display())]
    WrongCircuit {
        path: PathBuf,
        expected: String,
        found: String,
    },
}

/// Recomputes the checksum of a whole PCE file image in place, so that a deliberately altered
/// image (corruption tests, fuzzing) reaches the structural checks behind the checksum. Images
/// too short to hold a checksum are left alone.
pub fn restamp(image: &mut [u8]) {
    if image.len() >= BODY_AT {
        let d = digest(&image[BODY_AT..]);
        image[DIGEST_AT..DIGEST_AT + 32].copy_from_slice(&d);
    }
}

/// SHA-256 over 16 MiB chunks hashed in parallel, then over the chunk digests.
pub fn digest(bytes: &[u8]) -> [u8; 32] {
    let parts: Vec<[u8; 32]> = bytes
        .par_chunks(16 << 20)
        .map(|c| Sha256::digest(c).into())
        .collect();
    let mut h = Sha256::new();
    h.update((bytes.len() as u64).to_le_bytes());
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> FileError + '_ {
    move |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn pad(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

impl Pce {
    /// The raw sections in table order.
    fn sections(&self) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(SECTIONS);
        for m in [&self.a, &self.b, &self.c] {
            for w in [&m.row_starts, &m.entries, &m.escapes, &m.escape_marks] {
                out.push(u32_bytes(w.as_slice()));
            }
            out.push(m.dict.iter().flat_map(|c| c.to_repr()).collect());
        }
        for d in [
            &self.density.a_aux,
            &self.density.b_input,
            &self.density.b_aux,
        ] {
            out.push(d.words().iter().flat_map(|w| w.to_le_bytes()).collect());
        }
        out
    }

    /// Writes the file through a temporary file renamed into place; returns its digest.
    pub fn write(&self, path: impl AsRef<Path>, identity: &str) -> Result<[u8; 32], FileError> {
        let path = path.as_ref();
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        let result = self.write_tmp(&tmp, identity).and_then(|d| {
            std::fs::rename(&tmp, path).map_err(io_err(path))?;
            Ok(d)
        });
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    fn write_tmp(&self, tmp: &Path, identity: &str) -> Result<[u8; 32], FileError> {
        let sections = self.sections();
        let mut head = Vec::new();
        head.extend_from_slice(&MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&ENDIAN.to_le_bytes());
        head.extend_from_slice(&[0u8; 32]);
        head.extend_from_slice(&(identity.len() as u32).to_le_bytes());
        head.extend_from_slice(identity.as_bytes());
        head.resize(head.len().div_ceil(8) * 8, 0);
        head.extend_from_slice(&(self.num_inputs as u64).to_le_bytes());
        head.extend_from_slice(&(self.num_aux as u64).to_le_bytes());
        let mut offset = pad(head.len() + SECTIONS * 16);
        for s in &sections {
            head.extend_from_slice(&(offset as u64).to_le_bytes());
            head.extend_from_slice(&(s.len() as u64).to_le_bytes());
            offset = pad(offset + s.len());
        }
        // Read access too: the digest is computed through a map of what was written.
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(tmp)
            .map_err(io_err(tmp))?;
        let mut w = io::BufWriter::with_capacity(1 << 20, &mut file);
        let mut pos = 0;
        for chunk in std::iter::once(&head).chain(sections.iter()) {
            let aligned = pad(pos);
            w.write_all(&vec![0u8; aligned - pos])
                .map_err(io_err(tmp))?;
            w.write_all(chunk).map_err(io_err(tmp))?;
            pos = aligned + chunk.len();
        }
        w.flush().map_err(io_err(tmp))?;
        drop(w);
        // SAFETY: the file is ours and not modified while mapped.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err(tmp))?;
        let d = digest(&map[BODY_AT..]);
        drop(map);
        file.seek(SeekFrom::Start(DIGEST_AT as u64))
            .map_err(io_err(tmp))?;
        file.write_all(&d).map_err(io_err(tmp))?;
        file.sync_all().map_err(io_err(tmp))?;
        Ok(d)
    }

    /// Maps a PCE file. With `expected`, the stored identity must equal it.
    pub fn load(
        path: impl AsRef<Path>,
        expected: Option<&str>,
    ) -> Result<(Self, [u8; 32]), FileError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(io_err(path))?;
        // SAFETY: PCE files are written once (temporary file + rename) and never modified.
        let map = Arc::new(unsafe { memmap2::Mmap::map(&file) }.map_err(io_err(path))?);
        Loader { path, map: &map }.load(&map, expected)
    }
}

struct Loader<'a> {
    path: &'a Path,
    map: &'a [u8],
}

impl Loader<'_> {
    fn truncated(&self, what: impl Into<String>, need: usize) -> FileError {
        FileError::Truncated {
            path: self.path.to_path_buf(),
            what: what.into(),
            need: need as u64,
            have: self.map.len() as u64,
        }
    }

    fn corrupt(&self, what: impl Into<String>, reason: impl Into<String>) -> FileError {
        FileError::Corrupt {
            path: self.path.to_path_buf(),
            what: what.into(),
            reason: reason.into(),
        }
    }

    fn bytes(&self, what: &str, at: usize, len: usize) -> Result<&[u8], FileError> {
        let end = at
            .checked_add(len)
            .ok_or_else(|| self.truncated(what, usize::MAX))?;
        self.map
            .get(at..end)
            .ok_or_else(|| self.truncated(what, end))
    }

    fn u32_at(&self, what: &str, at: usize) -> Result<u32, FileError> {
        Ok(u32::from_le_bytes(
            self.bytes(what, at, 4)?.try_into().expect("4 bytes"),
        ))
    }

    fn u64_at(&self, what: &str, at: usize) -> Result<u64, FileError> {
        Ok(u64::from_le_bytes(
            self.bytes(what, at, 8)?.try_into().expect("8 bytes"),
        ))
    }

    fn load(
        &self,
        map: &Arc<memmap2::Mmap>,
        expected: Option<&str>,
    ) -> Result<(Pce, [u8; 32]), FileError> {
        let path = self.path.to_path_buf();
        if self.bytes("magic", 0, 8)? != MAGIC {
            return Err(FileError::Magic { path });
        }
        let version = self.u32_at("version", 8)?;
        if version != VERSION {
            return Err(FileError::Version {
                path,
                found: version,
            });
        }
        match self.u32_at("endianness tag", 12)? {
            ENDIAN if cfg!(target_endian = "little") => {}
            x if x == ENDIAN || x == ENDIAN.swap_bytes() => {
                return Err(FileError::Endianness { path })
            }
            x => return Err(self.corrupt("endianness tag", format!("{x:#x}"))),
        }
        let stored: [u8; 32] = self
            .bytes("digest", DIGEST_AT, 32)?
            .try_into()
            .expect("32 bytes");
        self.bytes("header", BODY_AT, 4)?;
        if digest(&self.map[BODY_AT..]) != stored {
            return Err(FileError::Checksum { path });
        }
        let id_len = self.u32_at("identity length", BODY_AT)? as usize;
        let identity = std::str::from_utf8(self.bytes("identity", BODY_AT + 4, id_len)?)
            .map_err(|e| self.corrupt("identity", e.to_string()))?
            .to_string();
        if let Some(want) = expected {
            if want != identity {
                return Err(FileError::WrongCircuit {
                    path,
                    expected: want.to_string(),
                    found: identity,
                });
            }
        }
        let mut at = (BODY_AT + 4 + id_len).div_ceil(8) * 8;
        let num_inputs = self.u64_at("num_inputs", at)? as usize;
        let num_aux = self.u64_at("num_aux", at + 8)? as usize;
        at += 16;
        let mut table = Vec::with_capacity(SECTIONS);
        for i in 0..SECTIONS {
            let off = self.u64_at("section table", at + 16 * i)? as usize;
            let len = self.u64_at("section table", at + 16 * i + 8)? as usize;
            if off % ALIGN != 0 {
                return Err(self.corrupt(format!("section {i}"), "misaligned"));
            }
            self.bytes(&format!("section {i}"), off, len)?;
            table.push((off, len));
        }
        let words = |i: usize| -> Result<Words, FileError> {
            let (offset, len) = table[i];
            if len % 4 != 0 {
                return Err(self.corrupt(format!("section {i}"), "length is not a multiple of 4"));
            }
            Ok(Words::Mapped {
                map: map.clone(),
                offset,
                len: len / 4,
            })
        };
        let total_cols = num_inputs
            .checked_add(num_aux)
            .ok_or_else(|| self.corrupt("sizes", "column count overflows"))?;
        let mut matrices = Vec::with_capacity(3);
        for (k, name) in ["A", "B", "C"].into_iter().enumerate() {
            let (off, len) = table[5 * k + 4];
            if len % 32 != 0 {
                return Err(self.corrupt(
                    format!("{name} dictionary"),
                    "length is not a multiple of 32",
                ));
            }
            let dict = self.map[off..off + len]
                .chunks(32)
                .map(|c| Option::<Fr>::from(Fr::from_repr(c.try_into().expect("32 bytes"))))
                .collect::<Option<Vec<Fr>>>()
                .ok_or_else(|| self.corrupt(format!("{name} dictionary"), "not a field element"))?;
            let m = Matrix {
                row_starts: words(5 * k)?,
                entries: words(5 * k + 1)?,
                escapes: words(5 * k + 2)?,
                escape_marks: words(5 * k + 3)?,
                dict,
            };
            self.check(name, &m, total_cols)?;
            matrices.push(m);
        }
        let rows = matrices[0].rows();
        if matrices.iter().any(|m| m.rows() != rows) {
            return Err(self.corrupt("matrices", "A, B and C have different row counts"));
        }
        let density = |i: usize, len: usize, name: &str| -> Result<Density, FileError> {
            let (off, blen) = table[15 + i];
            if blen % 8 != 0 {
                return Err(self.corrupt(name, "length is not a multiple of 8"));
            }
            let w = self.map[off..off + blen]
                .chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
            Density::from_words(w, len)
                .ok_or_else(|| self.corrupt(name, "does not match the column count"))
        };
        let density = Densities {
            a_aux: density(0, num_aux, "a_aux density")?,
            b_input: density(1, num_inputs, "b_input density")?,
            b_aux: density(2, num_aux, "b_aux density")?,
        };
        let mut it = matrices.into_iter();
        let (a, b, c) = (
            it.next().expect("3"),
            it.next().expect("3"),
            it.next().expect("3"),
        );
        Ok((
            Pce {
                num_inputs,
                num_aux,
                a,
                b,
                c,
                density,
            },
            stored,
        ))
    }

    /// Every invariant `Matrix::mul_vec` relies on.
    fn check(&self, name: &str, m: &Matrix, cols: usize) -> Result<(), FileError> {
        let rs = m.row_starts.as_slice();
        let (entries, escapes, marks) = (
            m.entries.as_slice(),
            m.escapes.as_slice(),
            m.escape_marks.as_slice(),
        );
        let bad = |what: &str, reason: String| self.corrupt(format!("{name} {what}"), reason);
        if rs.first() != Some(&0) || *rs.last().unwrap_or(&1) as usize != entries.len() {
            return Err(bad(
                "row_starts",
                "must start at 0 and end at the entry count".into(),
            ));
        }
        if rs.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad("row_starts", "not monotone".into()));
        }
        let rows = rs.len() - 1;
        if marks.len() != rows.div_ceil(CHUNK_ROWS) + 1 {
            return Err(bad(
                "escape_marks",
                format!("{} marks for {rows} rows", marks.len()),
            ));
        }
        let dict = m.dict.len() as u32;
        let escaped: Result<Vec<usize>, FileError> = (0..rows.div_ceil(CHUNK_ROWS))
            .into_par_iter()
            .map(|k| {
                let lo = rs[k * CHUNK_ROWS] as usize;
                let hi = rs[((k + 1) * CHUNK_ROWS).min(rows)] as usize;
                let mut n = 0;
                for &e in &entries[lo..hi] {
                    if (e >> 4) as usize >= cols {
                        return Err(bad("entries", format!("column {} out of range", e >> 4)));
                    }
                    let tag = e & 15;
                    if tag == ESCAPE {
                        n += 1;
                    } else if tag >= dict {
                        return Err(bad(
                            "entries",
                            format!("tag {tag} with {dict} coefficients"),
                        ));
                    }
                }
                Ok(n)
            })
            .collect();
        let mut acc = 0usize;
        for (k, n) in escaped?.into_iter().enumerate() {
            if marks[k] as usize != acc {
                return Err(bad(
                    "escape_marks",
                    format!("mark {k} is {}, expected {acc}", marks[k]),
                ));
            }
            acc += n;
        }
        if *marks.last().unwrap_or(&0) as usize != acc || escapes.len() != acc {
            return Err(bad(
                "escapes",
                format!("{} escapes, entries need {acc}", escapes.len()),
            ));
        }
        if escapes.par_iter().any(|&i| i >= dict) {
            return Err(bad("escapes", "dictionary index out of range".into()));
        }
        Ok(())
    }
}
