//! gRPC clients that send the socket path as `:authority` (C-core: Python, C++, Ruby; and
//! grpc-java) reach the daemon's unix socket. The client here speaks HTTP/2 by hand, as C-core
//! does: `:authority` is the socket path, the first request indexes its fields in the HPACK
//! table and the second refers to them, and both get answers instead of RST_STREAM.

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use common::*;

/// An HPACK integer with a `bits`-bit prefix under `first`'s high bits.
fn integer(out: &mut Vec<u8>, first: u8, bits: u32, mut v: usize) {
    let max = (1usize << bits) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend([kind, flags]);
    f.extend(stream.to_be_bytes());
    f.extend(payload);
    f
}

/// Reads frames until stream `stream` answers; returns the decoded response headers, or the
/// RST_STREAM error code.
fn response(
    s: &mut UnixStream,
    stream: u32,
    decoder: &mut loona_hpack::Decoder<'_>,
) -> Result<Vec<(String, String)>, u32> {
    loop {
        let mut head = [0u8; 9];
        s.read_exact(&mut head).unwrap();
        let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
        let mut payload = vec![0u8; len];
        s.read_exact(&mut payload).unwrap();
        let id = u32::from_be_bytes(head[5..9].try_into().unwrap()) & 0x7fff_ffff;
        match head[3] {
            // SETTINGS (not an ack): acknowledge.
            4 if head[4] & 1 == 0 => s.write_all(&frame(4, 1, 0, &[])).unwrap(),
            // HEADERS on our stream: the response (or trailers).
            1 => {
                let headers = decoder.decode(&payload).unwrap();
                if id == stream {
                    return Ok(headers
                        .into_iter()
                        .map(|(n, v)| {
                            (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap())
                        })
                        .collect());
                }
            }
            3 if id == stream => return Err(u32::from_be_bytes(payload[..4].try_into().unwrap())),
            7 => panic!("GOAWAY: {payload:?}"),
            _ => {}
        }
    }
}

#[test]
fn clients_sending_the_socket_path_as_authority_are_served() {
    let tmp = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(tmp.path(), &[], &[]);
    let path = daemon.socket.display().to_string();
    let mut s = UnixStream::connect(&daemon.socket).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    s.write_all(&frame(4, 0, 0, &[])).unwrap();
    let fields = [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/cuzk.v1.ProvingEngine/GetStatus"),
        (":authority", path.as_str()),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ];
    // First request: literal fields with incremental indexing (into the dynamic table).
    let mut block = Vec::new();
    for (n, v) in fields {
        block.push(0x40);
        integer(&mut block, 0, 7, n.len());
        block.extend(n.as_bytes());
        integer(&mut block, 0, 7, v.len());
        block.extend(v.as_bytes());
    }
    // Second request: the same fields by dynamic-table index (62 is the newest entry).
    let mut again = Vec::new();
    for i in (0..fields.len()).rev() {
        integer(&mut again, 0x80, 7, 62 + i);
    }
    let mut decoder = loona_hpack::Decoder::new();
    let empty_message = [0u8, 0, 0, 0, 0];
    for (stream, block) in [(1u32, block), (3, again)] {
        s.write_all(&frame(1, 0x4, stream, &block)).unwrap();
        s.write_all(&frame(0, 0x1, stream, &empty_message)).unwrap();
        let headers = response(&mut s, stream, &mut decoder)
            .unwrap_or_else(|code| panic!("stream {stream}: RST_STREAM {code}"));
        assert!(
            headers.contains(&(":status".into(), "200".into())),
            "stream {stream}: {headers:?}"
        );
    }
}

/// A real C-core client: Python's grpcio calls GetStatus and GetMetrics over the socket.
#[test]
#[ignore = "needs python3 with grpcio (pip install grpcio); .ci/run installs it and runs this"]
fn python_grpcio_client_is_served() {
    let tmp = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(tmp.path(), &[], &[]);
    let script = format!(
        r#"
import grpc
ch = grpc.insecure_channel("unix://{}")
for method in ("GetStatus", "GetMetrics"):
    call = ch.unary_unary("/cuzk.v1.ProvingEngine/" + method,
                          request_serializer=lambda x: x, response_deserializer=lambda b: b)
    print(method, len(call(b"", timeout=30)))
"#,
        daemon.socket.display()
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("GetStatus") && stdout.contains("GetMetrics"),
        "{stdout}"
    );
}
