//! The engine payloads of the kinds whose requests are Curio's fields (PoSt, SnapDeals): a
//! tag, then fixed-width integers little-endian and byte strings behind u32 lengths, written by
//! the daemon or the CLI and read back by the engine's proof kind.

/// Writes a payload field by field.
pub(crate) struct Encoder(Vec<u8>);

impl Encoder {
    pub(crate) fn new(magic: &[u8; 8], capacity: usize) -> Self {
        let mut out = Vec::with_capacity(8 + capacity);
        out.extend(magic);
        Encoder(out)
    }

    pub(crate) fn u64(mut self, v: u64) -> Self {
        self.0.extend(v.to_le_bytes());
        self
    }

    pub(crate) fn u32(mut self, v: u32) -> Self {
        self.0.extend(v.to_le_bytes());
        self
    }

    pub(crate) fn bytes(self, b: &[u8]) -> Self {
        let mut e = self.u32(b.len() as u32);
        e.0.extend(b);
        e
    }

    /// A u32 count, then each byte string.
    pub(crate) fn list(self, items: &[Vec<u8>]) -> Self {
        items
            .iter()
            .fold(self.u32(items.len() as u32), |e, b| e.bytes(b))
    }

    pub(crate) fn finish(self) -> Vec<u8> {
        self.0
    }
}

/// Reads what an [`Encoder`] wrote; every error is a reason for the `payload` field.
pub(crate) struct Decoder<'a> {
    rest: &'a [u8],
    what: &'static str,
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(
        bytes: &'a [u8],
        magic: &[u8; 8],
        what: &'static str,
    ) -> Result<Self, String> {
        let rest = bytes
            .strip_prefix(magic)
            .ok_or_else(|| format!("not a cuzk {what} request"))?;
        Ok(Decoder { rest, what })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.rest.len() < n {
            return Err(format!("truncated {} request", self.what));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    pub(crate) fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    pub(crate) fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }

    /// A u32 count, then each byte string (the count is not trusted for allocation).
    pub(crate) fn list(&mut self) -> Result<Vec<Vec<u8>>, String> {
        let count = self.u32()? as usize;
        let mut items = Vec::with_capacity(count.min(self.rest.len() / 4));
        for _ in 0..count {
            items.push(self.bytes()?);
        }
        Ok(items)
    }

    /// Ok when every byte was read.
    pub(crate) fn finish(self) -> Result<(), String> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(format!("bytes after the {} request", self.what))
        }
    }
}
