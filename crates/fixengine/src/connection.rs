//! Runs a [`Session`] over one blocking TCP connection: frames what
//! arrives, feeds the session, hands delivered messages to an
//! [`Application`], writes what the session sends and ticks its timers.
//!
//! One thread per logged-on connection keeps this simple and fair: a
//! slow or hostile peer stalls only its own thread, and the socket is
//! non-blocking both ways, so the session's timers and the stop signal
//! run whatever the peer does (reads wait in `poll` for at most a
//! tick, 100 ms; writes the peer does not take wait in a bounded queue).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fixcore::frame::Framer;
use fixcore::value::UtcTimestamp;
use fixsession::app::{Application, deliver};
use fixsession::lease::Standing;
use fixsession::log::Log;
use fixsession::machine::{Output, Session, SessionError};
use fixsession::store::SessionStore;

mod outbound;

use outbound::{Held, Round, SendQueue};

/// The most answers a round holds before its store write begins, for a
/// store that writes in the background (see `serve`).
const ROUND_CUT: usize = 64;

/// The most answers a round holds before it is stored and written, for a
/// store that writes in place (memory, files). A whole read answered as
/// one round kept two engines taking turns under a window of orders:
/// each waited while the other answered. Cut, the counterparty starts on
/// the first round while this side answers the next. `fix initiator
/// --window 100`, 400k orders, plain TCP: 1.31 s uncut, 0.64 s at 32 or
/// 48, 0.72 s at 64; over TLS, where each round is a record: 0.82 s
/// uncut, 0.75 s at 32, 0.70 s at 48 or 64.
pub const WRITE_CUT: usize = 48;

/// How often timers run when nothing arrives.
const TICK: Duration = Duration::from_millis(100);

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
    /// An acceptor applies it before the Logon too.
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
    /// Most bytes kept waiting for a counterparty that does not read;
    /// past it the connection is dropped. Reading stops well before
    /// (at [`READ_PAUSE`] queued), so only one round's answers or an
    /// application's burst can approach it.
    pub max_send_queue: usize,
    /// How long an acceptor's connection may take to send a valid Logon
    /// (QuickFIX's `LogonTimeout`).
    pub logon_timeout: Duration,
    /// Most connections an acceptor holds before their Logon; a newcomer
    /// past it closes the one that has waited longest.
    pub max_unauthenticated: usize,
}

impl<'a> Options<'a> {
    /// The defaults: 1 MiB messages, TCP_NODELAY, no spinning, a 64 MiB
    /// send queue, a 10 s logon timeout and 256 connections awaiting
    /// their Logon.
    pub fn new(stop: &'a AtomicBool) -> Options<'a> {
        Options {
            max_message: 1 << 20,
            stop,
            nodelay: true,
            spin: Duration::ZERO,
            max_send_queue: 64 << 20,
            logon_timeout: Duration::from_secs(10),
            max_unauthenticated: 256,
        }
    }

    /// The defaults, with what session `s`'s settings say of its socket:
    /// `SocketNodelay` (an initiator's own connection; an acceptor's
    /// sessions of one port share their listener's).
    pub fn for_session(s: &fixsession::settings::SessionSettings, stop: &'a AtomicBool) -> Self {
        Options {
            nodelay: s.socket_nodelay,
            ..Options::new(stop)
        }
    }
}

/// Queued bytes past which a connection stops reading from its
/// counterparty until the queue drains: a peer that sends without
/// reading gets no more answers made for it.
pub const READ_PAUSE: usize = 1 << 20;

/// What a connection runs over: the socket itself, or TLS on it
/// ([`crate::tls::TlsStream`]). Reads and writes never block; `run` waits
/// in `poll` on [`Transport::socket`]. Generic rather than boxed, so the
/// plain path is the socket calls it always was.
pub trait Transport {
    /// The non-blocking socket underneath.
    fn socket(&self) -> &TcpStream;
    /// Reads what has arrived (`WouldBlock` when nothing has; 0 when the
    /// counterparty closed).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes what the transport takes now (`WouldBlock` when nothing).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize>;
    /// Hands the socket what the transport holds back (TLS records made
    /// but not yet taken); never blocks.
    fn flush_pending(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Whether bytes wait in the transport for the socket to take them.
    fn has_pending_output(&self) -> bool {
        false
    }
    /// Whether input is ready without the socket saying so (TLS holds
    /// decrypted bytes not yet read).
    fn has_buffered_input(&self) -> bool {
        false
    }
    /// Ends the connection (TLS says goodbye first).
    fn close(&mut self) {
        let _ = self.socket().shutdown(std::net::Shutdown::Both);
    }
}

impl Transport for TcpStream {
    fn socket(&self) -> &TcpStream {
        self
    }
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Read::read(self, buf)
    }
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Write::write(self, buf)
    }
}

/// Runs `session` on `stream` until either side closes it. `initial`
/// holds bytes already read from the stream (an acceptor reads the first
/// Logon to choose the session). An acceptor's session must be
/// disconnected; this connects it. When the session ends the connection,
/// the stream is left open for the caller to close once the session is
/// free again: a peer that reconnects the moment it sees the close must
/// find the session available.
///
/// The socket never blocks the session: writes that the peer does not
/// take wait in a queue while timers and `opts.stop` keep running, and a
/// peer that leaves more than `opts.max_send_queue` bytes unread, or
/// reads nothing for two heartbeat intervals, is disconnected. The store
/// is flushed after each round's deliveries and before its bytes are
/// written (see [`fixsession::store`]); while it is unavailable the round
/// waits, unsent and reading nothing, and is retried (`flush_or_wait`).
///
/// A session whose store is shared with other engines runs only while
/// this engine holds its lease ([`fixsession::lease`]), on numbers read
/// under the epoch held (a stale store is read again first): once the
/// lease is lost, or a write is fenced, the connection ends at once, with
/// one event line and nothing more sent (no Logout numbered from a stale
/// state), and `run` returns `Ok`.
pub fn run<T: Transport, S: SessionStore, A: Application, L: Log>(
    stream: &mut T,
    initial: &[u8],
    session: &mut Session<S>,
    app: &mut A,
    log: &mut L,
    opts: Options<'_>,
) -> Result<(), ConnectionError> {
    match serve(stream, initial, session, app, log, opts) {
        Err(ConnectionError::Session(SessionError::Store(e))) if e.is_fenced() => {
            fenced(session, log, &format!("{NOT_HOLDER}: {e}"));
            Ok(())
        }
        r => r,
    }
}

/// How a fenced connection's one line begins, however the engine found
/// out (its store's write refused, or the lease's standing checked), so an
/// operator can find every fencing with one search.
const NOT_HOLDER: &str = "this engine no longer holds the session's lease";

/// The session lost its lease (`why`): it ends here without a word to
/// the counterparty.
fn fenced<S: SessionStore, L: Log>(session: &mut Session<S>, log: &mut L, why: &str) {
    log.event(
        UtcTimestamp::now(),
        &format!("Disconnecting without a Logout: {why}"),
    );
    // Whatever the disconnect records stays unwritten: the store is
    // fenced, and the next holder reads the database's numbers.
    let _ = session.on_disconnect();
    flush_logs(session, log);
}

/// [`run`], but a fenced write is an error.
fn serve<T: Transport, S: SessionStore, A: Application, L: Log>(
    stream: &mut T,
    initial: &[u8],
    session: &mut Session<S>,
    app: &mut A,
    log: &mut L,
    opts: Options<'_>,
) -> Result<(), ConnectionError> {
    let peer = prepare_socket(stream.socket(), session, &opts)?;
    let failed =
        |e: &io::Error| format!("Connection with {peer} failed: {}", crate::socket::words(e));
    let mut framer = Framer::new(opts.max_message).session_cut();
    framer.push(initial);
    // Another engine may have served the session since this one last
    // read its store (fixsession::lease): the numbers are read again
    // before the Logon.
    if session.store().standing() == (Standing::Held { current: false }) {
        session.refresh_store()?;
    }
    session.on_connect(UtcTimestamp::now())?;
    let mut buf = vec![0u8; 64 << 10];
    // What one round (a read's messages, up to a cut) sends, queued in
    // one piece: a write per message cost more than the session itself.
    let mut out = Round::new();
    let mut held = Held::default();
    let mut queue = SendQueue {
        bytes: Vec::with_capacity(64 << 10),
        head: 0,
        stalled: None,
    };
    let mut stopping = false;
    // The session's outputs, drained into one reused vector.
    let mut outs = Vec::new();
    // One clock reading per read: what arrived together is handled at
    // the time it arrived (three readings per order were ~3 % of an
    // acceptor's time; a round takes microseconds, well inside the
    // milliseconds a SendingTime shows).
    let mut t = UtcTimestamp::now();
    loop {
        if !session.store().standing().serves() {
            fenced(
                session,
                log,
                &format!("{NOT_HOLDER}: another engine serves it"),
            );
            return Ok(());
        }
        let mut open = pump(&mut out, &mut outs, session, app, log, t)?;
        if open
            && session.resend_pending()
            && queue.len() + held.bytes + out.bytes.len() < READ_PAUSE
        {
            session.continue_resend(t)?;
            open = pump(&mut out, &mut outs, session, app, log, t)?;
        }
        // A read's messages are answered in rounds. A store that writes
        // in the background stores one round while the next is answered,
        // and the round lands (is sent) while the counterparty's next
        // orders are on their way; with any other store a round is sent
        // before the next is answered, for the counterparty to work on.
        let in_place = session.store().flush_signal().is_none();
        let cut_at = if in_place { WRITE_CUT } else { ROUND_CUT };
        let mut cut = false;
        // A resend goes out whole before anything new is read.
        while open
            && !session.resend_pending()
            && queue.len() + held.bytes + out.bytes.len() < READ_PAUSE
        {
            if out.ends.len() >= cut_at {
                cut = true;
                break;
            }
            let Some(frame) = framer.next_frame() else {
                break;
            };
            match frame {
                Ok(msg) => {
                    log.message(t, true, msg);
                    session.on_message(msg, t)?;
                }
                Err(e) => log.event(t, &format!("Invalid message: {e}")),
            }
            open = pump(&mut out, &mut outs, session, app, log, t)?;
        }
        land(&mut out, &mut held, &mut queue, session, log, &opts, t)?;
        log.flush();
        if let Err(e) = queue.write(stream) {
            log.event(UtcTimestamp::now(), &failed(&e));
            return end(session, log);
        }
        if !open {
            return finish(stream, &mut queue, &mut held, session, log, &opts);
        }
        if let Some(why) = not_reading(&queue, session, &opts) {
            log.event(UtcTimestamp::now(), &why);
            return end(session, log);
        }
        if opts.stop.load(Ordering::Relaxed) && !stopping {
            stopping = true;
            t = UtcTimestamp::now();
            session.logout(None, t)?;
            continue;
        }
        let want_read = queue.len() + held.bytes < READ_PAUSE && !session.resend_pending();
        if (session.resend_pending() || cut) && queue.len() + held.bytes < READ_PAUSE {
            // More of the resend, or of a read cut into rounds, at once.
            t = UtcTimestamp::now();
            session.on_tick(t)?;
            continue;
        }
        if readable(stream, &queue, &held, session, want_read, &opts)? && want_read {
            match stream.read(&mut buf) {
                Ok(0) => {
                    log.event(UtcTimestamp::now(), "Connection closed by the counterparty");
                    return end(session, log);
                }
                Ok(n) => framer.push(&buf[..n]),
                Err(e) if is_retry(&e) => {}
                Err(e) => {
                    log.event(UtcTimestamp::now(), &failed(&e));
                    return end(session, log);
                }
            }
        }
        t = UtcTimestamp::now();
        session.on_tick(t)?;
        app.on_tick(session, t)?;
    }
}

/// Stores the round answered (`out`) and queues it to be sent once it
/// landed, and queues the held rounds that landed meanwhile.
fn land<S: SessionStore, L: Log>(
    out: &mut Round,
    held: &mut Held,
    queue: &mut SendQueue,
    session: &mut Session<S>,
    log: &mut L,
    opts: &Options<'_>,
    t: UtcTimestamp,
) -> Result<(), ConnectionError> {
    if !out.bytes.is_empty() {
        // Stored before sent; counted once the application took it.
        // A store writing in the background lands the round later:
        // it waits in `held`, and this thread reads on meanwhile. A
        // store that writes in place has landed it once the call
        // returns, and nothing is ever held for it.
        let in_place = session.store().flush_signal().is_none();
        let ticket = begin_flush_or_wait(session, log, opts)?;
        if in_place {
            out.send(queue, log, t);
        } else {
            held.hold(ticket, t, out);
        }
    }
    // Checked here: with a store that writes in place nothing is
    // ever held, and this runs on every turn of the loop.
    if !held.rounds.is_empty() {
        held.release(queue, session, log, opts)?;
    }
    Ok(())
}

/// Sets `socket` up for [`serve`]: non-blocking, TCP_NODELAY as `opts`
/// ask, the buffer sizes the session's settings give. Returns the peer's
/// address for the line of a failure (the socket may no longer know it).
fn prepare_socket<S: SessionStore>(
    socket: &TcpStream,
    session: &Session<S>,
    opts: &Options<'_>,
) -> Result<String, ConnectionError> {
    let peer = socket
        .peer_addr()
        .map_or_else(|_| "the counterparty".to_string(), |a| a.to_string());
    socket.set_nodelay(opts.nodelay)?;
    socket.set_nonblocking(true)?;
    // An acceptor's connection has these from its listener already; an
    // initiator's gets them here.
    let cfg = session.config();
    crate::socket::set_buffers(
        &socket2::SockRef::from(socket),
        cfg.send_buffer_size,
        cfg.receive_buffer_size,
    )?;
    Ok(peer)
}

/// The session's last round is out: what it changed without sending (a
/// Logout's number counted) persists too, every held round lands, and
/// the last words (a Logout, a Reject) get a moment to leave.
fn finish<T: Transport, S: SessionStore, L: Log>(
    stream: &mut T,
    queue: &mut SendQueue,
    held: &mut Held,
    session: &mut Session<S>,
    log: &mut L,
    opts: &Options<'_>,
) -> Result<(), ConnectionError> {
    flush_or_wait(session, log, opts)?;
    held.release(queue, session, log, opts)?;
    linger(stream, queue);
    flush_logs(session, log);
    Ok(())
}

/// Why the counterparty is to be disconnected for not reading, if it is:
/// more than `opts.max_send_queue` bytes wait for it, or it has read
/// nothing for two heartbeat intervals (30 s without heartbeats).
fn not_reading<S: SessionStore>(
    queue: &SendQueue,
    session: &Session<S>,
    opts: &Options<'_>,
) -> Option<String> {
    if queue.len() > opts.max_send_queue {
        return Some(format!(
            "Disconnecting: {} bytes wait for a counterparty that is not reading (limit {})",
            queue.len(),
            opts.max_send_queue
        ));
    }
    let hb = session.heartbeat_interval();
    let stall_limit = Duration::from_secs(if hb == 0 { 30 } else { hb.saturating_mul(2) });
    let since = queue.stalled?;
    (since.elapsed() >= stall_limit).then(|| {
        format!(
            "Disconnecting: the counterparty has read nothing for {} s ({} bytes waiting)",
            stall_limit.as_secs(),
            queue.len()
        )
    })
}

/// Waits (at most a [`TICK`]) until the stream is readable, if
/// `want_read`, or takes queued bytes, or a held round lands; whether it
/// is readable. Input the transport already holds needs no wait.
fn readable<T: Transport, S: SessionStore>(
    stream: &T,
    queue: &SendQueue,
    held: &Held,
    session: &Session<S>,
    want_read: bool,
    opts: &Options<'_>,
) -> io::Result<bool> {
    if want_read && stream.has_buffered_input() {
        return Ok(true);
    }
    let writing = queue.len() > 0 || stream.has_pending_output();
    // Rounds held for the store wake the thread when they land.
    let landing = if held.rounds.is_empty() {
        None
    } else {
        session.store().flush_signal()
    };
    let (readable, _) = wait(
        stream.socket(),
        want_read,
        writing,
        landing,
        opts.spin,
        TICK,
    )?;
    Ok(readable)
}

/// A read that found nothing this time, to be tried again.
fn is_retry(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// The first wait after a store said it is unavailable; each further
/// wait doubles, up to [`STORE_RETRY_MAX`].
pub const STORE_RETRY_FIRST: Duration = Duration::from_millis(50);

/// The longest wait between two attempts to flush an unavailable store:
/// short enough that a database back from a restart is used again within
/// a couple of seconds.
pub const STORE_RETRY_MAX: Duration = Duration::from_secs(2);

/// Begins flushing the session's store ([`SessionStore::begin_flush`]):
/// the ticket the round waits for. A store unavailable now is flushed as
/// [`flush_or_wait`] does, after which everything landed (ticket 0).
fn begin_flush_or_wait<S: SessionStore, L: Log>(
    session: &mut Session<S>,
    log: &mut L,
    opts: &Options<'_>,
) -> Result<u64, ConnectionError> {
    match session.begin_flush_store() {
        Ok(ticket) => Ok(ticket),
        Err(SessionError::Store(e)) if e.is_transient() => {
            flush_or_wait(session, log, opts)?;
            Ok(0)
        }
        Err(e) => Err(e.into()),
    }
}

/// Flushes the session's store. While the store says it is unavailable
/// ([`StoreError::Unavailable`](fixsession::store::StoreError::Unavailable)),
/// waits and tries again, doubling the wait from [`STORE_RETRY_FIRST`] to
/// [`STORE_RETRY_MAX`]: the round's bytes stay unsent (a message goes out
/// only once stored) and nothing more is read (an inbound number counts
/// only once stored; the counterparty's resend covers what it sends
/// meanwhile). One event line says the store is gone, one that it is
/// back. Any other store error, or `opts.stop` while waiting, ends the
/// connection with the error.
fn flush_or_wait<S: SessionStore, L: Log>(
    session: &mut Session<S>,
    log: &mut L,
    opts: &Options<'_>,
) -> Result<(), ConnectionError> {
    let mut delay = STORE_RETRY_FIRST;
    let mut since: Option<Instant> = None;
    loop {
        match session.flush_store() {
            Ok(()) => {
                if let Some(since) = since {
                    log.event(
                        UtcTimestamp::now(),
                        &format!(
                            "Store available again after {:.1} s: sending and reading resume",
                            since.elapsed().as_secs_f64()
                        ),
                    );
                }
                return Ok(());
            }
            Err(SessionError::Store(e)) if e.is_transient() => {
                if since.is_none() {
                    since = Some(Instant::now());
                    log.event(
                        UtcTimestamp::now(),
                        &format!(
                            "Store failed ({e}): holding messages unsent and reading nothing \
                             until it is back; retrying every {} ms to {} s",
                            STORE_RETRY_FIRST.as_millis(),
                            STORE_RETRY_MAX.as_secs()
                        ),
                    );
                    log.flush();
                }
                let until = Instant::now() + delay;
                while Instant::now() < until {
                    if opts.stop.load(Ordering::Relaxed) {
                        return Err(SessionError::Store(e).into());
                    }
                    std::thread::sleep(Duration::from_millis(20).min(delay));
                }
                delay = (delay * 2).min(STORE_RETRY_MAX);
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The connection is gone: the session learns it, and its last event
/// lines are written.
fn end<S: SessionStore, L: Log>(
    session: &mut Session<S>,
    log: &mut L,
) -> Result<(), ConnectionError> {
    session.on_disconnect()?;
    session.flush_store()?;
    flush_logs(session, log);
    Ok(())
}

/// Tries for a short while to hand the queue's last bytes to the socket.
fn linger<T: Transport>(stream: &mut T, queue: &mut SendQueue) {
    let until = Instant::now() + Duration::from_millis(500);
    while (queue.len() > 0 || stream.has_pending_output()) && Instant::now() < until {
        if queue.write(stream).is_err() {
            return;
        }
        if (queue.len() > 0 || stream.has_pending_output())
            && wait(
                stream.socket(),
                false,
                true,
                None,
                Duration::ZERO,
                Duration::from_millis(50),
            )
            .is_err()
        {
            return;
        }
    }
}

/// Waits until `stream` can be read (`read`) or written (`write`), or
/// `signal` is readable (a store's write landed), busy polling for up to
/// `spin` first, then blocking for up to `timeout`: (readable, writable)
/// of `stream`.
///
/// Why not a blocking `recv`: on loopback the writer's send wakes the
/// reader while the kernel still holds the reader socket's lock, and a
/// reader asleep inside `recv` takes that lock again the moment it wakes.
/// In this VM that contention (paravirtual spinlock waits) was a third of
/// an idle acceptor's CPU. Woken in `poll`, the reader goes back to user
/// space first, and the `recv` that follows finds the data ready and,
/// mostly, the lock free.
fn wait(
    stream: &TcpStream,
    read: bool,
    write: bool,
    signal: Option<RawFd>,
    spin: Duration,
    timeout: Duration,
) -> io::Result<(bool, bool)> {
    let events = if read { libc::POLLIN } else { 0 } | if write { libc::POLLOUT } else { 0 };
    if !spin.is_zero() && read {
        let until = Instant::now() + spin;
        loop {
            let (r, signalled) = poll_one(stream, events, signal, Duration::ZERO)?;
            if r.0 || r.1 || signalled {
                return Ok(r);
            }
            if Instant::now() >= until {
                break;
            }
            std::hint::spin_loop();
        }
    }
    Ok(poll_one(stream, events, signal, timeout)?.0)
}

/// One `poll` of `stream` for `events` and of `signal` for input:
/// ((readable or closed, writable), signal readable).
fn poll_one(
    stream: &TcpStream,
    events: libc::c_short,
    signal: Option<RawFd>,
    timeout: Duration,
) -> io::Result<((bool, bool), bool)> {
    use std::os::fd::AsRawFd;
    let mut fds = [
        libc::pollfd {
            fd: stream.as_raw_fd(),
            events,
            revents: 0,
        },
        libc::pollfd {
            fd: signal.unwrap_or(-1),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let n_fds = if signal.is_some() { 2 } else { 1 };
    let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `fds` holds `n_fds` valid pollfds and outlives the call;
    // the first descriptor belongs to `stream`, which is borrowed (open)
    // throughout, and the second to the session's store, which the
    // caller borrows too.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), n_fds, ms) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(((false, false), false))
        } else {
            Err(e)
        };
    }
    let r = fds[0].revents;
    let gone = r & (libc::POLLHUP | libc::POLLERR) != 0;
    Ok((
        (
            r & libc::POLLIN != 0 || gone,
            r & libc::POLLOUT != 0 || gone,
        ),
        n_fds == 2 && fds[1].revents != 0,
    ))
}

/// Carries out the session's outputs at time `t`, appending what it sends to `out`;
/// false once it asked to disconnect (`out` still holds what it sent
/// before, which the caller writes first). `outs` is scratch space, kept
/// by the caller so that no call allocates it anew.
fn pump<S: SessionStore, A: Application, L: Log>(
    out: &mut Round,
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
                    out.bytes.extend_from_slice(&bytes);
                    out.ends.push(out.bytes.len());
                    session.recycle(bytes);
                }
                Output::Deliver(msg) => {
                    deliver(session, app, &msg, t)?;
                    session.recycle(msg);
                }
                Output::LoggedOn => {
                    log.event(t, "Logon complete");
                    app.on_logon(session, t)?;
                }
                Output::LoggedOut => log.event(t, "Logout complete"),
                Output::Disconnect => return Ok(false),
                Output::Log(line) => log.event(t, &line),
                Output::Reset => log.reset(t),
            }
        }
    }
}

/// Writes the event lines a disconnect left, dropping anything else.
fn flush_logs<S: SessionStore, L: Log>(session: &mut Session<S>, log: &mut L) {
    let t = UtcTimestamp::now();
    for o in session.drain() {
        match o {
            Output::Log(line) => log.event(t, &line),
            Output::Reset => log.reset(t),
            _ => {}
        }
    }
    log.flush();
}
