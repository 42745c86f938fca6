//! The FIX load generator behind `perfkit fix bench --connect`: initiator
//! sessions that send NewOrderSingles on a fixed schedule (open loop) and
//! time each order to its first ExecutionReport, matched by ClOrdID.
//!
//! Every order has an intended send time: order `g` of the whole run (the
//! sessions take turns) is due `g / rate` seconds after the start. When the
//! generator falls behind — its window of unanswered orders is full because
//! the engine stalled, or it could not keep up — the late orders go out as
//! soon as it can, and their latency is counted from when they *should*
//! have gone (the corrected histogram, as wrk2 does against coordinated
//! omission) as well as from when they did (the uncorrected one, beside it).
//!
//! Per session, a sender thread owns the schedule and every write to the
//! socket, and a receiver thread reads, feeds the session state machine and
//! records each answer; the two share the [`Session`] under a lock held only
//! to build or to process messages. Bytes the receiver's work produces
//! (heartbeats, resends) join an outbox that the sender writes in the
//! order the session numbered them, so no write ever happens under the
//! session lock and a blocked write cannot stop answers from being read.

mod link;
mod slots;

use std::net::TcpStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};
use fixcore::session::machine::Session;
use fixcore::session::store::SessionStore;
use hdrhistogram::Histogram;

use crate::harness::clock::CpuClock;
use crate::harness::latency_histogram;
use link::{Link, Receiver, Sender};

/// What to send, how fast and for how long.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Orders per second over all sessions together.
    pub rate: f64,
    /// The measured part of the run.
    pub duration: Duration,
    /// Orders sent before the measured part, at the same rate, not recorded.
    pub warmup: Duration,
    /// The width of each reported interval.
    pub interval: Duration,
    /// Most unanswered orders per session; a full window holds the sender
    /// back, and the orders it delays count from their intended time.
    pub window: u64,
    /// The NewOrderSingle's body fields besides ClOrdID (11) and
    /// TransactTime (60), which every order gets.
    pub template: Vec<(u32, Vec<u8>)>,
    /// How long to wait for the last answers once every order is sent.
    pub grace: Duration,
    /// How long each session may take to log on.
    pub logon_timeout: Duration,
    /// Pin every sender thread to this core and every receiver thread to
    /// the next one the process may use (the same core when it has only
    /// one); `None` leaves them to the scheduler.
    pub pin: Option<usize>,
}

impl Plan {
    /// The body fields of a plain limit-less buy: HandlInst 1, Symbol MSFT,
    /// Side buy, OrderQty 100, OrdType market.
    pub fn default_template() -> Vec<(u32, Vec<u8>)> {
        [(21, "1"), (55, "MSFT"), (54, "1"), (38, "100"), (40, "1")]
            .into_iter()
            .map(|(t, v)| (t, v.as_bytes().to_vec()))
            .collect()
    }
}

/// One initiator session to run: where it connects and its state machine
/// (built from the settings file, disconnected).
pub struct Target<S: SessionStore> {
    /// `SenderCompID->TargetCompID`, for messages.
    pub name: String,
    /// SocketConnectHost.
    pub host: String,
    /// SocketConnectPort.
    pub port: u16,
    /// The session.
    pub session: Session<S>,
}

/// One reported interval of the measured part.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Intended send time to first ExecutionReport, for the answers that
    /// arrived in this interval.
    pub corrected: Histogram<u64>,
    /// Actual send time to first ExecutionReport, same answers.
    pub uncorrected: Histogram<u64>,
    /// Orders sent in this interval.
    pub sent: u64,
    /// Of those, sent more than [`LATE`] after their intended time.
    pub late: u64,
}

impl Interval {
    fn new() -> Interval {
        Interval {
            corrected: latency_histogram(),
            uncorrected: latency_histogram(),
            sent: 0,
            late: 0,
        }
    }

    fn add(&mut self, other: &Interval) -> Result<()> {
        self.corrected.add(&other.corrected)?;
        self.uncorrected.add(&other.uncorrected)?;
        self.sent += other.sent;
        self.late += other.late;
        Ok(())
    }
}

/// The most intervals a run keeps. Each holds two latency histograms per
/// session (about 0.5 MB), so memory stays bounded however long the run.
pub const MAX_INTERVALS: usize = 3_600;

/// The intervals `plan` keeps: the run and its grace period, plus one for
/// what arrives later still.
fn intervals_kept(plan: &Plan) -> usize {
    let n = (plan.duration + plan.grace).as_nanos() / plan.interval.as_nanos().max(1);
    usize::try_from(n).unwrap_or(usize::MAX).saturating_add(2)
}

/// How late a send may be and still count as on time.
pub const LATE: Duration = Duration::from_millis(1);

/// What a run measured. Counts cover the measured part only.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// When the measured part began (the interval log's StartTime).
    pub started: SystemTime,
    /// The interval width.
    pub interval: Duration,
    /// By the time each answer arrived (and each order was sent), from the
    /// start of the measured part; answers in the grace period land in the
    /// intervals after it.
    pub intervals: Vec<Interval>,
    /// Every interval together.
    pub total: Interval,
    /// Orders answered (a first ExecutionReport, a rejection included).
    pub answered: u64,
    /// Orders sent and never answered.
    pub unanswered: u64,
    /// ExecutionReports with OrdStatus rejected, business rejects and
    /// session-level Rejects received.
    pub rejects: u64,
    /// Sessions that lost their connection before the end.
    pub disconnects: u64,
    /// The largest lag of a send behind its intended time.
    pub max_lag: Duration,
    /// Times a full window of unanswered orders held a sender back (the
    /// engine's answers, not the generator, set the pace then).
    pub window_full: u64,
    /// CPU time of this whole process over the measured part.
    pub cpu: Duration,
    /// Wall time of the measured part: from its start to the end of its
    /// schedule, or to the last of its orders sent if that was later (a
    /// sender held back sends after the schedule ends), so the achieved
    /// rate is what was really sent per second.
    pub measured: Duration,
    /// How the sessions talk to the sockets.
    pub transport: &'static str,
    /// Sessions run.
    pub sessions: usize,
    /// The last event line of each session that disconnected, for the
    /// caller's error message.
    pub events: Vec<String>,
}

impl Outcome {
    /// Orders sent in the measured part.
    pub fn sent(&self) -> u64 {
        self.total.sent
    }

    /// The generator's CPU per order sent in the measured part.
    pub fn cpu_per_order(&self) -> Duration {
        self.cpu / u32::try_from(self.sent().max(1)).unwrap_or(u32::MAX)
    }

    /// Orders per second actually sent in the measured part.
    pub fn achieved_rate(&self) -> f64 {
        self.sent() as f64 / self.measured.as_secs_f64().max(1e-9)
    }
}

/// The cores of the senders and of the receivers for [`Plan::pin`].
pub fn cores(pin: Option<usize>) -> (Option<usize>, Option<usize>) {
    match pin {
        None => (None, None),
        Some(c) => (Some(c), Some(fixcore::affinity::other_core(c).unwrap_or(c))),
    }
}

/// Pins the calling thread to `core` when one is given.
fn pin(core: Option<usize>) -> Result<()> {
    if let Some(c) = core {
        fixcore::affinity::pin_current(c).with_context(|| format!("pinning to core {c}"))?;
    }
    Ok(())
}

/// Logs every target on, runs the plan, logs them out and returns what was
/// measured. `progress` is called about once per interval with a line for
/// a status display.
///
/// An unreachable host or a Logon that is refused or unanswered is an
/// error before anything is measured. Orders left unanswered, rejects and
/// disconnects during the run are counted in the outcome, not errors: the
/// caller reports them.
pub fn run<S: SessionStore + Send + 'static>(
    targets: Vec<Target<S>>,
    plan: &Plan,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Outcome> {
    if !(plan.rate.is_finite() && plan.rate > 0.0) {
        bail!("the rate must be a positive number of orders per second");
    }
    if targets.is_empty() {
        bail!("no initiator session to run");
    }
    // Checked before connecting: a thread that failed to pin would show
    // up only as a session that never logged on.
    if let Some(c) = plan.pin {
        let usable = fixcore::affinity::usable();
        if !usable.contains(&c) {
            bail!("--pin {c}: this process may run on cores {usable:?} only");
        }
    }
    if plan.interval < Duration::from_millis(1) {
        bail!("the interval must be at least 1 ms");
    }
    if intervals_kept(plan) > MAX_INTERVALS {
        bail!(
            "{:?} of run and grace in intervals of {:?} is {} intervals; at most {MAX_INTERVALS} are kept (two histograms per session each): give a longer interval",
            plan.duration + plan.grace,
            plan.interval,
            intervals_kept(plan)
        );
    }
    let k = targets.len();
    let mut links = Vec::with_capacity(k);
    for t in targets {
        let stream = TcpStream::connect((t.host.as_str(), t.port))
            .with_context(|| format!("{}: connecting to {}:{}", t.name, t.host, t.port))?;
        links.push(Link::connect(t.name, stream, t.session, plan)?);
    }
    let stop = AtomicBool::new(false);
    let schedule_cell = OnceLock::new();
    let outcome = std::thread::scope(|scope| -> Result<Outcome> {
        // However this closure ends, the receivers must see it end, or
        // the scope would wait for them for ever.
        let _wind = WindDown {
            links: &links,
            stop: &stop,
        };
        let (send_core, recv_core) = cores(plan.pin);
        // Receivers first: they read the Logon answers.
        let mut receivers = Vec::new();
        for (i, l) in links.iter().enumerate() {
            let r = Receiver::new(l, &schedule_cell);
            let stop = &stop;
            receivers.push(
                std::thread::Builder::new()
                    .name(format!("fix-load-recv-{i}"))
                    .spawn_scoped(scope, move || {
                        pin(recv_core)?;
                        r.run(stop)
                    })?,
            );
        }
        links
            .iter()
            .try_for_each(|l| l.await_logon(plan.logon_timeout))?;
        let start = Instant::now() + Duration::from_millis(10);
        let measure_from = start + plan.warmup;
        let end = measure_from + plan.duration;
        let schedule = link::Schedule {
            start,
            measure_from,
            end,
            rate: plan.rate,
            sessions: k as u64,
            interval: plan.interval,
            last_interval: intervals_kept(plan) - 1,
        };
        let _ = schedule_cell.set(schedule);
        let mut senders = Vec::new();
        for (i, l) in links.iter().enumerate() {
            let s = Sender::new(l, i as u64, schedule, plan);
            senders.push(
                std::thread::Builder::new()
                    .name(format!("fix-load-send-{i}"))
                    .spawn_scoped(scope, move || {
                        pin(send_core)?;
                        s.run()
                    })?,
            );
        }
        // The process CPU clock, read when measuring starts and when the
        // last measured order has gone out.
        let clock = CpuClock::Process;
        let (started, cpu0) = loop {
            let now = Instant::now();
            if now >= measure_from {
                break (SystemTime::now() - (now - measure_from), clock.read());
            }
            std::thread::sleep((measure_from - now).min(Duration::from_millis(1)));
        };
        let mut last_line = Instant::now();
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
            if last_line.elapsed() >= plan.interval {
                last_line = Instant::now();
                let sent: u64 = links.iter().map(|l| l.sent()).sum();
                let answered: u64 = links.iter().map(|l| l.answered()).sum();
                progress(&format!(
                    "{:.0} s: {sent} sent, {answered} answered",
                    (Instant::now() - start).as_secs_f64()
                ));
            }
        }
        let mut sent_side = Vec::new();
        for h in senders {
            sent_side.push(
                h.join()
                    .map_err(|_| anyhow::anyhow!("a sender thread panicked"))??,
            );
        }
        // After the senders: a sender held back sends its last orders
        // after the schedule's end, and that work is the run's too.
        let cpu1 = clock.read();
        // Wait for the answers still out, then log out.
        let deadline = Instant::now() + plan.grace;
        while Instant::now() < deadline && links.iter().any(|l| l.outstanding() > 0 && l.is_open())
        {
            for l in &links {
                l.flush_if_free();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        for l in &links {
            l.logout();
        }
        let bye = Instant::now() + Duration::from_secs(2);
        while Instant::now() < bye && links.iter().any(Link::is_open) {
            for l in &links {
                l.flush_if_free();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        stop.store(true, Ordering::Relaxed);
        for l in &links {
            l.close();
        }
        let mut recv_side = Vec::new();
        for h in receivers {
            recv_side.push(
                h.join()
                    .map_err(|_| anyhow::anyhow!("a receiver thread panicked"))??,
            );
        }
        let cpu0 = cpu0.context("reading the process CPU clock")?;
        let cpu = cpu1
            .context("reading the process CPU clock")?
            .saturating_sub(cpu0);
        let mut intervals: Vec<Interval> = Vec::new();
        let mut max_lag = Duration::ZERO;
        let last_send = sent_side.iter().filter_map(|s| s.last_send).max();
        let measured_wall = last_send.map_or(end, |l| l.max(end)) - measure_from;
        let window_full = sent_side.iter().map(|s| s.window_full).sum();
        let mut put = |i: usize, x: &Interval| -> Result<()> {
            while intervals.len() <= i {
                intervals.push(Interval::new());
            }
            intervals[i].add(x)
        };
        let mut rejects = 0;
        for r in &recv_side {
            rejects += r.rejects;
            for (i, x) in r.intervals.iter().enumerate() {
                put(i, x)?;
            }
        }
        for s in &sent_side {
            max_lag = max_lag.max(s.max_lag);
            if intervals.len() < s.intervals.len() {
                intervals.resize_with(s.intervals.len(), Interval::new);
            }
            for (x, c) in intervals.iter_mut().zip(&s.intervals) {
                x.sent += c.sent;
                x.late += c.late;
            }
        }
        let mut total = Interval::new();
        for x in &intervals {
            total.add(x)?;
        }
        let answered = total.corrected.len();
        let events: Vec<String> = links.iter().filter_map(Link::lost).collect();
        Ok(Outcome {
            started,
            interval: plan.interval,
            intervals,
            answered,
            unanswered: total.sent.saturating_sub(answered),
            total,
            rejects,
            disconnects: events.len() as u64,
            max_lag,
            window_full,
            cpu,
            measured: measured_wall,
            transport: "std (blocking sockets: a sender and a receiver thread per session)",
            sessions: k,
            events,
        })
    })?;
    Ok(outcome)
}

/// Stops the receivers and closes every connection when dropped.
struct WindDown<'a, S: SessionStore> {
    links: &'a [Link<S>],
    stop: &'a AtomicBool,
}

impl<S: SessionStore> Drop for WindDown<'_, S> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.links.iter().for_each(Link::close);
    }
}

#[cfg(test)]
mod tests;
