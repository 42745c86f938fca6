//! Loopback echo transports for the round-trip benchmark: the client sends
//! a framed FIX request, the server frames and parses it and answers with a
//! reply, and the client times request → complete reply.
//!
//! Four variants, each using the same mechanism on both ends: blocking std
//! sockets, tokio (current-thread runtimes), io_uring with a plain ring, and
//! io_uring with COOP_TASKRUN | SINGLE_ISSUER | DEFER_TASKRUN. When the
//! kernel refuses DEFER_TASKRUN the ring falls back to COOP_TASKRUN |
//! SINGLE_ISSUER, then to a plain one, and the report's `note` says which it
//! got. Where io_uring cannot be used at all (not Linux, syscall missing or
//! disabled) its variants fail with [`Error::Unavailable`] before any thread
//! starts, so callers can report and skip them. Sockets bind 127.0.0.1 only.

use crate::{Error, Result};
use fixcore::affinity::{self, Pinning};
use fixcore::frame::Framer;
use fixcore::parse::Parser;
use hdrhistogram::Histogram;
use perfkit_measure::latency_histogram;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::Instant;

#[cfg(target_os = "linux")]
mod uring;

/// Stand-in where io_uring does not exist: [`io_uring_available`] says so
/// before an echo starts, so these are never reached.
#[cfg(not(target_os = "linux"))]
mod uring {
    use crate::{Error, Result};
    use hdrhistogram::Histogram;
    use std::net::TcpStream;

    pub(super) fn probe() -> std::result::Result<(), String> {
        Err("io_uring is Linux-only".into())
    }
    pub(super) fn serve(_: TcpStream, _: &[u8], _: bool) -> Result<String> {
        Err(Error::Thread("io_uring is Linux-only"))
    }
    pub(super) fn client(
        _: TcpStream,
        _: &[u8],
        _: usize,
        _: usize,
        _: &mut Histogram<u64>,
        _: bool,
    ) -> Result<String> {
        Err(Error::Thread("io_uring is Linux-only"))
    }
}

/// Whether io_uring can be used here; [`Error::Unavailable`] with the OS's
/// reason when not. Probed once per process.
pub fn io_uring_available() -> Result<()> {
    static PROBE: std::sync::OnceLock<std::result::Result<(), String>> = std::sync::OnceLock::new();
    PROBE
        .get_or_init(uring::probe)
        .clone()
        .map_err(|reason| Error::Unavailable {
            what: "io_uring",
            reason,
        })
}

/// Which I/O mechanism both ends use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Blocking `std::net` sockets.
    Blocking,
    /// tokio current-thread runtimes.
    Tokio,
    /// io_uring, no setup flags.
    IoUring,
    /// io_uring with COOP_TASKRUN, SINGLE_ISSUER and DEFER_TASKRUN.
    IoUringDefer,
}

impl Transport {
    /// All variants, baseline first.
    pub const ALL: [Transport; 4] = [
        Transport::Blocking,
        Transport::Tokio,
        Transport::IoUring,
        Transport::IoUringDefer,
    ];

    /// Whether this variant runs on io_uring.
    pub fn is_io_uring(self) -> bool {
        matches!(self, Transport::IoUring | Transport::IoUringDefer)
    }

    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Blocking => "blocking",
            Transport::Tokio => "tokio",
            Transport::IoUring => "io_uring",
            Transport::IoUringDefer => "io_uring+defer_taskrun",
        }
    }
}

/// What to send and how often.
#[derive(Debug, Clone)]
pub struct EchoConfig {
    /// Measured round trips.
    pub iterations: usize,
    /// Unmeasured round trips first.
    pub warmup: usize,
    /// The client's message (e.g. a NewOrderSingle).
    pub request: Vec<u8>,
    /// The server's answer (e.g. an ExecutionReport).
    pub reply: Vec<u8>,
    /// Pin the client thread here.
    pub client_core: Option<usize>,
    /// Pin the server thread here.
    pub server_core: Option<usize>,
}

/// Round-trip latencies of one run.
#[derive(Debug, Clone)]
pub struct EchoReport {
    /// The variant measured.
    pub transport: Transport,
    /// Round-trip times in nanoseconds (warm-up excluded).
    pub histogram: Histogram<u64>,
    /// Setup details: the io_uring flags in effect, or why they fell back.
    pub note: String,
    /// Client thread placement.
    pub client: Pinning,
    /// Server thread placement.
    pub server: Pinning,
}

/// Runs one echo benchmark over loopback. An io_uring variant fails with
/// [`Error::Unavailable`] up front when io_uring cannot be used here.
pub fn echo(transport: Transport, cfg: &EchoConfig) -> Result<EchoReport> {
    if transport.is_io_uring() {
        io_uring_available()?;
    }
    let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .map_err(Error::io("binding 127.0.0.1"))?;
    let addr = listener
        .local_addr()
        .map_err(Error::io("reading local address"))?;
    let total = cfg.iterations + cfg.warmup;
    let reply = cfg.reply.clone();
    let server_core = cfg.server_core;
    let server = std::thread::Builder::new()
        .name("fix-echo-server".into())
        .spawn(move || -> Result<(Pinning, String)> {
            let pin = affinity::place_current(server_core)?;
            let (stream, _) = listener.accept().map_err(Error::io("accepting"))?;
            stream
                .set_nodelay(true)
                .map_err(Error::io("setting TCP_NODELAY"))?;
            let note = match transport {
                Transport::Blocking => serve_blocking(stream, &reply)?,
                Transport::Tokio => serve_tokio(stream, &reply)?,
                Transport::IoUring => uring::serve(stream, &reply, false)?,
                Transport::IoUringDefer => uring::serve(stream, &reply, true)?,
            };
            Ok((pin, note))
        })
        .map_err(Error::io("spawning echo server"))?;
    let req = cfg.request.clone();
    let (warmup, client_core) = (cfg.warmup, cfg.client_core);
    let client = std::thread::Builder::new()
        .name("fix-echo-client".into())
        .spawn(move || -> Result<(Pinning, Histogram<u64>, String)> {
            let pin = affinity::place_current(client_core)?;
            let stream = TcpStream::connect(addr).map_err(Error::io("connecting"))?;
            stream
                .set_nodelay(true)
                .map_err(Error::io("setting TCP_NODELAY"))?;
            let mut h = latency_histogram();
            let note = match transport {
                Transport::Blocking => client_blocking(stream, &req, total, warmup, &mut h)?,
                Transport::Tokio => client_tokio(stream, &req, total, warmup, &mut h)?,
                Transport::IoUring => uring::client(stream, &req, total, warmup, &mut h, false)?,
                Transport::IoUringDefer => {
                    uring::client(stream, &req, total, warmup, &mut h, true)?
                }
            };
            Ok((pin, h, note))
        })
        .map_err(Error::io("spawning echo client"))?;
    let (client_pin, histogram, cnote) = client
        .join()
        .map_err(|_| Error::Thread("echo client panicked"))??;
    let (server_pin, snote) = server
        .join()
        .map_err(|_| Error::Thread("echo server panicked"))??;
    let note = if cnote == snote {
        cnote
    } else {
        format!("client: {cnote}; server: {snote}")
    };
    Ok(EchoReport {
        transport,
        histogram,
        note,
        client: client_pin,
        server: server_pin,
    })
}

fn record(h: &mut Histogram<u64>, i: usize, warmup: usize, t: Instant) {
    if i >= warmup {
        // Saturate rather than fail: a value beyond an hour is still "slow".
        h.saturating_record(t.elapsed().as_nanos().max(1) as u64);
    }
}

/// Server side shared by the variants: frames the bytes, parses each
/// request, and counts how many replies to send.
struct EchoLogic {
    framer: Framer,
    parser: Parser,
}

impl EchoLogic {
    fn new() -> EchoLogic {
        EchoLogic {
            framer: Framer::new(1 << 16),
            parser: Parser::new(),
        }
    }

    /// Consumes `data`; returns how many valid requests completed.
    fn feed(&mut self, data: &[u8]) -> Result<usize> {
        self.framer.push(data);
        let mut n = 0;
        while let Some(f) = self.framer.next_frame() {
            let f = f?;
            self.parser.parse(f)?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether a complete, valid reply is buffered (client side).
    fn reply_ready(&mut self, data: &[u8]) -> Result<bool> {
        Ok(self.feed(data)? > 0)
    }
}

/// The server hung up before its reply was whole.
pub(super) fn closed_early() -> Error {
    Error::Io {
        doing: "client read".into(),
        source: std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "server closed the connection early",
        ),
    }
}

fn serve_blocking(mut s: TcpStream, reply: &[u8]) -> Result<String> {
    let mut logic = EchoLogic::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).map_err(Error::io("server read"))?;
        if n == 0 {
            return Ok("blocking std::net".into());
        }
        for _ in 0..logic.feed(&buf[..n])? {
            s.write_all(reply).map_err(Error::io("server write"))?;
        }
    }
}

fn client_blocking(
    mut s: TcpStream,
    req: &[u8],
    total: usize,
    warmup: usize,
    h: &mut Histogram<u64>,
) -> Result<String> {
    let mut logic = EchoLogic::new();
    let mut buf = [0u8; 4096];
    for i in 0..total {
        let t = Instant::now();
        s.write_all(req).map_err(Error::io("client write"))?;
        loop {
            let n = s.read(&mut buf).map_err(Error::io("client read"))?;
            if n == 0 {
                return Err(closed_early());
            }
            if logic.reply_ready(&buf[..n])? {
                break;
            }
        }
        record(h, i, warmup, t);
    }
    Ok("blocking std::net".into())
}

fn tokio_rt() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(Error::io("starting tokio runtime"))
}

fn serve_tokio(s: TcpStream, reply: &[u8]) -> Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    s.set_nonblocking(true)
        .map_err(Error::io("setting non-blocking"))?;
    tokio_rt()?.block_on(async move {
        let mut s = tokio::net::TcpStream::from_std(s).map_err(Error::io("registering socket"))?;
        let mut logic = EchoLogic::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = s.read(&mut buf).await.map_err(Error::io("server read"))?;
            if n == 0 {
                return Ok("tokio current-thread".into());
            }
            for _ in 0..logic.feed(&buf[..n])? {
                s.write_all(reply)
                    .await
                    .map_err(Error::io("server write"))?;
            }
        }
    })
}

fn client_tokio(
    s: TcpStream,
    req: &[u8],
    total: usize,
    warmup: usize,
    h: &mut Histogram<u64>,
) -> Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    s.set_nonblocking(true)
        .map_err(Error::io("setting non-blocking"))?;
    tokio_rt()?.block_on(async move {
        let mut s = tokio::net::TcpStream::from_std(s).map_err(Error::io("registering socket"))?;
        let mut logic = EchoLogic::new();
        let mut buf = [0u8; 4096];
        for i in 0..total {
            let t = Instant::now();
            s.write_all(req).await.map_err(Error::io("client write"))?;
            loop {
                let n = s.read(&mut buf).await.map_err(Error::io("client read"))?;
                if n == 0 {
                    return Err(closed_early());
                }
                if logic.reply_ready(&buf[..n])? {
                    break;
                }
            }
            record(h, i, warmup, t);
        }
        Ok("tokio current-thread".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixcore::build::MessageBuilder;
    use fixcore::sample;
    use fixcore::version::BeginString;

    #[test]
    fn every_transport_echoes_and_counts() {
        let mut b = MessageBuilder::new(BeginString::Fix44);
        let cfg = EchoConfig {
            iterations: 200,
            warmup: 20,
            request: sample::new_order_single(&mut b, 1),
            reply: sample::execution_report(&mut b, 1),
            client_core: None,
            server_core: None,
        };
        for t in Transport::ALL {
            let r = match echo(t, &cfg) {
                Ok(r) => r,
                // The kernel decides, not the code: through the interop
                // gate, a failure unless PERFKIT_SKIP_INTEROP asks to skip.
                Err(e @ Error::Unavailable { .. }) if t.is_io_uring() => {
                    perfkit_testkit::interop::available(
                        false,
                        &format!("{}: {e}", t.name()),
                        "a Linux kernel with io_uring enabled (kernel.io_uring_disabled=0)",
                    );
                    continue;
                }
                Err(e) => panic!("{}: {e}", t.name()),
            };
            assert_eq!(r.histogram.len(), 200, "{}", t.name());
            assert!(!r.note.is_empty());
        }
    }
}
