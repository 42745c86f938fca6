//! Runs a [`Session`] over one blocking TCP connection: frames what
//! arrives, feeds the session, hands delivered messages to an
//! [`Application`], writes what the session sends and ticks its timers.
//!
//! One thread per connection keeps this simple and fair: a slow or
//! hostile peer (half a message, then silence) stalls only its own
//! thread, and the session's timers still run because every read has a
//! short timeout.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::machine::{Output, Session, SessionError};
use super::store::SessionStore;
use crate::frame::Framer;
use crate::parse::{Message, Parser};
use crate::value::UtcTimestamp;

/// How often timers run when nothing arrives.
const TICK: Duration = Duration::from_millis(100);

/// A message the session delivers in sequence: its bytes, and the
/// session's own parse of them when it has one to share, so that the
/// application need not parse every message a second time. A message only
/// the lenient reading accepted (a repeated tag, an empty value...) comes
/// without one.
#[derive(Debug, Clone, Copy)]
pub struct Delivered<'a> {
    bytes: &'a [u8],
    parsed: Option<Message<'a>>,
}

impl<'a> Delivered<'a> {
    /// A delivery of `bytes` without a parse.
    pub fn new(bytes: &'a [u8]) -> Delivered<'a> {
        Delivered {
            bytes,
            parsed: None,
        }
    }

    /// The whole message as received (a complete frame).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The strict parse of [`Self::bytes`], when the session has it.
    pub fn parsed(&self) -> Option<Message<'a>> {
        self.parsed
    }

    /// The session's parse when it has one, else `parser`'s parse of the
    /// bytes.
    pub fn parse_with<'p>(&self, parser: &'p mut Parser) -> crate::Result<Message<'p>>
    where
        'a: 'p,
    {
        match self.parsed {
            Some(m) => Ok(m),
            None => parser.parse(self.bytes),
        }
    }
}

/// What the application side of a session does with its messages.
pub trait Application {
    /// A message delivered in sequence; reply through `session`.
    fn on_message<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        msg: Delivered<'_>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError>;

    /// The session has just logged on (send what waited for it).
    fn on_logon<S: SessionStore>(
        &mut self,
        _session: &mut Session<S>,
        _now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        Ok(())
    }

    /// Whether the application has finished its work, so an initiator
    /// should not reconnect once the session ends.
    fn done(&self) -> bool {
        false
    }
}

/// Where a connection's traffic and events are written.
pub trait Log {
    /// A message received (`incoming`) or sent, as its raw bytes.
    fn message(&mut self, now: UtcTimestamp, incoming: bool, msg: &[u8]);
    /// A session event (logon, gap, reject, disconnect...).
    fn event(&mut self, now: UtcTimestamp, text: &str);
}

/// The wall clock as a [`UtcTimestamp`].
pub fn now() -> UtcTimestamp {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    UtcTimestamp {
        unix_nanos: i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
    }
}

/// Why a connection ended.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    /// The socket failed.
    #[error("connection: {0}")]
    Io(#[from] io::Error),
    /// The session's store failed.
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// Limits and signals of a connection.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// Longest message accepted; a longer one is garbled and skipped.
    pub max_message: usize,
    /// Set to log the session out (Ctrl-C): the Logout handshake runs and
    /// the connection closes.
    pub stop: &'a AtomicBool,
    /// TCP_NODELAY on the socket (QuickFIX's `SocketNodelay`): each round's
    /// writes leave at once instead of waiting for the previous segment's
    /// acknowledgement.
    pub nodelay: bool,
    /// How long to busy-poll the socket before blocking when it has nothing
    /// to read; zero blocks at once. A blocked thread is woken by the
    /// kernel when bytes arrive, which on a virtual machine whose other CPU
    /// sits idle costs tens of microseconds per message in a one-at-a-time
    /// exchange; spinning trades a busy core for that. It also shrinks
    /// batches (a spinning reader takes each message as it lands), so it
    /// suits latency-bound sessions, not floods.
    pub spin: Duration,
}

/// Runs `session` on `stream` until either side closes it. `initial`
/// holds bytes already read from the stream (an acceptor reads the first
/// Logon to choose the session). An acceptor's session must be
/// disconnected; this connects it. When the session ends the connection,
/// the stream is left open for the caller to close once the session is
/// free again: a peer that reconnects the moment it sees the close must
/// find the session available.
pub fn run<S: SessionStore, A: Application, L: Log>(
    stream: &mut TcpStream,
    initial: &[u8],
    session: &mut Session<S>,
    app: &mut A,
    log: &mut L,
    opts: Options<'_>,
) -> Result<(), ConnectionError> {
    stream.set_read_timeout(Some(TICK))?;
    stream.set_nodelay(opts.nodelay)?;
    let mut framer = Framer::new(opts.max_message).session_cut();
    framer.push(initial);
    session.on_connect(now())?;
    let mut buf = vec![0u8; 64 << 10];
    // What one round (a read's worth of messages) sends, written in one
    // call: a write per message cost more than the session itself.
    let mut out = Vec::with_capacity(64 << 10);
    let mut stopping = false;
    // The session's outputs, drained into one reused vector.
    let mut outs = Vec::new();
    // One clock reading per read: what arrived together is handled at
    // the time it arrived (three readings per order were ~3 % of an
    // acceptor's time; a round takes microseconds, well inside the
    // milliseconds a SendingTime shows).
    let mut t = now();
    loop {
        let mut open = pump(&mut out, &mut outs, session, app, log, t)?;
        while open && let Some(frame) = framer.next_frame() {
            match frame {
                Ok(msg) => {
                    log.message(t, true, msg);
                    session.on_message(msg, t)?;
                }
                Err(e) => log.event(t, &format!("Invalid message: {e}")),
            }
            open = pump(&mut out, &mut outs, session, app, log, t)?;
        }
        if !out.is_empty() {
            let res = stream.write_all(&out);
            out.clear();
            if let Err(e) = res {
                log.event(now(), &format!("Connection failed: {e}"));
                session.on_disconnect()?;
                flush_logs(session, log);
                return Ok(());
            }
        }
        if !open {
            flush_logs(session, log);
            return Ok(());
        }
        if opts.stop.load(Ordering::Relaxed) && !stopping {
            stopping = true;
            t = now();
            session.logout(None, t)?;
            continue;
        }
        let got = match wait_readable(stream, opts.spin, TICK) {
            Ok(true) => stream.read(&mut buf),
            Ok(false) => Err(io::ErrorKind::TimedOut.into()),
            Err(e) => Err(e),
        };
        match got {
            Ok(0) => {
                log.event(now(), "Connection closed by the counterparty");
                session.on_disconnect()?;
                flush_logs(session, log);
                return Ok(());
            }
            Ok(n) => framer.push(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                log.event(now(), &format!("Connection failed: {e}"));
                session.on_disconnect()?;
                flush_logs(session, log);
                return Ok(());
            }
        }
        t = now();
        session.on_tick(t)?;
    }
}

/// Waits until `stream` has something to read (or its peer closed it),
/// polling it without blocking for up to `spin` first, then blocking for
/// up to `timeout`; false when the time ran out. See `readable` for why
/// a reader should wait here rather than inside a blocking `recv`.
fn wait_readable(stream: &TcpStream, spin: Duration, timeout: Duration) -> io::Result<bool> {
    if !spin.is_zero() {
        let until = Instant::now() + spin;
        loop {
            if readable(stream, Duration::ZERO)? {
                return Ok(true);
            }
            if Instant::now() >= until {
                break;
            }
            std::hint::spin_loop();
        }
    }
    readable(stream, timeout)
}

/// Waits until `stream` has something to read, or its peer closed it, for
/// at most `timeout`; false when the time ran out.
///
/// Why not a blocking `recv` alone: on loopback the writer's send wakes
/// the reader while the kernel still holds the reader socket's lock, and
/// a reader asleep inside `recv` takes that lock again the moment it
/// wakes. In this VM that contention (paravirtual spinlock waits) was a
/// third of an idle acceptor's CPU. Woken in `poll`, the reader goes back
/// to user space first, and the `recv` that follows finds the data ready
/// and, mostly, the lock free.
fn readable(stream: &TcpStream, timeout: Duration) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd {
        fd: stream.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `fd` is one valid pollfd that outlives the call, and its
    // descriptor belongs to `stream`, which is borrowed (open) throughout.
    let n = unsafe { libc::poll(&mut fd, 1, ms) };
    match n {
        0 => Ok(false),
        n if n > 0 => Ok(true),
        _ => {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

/// Carries out the session's outputs at time `t`, appending what it sends to `out`;
/// false once it asked to disconnect (`out` still holds what it sent
/// before, which the caller writes first). `outs` is scratch space, kept
/// by the caller so that no call allocates it anew.
fn pump<S: SessionStore, A: Application, L: Log>(
    out: &mut Vec<u8>,
    outs: &mut Vec<Output>,
    session: &mut Session<S>,
    app: &mut A,
    log: &mut L,
    t: UtcTimestamp,
) -> Result<bool, ConnectionError> {
    loop {
        // Collected first: the application needs the session back.
        outs.clear();
        outs.extend(session.drain());
        if outs.is_empty() {
            return Ok(true);
        }
        for o in outs.drain(..) {
            match o {
                Output::Send(bytes) => {
                    log.message(t, false, &bytes);
                    out.extend_from_slice(&bytes);
                    session.recycle(bytes);
                }
                Output::Deliver(msg) => {
                    match session.lend_parser(&msg) {
                        Some(parser) => {
                            let delivered = Delivered {
                                bytes: &msg,
                                parsed: Some(parser.view(&msg)),
                            };
                            let res = app.on_message(session, delivered, t);
                            session.give_back_parser(parser);
                            res?;
                        }
                        None => app.on_message(session, Delivered::new(&msg), t)?,
                    }
                    session.recycle(msg);
                }
                Output::LoggedOn => {
                    log.event(t, "Logon complete");
                    app.on_logon(session, t)?;
                }
                Output::LoggedOut => log.event(t, "Logout complete"),
                Output::Disconnect => return Ok(false),
                Output::Log(line) => log.event(t, &line),
            }
        }
    }
}

/// Writes the event lines a disconnect left, dropping anything else.
fn flush_logs<S: SessionStore, L: Log>(session: &mut Session<S>, log: &mut L) {
    let t = now();
    for o in session.drain() {
        if let Output::Log(line) = o {
            log.event(t, &line);
        }
    }
}
