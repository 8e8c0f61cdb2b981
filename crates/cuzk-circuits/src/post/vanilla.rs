//! WindowPoSt / WinningPoSt vanilla proofs as Curio sends them: one bincode
//! `FallbackPoStSectorProof` per sector, read here into cuzk's own types.
//!
//! bincode 1 (what filecoin-proofs-api uses) writes integers little-endian at full width,
//! lengths as u64, enum variants as u32, 32-byte field elements as their raw bytes. The reader
//! names the field that went wrong and refuses a length longer than the bytes left, so a
//! hostile length cannot make it allocate.

use crate::vanilla::{Bytes, Element, MerkleProof, Path, ProofData, Single, Sub, Top};

/// Where reading failed: the field's path inside one vanilla proof, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub field: String,
    pub reason: String,
}

impl ReadError {
    fn within(mut self, outer: impl std::fmt::Display) -> Self {
        self.field = match self.field.chars().next() {
            None => outer.to_string(),
            Some('[') => format!("{outer}{}", self.field),
            Some(_) => format!("{outer}.{}", self.field),
        };
        self
    }
}

type Read<T> = Result<T, ReadError>;

/// The inclusion proofs of one sector with the roots they lead to (upstream's `SectorProof`).
#[derive(Debug, Clone)]
pub struct SectorOpenings {
    pub(crate) inclusion_proofs: Vec<MerkleProof>,
    pub(crate) comm_c: Bytes,
    pub(crate) comm_r_last: Bytes,
}

/// One sector's vanilla PoSt proof (upstream's `FallbackPoStSectorProof`).
#[derive(Debug, Clone)]
pub struct SectorProof {
    pub sector_id: u64,
    pub comm_r: Bytes,
    /// `vanilla_proof.sectors`: `generate_single_vanilla_proof` writes exactly one.
    pub(crate) openings: Vec<SectorOpenings>,
}

struct Reader<'a> {
    bytes: &'a [u8],
}

fn fail(reason: impl Into<String>) -> ReadError {
    ReadError {
        field: String::new(),
        reason: reason.into(),
    }
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Read<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(fail(format!(
                "ends after {} of {n} bytes",
                self.bytes.len()
            )));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u64(&mut self) -> Read<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn u32(&mut self) -> Read<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn bytes32(&mut self) -> Read<Bytes> {
        Ok(self.take(32)?.try_into().expect("32 bytes"))
    }

    fn field<T>(&mut self, name: &str, read: impl FnOnce(&mut Self) -> Read<T>) -> Read<T> {
        read(self).map_err(|e| e.within(name))
    }

    /// A u64 length, then that many items of at least `min_size` bytes each.
    fn list<T>(
        &mut self,
        min_size: usize,
        mut item: impl FnMut(&mut Self) -> Read<T>,
    ) -> Read<Vec<T>> {
        let n = self.u64()?;
        if n.saturating_mul(min_size as u64) > self.bytes.len() as u64 {
            return Err(fail(format!(
                "length {n}, but only {} bytes are left",
                self.bytes.len()
            )));
        }
        (0..n as usize)
            .map(|i| item(self).map_err(|e| e.within(format!("[{i}]"))))
            .collect()
    }

    fn path(&mut self) -> Read<Path> {
        let path = self.field("path", |r| {
            r.list(16, |r| {
                let hashes = r.field("hashes", |r| r.list(32, Reader::bytes32))?;
                let index = r.field("index", Reader::u64)?;
                let index = usize::try_from(index).map_err(|_| fail("index overflows usize"))?;
                Ok(Element { hashes, index })
            })
        })?;
        Ok(Path { path })
    }

    fn merkle_proof(&mut self) -> Read<MerkleProof> {
        let data = self.field("data", |r| {
            let variant = r.u32()?;
            let root_leaf = |r: &mut Self| -> Read<(Bytes, Bytes)> {
                Ok((
                    r.field("root", Reader::bytes32)?,
                    r.field("leaf", Reader::bytes32)?,
                ))
            };
            Ok(match variant {
                0 => {
                    let (root, leaf) = root_leaf(r)?;
                    let path = r.field("path", Reader::path)?;
                    ProofData::Single(Single { root, leaf, path })
                }
                1 => {
                    let base_proof = r.field("base_proof", Reader::path)?;
                    let sub_proof = r.field("sub_proof", Reader::path)?;
                    let (root, leaf) = root_leaf(r)?;
                    ProofData::Sub(Sub {
                        base_proof,
                        sub_proof,
                        root,
                        leaf,
                    })
                }
                2 => {
                    let base_proof = r.field("base_proof", Reader::path)?;
                    let sub_proof = r.field("sub_proof", Reader::path)?;
                    let top_proof = r.field("top_proof", Reader::path)?;
                    let (root, leaf) = root_leaf(r)?;
                    ProofData::Top(Top {
                        base_proof,
                        sub_proof,
                        top_proof,
                        root,
                        leaf,
                    })
                }
                v => return Err(fail(format!("variant {v}; Single 0, Sub 1 or Top 2"))),
            })
        })?;
        Ok(MerkleProof { data })
    }
}

impl SectorProof {
    /// Reads one bincode `FallbackPoStSectorProof`; trailing bytes are refused.
    pub fn parse(bytes: &[u8]) -> Result<Self, ReadError> {
        let mut r = Reader { bytes };
        let sector_id = r.field("sector_id", Reader::u64)?;
        let comm_r = r.field("comm_r", Reader::bytes32)?;
        let openings = r.field("vanilla_proof.sectors", |r| {
            r.list(8 + 64, |r| {
                let inclusion_proofs =
                    r.field("inclusion_proofs", |r| r.list(4 + 64, Reader::merkle_proof))?;
                let comm_c = r.field("comm_c", Reader::bytes32)?;
                let comm_r_last = r.field("comm_r_last", Reader::bytes32)?;
                Ok(SectorOpenings {
                    inclusion_proofs,
                    comm_c,
                    comm_r_last,
                })
            })
        })?;
        if !r.bytes.is_empty() {
            return Err(fail(format!("{} bytes after the proof", r.bytes.len())));
        }
        Ok(SectorProof {
            sector_id,
            comm_r,
            openings,
        })
    }

    /// The bincode bytes [`SectorProof::parse`] reads (for tests, fixtures and benches).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(self.sector_id.to_le_bytes());
        out.extend(self.comm_r);
        out.extend((self.openings.len() as u64).to_le_bytes());
        for o in &self.openings {
            out.extend((o.inclusion_proofs.len() as u64).to_le_bytes());
            for p in &o.inclusion_proofs {
                write_merkle(&mut out, p);
            }
            out.extend(o.comm_c);
            out.extend(o.comm_r_last);
        }
        out
    }
}

fn write_path(out: &mut Vec<u8>, path: &Path) {
    out.extend((path.path.len() as u64).to_le_bytes());
    for e in &path.path {
        out.extend((e.hashes.len() as u64).to_le_bytes());
        e.hashes.iter().for_each(|h| out.extend(h));
        out.extend((e.index as u64).to_le_bytes());
    }
}

fn write_merkle(out: &mut Vec<u8>, proof: &MerkleProof) {
    match &proof.data {
        ProofData::Single(p) => {
            out.extend(0u32.to_le_bytes());
            out.extend(p.root);
            out.extend(p.leaf);
            write_path(out, &p.path);
        }
        ProofData::Sub(p) => {
            out.extend(1u32.to_le_bytes());
            write_path(out, &p.base_proof);
            write_path(out, &p.sub_proof);
            out.extend(p.root);
            out.extend(p.leaf);
        }
        ProofData::Top(p) => {
            out.extend(2u32.to_le_bytes());
            write_path(out, &p.base_proof);
            write_path(out, &p.sub_proof);
            write_path(out, &p.top_proof);
            out.extend(p.root);
            out.extend(p.leaf);
        }
    }
}
