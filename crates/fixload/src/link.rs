//! What the sender and the receiver share about one session during a load
//! run ([`Link`]), and the schedule every order is due by ([`Schedule`]).

use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use fixcore::value::UtcTimestamp;
use fixsession::machine::{Output, Session};
use fixsession::store::SessionStore;

use crate::slots::Slots;
use crate::{Error, Lost, Plan, Result};

/// When each order is due, shared by the sender and the receiver.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// Order 0 is due here.
    pub start: Instant,
    /// Orders due from here on are measured.
    pub measure_from: Instant,
    /// No order is due from here on.
    pub end: Instant,
    /// Orders per second, all sessions together.
    pub rate: f64,
    /// Sessions taking turns.
    pub sessions: u64,
    /// Interval width.
    pub interval: Duration,
    /// The last interval kept: answers later still (after the grace
    /// period, during the Logout) count in it, so the intervals held stay
    /// bounded by the plan.
    pub last_interval: usize,
}

impl Schedule {
    /// When order `g` of the whole run is due.
    pub fn due(&self, g: u64) -> Instant {
        self.start + Duration::from_secs_f64(g as f64 / self.rate)
    }

    /// The interval `at` falls in, counted from the measured part's start;
    /// `None` before it.
    pub fn interval_of(&self, at: Instant) -> Option<usize> {
        let d = at.checked_duration_since(self.measure_from)?;
        let i = d.as_nanos() / self.interval.as_nanos().max(1);
        Some(
            usize::try_from(i)
                .unwrap_or(usize::MAX)
                .min(self.last_interval),
        )
    }

    /// Nanoseconds from the start to `at`.
    pub fn nanos(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.start).as_nanos() as u64
    }
}

/// What the threads of a run share about one session.
///
/// Bytes the session produces (orders, and whatever the receiver's work
/// answers: heartbeats, resends) are queued in `out` in the order the
/// session numbered them, under the session lock. One thread at a time
/// writes them: the sender while it runs, the thread that runs the whole
/// load before and after it. The receiver never writes, so a socket that
/// cannot take more bytes never stops answers from being read.
///
/// The queue is bounded by [`Plan::max_unsent`]: a session whose queue
/// would grow past it is dropped (see [`Link::with_session`]).
pub struct Link<S: SessionStore> {
    /// `SenderCompID->TargetCompID`.
    pub name: String,
    session: Mutex<Session<S>>,
    /// Bytes the session produced, in its numbering order, not yet written.
    out: Mutex<Vec<u8>>,
    /// Most bytes `out` may hold.
    max_unsent: usize,
    /// Blocking, so that io_uring operations on it wait for readiness; the
    /// std paths never block on it ([`send_now`], [`recv_now`]).
    stream: TcpStream,
    /// The orders in flight.
    pub slots: Slots,
    /// Most unanswered orders.
    pub window: u64,
    sent: AtomicU64,
    answered: AtomicU64,
    /// Bytes the session has queued for writing, all told: the sender
    /// reads it around its builds for the size of an order.
    queued: AtomicU64,
    logged_on: AtomicBool,
    open: AtomicBool,
    logging_out: AtomicBool,
    /// The last event the session logged: why it disconnected, when it
    /// did so on its own.
    last_event: Mutex<String>,
    /// The Text(58) of a Logout the engine sent, when it sent one.
    engine_logout: Mutex<Option<String>>,
    /// When and why the connection ended, when that was before the run
    /// logged the session out: the first cause only (a session that
    /// disconnects then sees its socket fail too).
    lost: Mutex<Option<(Instant, String)>>,
}

/// Locks `m`. A thread that panicked holding a lock has already failed the
/// run; the data is still usable for winding down.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<S: SessionStore> Link<S> {
    /// Starts the Logon on `stream`.
    pub fn connect(
        name: String,
        stream: TcpStream,
        mut session: Session<S>,
        plan: &Plan,
    ) -> Result<Link<S>> {
        stream.set_nodelay(true)?;
        if let Err(source) = session.on_connect(UtcTimestamp::now()) {
            return Err(Error::Start {
                session: name,
                source,
            });
        }
        let link = Link {
            name,
            session: Mutex::new(session),
            out: Mutex::new(Vec::with_capacity(64 << 10)),
            max_unsent: plan.max_unsent,
            stream,
            slots: Slots::new(plan.window),
            window: plan.window.max(1),
            sent: AtomicU64::new(0),
            answered: AtomicU64::new(0),
            queued: AtomicU64::new(0),
            logged_on: AtomicBool::new(false),
            open: AtomicBool::new(true),
            logging_out: AtomicBool::new(false),
            last_event: Mutex::new(String::new()),
            engine_logout: Mutex::new(None),
            lost: Mutex::new(None),
        };
        link.with_session(|_| Ok(()), &mut Vec::new(), &mut |_| {})?;
        link.flush();
        Ok(link)
    }

    /// The socket.
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Waits for the Logon answer (the receiver sets it), writing what the
    /// session queues meanwhile.
    pub fn await_logon(&self, timeout: Duration) -> Result<()> {
        let until = Instant::now() + timeout;
        while !self.logged_on.load(Ordering::Acquire) {
            if !self.is_open() {
                let why = lock(&self.lost)
                    .as_ref()
                    .map_or_else(|| lock(&self.last_event).clone(), |(_, why)| why.clone());
                return Err(Error::LogonRefused {
                    session: self.name.clone(),
                    why,
                });
            }
            if Instant::now() >= until {
                return Err(Error::LogonTimeout {
                    session: self.name.clone(),
                    timeout,
                });
            }
            self.flush();
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// Orders sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Counts `n` more orders sent.
    pub fn add_sent(&self, n: u64) {
        self.sent.fetch_add(n, Ordering::Release);
    }

    /// Bytes the session has queued for writing so far (orders, and the
    /// session's own messages).
    pub fn queued(&self) -> u64 {
        self.queued.load(Ordering::Relaxed)
    }

    /// Orders answered so far.
    pub fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Counts one more order answered.
    pub fn add_answered(&self) {
        self.answered.fetch_add(1, Ordering::Release);
    }

    /// Orders sent and not answered yet.
    pub fn outstanding(&self) -> u64 {
        self.sent().saturating_sub(self.answered())
    }

    /// Whether the connection is still up.
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// Whether the run has started logging this session out.
    pub fn is_logging_out(&self) -> bool {
        self.logging_out.load(Ordering::Relaxed)
    }

    /// Ends the connection because of `why`. The session counts as lost
    /// (with `why` and the time) when it was open and the run was not
    /// logging it out: that is the engine's doing or a failure, not the
    /// run's end. Only the first cause is kept.
    pub fn fail(&self, why: String) {
        if self.open.swap(false, Ordering::AcqRel) && !self.is_logging_out() {
            *lock(&self.lost) = Some((Instant::now(), why));
        }
    }

    /// Notes a Logout the engine sent, with its Text(58) if any, so that
    /// the disconnect that follows is put down to it.
    pub fn engine_logout(&self, text: Option<&[u8]>) {
        *lock(&self.engine_logout) =
            Some(text.map_or_else(String::new, |t| String::from_utf8_lossy(t).into_owned()));
    }

    /// The session, when it was lost before the run logged it out, with
    /// the time counted from `since`.
    pub fn lost(&self, since: Instant) -> Option<Lost> {
        lock(&self.lost).as_ref().map(|(at, why)| Lost {
            session: self.name.clone(),
            at: at.saturating_duration_since(since),
            why: why.clone(),
        })
    }

    /// Starts the Logout handshake (written by the next [`Self::flush`]).
    pub fn logout(&self) {
        self.logging_out.store(true, Ordering::Relaxed);
        if !self.is_open() {
            return;
        }
        let _ = self.with_session(
            |s| Ok(s.logout(None, UtcTimestamp::now())?),
            &mut Vec::new(),
            &mut |_| {},
        );
    }

    /// The session, disconnected, for another run once this one is over.
    pub fn into_session(self) -> Session<S> {
        let mut s = self.session.into_inner().unwrap_or_else(|e| e.into_inner());
        // What a disconnect records (a memory store's numbers) cannot
        // fail here; a store that could would refuse at the next Logon.
        let _ = s.on_disconnect();
        let _ = s.drain().count();
        s
    }

    /// Closes the socket, which ends the receiver's reads.
    pub fn close(&self) {
        self.open.store(false, Ordering::Release);
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    /// Runs `f` on the session under its lock, then carries out what it
    /// produced: sends join `out` (in the session's order: this runs under
    /// its lock), deliveries go to `deliver`. `outs` is the caller's scratch
    /// space, reused from call to call (the outputs are collected first
    /// because recycling needs the session).
    ///
    /// When the sends would take `out` past [`Plan::max_unsent`], none of
    /// them is queued: `out` is emptied, the connection shut and the
    /// session lost with the reason "unsent queue over N bytes". A resend
    /// is taken batch by batch until it is whole or past the bound, so a
    /// drain exceeds the bound by at most one batch; what the generator
    /// keeps after it stays bounded. (A writer that has taken the queue
    /// into its own buffer while a send is in flight holds at most one
    /// more queue's worth.)
    pub fn with_session<T>(
        &self,
        f: impl FnOnce(&mut Session<S>) -> Result<T>,
        outs: &mut Vec<Output>,
        deliver: &mut dyn FnMut(&[u8]),
    ) -> Result<T> {
        let mut s = lock(&self.session);
        let r = f(&mut s);
        outs.extend(s.drain());
        let sent = |outs: &[Output]| -> usize {
            outs.iter()
                .map(|o| match o {
                    Output::Send(b) => b.len(),
                    _ => 0,
                })
                .sum()
        };
        // fixcore sends a long resend batch by batch as its driver asks;
        // the generator takes it whole, up to the unsent bound.
        while s.resend_pending() && lock(&self.out).len() + sent(outs) <= self.max_unsent {
            if let Err(e) = s.continue_resend(UtcTimestamp::now()) {
                return Err(e.into());
            }
            outs.extend(s.drain());
        }
        let mut out = lock(&self.out);
        let produced = sent(outs);
        let over = out.len().saturating_add(produced) > self.max_unsent;
        if over {
            let why = format!(
                "unsent queue over {} bytes ({} waiting to be written, {produced} more produced at once)",
                self.max_unsent,
                out.len()
            );
            // Given back, not just cleared: the point is the memory.
            *out = Vec::new();
            self.fail(why);
            // The engine sees the session end; nothing more is written.
            let _ = self.stream.shutdown(Shutdown::Both);
        }
        if !over {
            self.queued.fetch_add(produced as u64, Ordering::Relaxed);
        }
        let mut logged_out = false;
        for o in outs.drain(..) {
            match o {
                Output::Send(b) => {
                    if !over {
                        out.extend_from_slice(&b);
                    }
                    s.recycle(b);
                }
                Output::Deliver(m) => {
                    deliver(&m);
                    s.recycle(m);
                }
                Output::LoggedOn => self.logged_on.store(true, Ordering::Release),
                Output::LoggedOut => logged_out = true,
                Output::Disconnect => {
                    // Lost unless the run is logging out (then `fail`
                    // keeps nothing): say who ended it.
                    let why = match lock(&self.engine_logout).take() {
                        Some(text) if logged_out && text.is_empty() => {
                            "logged out by the engine".to_string()
                        }
                        Some(text) if logged_out => {
                            format!("logged out by the engine (Text: {text})")
                        }
                        _ => format!(
                            "the session disconnected: {}",
                            lock(&self.last_event).as_str()
                        ),
                    };
                    self.fail(why);
                }
                Output::Log(line) => *lock(&self.last_event) = line,
                // The generator keeps no log to start anew.
                Output::Reset => {}
            }
        }
        r
    }

    /// Writes as much of the queued bytes as the socket takes now; the rest
    /// waits for the next call. A failed write closes the link. Only the
    /// thread that owns the writing may call it (see the type's docs).
    pub fn flush(&self) {
        let mut out = lock(&self.out);
        let mut done = 0;
        while done < out.len() {
            match send_now(&self.stream, &out[done..]) {
                Ok(0) => {
                    drop(out);
                    self.fail("writing: the connection took no more bytes".into());
                    return;
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    drop(out);
                    self.fail(format!("writing: {e}"));
                    return;
                }
            }
        }
        out.drain(..done);
    }

    /// Moves the queued bytes into `into` (empty), for a writer that owns
    /// its buffers while the kernel sends them.
    pub fn take_out(&self, into: &mut Vec<u8>) {
        debug_assert!(into.is_empty());
        std::mem::swap(&mut *lock(&self.out), into);
    }

    /// Puts back bytes a writer took and did not send, ahead of whatever
    /// was queued since.
    pub fn put_back(&self, bytes: &[u8]) {
        if !bytes.is_empty() {
            let mut out = lock(&self.out);
            out.splice(0..0, bytes.iter().copied());
        }
    }

    /// Whether the session is logged on.
    pub fn is_logged_on(&self) -> bool {
        lock(&self.session).is_logged_on()
    }
}

/// `send` without blocking: what the socket takes now (`WouldBlock` when
/// nothing).
pub fn send_now(s: &TcpStream, bytes: &[u8]) -> std::io::Result<usize> {
    // SAFETY: `bytes` is a live slice of `bytes.len()` bytes that send only
    // reads during the call.
    let n = unsafe {
        libc::send(
            s.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// `recv` without blocking: what has arrived (`WouldBlock` when nothing, 0
/// at the end of the stream).
pub fn recv_now(s: &TcpStream, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: `buf` is a live, writable slice of `buf.len()` bytes that
    // recv writes at most `buf.len()` bytes into during the call.
    let n = unsafe {
        libc::recv(
            s.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT,
        )
    };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}
