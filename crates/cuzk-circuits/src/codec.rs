//! bincode 1, as filecoin-proofs-api writes upstream's vanilla proofs for Curio: integers
//! little-endian at full width, lengths as u64, enum variants as u32, 32-byte field elements as
//! their raw bytes. Shared by the PoSt and SnapDeals readers.
//!
//! The reader names the field that went wrong and refuses a length longer than the bytes
//! left, so a hostile length cannot make it allocate.

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

pub(crate) type Read<T> = Result<T, ReadError>;

pub(crate) fn fail(reason: impl Into<String>) -> ReadError {
    ReadError {
        field: String::new(),
        reason: reason.into(),
    }
}

/// Reads one bincode value front to back.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes }
    }

    /// Ok when every byte was read: trailing bytes are refused.
    pub(crate) fn finish(self) -> Read<()> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(fail(format!("{} bytes after the proof", self.bytes.len())))
        }
    }

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

    pub(crate) fn u64(&mut self) -> Read<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn u32(&mut self) -> Read<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    pub(crate) fn bytes32(&mut self) -> Read<Bytes> {
        Ok(self.take(32)?.try_into().expect("32 bytes"))
    }

    /// Reads field `name`, prefixing its name to any error's field path.
    pub(crate) fn field<T>(
        &mut self,
        name: &str,
        read: impl FnOnce(&mut Self) -> Read<T>,
    ) -> Read<T> {
        read(self).map_err(|e| e.within(name))
    }

    /// A u64 length, then that many items of at least `min_size` bytes each.
    pub(crate) fn list<T>(
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

    /// An upstream `MerkleProof` (any tree shape; the shape is checked later, against the
    /// sector's).
    pub(crate) fn merkle_proof(&mut self) -> Read<MerkleProof> {
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

/// A u64 length, then the items.
pub(crate) fn write_list<T>(
    out: &mut Vec<u8>,
    items: &[T],
    mut item: impl FnMut(&mut Vec<u8>, &T),
) {
    out.extend((items.len() as u64).to_le_bytes());
    for i in items {
        item(out, i);
    }
}

fn write_path(out: &mut Vec<u8>, path: &Path) {
    write_list(out, &path.path, |out, e| {
        write_list(out, &e.hashes, |out, h| out.extend(h));
        out.extend((e.index as u64).to_le_bytes());
    });
}

/// The bincode bytes [`Reader::merkle_proof`] reads.
pub(crate) fn write_merkle(out: &mut Vec<u8>, proof: &MerkleProof) {
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
