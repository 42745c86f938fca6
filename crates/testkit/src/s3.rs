//! A real S3-compatible server for the object storage tests: moto's server
//! mode (PyPI `moto[server]`), started on 127.0.0.1 with a port the OS picks,
//! killed when dropped. Used by zipstream's `tests/s3.rs` and perfkit's
//! `tests/zip_s3.rs`.
//!
//! Requests made here (create a bucket, list objects and multipart uploads,
//! download) are plain HTTP/1.0 with a dummy signature, independent of the
//! client under test; moto does not check signatures.
//!
//! Gated by [`crate::interop`]: a missing moto fails the test unless
//! `PERFKIT_SKIP_INTEROP=1` is set.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The AWS_* variables a client needs for the server (the key pair is any:
/// moto accepts every one).
pub const CREDENTIALS: [(&str, &str); 4] = [
    ("AWS_ACCESS_KEY_ID", "perfkit-test"),
    ("AWS_SECRET_ACCESS_KEY", "perfkit-test-secret"),
    ("AWS_REGION", "us-east-1"),
    ("AWS_ALLOW_HTTP", "true"),
];

/// moto serves a private object only to a request that carries an
/// Authorization header; it does not check the signature in it.
const AUTHORIZATION: &str = "AWS4-HMAC-SHA256 Credential=perfkit-test/20240101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0";

/// A running moto server.
pub struct Moto {
    child: Child,
    /// `http://127.0.0.1:PORT`
    pub endpoint: String,
    addr: String,
}

impl Moto {
    /// Starts the server; fails the test when moto is not installed, or
    /// returns None (the test skips) under `PERFKIT_SKIP_INTEROP=1`.
    pub fn start() -> Option<Moto> {
        if !crate::interop::have_python_module(
            "moto.server",
            "python3 -m pip install 'moto[server]'",
        ) {
            return None;
        }
        let mut child = Command::new("python3")
            .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting python3 -m moto.server");
        // The server prints " * Running on http://127.0.0.1:PORT" on stderr
        // once it listens; the rest of its log is drained so it never blocks
        // on a full pipe.
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.split("Running on ").nth(1)
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let mut moto = Moto {
            child,
            endpoint: String::new(),
            addr: String::new(),
        };
        let endpoint = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("moto's server did not report its address within 60 s");
        moto.addr = endpoint
            .strip_prefix("http://")
            .expect("an http:// address")
            .to_string();
        moto.endpoint = endpoint;
        Some(moto)
    }

    /// One unsigned request; returns (status, headers, body).
    pub fn request(&self, method: &str, target: &str) -> (u16, String, Vec<u8>) {
        let mut s = TcpStream::connect(&self.addr).expect("connecting to moto");
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        write!(
            s,
            "{method} {target} HTTP/1.0\r\nHost: {}\r\nContent-Length: 0\r\nAuthorization: {AUTHORIZATION}\r\n\r\n",
            self.addr
        )
        .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).expect("reading moto's answer");
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("an HTTP header");
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("an HTTP status");
        (status, head, raw[split + 4..].to_vec())
    }

    /// Creates a bucket.
    pub fn create_bucket(&self, bucket: &str) {
        let (status, _, body) = self.request("PUT", &format!("/{bucket}"));
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    }

    /// The keys of the objects in `bucket`.
    pub fn objects(&self, bucket: &str) -> Vec<String> {
        let (status, _, body) = self.request("GET", &format!("/{bucket}?list-type=2"));
        assert_eq!(status, 200);
        tags(&String::from_utf8_lossy(&body), "Key")
    }

    /// The ids of the multipart uploads started and neither completed nor
    /// aborted in `bucket`.
    pub fn uploads_in_progress(&self, bucket: &str) -> Vec<String> {
        let (status, _, body) = self.request("GET", &format!("/{bucket}?uploads"));
        assert_eq!(status, 200);
        tags(&String::from_utf8_lossy(&body), "UploadId")
    }

    /// Downloads an object and returns (bytes, ETag).
    pub fn get(&self, bucket: &str, key: &str) -> (Vec<u8>, String) {
        let (status, head, body) = self.request("GET", &format!("/{bucket}/{key}"));
        assert_eq!(status, 200, "GET /{bucket}/{key}");
        let etag = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("etag")
                    .then(|| v.trim().trim_matches('"').to_string())
            })
            .expect("an ETag header");
        (body, etag)
    }
}

/// The text of every `<tag>…</tag>` in an XML document.
fn tags(xml: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    xml.split(&open)
        .skip(1)
        .filter_map(|s| s.split(&close).next())
        .map(str::to_string)
        .collect()
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
