//! The FIX load generator: initiator sessions that send NewOrderSingles
//! to an engine on a fixed schedule (open loop) and time each order to its
//! first ExecutionReport, matched by ClOrdID; `perfkit fix load` runs it.
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
//! (`send`) keeps the schedule of every session and writes, the receiver
//! (`receive`) reads every connection, feeds the session state machines
//! and times the answers. Each session's state (`link::Link`) is shared
//! under a lock held only to build or to process messages. On this kind
//! of machine a thread's wake from sleep costs more CPU than an order, so
//! the thread count, not the session count, sets the generator's cost.
//!
//! The two talk to the sockets through std calls or through one io_uring
//! each (`uring`, over `perfkit_uring`, which holds the rings' `unsafe`),
//! chosen at run time ([`Io`]) and named in the outcome.
//!
//! - [`run`]: one [`Plan`] against a list of [`Target`]s, into an
//!   [`Outcome`] (latencies by interval, counts, the sessions it lost);
//! - [`Settings`]: a sweep, the same plan at several rates, as a user
//!   chooses it ([`parse_rate`] and [`parse_template`] read what they
//!   write);
//! - [`verdict`]: whether each run held its rate, what held it back (the
//!   engine or the generator), and the sweep's saturation point;
//! - [`floor`]: what the same I/O cost with no FIX work (measured by
//!   `perfkit_bench::fix::floor`), for the generator's CPU per order as a
//!   ratio;
//! - [`sweep`]: a sweep's runs as a `perfkit_report` report, with the
//!   problems to fail on.
//!
//! A run of 300 ms at 1,000 orders/s against an exchange on loopback
//! (fixcore's, which fills every order; its set-up is hidden):
//!
//! ```
//! # use std::net::TcpListener;
//! # use std::sync::atomic::AtomicBool;
//! # use fixengine::apps::Exchange;
//! # use fixsession::log::Discard;
//! # use fixengine::connection::{self, Options};
//! # use fixsession::machine::{Config, Role, Session};
//! # use fixsession::store::MemoryStore;
//! # use fixcore::version::BeginString;
//! # let listener = TcpListener::bind("127.0.0.1:0")?;
//! # let port = listener.local_addr()?.port();
//! # std::thread::spawn(move || {
//! #     static STOP: AtomicBool = AtomicBool::new(false);
//! #     let (mut stream, _) = listener.accept().unwrap();
//! #     let cfg = Config::new(Role::Acceptor, BeginString::Fix44, "EXCH", "LOAD");
//! #     let mut session = Session::new(cfg, MemoryStore::default());
//! #     let opts = Options::new(&STOP);
//! #     let app = &mut Exchange::default();
//! #     let _ = connection::run(&mut stream, &[], &mut session, app, &mut Discard, opts);
//! # });
//! use std::time::Duration;
//! use fixload::{Settings, Target, Verdict};
//!
//! let config = Config::new(Role::Initiator, BeginString::Fix44, "LOAD", "EXCH");
//! let target = Target {
//!     name: "LOAD->EXCH".into(),
//!     host: "127.0.0.1".into(),
//!     port,
//!     session: Session::new(config, MemoryStore::default()),
//! };
//! let mut settings = Settings::new(vec![fixload::parse_rate("1k/s")?]);
//! settings.run.warmup = Duration::ZERO;
//! settings.run.duration = Duration::from_millis(300);
//! let plan = settings.plan(settings.rates[0]);
//! let outcome = fixload::run(vec![target], &plan, &|_progress| {})?;
//! assert_eq!(outcome.sent(), 300);
//! assert_eq!(outcome.unanswered, 0);
//! let verdict = Verdict::of(&outcome, plan.rate);
//! println!("{}", verdict.explain(&outcome, plan.rate));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Nothing here prints or exits: errors are [`Error`]s, and what an engine
//! does wrong during a run (unanswered orders, rejects, dropped sessions)
//! is counted in the outcome for the caller to report.

mod error;
pub mod floor;
mod link;
mod outcome;
mod plan;
mod rate;
mod receive;
mod send;
mod slots;
pub mod sweep;
mod uring;
pub mod verdict;

pub use error::{Error, Result};
pub use fixsession::order_template::parse_template;
pub use floor::Floor;
pub use outcome::{Interval, LATE, Lost, MAX_INTERVALS, Outcome};
pub use plan::{DEFAULT_MAX_UNSENT, Io, Plan, Settings};
pub use rate::parse_rate;
pub use sweep::{Sweep, Swept};
pub use verdict::{Limit, Verdict};

use std::net::TcpStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use fixsession::machine::Session;
use fixsession::settings::SessionSettings;
use fixsession::store::SessionStore;

use link::Link;
use perfkit_measure::clock::CpuClock;
use receive::{Reader, Receiver};
use send::{Sender, Writer};

/// The transport `io` comes to here, and its description for the report.
fn choose(io: Io) -> Result<(bool, String)> {
    const STD: &str = "std (send/recv/poll: one sender and one receiver thread for all sessions)";
    const URING: &str =
        "io_uring (one ring for the sender's SENDs, one for the receiver's RECVs; one thread each)";
    match (io, uring::probe()) {
        (Io::Std, _) => Ok((false, STD.into())),
        (Io::Uring | Io::Auto, Ok(())) => Ok((true, URING.into())),
        (Io::Uring, Err(why)) => Err(Error::UringUnavailable(why)),
        (Io::Auto, Err(why)) => Ok((false, format!("{STD}; io_uring not available: {why}"))),
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

impl<S: SessionStore> Target<S> {
    /// The target of one initiator session of the settings `file` (named
    /// in the errors): where it connects, SocketConnectHost and
    /// SocketConnectPort, and its session. A TLS session is refused, and
    /// one without a host and port; see [`ignored_keys`] for the keys the
    /// generator does not act on.
    pub fn from_settings(
        file: &std::path::Path,
        settings: &SessionSettings,
        session: Session<S>,
    ) -> Result<Target<S>> {
        if settings.tls.enabled {
            return Err(Error::Tls {
                file: file.to_owned(),
                session: settings.id(),
            });
        }
        let (Some(host), Some(port)) = (
            settings.socket_connect_host.clone(),
            settings.socket_connect_port,
        ) else {
            return Err(Error::NoAddress {
                session: settings.id(),
            });
        };
        Ok(Target {
            name: settings.id(),
            host,
            port,
            session,
        })
    }
}

/// The keys of these initiator sessions' settings the generator does not
/// act on, a sentence each, for a warning per settings file rather than
/// taking them silently: its links connect from the system's choice of
/// address to the first host.
pub fn ignored_keys<'a>(
    sessions: impl Clone + Iterator<Item = &'a SessionSettings>,
) -> Vec<&'static str> {
    let ignored = [
        (
            sessions
                .clone()
                .flat_map(|s| &s.connect_targets)
                .any(|t| t.source_host.is_some() || t.source_port.is_some()),
            "SocketConnectSourceHost and SocketConnectSourcePort have no effect here: fix load \
             connects from the system's choice of address and port",
        ),
        (
            sessions.clone().any(|s| s.connect_targets.len() > 1),
            "SocketConnectHost<n> has no effect here: fix load connects to SocketConnectHost \
             and SocketConnectPort only",
        ),
    ];
    ignored
        .into_iter()
        .filter_map(|(found, why)| found.then_some(why))
        .collect()
}

/// The intervals `plan` keeps: the run and its grace period, plus one for
/// what arrives later still.
fn intervals_kept(plan: &Plan) -> usize {
    let n = (plan.duration + plan.grace).as_nanos() / plan.interval.as_nanos().max(1);
    usize::try_from(n).unwrap_or(usize::MAX).saturating_add(2)
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
        fixcore::affinity::pin_current(c).map_err(|source| Error::Pin { core: c, source })?;
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
    let mut targets = targets;
    run_keeping(&mut targets, plan, progress)
}

/// [`run`], giving the sessions back in `targets` once it is over (logged
/// out and disconnected), so that the next run (a sweep's next rate) logs
/// the same sessions on again with their numbers carrying on, as a real
/// counterparty's would, rather than at 1 (which a stateful engine
/// refuses as too low, unless the sessions reset on Logon). When the run
/// fails, `targets` is left empty.
pub fn run_keeping<S: SessionStore + Send + 'static>(
    targets: &mut Vec<Target<S>>,
    plan: &Plan,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Outcome> {
    validate(targets, plan)?;
    let (use_uring, transport) = choose(plan.io)?;
    let addresses: Vec<(String, String, u16)> = targets
        .iter()
        .map(|t| (t.name.clone(), t.host.clone(), t.port))
        .collect();
    let owned = connect(std::mem::take(targets), plan)?;
    let outcome = measure(&owned, plan, progress, use_uring, transport);
    if outcome.is_ok() {
        *targets = owned
            .into_iter()
            .zip(addresses)
            .map(|(link, (name, host, port))| Target {
                name,
                host,
                port,
                session: link.into_session(),
            })
            .collect();
    }
    outcome
}

/// The run itself, over connected `links`.
fn measure<S: SessionStore + Send + 'static>(
    links: &[Link<S>],
    plan: &Plan,
    progress: &(dyn Fn(&str) + Sync),
    use_uring: bool,
    transport: String,
) -> Result<Outcome> {
    let k = links.len();
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
                        uring::RecvRing::new(k)
                            .map_err(Error::os("creating the receiver's io_uring"))?,
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
                        uring::SendRing::new(k)
                            .map_err(Error::os("creating the sender's io_uring"))?,
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
            .map_err(|_| Error::Thread("the sender thread panicked"))??;
        // After the sender: held back, it sends its last orders after the
        // schedule's end, and that work is the run's too.
        let cpu1 = clock.read();
        log_out(links, plan);
        stop.store(true, Ordering::Relaxed);
        links.iter().for_each(Link::close);
        let recv_side = receiver
            .join()
            .map_err(|_| Error::Thread("the receiver thread panicked"))??;
        let clock_read = Error::os("reading the process CPU clock");
        let cpu = match (cpu0, cpu1) {
            (Ok(a), Ok(b)) => b.saturating_sub(a),
            (Err(e), _) | (_, Err(e)) => return Err(clock_read(e)),
        };
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
            first_reject: recv_side.first_reject,
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
            order_size: mean(sent_side.built_bytes, sent_side.built),
            report_size: mean(recv_side.report_bytes, recv_side.reports),
            lost,
        })
    })
}

/// Refuses a plan that cannot run, before anything connects.
fn validate<S: SessionStore>(targets: &[Target<S>], plan: &Plan) -> Result<()> {
    let refuse = |why: &str| Err(Error::Plan(why.into()));
    if !(plan.rate.is_finite() && plan.rate > 0.0) {
        return refuse("the rate must be a positive number of orders per second");
    }
    if plan.duration.is_zero() {
        return refuse("the measured duration must be over zero");
    }
    if targets.is_empty() {
        return refuse("no initiator session to run");
    }
    // Checked before connecting: a thread that failed to pin would show
    // up only as a session that never logged on.
    if let Some(c) = plan.pin {
        let usable = fixcore::affinity::usable();
        if !usable.contains(&c) {
            return Err(Error::CoreNotUsable { core: c, usable });
        }
    }
    if plan.interval < Duration::from_millis(1) {
        return refuse("the interval must be at least 1 ms");
    }
    if intervals_kept(plan) > MAX_INTERVALS {
        return refuse(&format!(
            "{:?} of run and grace in intervals of {:?} is {} intervals; at most {MAX_INTERVALS} are kept (two histograms each): give a longer interval",
            plan.duration + plan.grace,
            plan.interval,
            intervals_kept(plan)
        ));
    }
    Ok(())
}

/// Connects every target and starts its Logon.
fn connect<S: SessionStore + Send + 'static>(
    targets: Vec<Target<S>>,
    plan: &Plan,
) -> Result<Vec<Link<S>>> {
    let mut links = Vec::with_capacity(targets.len());
    for t in targets {
        let stream = match TcpStream::connect((t.host.as_str(), t.port)) {
            Ok(s) => s,
            Err(source) => {
                return Err(Error::Connect {
                    session: t.name,
                    host: t.host,
                    port: t.port,
                    source,
                });
            }
        };
        links.push(Link::connect(t.name, stream, t.session, plan)?);
    }
    Ok(links)
}

/// Waits (up to the plan's grace) for the answers still out, then logs
/// every session out and waits up to 2 s for the Logouts to go. The sender
/// has ended, so the calling thread writes now.
fn log_out<S: SessionStore>(links: &[Link<S>], plan: &Plan) {
    let deadline = Instant::now() + plan.grace;
    while Instant::now() < deadline && links.iter().any(|l| l.outstanding() > 0 && l.is_open()) {
        links.iter().for_each(Link::flush);
        std::thread::sleep(Duration::from_millis(2));
    }
    links.iter().for_each(Link::logout);
    let bye = Instant::now() + Duration::from_secs(2);
    while Instant::now() < bye && links.iter().any(Link::is_open) {
        links.iter().for_each(Link::flush);
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `total / count` rounded, 0 for no count.
fn mean(total: u64, count: u64) -> u64 {
    (total + count / 2).checked_div(count).unwrap_or(0)
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
