//! Lets every gRPC client reach the daemon's unix socket. gRPC C-core (Python, C++, Ruby) and
//! grpc-java send the socket path as the HTTP/2 `:authority` on `unix:` targets; the `h2`
//! crate under tonic refuses that as a malformed authority (RST_STREAM PROTOCOL_ERROR,
//! hyperium/h2 PR #487). [`UnixAuthority`] sits between a unix connection and the server: it
//! reads the client's frames and, on a connection whose first request carries an authority
//! that is not one, re-encodes every request's header block with `:authority: localhost`.
//!
//! A connection whose first request is well-formed (grpc-go, so Curio and grpcurl) is passed
//! through untouched from then on. Re-encoded blocks use literal fields without indexing, so
//! the server's HPACK table never needs what the client's encoder indexed; the client's own
//! table is tracked by a decoder of ours. Anything this layer cannot make sense of is passed
//! on as it came, for h2 to judge.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

const PREFACE: usize = 24;
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// The frame size every HTTP/2 peer accepts.
const MAX_FRAME: usize = 16_384;
/// The HPACK table size h2 advertises (its default).
const TABLE: usize = 4096;

/// What to do with the client's header blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Until the first request is seen.
    Undecided,
    /// Re-encode every header block, fixing `:authority`.
    Rewrite,
    /// Pass everything through.
    Pass,
}

/// A header block being collected from HEADERS and CONTINUATION frames.
struct Pending {
    stream: u32,
    flags: u8,
    priority: Option<[u8; 5]>,
    block: Vec<u8>,
    /// The frames as they came, for passing through.
    raw: Vec<u8>,
}

/// The client side of one connection, rewritten as the module docs say.
pub struct UnixAuthority<S> {
    inner: S,
    mode: Mode,
    preface_left: usize,
    input: Vec<u8>,
    output: Vec<u8>,
    sent: usize,
    pending: Option<Pending>,
    decoder: loona_hpack::Decoder<'static>,
    eof: bool,
}

impl<S> std::fmt::Debug for UnixAuthority<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnixAuthority")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl<S> UnixAuthority<S> {
    pub fn new(inner: S) -> Self {
        let mut decoder = loona_hpack::Decoder::new();
        decoder.set_max_allowed_table_size(TABLE);
        UnixAuthority {
            inner,
            mode: Mode::Undecided,
            preface_left: PREFACE,
            input: Vec::new(),
            output: Vec::new(),
            sent: 0,
            pending: None,
            decoder,
            eof: false,
        }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// Moves whole frames from `input` to `output`, rewriting header blocks where needed.
    fn process(&mut self) {
        loop {
            if self.mode == Mode::Pass && self.pending.is_none() {
                self.output.append(&mut self.input);
                return;
            }
            if self.preface_left > 0 {
                let n = self.preface_left.min(self.input.len());
                self.output.extend(self.input.drain(..n));
                self.preface_left -= n;
                if self.preface_left > 0 {
                    return;
                }
                continue;
            }
            if self.input.len() < 9 {
                return;
            }
            let len = usize::from(self.input[0]) << 16
                | usize::from(self.input[1]) << 8
                | usize::from(self.input[2]);
            if self.input.len() < 9 + len {
                return;
            }
            let frame: Vec<u8> = self.input.drain(..9 + len).collect();
            self.frame(frame);
        }
    }

    fn frame(&mut self, frame: Vec<u8>) {
        let (kind, flags) = (frame[3], frame[4]);
        let stream = u32::from_be_bytes([frame[5], frame[6], frame[7], frame[8]]) & 0x7fff_ffff;
        match (kind, self.pending.take()) {
            (HEADERS, None) => {
                let Some((priority, fragment)) = headers_payload(flags, &frame[9..]) else {
                    return self.give_up(frame);
                };
                let mut p = Pending {
                    stream,
                    flags,
                    priority,
                    block: fragment.to_vec(),
                    raw: frame,
                };
                if flags & END_HEADERS != 0 {
                    self.finish(p);
                } else {
                    p.flags &= !END_HEADERS;
                    self.pending = Some(p);
                }
            }
            (CONTINUATION, Some(mut p)) if stream == p.stream => {
                p.block.extend_from_slice(&frame[9..]);
                p.raw.extend_from_slice(&frame);
                if flags & END_HEADERS != 0 {
                    self.finish(p);
                } else {
                    self.pending = Some(p);
                }
            }
            (_, Some(p)) => {
                // Not what a header block may be interrupted by: h2 will say so.
                self.give_up(p.raw);
                self.output.extend_from_slice(&frame);
            }
            (_, None) => self.output.extend_from_slice(&frame),
        }
    }

    /// Passes `raw` and everything after it through unchanged.
    fn give_up(&mut self, raw: Vec<u8>) {
        self.mode = Mode::Pass;
        self.output.extend_from_slice(&raw);
    }

    fn finish(&mut self, p: Pending) {
        let Ok(mut headers) = self.decoder.decode(&p.block) else {
            return self.give_up(p.raw);
        };
        let mut bad = false;
        for (name, value) in &mut headers {
            if name.as_slice() == b":authority"
                && http::uri::Authority::try_from(value.as_slice()).is_err()
            {
                *value = b"localhost".to_vec();
                bad = true;
            }
        }
        if self.mode == Mode::Undecided {
            self.mode = if bad { Mode::Rewrite } else { Mode::Pass };
        }
        if self.mode == Mode::Pass {
            self.output.extend_from_slice(&p.raw);
            return;
        }
        let mut block = Vec::with_capacity(p.block.len() + 64);
        for (name, value) in &headers {
            // Literal header field without indexing, new name, no Huffman coding.
            block.push(0);
            integer(&mut block, name.len());
            block.extend_from_slice(name);
            integer(&mut block, value.len());
            block.extend_from_slice(value);
        }
        write_headers(&mut self.output, p.stream, p.flags, p.priority, &block);
    }
}

/// The priority fields and the header block fragment of a HEADERS frame's payload.
fn headers_payload(flags: u8, payload: &[u8]) -> Option<(Option<[u8; 5]>, &[u8])> {
    let mut p = payload;
    let mut pad = 0;
    if flags & PADDED != 0 {
        pad = usize::from(*p.first()?);
        p = p.get(1..)?;
    }
    let mut priority = None;
    if flags & PRIORITY != 0 {
        priority = Some(p.get(..5)?.try_into().ok()?);
        p = &p[5..];
    }
    Some((priority, p.get(..p.len().checked_sub(pad)?)?))
}

/// An HPACK integer with a 7-bit prefix (the length of a string without Huffman coding).
fn integer(out: &mut Vec<u8>, mut v: usize) {
    if v < 127 {
        out.push(v as u8);
        return;
    }
    out.push(127);
    v -= 127;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// A HEADERS frame (then CONTINUATION frames) carrying `block`, without padding.
fn write_headers(
    out: &mut Vec<u8>,
    stream: u32,
    flags: u8,
    priority: Option<[u8; 5]>,
    block: &[u8],
) {
    let frame = |out: &mut Vec<u8>, kind: u8, flags: u8, payload: &[&[u8]]| {
        let len: usize = payload.iter().map(|p| p.len()).sum();
        out.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
        out.push(kind);
        out.push(flags);
        out.extend_from_slice(&stream.to_be_bytes());
        payload.iter().for_each(|p| out.extend_from_slice(p));
    };
    let prio = priority.as_ref().map_or(&[][..], |p| &p[..]);
    let first = block.len().min(MAX_FRAME - prio.len());
    let (head, mut rest) = block.split_at(first);
    let end = if rest.is_empty() { END_HEADERS } else { 0 };
    let base = flags & END_STREAM | if priority.is_some() { PRIORITY } else { 0 };
    frame(out, HEADERS, base | end, &[prio, head]);
    while !rest.is_empty() {
        let n = rest.len().min(MAX_FRAME);
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        let end = if rest.is_empty() { END_HEADERS } else { 0 };
        frame(out, CONTINUATION, end, &[chunk]);
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for UnixAuthority<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.sent < this.output.len() {
                let n = buf.remaining().min(this.output.len() - this.sent);
                buf.put_slice(&this.output[this.sent..this.sent + n]);
                this.sent += n;
                if this.sent == this.output.len() {
                    this.output.clear();
                    this.sent = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 16 * 1024];
            let mut rb = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut rb))?;
            if rb.filled().is_empty() {
                // The client is gone: whatever is left goes on as it came.
                this.eof = true;
                if let Some(p) = this.pending.take() {
                    this.output.extend_from_slice(&p.raw);
                }
                this.output.append(&mut this.input);
                continue;
            }
            this.input.extend_from_slice(rb.filled());
            this.process();
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for UnixAuthority<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl tonic::transport::server::Connected for UnixAuthority<tokio::net::UnixStream> {
    type ConnectInfo = <tokio::net::UnixStream as tonic::transport::server::Connected>::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}
