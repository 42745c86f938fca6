//! One session's connection during a load run: the state both threads
//! share ([`Link`]), the sender that keeps the schedule ([`Sender`]) and
//! the receiver that records the answers ([`Receiver`]).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use fixcore::build::TimePrecision;
use fixcore::frame::Framer;
use fixcore::session::connection::{now, wait_readable};
use fixcore::session::machine::{Output, Session};
use fixcore::session::store::SessionStore;
use memchr::memmem::Finder;

use super::slots::Slots;
use super::{Interval, LATE, Plan};
use crate::harness::record;

/// Longest message a load session accepts.
const MAX_MESSAGE: usize = 1 << 20;

/// How often the receiver runs the session's timers when nothing arrives.
const TICK: Duration = Duration::from_millis(100);

/// Most orders one send round builds before writing, so a sender far
/// behind still writes (and lets answers flow) in bounded pieces.
const BATCH: u64 = 256;

/// The shortest sleep of a sender waiting for its next order: orders due
/// closer together than this go out in one write, up to this late.
const NAP: Duration = Duration::from_micros(100);

/// When each order is due, shared by every session's sender.
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
    /// When order `g` of the whole run is due, from the start.
    fn due(&self, g: u64) -> Duration {
        Duration::from_secs_f64(g as f64 / self.rate)
    }

    /// The interval `at` falls in, counted from the measured part's start;
    /// `None` before it.
    fn interval_of(&self, at: Instant) -> Option<usize> {
        let d = at.checked_duration_since(self.measure_from)?;
        let i = d.as_nanos() / self.interval.as_nanos().max(1);
        Some(
            usize::try_from(i)
                .unwrap_or(usize::MAX)
                .min(self.last_interval),
        )
    }

    fn nanos(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.start).as_nanos() as u64
    }
}

/// What one session's threads share.
pub struct Link<S: SessionStore> {
    name: String,
    session: Mutex<Session<S>>,
    /// Bytes the session produced, in its numbering order, not yet written.
    outbox: Mutex<Vec<u8>>,
    /// The writing end; whoever holds it writes the whole outbox.
    writer: Mutex<TcpStream>,
    reader: Mutex<Option<TcpStream>>,
    slots: Slots,
    window: u64,
    sent: AtomicU64,
    answered: AtomicU64,
    logged_on: AtomicBool,
    open: AtomicBool,
    logging_out: AtomicBool,
    /// The last event the session logged, for an error message.
    last_event: Mutex<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A thread that panicked holding a lock has already failed the run;
    // the data is still usable for winding down.
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
        stream.set_read_timeout(Some(TICK))?;
        let reader = stream.try_clone().context("cloning the socket")?;
        session
            .on_connect(now())
            .with_context(|| format!("{name}: starting the session"))?;
        let link = Link {
            name,
            session: Mutex::new(session),
            outbox: Mutex::new(Vec::with_capacity(64 << 10)),
            writer: Mutex::new(stream),
            reader: Mutex::new(Some(reader)),
            slots: Slots::new(plan.window),
            window: plan.window.max(1),
            sent: AtomicU64::new(0),
            answered: AtomicU64::new(0),
            logged_on: AtomicBool::new(false),
            open: AtomicBool::new(true),
            logging_out: AtomicBool::new(false),
            last_event: Mutex::new(String::new()),
        };
        {
            let mut s = lock(&link.session);
            link.drain(&mut s, &mut Vec::new(), &mut |_| {});
        }
        link.flush()?;
        Ok(link)
    }

    /// Waits for the Logon answer (the receiver sets it).
    pub fn await_logon(&self, timeout: Duration) -> Result<()> {
        let until = Instant::now() + timeout;
        while !self.logged_on.load(Ordering::Acquire) {
            if !self.is_open() {
                let why = lock(&self.last_event).clone();
                bail!("{}: Logon refused ({why})", self.name);
            }
            if Instant::now() >= until {
                bail!("{}: no Logon answer within {timeout:?}", self.name);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// Orders sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Orders answered so far.
    pub fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Orders sent and not answered yet.
    pub fn outstanding(&self) -> u64 {
        self.sent().saturating_sub(self.answered())
    }

    /// Whether the connection is still up.
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// The event that ended the connection, when it ended before the run
    /// logged out.
    pub fn lost(&self) -> Option<String> {
        (!self.is_open() && !self.logging_out.load(Ordering::Relaxed)).then(|| {
            let e = lock(&self.last_event);
            format!(
                "{}: {}",
                self.name,
                if e.is_empty() { "connection lost" } else { &e }
            )
        })
    }

    /// Starts the Logout handshake.
    pub fn logout(&self) {
        self.logging_out.store(true, Ordering::Relaxed);
        if !self.is_open() {
            return;
        }
        let mut s = lock(&self.session);
        if s.logout(None, now()).is_ok() {
            self.drain(&mut s, &mut Vec::new(), &mut |_| {});
        }
        drop(s);
        self.flush_if_free();
    }

    /// Closes the socket, which ends the receiver.
    pub fn close(&self) {
        self.open.store(false, Ordering::Release);
        let _ = lock(&self.writer).shutdown(Shutdown::Both);
    }

    /// Carries out the session's outputs: sends go to the outbox (in the
    /// session's order: this runs under its lock), deliveries to `deliver`.
    /// `outs` is the caller's scratch space, reused from call to call (the
    /// outputs are collected first because recycling needs the session).
    fn drain(&self, s: &mut Session<S>, outs: &mut Vec<Output>, deliver: &mut dyn FnMut(&[u8])) {
        outs.extend(s.drain());
        let mut outbox = lock(&self.outbox);
        for o in outs.drain(..) {
            match o {
                Output::Send(b) => {
                    outbox.extend_from_slice(&b);
                    s.recycle(b);
                }
                Output::Deliver(m) => {
                    deliver(&m);
                    s.recycle(m);
                }
                Output::LoggedOn => self.logged_on.store(true, Ordering::Release),
                Output::LoggedOut => {}
                Output::Disconnect => self.open.store(false, Ordering::Release),
                Output::Log(line) => *lock(&self.last_event) = line,
            }
        }
    }

    /// Writes the outbox through `w`, the writer held: taking the outbox
    /// under the writer lock keeps the bytes in the session's order. The
    /// buffer goes back for the next round when nothing was queued meanwhile.
    fn write_outbox(&self, w: &mut TcpStream) -> std::io::Result<()> {
        let bytes = std::mem::take(&mut *lock(&self.outbox));
        if bytes.is_empty() {
            return Ok(());
        }
        let res = w.write_all(&bytes);
        let mut outbox = lock(&self.outbox);
        if outbox.is_empty() {
            *outbox = bytes;
            outbox.clear();
        }
        res
    }

    /// Writes the outbox, waiting for another writer to finish.
    fn flush(&self) -> Result<()> {
        self.write_outbox(&mut lock(&self.writer))
            .with_context(|| format!("{}: writing", self.name))
    }

    /// [`Self::flush`] unless another thread is writing (it would block);
    /// what is left goes out with that thread's next flush. A failed write
    /// closes the link.
    pub fn flush_if_free(&self) {
        if let Ok(mut w) = self.writer.try_lock()
            && self.write_outbox(&mut w).is_err()
        {
            self.open.store(false, Ordering::Release);
        }
    }
}

/// Orders sent in one interval: how many, and how many of them late.
#[derive(Debug, Clone, Copy, Default)]
pub struct SendCounts {
    /// Orders due in the interval and sent.
    pub sent: u64,
    /// Of those, sent more than [`LATE`] after their due time.
    pub late: u64,
}

/// What a sender measured.
pub struct Sent {
    /// Orders sent per interval.
    pub intervals: Vec<SendCounts>,
    /// The largest lag behind schedule.
    pub max_lag: Duration,
    /// When the last order of the measured part went out (late orders go
    /// out after the schedule's end).
    pub last_send: Option<Instant>,
    /// Times a full window held the sender back.
    pub window_full: u64,
}

/// Keeps one session's share of the schedule.
pub struct Sender<'l, S: SessionStore> {
    link: &'l Link<S>,
    /// This session's turn among the sessions.
    turn: u64,
    schedule: Schedule,
    template: &'l [(u32, Vec<u8>)],
}

impl<'l, S: SessionStore> Sender<'l, S> {
    /// The sender of session number `turn`.
    pub fn new(link: &'l Link<S>, turn: u64, schedule: Schedule, plan: &'l Plan) -> Self {
        Sender {
            link,
            turn,
            schedule,
            template: &plan.template,
        }
    }

    /// Sends every order due to this session until the schedule ends or the
    /// connection closes.
    pub fn run(self) -> Result<Sent> {
        let sch = self.schedule;
        let link = self.link;
        let mut out = Sent {
            intervals: Vec::new(),
            max_lag: Duration::ZERO,
            last_send: None,
            window_full: 0,
        };
        // This session's i-th order is order i·K + turn of the run.
        let mut i: u64 = 0;
        let mut id_buf = [0u8; 20];
        let mut outs = Vec::new();
        loop {
            let due = sch.start + sch.due(i * sch.sessions + self.turn);
            if due >= sch.end || !link.is_open() {
                break;
            }
            // Wait for the due time, writing what the receiver queued. No
            // spinning: a thread spinning between orders due every few
            // microseconds was most of the generator's CPU. The sleep ends
            // up to the timer's slack (~50 µs) late, and every order due by
            // then goes out in the same write, timed from its due time.
            loop {
                let now = Instant::now();
                if now >= due {
                    break;
                }
                link.flush_if_free();
                // At least NAP: at high rates a wake per order (a sleep and
                // a switch each, ~4 µs of CPU here) cost more than the
                // orders; napping lets the orders of NAP go out together.
                let left = due - now;
                std::thread::sleep(if left >= Duration::from_millis(1) {
                    Duration::from_millis(1)
                } else {
                    left.max(NAP)
                });
            }
            // A full window holds the sender back: those orders go late,
            // and count from their due time.
            if link.outstanding() >= link.window {
                out.window_full += 1;
            }
            while link.outstanding() >= link.window {
                if !link.is_open() {
                    return Ok(out);
                }
                link.flush_if_free();
                std::thread::sleep(Duration::from_micros(20));
            }
            let room = link.window - link.outstanding();
            let now_t = now();
            let built_at;
            {
                let mut s = lock(&link.session);
                let mut n = 0;
                let at = Instant::now();
                while n < BATCH.min(room) {
                    let g = (i + n) * sch.sessions + self.turn;
                    let due_n = sch.start + sch.due(g);
                    if due_n >= sch.end || (n > 0 && due_n > at) {
                        break;
                    }
                    let id = i + n + 1;
                    let len = fixcore::build::format::uint(&mut id_buf, id);
                    let clordid = &id_buf[..len];
                    link.slots.put(id, sch.nanos(due_n), sch.nanos(at));
                    let ok = s.send_app(b"D", now_t, |b| {
                        b.field_bytes(11, clordid);
                        for (t, v) in self.template {
                            b.field_bytes(*t, v);
                        }
                        b.field_timestamp(60, now_t, TimePrecision::Millis);
                    })?;
                    if !ok {
                        break;
                    }
                    let lag = at.saturating_duration_since(due_n);
                    out.max_lag = out.max_lag.max(lag);
                    if let Some(k) = sch.interval_of(due_n) {
                        if out.intervals.len() <= k {
                            out.intervals.resize(k + 1, SendCounts::default());
                        }
                        out.intervals[k].sent += 1;
                        out.intervals[k].late += u64::from(lag > LATE);
                        out.last_send = Some(out.last_send.map_or(at, |l: Instant| l.max(at)));
                    }
                    n += 1;
                }
                link.drain(&mut s, &mut outs, &mut |_| {});
                link.sent.fetch_add(n, Ordering::Release);
                built_at = n;
            }
            if built_at == 0 {
                // Logged out under us: nothing more can be sent.
                if !lock(&link.session).is_logged_on() {
                    break;
                }
                continue;
            }
            i += built_at;
            if let Err(e) = link.flush() {
                *lock(&link.last_event) = format!("{e:#}");
                link.open.store(false, Ordering::Release);
                break;
            }
        }
        Ok(out)
    }
}

/// What a receiver measured.
pub struct Received {
    /// Latencies of the answers, by the interval they arrived in.
    pub intervals: Vec<Interval>,
    /// Rejections received.
    pub rejects: u64,
}

/// Reads one session's connection and records each order's first answer.
pub struct Receiver<'l, S: SessionStore> {
    link: &'l Link<S>,
    /// Set once every session has logged on and the schedule is known.
    schedule: &'l OnceLock<Schedule>,
    fields: AnswerFields,
}

/// Searchers for the start of each field an answer is read for: SOH, the
/// tag, `=`. A match is a whole tag, since the byte before it is SOH and
/// the one after is `=`.
struct AnswerFields {
    msg_type: Finder<'static>,
    status: Finder<'static>,
    clordid: Finder<'static>,
    reject_ref: Finder<'static>,
}

impl AnswerFields {
    fn new() -> AnswerFields {
        AnswerFields {
            msg_type: Finder::new(b"\x0135="),
            status: Finder::new(b"\x0139="),
            clordid: Finder::new(b"\x0111="),
            reject_ref: Finder::new(b"\x01379="),
        }
    }
}

/// The value of the first field `key` finds in `m`, up to the next SOH.
fn value_of<'m>(m: &'m [u8], key: &Finder<'_>) -> Option<&'m [u8]> {
    let rest = &m[key.find(m)? + key.needle().len()..];
    Some(&rest[..memchr::memchr(1, rest).unwrap_or(rest.len())])
}

impl<'l, S: SessionStore> Receiver<'l, S> {
    /// The receiver of `link`.
    pub fn new(link: &'l Link<S>, schedule: &'l OnceLock<Schedule>) -> Self {
        Receiver {
            link,
            schedule,
            fields: AnswerFields::new(),
        }
    }

    /// Runs until the connection closes or `stop` is set.
    pub fn run(self, stop: &AtomicBool) -> Result<Received> {
        let link = self.link;
        let Some(mut stream) = lock(&link.reader).take() else {
            bail!("{}: the receiving end was taken twice", link.name);
        };
        let mut framer = Framer::new(MAX_MESSAGE).session_cut();
        let mut buf = vec![0u8; 256 << 10];
        let mut outs = Vec::new();
        let mut got = Received {
            intervals: Vec::new(),
            rejects: 0,
        };
        let mut last_tick = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            // Woken in poll, not inside a blocking recv: see
            // `wait_readable` (it was the receivers' largest cost).
            let read = match wait_readable(&stream, Duration::ZERO, TICK) {
                Ok(true) => stream.read(&mut buf),
                Ok(false) => Err(std::io::ErrorKind::TimedOut.into()),
                Err(e) => Err(e),
            };
            let n = match read {
                Ok(0) => {
                    link.open.store(false, Ordering::Release);
                    break;
                }
                Ok(n) => n,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) =>
                {
                    0
                }
                Err(e) => {
                    if !link.logging_out.load(Ordering::Relaxed) {
                        *lock(&link.last_event) = format!("reading: {e}");
                    }
                    link.open.store(false, Ordering::Release);
                    break;
                }
            };
            framer.push(&buf[..n]);
            let arrived = Instant::now();
            let t = now();
            let mut s = lock(&link.session);
            while let Some(frame) = framer.next_frame() {
                let Ok(msg) = frame else { continue };
                if value_of(msg, &self.fields.msg_type) == Some(b"3") {
                    got.rejects += 1;
                }
                s.on_message(msg, t)?;
                link.drain(&mut s, &mut outs, &mut |m| {
                    self.answer(m, arrived, &mut got);
                });
            }
            if last_tick.elapsed() >= TICK {
                last_tick = Instant::now();
                s.on_tick(t)?;
                link.drain(&mut s, &mut outs, &mut |m| {
                    self.answer(m, arrived, &mut got);
                });
            }
            drop(s);
            link.flush_if_free();
        }
        Ok(got)
    }

    /// Records an application message: an ExecutionReport's ClOrdID ends
    /// that order's flight; rejections are counted.
    fn answer(&self, m: &[u8], at: Instant, got: &mut Received) {
        // The session has validated the message; four fields are found
        // in it by SIMD substring search instead of a second whole parse
        // (a sixth of the generator's CPU) or a byte-by-byte split (a
        // tenth).
        // Each field is looked for only in the message type that has it:
        // a search for an absent tag reads the whole message.
        let f = &self.fields;
        let id = match value_of(m, &f.msg_type) {
            Some(b"8") => {
                if value_of(m, &f.status) == Some(b"8") {
                    got.rejects += 1;
                }
                value_of(m, &f.clordid).and_then(fixcore::value::parse_uint)
            }
            Some(b"j") => {
                got.rejects += 1;
                value_of(m, &f.reject_ref).and_then(fixcore::value::parse_uint)
            }
            _ => None,
        };
        let Some((intended, actual)) = id.and_then(|id| self.link.slots.take(id)) else {
            return;
        };
        self.link.answered.fetch_add(1, Ordering::Release);
        let Some(sch) = self.schedule.get() else {
            return;
        };
        // Only orders due in the measured part are recorded.
        let measured_from = sch.nanos(sch.measure_from);
        let measured_to = sch.nanos(sch.end);
        if intended < measured_from || intended >= measured_to {
            return;
        }
        let Some(k) = sch.interval_of(at) else { return };
        while got.intervals.len() <= k {
            got.intervals.push(Interval::new());
        }
        let now_ns = sch.nanos(at);
        let iv = &mut got.intervals[k];
        record(
            &mut iv.corrected,
            Duration::from_nanos(now_ns.saturating_sub(intended)),
        );
        record(
            &mut iv.uncorrected,
            Duration::from_nanos(now_ns.saturating_sub(actual)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_fields_match_whole_tags_only() {
        let f = AnswerFields::new();
        // 111 and 1379 hold the searched tags' digits inside longer tags;
        // 11 comes after them and last, 379 is absent.
        let m = b"8=FIX.4.4\x019=60\x0135=8\x01111=x\x011379=y\x0139=2\x0111=42\x01";
        assert_eq!(value_of(m, &f.msg_type), Some(&b"8"[..]));
        assert_eq!(value_of(m, &f.status), Some(&b"2"[..]));
        assert_eq!(value_of(m, &f.clordid), Some(&b"42"[..]));
        assert_eq!(value_of(m, &f.reject_ref), None);
        // A value running to the end of the bytes, without a final SOH.
        assert_eq!(value_of(b"8=FIX.4.4\x0111=7", &f.clordid), Some(&b"7"[..]));
    }
}
