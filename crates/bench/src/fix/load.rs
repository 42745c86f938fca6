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
//! Two threads do the work whatever the number of sessions: the sender
//! ([`send`]) keeps the schedule of every session and writes, the receiver
//! ([`receive`]) reads every connection, feeds the session state machines
//! and times the answers. Each session's state ([`link::Link`]) is shared
//! under a lock held only to build or to process messages. On this kind
//! of machine a thread's wake from sleep costs more CPU than an order, so
//! the thread count, not the session count, sets the generator's cost.
//!
//! The two talk to the sockets through std calls or through one io_uring
//! each ([`uring`]), chosen at run time ([`Io`]) and named in the outcome.

mod link;
mod receive;
mod send;
mod slots;
mod uring;

use std::net::TcpStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};
use fixcore::session::machine::Session;
use fixcore::session::store::SessionStore;
use hdrhistogram::Histogram;

use link::Link;
use perfkit_measure::clock::CpuClock;
use perfkit_measure::latency_histogram;
use receive::{Reader, Receiver};
use send::{Sender, Writer};

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
    /// How long to wait for the last answers once every order is sent; also
    /// how long after the schedule's end a full window may still hold the
    /// sender back (the orders it holds then are never sent).
    pub grace: Duration,
    /// How long each session may take to log on.
    pub logon_timeout: Duration,
    /// Pin the sender thread to this core and the receiver thread to the
    /// next one the process may use (the same core when it has only one);
    /// `None` leaves them to the scheduler.
    pub pin: Option<usize>,
    /// Orders due within this of the sender's last round wait for the next
    /// one: at high rates the orders of each window go out in one write per
    /// session, each up to the window late (timed from when it was due).
    /// Longer windows cost fewer wakes, and so less CPU per order.
    pub coalesce: Duration,
    /// How the sender and the receiver talk to the sockets.
    pub io: Io,
    /// Most bytes a session may have produced and not yet written (see
    /// [`DEFAULT_MAX_UNSENT`]); a session that would queue more is
    /// dropped and counted as lost. Keep it well above a round's batch of
    /// orders (up to 256 per session), or a sender that falls behind drops
    /// its own session.
    pub max_unsent: usize,
}

/// The default [`Plan::max_unsent`]: 64 MiB per session.
///
/// A healthy run queues little: the orders of one round (a write per
/// session), or at most a window of them when the engine stops reading
/// (the default 100 orders are about 20 KB), and a few session messages.
/// What grows without bound is the engine's doing: fixcore's session
/// answers each ResendRequest with every message asked for, at once, so an
/// engine asking for 1..0 after every order grows the queue with the square
/// of the orders sent (2 GB in 13 s). A fixed bound rather than one derived
/// from window × order size: a resend's size follows from the orders sent
/// so far, not the window, and a bound near the window's size would drop a
/// session whose engine only paused reading. 64 MiB is far above any
/// healthy queue (a full window of 100,000 orders of 600 bytes), and costs
/// nothing until used.
pub const DEFAULT_MAX_UNSENT: usize = 64 << 20;

/// How the load generator's threads talk to the sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// io_uring where the kernel has it (with a timed wait, Linux 5.11),
    /// std calls otherwise.
    Auto,
    /// `send`/`recv`/`poll`.
    Std,
    /// One io_uring for the sender and one for the receiver; an error where
    /// the kernel has none.
    Uring,
}

/// The transport `io` comes to here, and its description for the report.
fn choose(io: Io) -> Result<(bool, String)> {
    const STD: &str = "std (send/recv/poll: one sender and one receiver thread for all sessions)";
    const URING: &str =
        "io_uring (one ring for the sender's SENDs, one for the receiver's RECVs; one thread each)";
    match (io, uring::probe()) {
        (Io::Std, _) => Ok((false, STD.into())),
        (Io::Uring | Io::Auto, Ok(())) => Ok((true, URING.into())),
        (Io::Uring, Err(why)) => bail!("--io io-uring: io_uring is not available here: {why}"),
        (Io::Auto, Err(why)) => Ok((false, format!("{STD}; io_uring not available: {why}"))),
    }
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

/// The most intervals a run keeps. Each holds two latency histograms
/// (about 0.5 MB), so memory stays bounded however long the run.
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
    /// Sessions lost before the run logged them out: [`Outcome::lost`]
    /// counted.
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
    /// How the threads talk to the sockets.
    pub transport: String,
    /// Times the sender woke and sent in the measured part.
    pub send_rounds: u64,
    /// Times the receiver woke with bytes to read in the measured part.
    pub receive_wakes: u64,
    /// How late the OS woke the sender behind the time it asked for, per
    /// round of the measured part.
    pub wake_late: Histogram<u64>,
    /// How long each round of the sender took in the measured part.
    pub round_time: Histogram<u64>,
    /// Sessions run.
    pub sessions: usize,
    /// Each session that ended before the run logged it out (the engine
    /// closed the connection or logged it out, the session disconnected,
    /// a read or write failed), with when and why.
    pub lost: Vec<Lost>,
}

/// A session that ended before the run logged it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// `SenderCompID->TargetCompID`.
    pub session: String,
    /// When, from the start of the run (the warm-up's first order; zero
    /// for a session lost while the others logged on).
    pub at: Duration,
    /// What ended it, as the generator saw it.
    pub why: String,
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "session {} lost at {:.2} s: {}",
            self.session,
            self.at.as_secs_f64(),
            self.why
        )
    }
}

impl Outcome {
    /// Orders sent in the measured part.
    pub fn sent(&self) -> u64 {
        self.total.sent
    }

    /// Orders of the measured part sent within [`LATE`] of their time.
    pub fn on_time(&self) -> u64 {
        self.sent() - self.total.late
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

/// The cores of the sender and of the receiver for [`Plan::pin`].
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
/// sessions lost during the run are counted in the outcome, not errors:
/// the caller reports them.
pub fn run<S: SessionStore + Send + 'static>(
    targets: Vec<Target<S>>,
    plan: &Plan,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Outcome> {
    if !(plan.rate.is_finite() && plan.rate > 0.0) {
        bail!("the rate must be a positive number of orders per second");
    }
    if plan.duration.is_zero() {
        bail!("the measured duration must be over zero");
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
            "{:?} of run and grace in intervals of {:?} is {} intervals; at most {MAX_INTERVALS} are kept (two histograms each): give a longer interval",
            plan.duration + plan.grace,
            plan.interval,
            intervals_kept(plan)
        );
    }
    let (use_uring, transport) = choose(plan.io)?;
    let k = targets.len();
    let mut links = Vec::with_capacity(k);
    for t in targets {
        let stream = TcpStream::connect((t.host.as_str(), t.port))
            .with_context(|| format!("{}: connecting to {}:{}", t.name, t.host, t.port))?;
        links.push(Link::connect(t.name, stream, t.session, plan)?);
    }
    let links = &links[..];
    let stop = AtomicBool::new(false);
    let schedule_cell = OnceLock::new();
    std::thread::scope(|scope| -> Result<Outcome> {
        // However this closure ends, the receiver must see it end, or the
        // scope would wait for it for ever.
        let _wind = WindDown { links, stop: &stop };
        let (send_core, recv_core) = cores(plan.pin);
        // The receiver first: it reads the Logon answers.
        let receiver = Receiver::new(links, &schedule_cell);
        let stop_r = &stop;
        let receiver = std::thread::Builder::new()
            .name("fix-load-recv".into())
            .spawn_scoped(scope, move || -> Result<receive::Received> {
                pin(recv_core)?;
                let mut reader = if use_uring {
                    Reader::Uring(Box::new(
                        uring::RecvRing::new(k).context("creating the receiver's io_uring")?,
                    ))
                } else {
                    Reader::Std
                };
                receiver.run(&mut reader, stop_r)
            })?;
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
        let sender = Sender::new(links, schedule, plan);
        let sender = std::thread::Builder::new()
            .name("fix-load-send".into())
            .spawn_scoped(scope, move || -> Result<send::Sent> {
                pin(send_core)?;
                send::tighten_timer();
                let mut writer = if use_uring {
                    Writer::Uring(Box::new(
                        uring::SendRing::new(k).context("creating the sender's io_uring")?,
                    ))
                } else {
                    Writer::Std
                };
                sender.run(&mut writer)
            })?;
        // The process CPU clock, read when measuring starts and when the
        // last measured order has gone out.
        let clock = CpuClock::Process;
        let (started, cpu0) = loop {
            let now = Instant::now();
            if now >= measure_from {
                break (SystemTime::now() - (now - measure_from), clock.read());
            }
            std::thread::sleep(measure_from - now);
        };
        // This thread wakes once per interval, for the progress line: its
        // wakes are CPU the generator's figure includes.
        while Instant::now() < end && !sender.is_finished() {
            std::thread::sleep(plan.interval.min(end - Instant::now()));
            let sent: u64 = links.iter().map(Link::sent).sum();
            let answered: u64 = links.iter().map(Link::answered).sum();
            progress(&format!(
                "{:.0} s: {sent} sent, {answered} answered",
                (Instant::now() - start).as_secs_f64()
            ));
        }
        let sent_side = sender
            .join()
            .map_err(|_| anyhow::anyhow!("the sender thread panicked"))??;
        // After the sender: held back, it sends its last orders after the
        // schedule's end, and that work is the run's too.
        let cpu1 = clock.read();
        // Wait for the answers still out, then log out. The sender has
        // ended, so this thread writes now.
        let deadline = Instant::now() + plan.grace;
        while Instant::now() < deadline && links.iter().any(|l| l.outstanding() > 0 && l.is_open())
        {
            links.iter().for_each(Link::flush);
            std::thread::sleep(Duration::from_millis(2));
        }
        links.iter().for_each(Link::logout);
        let bye = Instant::now() + Duration::from_secs(2);
        while Instant::now() < bye && links.iter().any(Link::is_open) {
            links.iter().for_each(Link::flush);
            std::thread::sleep(Duration::from_millis(2));
        }
        stop.store(true, Ordering::Relaxed);
        links.iter().for_each(Link::close);
        let recv_side = receiver
            .join()
            .map_err(|_| anyhow::anyhow!("the receiver thread panicked"))??;
        let cpu0 = cpu0.context("reading the process CPU clock")?;
        let cpu = cpu1
            .context("reading the process CPU clock")?
            .saturating_sub(cpu0);
        let mut intervals = recv_side.intervals;
        let measured_wall = sent_side.last_send.map_or(end, |l| l.max(end)) - measure_from;
        if intervals.len() < sent_side.intervals.len() {
            intervals.resize_with(sent_side.intervals.len(), Interval::new);
        }
        for (x, c) in intervals.iter_mut().zip(&sent_side.intervals) {
            x.sent += c.sent;
            x.late += c.late;
        }
        let mut total = Interval::new();
        for x in &intervals {
            total.add(x)?;
        }
        let answered = total.corrected.len();
        let lost: Vec<Lost> = links.iter().filter_map(|l| l.lost(start)).collect();
        Ok(Outcome {
            started,
            interval: plan.interval,
            intervals,
            answered,
            unanswered: total.sent.saturating_sub(answered),
            total,
            rejects: recv_side.rejects,
            disconnects: lost.len() as u64,
            max_lag: sent_side.max_lag,
            window_full: sent_side.window_full,
            cpu,
            measured: measured_wall,
            transport,
            send_rounds: sent_side.rounds,
            receive_wakes: recv_side.wakes,
            wake_late: sent_side.wake_late,
            round_time: sent_side.round_time,
            sessions: k,
            lost,
        })
    })
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
