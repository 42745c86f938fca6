//! The receiver: one thread reads every session's connection, feeds each
//! session's state machine and times each order's first answer.

use std::os::fd::AsRawFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fixcore::frame::Framer;
use fixcore::value::UtcTimestamp;
use fixsession::machine::Output;
use fixsession::store::SessionStore;
use memchr::memmem::Finder;

use crate::link::{Link, Schedule, recv_now};
use crate::uring::RecvRing;
use crate::{Error, Interval, Result};
use perfkit_measure::record;

/// Longest message a load session accepts.
const MAX_MESSAGE: usize = 1 << 20;

/// Most messages processed under one hold of a session's lock.
const LOCK_SPAN: usize = 64;

/// How often the sessions' timers run (heartbeats, test requests).
pub const TICK: Duration = Duration::from_millis(100);

/// What the receiver measured.
pub struct Received {
    /// Latencies of the answers, by the interval they arrived in.
    pub intervals: Vec<Interval>,
    /// Rejections received.
    pub rejects: u64,
    /// The first rejection, in words: what it was, the order it named
    /// and its Text (58).
    pub first_reject: Option<String>,
    /// Times the receiver woke with bytes to read in the measured part.
    pub wakes: u64,
    /// ExecutionReports received over the whole run, and their bytes: the
    /// size of an answer on the wire, for the floor.
    pub reports: u64,
    /// See [`Received::reports`].
    pub report_bytes: u64,
}

/// How the receiver reads: `poll` and `read` on the sockets, or one RECV
/// per session in flight on its own io_uring.
pub enum Reader {
    /// `poll` over every socket, then `read` on the ready ones.
    Std,
    /// The receiver's ring.
    Uring(Box<RecvRing>),
}

/// Reads every session's connection and records each order's first answer.
pub struct Receiver<'l, S: SessionStore> {
    links: &'l [Link<S>],
    /// Set once every session has logged on and the schedule is known.
    schedule: &'l OnceLock<Schedule>,
    fields: AnswerFields,
    framers: Vec<Framer>,
    outs: Vec<Output>,
    got: Received,
}

/// Searchers for the start of each field an answer is read for: SOH, the
/// tag, `=`. A match is a whole tag, since the byte before it is SOH and
/// the one after is `=`.
struct AnswerFields {
    msg_type: Finder<'static>,
    status: Finder<'static>,
    clordid: Finder<'static>,
    reject_ref: Finder<'static>,
    text: Finder<'static>,
}

impl AnswerFields {
    fn new() -> AnswerFields {
        AnswerFields {
            msg_type: Finder::new(b"\x0135="),
            status: Finder::new(b"\x0139="),
            clordid: Finder::new(b"\x0111="),
            reject_ref: Finder::new(b"\x01379="),
            text: Finder::new(b"\x0158="),
        }
    }
}

/// The value of the first field `key` finds in `m`, up to the next SOH.
fn value_of<'m>(m: &'m [u8], key: &Finder<'_>) -> Option<&'m [u8]> {
    let rest = &m[key.find(m)? + key.needle().len()..];
    Some(&rest[..memchr::memchr(1, rest).unwrap_or(rest.len())])
}

impl<'l, S: SessionStore> Receiver<'l, S> {
    /// The receiver of `links`.
    pub fn new(links: &'l [Link<S>], schedule: &'l OnceLock<Schedule>) -> Self {
        Receiver {
            links,
            schedule,
            fields: AnswerFields::new(),
            framers: links
                .iter()
                .map(|_| Framer::new(MAX_MESSAGE).session_cut())
                .collect(),
            outs: Vec::new(),
            got: Received {
                intervals: Vec::new(),
                rejects: 0,
                first_reject: None,
                wakes: 0,
                reports: 0,
                report_bytes: 0,
            },
        }
    }

    /// Runs until every connection has closed or `stop` is set.
    pub fn run(mut self, reader: &mut Reader, stop: &AtomicBool) -> Result<Received> {
        let links = self.links;
        let mut buf = Vec::new();
        let mut fds = Vec::new();
        let mut last_tick = Instant::now();
        let r = (|| -> Result<()> {
            while !stop.load(Ordering::Relaxed) && links.iter().any(Link::is_open) {
                let woke = match reader {
                    Reader::Std => self.poll_std(&mut fds, &mut buf)?,
                    Reader::Uring(ring) => {
                        ring.wait(links, TICK, &mut |j, bytes, at| self.take(j, bytes, at))?
                    }
                };
                if woke
                    && let Some(sch) = self.schedule.get()
                    && (sch.measure_from..sch.end).contains(&Instant::now())
                {
                    self.got.wakes += 1;
                }
                if last_tick.elapsed() >= TICK {
                    last_tick = Instant::now();
                    self.tick()?;
                }
            }
            Ok(())
        })();
        if let Reader::Uring(ring) = reader {
            ring.finish();
        }
        r.map(|()| self.got)
    }

    /// Waits up to [`TICK`] for a socket to be readable and reads each
    /// that is; whether any was.
    fn poll_std(&mut self, fds: &mut Vec<libc::pollfd>, buf: &mut Vec<u8>) -> Result<bool> {
        if buf.is_empty() {
            buf.resize(256 << 10, 0);
        }
        fds.clear();
        fds.extend(self.links.iter().map(|l| libc::pollfd {
            // poll skips a negative fd: a closed session.
            fd: if l.is_open() {
                l.stream().as_raw_fd()
            } else {
                -1
            },
            events: libc::POLLIN,
            revents: 0,
        }));
        // SAFETY: `fds` is a live, initialised array of `fds.len()` pollfd
        // structs that poll may write `revents` into.
        let n = unsafe {
            libc::poll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                TICK.as_millis() as libc::c_int,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                return Ok(false);
            }
            return Err(Error::os("poll")(e));
        }
        if n == 0 {
            return Ok(false);
        }
        let at = Instant::now();
        for (j, fd) in fds.iter().enumerate() {
            if fd.revents == 0 {
                continue;
            }
            let l = &self.links[j];
            match recv_now(l.stream(), buf) {
                Ok(0) => l.fail("connection closed by the engine".into()),
                Ok(k) => self.take(j, &buf[..k], at)?,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => l.fail(format!("reading: {e}")),
            }
        }
        Ok(true)
    }

    /// Runs every open session's timers.
    fn tick(&mut self) -> Result<()> {
        for l in self.links.iter().filter(|l| l.is_open()) {
            l.with_session(
                |s| Ok(s.on_tick(UtcTimestamp::now())?),
                &mut self.outs,
                &mut |_| {},
            )?;
        }
        Ok(())
    }

    /// Takes `bytes` read from session `j` at `at`: frames them, feeds each
    /// message to the session and records the answers among them.
    fn take(&mut self, j: usize, bytes: &[u8], at: Instant) -> Result<()> {
        let l = &self.links[j];
        let framer = &mut self.framers[j];
        framer.push(bytes);
        let fields = &self.fields;
        let got = &mut self.got;
        let schedule = self.schedule.get();
        // The session lock is let go every LOCK_SPAN messages: a read that
        // brings thousands (the receiver was kept off the CPU) must not keep
        // the sender from building the next orders for as long.
        loop {
            // A session dropped (by its unsent bound, or the engine) takes
            // no more: each further ResendRequest would be served in vain.
            if !l.is_open() {
                return Ok(());
            }
            // Session-level Rejects are counted here, answers in `answer`.
            let mut first = None;
            let (rejects, more) = l.with_session(
                |s| {
                    // The time is read under the session's lock: a time
                    // read before it could be older than the SendingTime
                    // of an order the sender stamped meanwhile, and a
                    // resend of that order would then carry an
                    // OrigSendingTime after its SendingTime, which an
                    // engine rejects with a Logout (QuickFIX's "SendingTime
                    // accuracy problem").
                    let t = UtcTimestamp::now();
                    let mut n = 0;
                    for _ in 0..LOCK_SPAN {
                        let Some(frame) = framer.next_frame() else {
                            return Ok((n, false));
                        };
                        let Ok(msg) = frame else { continue };
                        let mut resend = false;
                        match value_of(msg, &fields.msg_type) {
                            Some(b"3") => {
                                n += 1;
                                first.get_or_insert_with(|| {
                                    described("session Reject", None, value_of(msg, &fields.text))
                                });
                            }
                            Some(b"2") => resend = true,
                            // Not ours to answer: the disconnect it brings
                            // is put down to the engine.
                            Some(b"5") if !l.is_logging_out() => {
                                l.engine_logout(value_of(msg, &fields.text));
                            }
                            _ => {}
                        }
                        s.on_message(msg, t)?;
                        // A ResendRequest's answer is drained (and checked
                        // against the unsent bound) on its own: a span of
                        // them would hold every answer at once.
                        if resend {
                            return Ok((n, true));
                        }
                    }
                    Ok((n, true))
                },
                &mut self.outs,
                // The messages the session delivered, after the span.
                &mut |m| answer(fields, l, schedule, m, at, got),
            )?;
            got.rejects += rejects;
            if got.first_reject.is_none() {
                got.first_reject = first;
            }
            if !more {
                return Ok(());
            }
        }
    }
}

/// Records an application message: an ExecutionReport's ClOrdID ends that
/// order's flight; rejections are counted.
fn answer<S: SessionStore>(
    f: &AnswerFields,
    link: &Link<S>,
    schedule: Option<&Schedule>,
    m: &[u8],
    at: Instant,
    got: &mut Received,
) {
    // The session has validated the message; the few fields needed are
    // found in it by SIMD substring search instead of a second whole parse
    // (a sixth of the generator's CPU) or a byte-by-byte split (a tenth).
    // Each field is looked for only in the message type that has it: a
    // search for an absent tag reads the whole message.
    let id = match value_of(m, &f.msg_type) {
        Some(b"8") => {
            got.reports += 1;
            got.report_bytes += m.len() as u64;
            let id = value_of(m, &f.clordid);
            if value_of(m, &f.status) == Some(b"8") {
                got.rejects += 1;
                got.first_reject.get_or_insert_with(|| {
                    described("order rejected (OrdStatus 8)", id, value_of(m, &f.text))
                });
            }
            id.and_then(fixcore::value::parse_uint)
        }
        Some(b"j") => {
            got.rejects += 1;
            let id = value_of(m, &f.reject_ref);
            got.first_reject.get_or_insert_with(|| {
                described("BusinessMessageReject", id, value_of(m, &f.text))
            });
            id.and_then(fixcore::value::parse_uint)
        }
        _ => None,
    };
    let Some((intended, actual)) = id.and_then(|id| link.slots.take(id)) else {
        return;
    };
    link.add_answered();
    let Some(sch) = schedule else {
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

/// A rejection in words: `what`, the order it names and its Text.
fn described(what: &str, order: Option<&[u8]>, text: Option<&[u8]>) -> String {
    let mut d = what.to_owned();
    if let Some(o) = order {
        d += &format!(" of ClOrdID {}", String::from_utf8_lossy(o));
    }
    if let Some(t) = text {
        d += &format!(": {}", String::from_utf8_lossy(t));
    }
    d
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
