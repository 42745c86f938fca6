//! The sender: one thread keeps every session's share of the schedule,
//! builds the orders that are due and writes them.
//!
//! It sleeps between rounds, never spins: on this kind of machine a wake
//! from sleep costs tens of microseconds of CPU, far more than an order.
//! A round sends every order due by the time it woke, and the next round
//! starts no sooner than [`Plan::coalesce`] after it unless the sender is
//! behind, so at high rates the orders of a coalescing window go out in one
//! write per session, each up to the window late (and timed from when it
//! was due).

use std::time::{Duration, Instant};

use fixcore::build::TimePrecision;
use fixcore::value::UtcTimestamp;
use fixsession::store::SessionStore;
use hdrhistogram::Histogram;

use crate::link::{Link, Schedule};
use crate::uring::SendRing;
use crate::{LATE, Plan, Result};
use perfkit_measure::{latency_histogram, record};

/// Most orders one round builds per session before writing, so a sender far
/// behind still writes (and lets answers flow) in bounded pieces.
const BATCH: u64 = 256;

/// The longest sleep: queued bytes (heartbeats, resends) wait at most this
/// long for the sender to write them.
const MAX_SLEEP: Duration = Duration::from_millis(10);

/// How soon a session held back by its full window is looked at again
/// when the coalescing window is shorter (a zero window must not spin).
const HELD_RECHECK: Duration = Duration::from_micros(50);

/// Orders sent in one interval: how many, and how many of them late.
#[derive(Debug, Clone, Copy, Default)]
pub struct SendCounts {
    /// Orders due in the interval and sent.
    pub sent: u64,
    /// Of those, sent more than [`LATE`] after their due time.
    pub late: u64,
}

/// What the sender measured.
pub struct Sent {
    /// Orders sent per interval.
    pub intervals: Vec<SendCounts>,
    /// The largest lag behind schedule.
    pub max_lag: Duration,
    /// When the last order of the measured part went out (late orders go
    /// out after the schedule's end).
    pub last_send: Option<Instant>,
    /// Times a full window held a session's orders back.
    pub window_full: u64,
    /// Rounds in the measured part: times the sender woke and sent.
    pub rounds: u64,
    /// How late the sender woke for each round of the measured part that
    /// it slept before, behind the time it asked to wake at: lateness the
    /// OS adds, which no work of the generator's can avoid.
    pub wake_late: Histogram<u64>,
    /// How long each round of the measured part took, from its wake to
    /// the end of its writes: time in which the next orders fall due.
    pub round_time: Histogram<u64>,
    /// Orders built over the whole run, and the bytes their sessions queued
    /// meanwhile: the size of an order on the wire, for the floor.
    pub built: u64,
    /// See [`Sent::built`].
    pub built_bytes: u64,
}

/// How the sender writes: through each socket, or through an io_uring.
pub enum Writer {
    /// `send` on each socket, without blocking.
    Std,
    /// One SEND per session in flight on the sender's own ring.
    Uring(Box<SendRing>),
}

impl Writer {
    /// Writes what every session has queued, as far as the sockets take it.
    fn write<S: SessionStore>(&mut self, links: &[Link<S>]) {
        match self {
            Writer::Std => links.iter().filter(|l| l.is_open()).for_each(Link::flush),
            Writer::Uring(ring) => ring.write(links),
        }
    }

    /// Waits for the writes still in flight and gives back what was not
    /// sent, so another thread may write after the sender.
    fn finish<S: SessionStore>(&mut self, links: &[Link<S>]) {
        if let Writer::Uring(ring) = self {
            ring.finish(links);
        }
    }
}

/// Keeps every session's share of the schedule: session `j` of `K` sends
/// orders `j`, `K + j`, `2K + j`... of the run.
pub struct Sender<'l, S: SessionStore> {
    links: &'l [Link<S>],
    schedule: Schedule,
    template: &'l [(u32, Vec<u8>)],
    coalesce: Duration,
    /// Orders a full window still holds back this long after the schedule's
    /// end are never sent: an engine that stopped answering must not keep
    /// the run going for ever.
    grace: Duration,
}

impl<'l, S: SessionStore> Sender<'l, S> {
    /// The sender of `links` for `plan`.
    pub fn new(links: &'l [Link<S>], schedule: Schedule, plan: &'l Plan) -> Self {
        Sender {
            links,
            schedule,
            template: &plan.template,
            coalesce: plan.coalesce,
            grace: plan.grace,
        }
    }

    /// Sends every order due until the schedule ends or every connection
    /// has closed.
    pub fn run(self, writer: &mut Writer) -> Result<Sent> {
        let r = self.rounds(writer);
        writer.finish(self.links);
        r
    }

    fn rounds(&self, writer: &mut Writer) -> Result<Sent> {
        let sch = self.schedule;
        let k = self.links.len();
        let mut out = Sent {
            intervals: Vec::new(),
            max_lag: Duration::ZERO,
            last_send: None,
            window_full: 0,
            rounds: 0,
            wake_late: latency_histogram(),
            round_time: latency_histogram(),
            built: 0,
            built_bytes: 0,
        };
        // Session j's next order is its next[j]-th.
        let mut next = vec![0u64; k];
        let mut held = vec![false; k];
        let mut outs = Vec::new();
        let mut last_round: Option<Instant> = None;
        loop {
            // When the next round is due: the earliest order due of a
            // session with room in its window; a session whose window is
            // full is looked at again after a coalescing window.
            let now_i = Instant::now();
            if now_i >= sch.end + self.grace {
                break;
            }
            let mut earliest: Option<Instant> = None;
            for (j, l) in self.links.iter().enumerate() {
                let due = sch.due(next[j] * sch.sessions + j as u64);
                if due >= sch.end || !l.is_open() {
                    continue;
                }
                let due = if l.outstanding() >= l.window {
                    now_i + self.coalesce.max(HELD_RECHECK)
                } else {
                    due
                };
                earliest = Some(earliest.map_or(due, |e: Instant| e.min(due)));
            }
            let Some(mut wake) = earliest else {
                break;
            };
            // No sooner than a coalescing window after the last round,
            // unless the sender is behind by more than a window (a round
            // takes time, so at high rates the next order is always due by
            // the end of one): then at once.
            if let Some(last) = last_round
                && wake + self.coalesce > now_i
            {
                wake = wake.max(last + self.coalesce);
            }
            let slept = wake > now_i;
            if slept {
                std::thread::sleep((wake - now_i).min(MAX_SLEEP));
                if Instant::now() < wake {
                    writer.write(self.links);
                    continue;
                }
            }
            let at = Instant::now();
            last_round = Some(at);
            let measured = at >= sch.measure_from && at < sch.end;
            if measured {
                out.rounds += 1;
                if slept {
                    record(&mut out.wake_late, at - wake);
                }
            }
            for (j, l) in self.links.iter().enumerate() {
                if !l.is_open() {
                    continue;
                }
                let room = l.window.saturating_sub(l.outstanding());
                let first_due = sch.due(next[j] * sch.sessions + j as u64);
                if first_due > at || first_due >= sch.end {
                    continue;
                }
                if room == 0 {
                    if !held[j] {
                        held[j] = true;
                        out.window_full += 1;
                    }
                    continue;
                }
                held[j] = false;
                let n = self.build(l, j as u64, next[j], room, at, &mut out, &mut outs)?;
                if n == 0 && !l.is_logged_on() {
                    // Logged out under us: nothing more can be sent.
                    l.fail("logged out during the run".into());
                }
                next[j] += n;
            }
            writer.write(self.links);
            if measured {
                record(&mut out.round_time, at.elapsed());
            }
        }
        Ok(out)
    }

    /// Builds session `j`'s orders from its `i`-th on that are due by `at`,
    /// at most `room` and [`BATCH`]; returns how many.
    #[allow(clippy::too_many_arguments)]
    fn build(
        &self,
        l: &Link<S>,
        j: u64,
        i: u64,
        room: u64,
        at: Instant,
        out: &mut Sent,
        outs: &mut Vec<fixsession::machine::Output>,
    ) -> Result<u64> {
        let sch = &self.schedule;
        let mut id_buf = [0u8; 20];
        // The session lock is held from the build to the queueing, so
        // what the receiver queues (a heartbeat) rarely falls in between.
        let queued = l.queued();
        let n = l.with_session(
            |s| {
                // Read under the session's lock, as the receiver reads its
                // own: the session's messages are then stamped in the
                // order they are sent (see `receive`'s `take`).
                let t = UtcTimestamp::now();
                let mut n = 0;
                while n < BATCH.min(room) {
                    let g = (i + n) * sch.sessions + j;
                    let due = sch.due(g);
                    if due >= sch.end || due > at {
                        break;
                    }
                    // ClOrdIDs count from 1 per session.
                    let id = i + n + 1;
                    let len = fixcore::build::format::uint(&mut id_buf, id);
                    let clordid = &id_buf[..len];
                    l.slots.put(id, sch.nanos(due), sch.nanos(at));
                    let ok = s.send_app(b"D", t, |b| {
                        b.field_bytes(11, clordid);
                        for (tag, v) in self.template {
                            b.field_bytes(*tag, v);
                        }
                        b.field_timestamp(60, t, TimePrecision::Millis);
                    })?;
                    if !ok {
                        break;
                    }
                    let lag = at.saturating_duration_since(due);
                    out.max_lag = out.max_lag.max(lag);
                    if let Some(k) = sch.interval_of(due) {
                        if out.intervals.len() <= k {
                            out.intervals.resize(k + 1, SendCounts::default());
                        }
                        out.intervals[k].sent += 1;
                        out.intervals[k].late += u64::from(lag > LATE);
                        out.last_send = Some(out.last_send.map_or(at, |x: Instant| x.max(at)));
                    }
                    n += 1;
                }
                Ok(n)
            },
            outs,
            &mut |_| {},
        )?;
        l.add_sent(n);
        out.built += n;
        out.built_bytes += l.queued() - queued;
        Ok(n)
    }
}

/// Makes the calling thread's sleeps end on time: Linux lets a sleep of a
/// normal thread overrun by up to 50 µs by default (its timer slack), which
/// at high rates would add to every order's lag.
pub fn tighten_timer() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and touches no memory of
    // ours; a failure only leaves the default slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}
