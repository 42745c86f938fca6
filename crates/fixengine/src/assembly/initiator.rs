//! The initiator engine: every initiator session of a settings file,
//! each on a thread of its own, connecting (and reconnecting) to its
//! targets while this engine holds its lease.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fixcore::value::UtcTimestamp;
use fixsession::app::Application;
use fixsession::lease::{Standing, Vacancy};
use fixsession::log::Log;
use fixsession::machine::{Session, SessionError};
use fixsession::order_template::OrderFields;
use fixsession::settings::ConnectionType;
use fixsession::store::{AnyStore, SessionStore};

use super::error::Context;
use super::log::SessionLog;
use super::{
    AnyApp, EngineSettings, Error, Leasing, Opening, SharedConsole, engine_sessions, keeper,
    message_log, tls_for,
};
use crate::apps::{OrderResults, Orders};
use crate::connection::{self, ConnectionError, Options, Transport};
use crate::initiator::Targets;
use crate::tls::ClientTls;

/// Runs `session` over `stream` until the connection ends, then closes
/// it.
fn run_on<T: Transport>(
    mut stream: T,
    session: &mut Session<AnyStore>,
    app: &mut AnyApp,
    log: &mut SessionLog,
    opts: Options<'_>,
) -> Result<(), ConnectionError> {
    let res = connection::run(&mut stream, &[], session, app, log, opts);
    stream.close();
    res
}

/// Runs the initiator sessions of `engine`'s settings file: each
/// connects, reconnecting after ReconnectInterval when the connection
/// drops, until `stop` is set (it logs out) or its orders are all filled.
///
/// With [`EngineSettings::cpu_affinity`] every thread runs on those cores,
/// and a session with `PerfkitCpuAffinity` runs on its own.
pub fn run_initiator(
    engine: &EngineSettings,
    stop: &'static AtomicBool,
    console: SharedConsole,
) -> Result<Outcome, Error> {
    super::placed(engine, || initiate(engine, stop, console))
}

/// [`run_initiator`], on the thread as placed.
fn initiate(
    engine: &EngineSettings,
    stop: &'static AtomicBool,
    console: SharedConsole,
) -> Result<Outcome, Error> {
    // The GLOBAL log stays open, empty, as QuickFIX's initiator leaves
    // it: no initiator event is outside a session.
    let keeper = keeper(&console);
    let sessions = engine_sessions(
        &engine.settings,
        ConnectionType::Initiator,
        &Opening {
            recover: engine.recover_store,
            keep_sent: true,
            leasing: Leasing::Kept(&keeper),
        },
        &*console,
    )?
    .sessions;
    let messages = message_log(&engine.log)?;
    let latencies = latency_file(&engine.latencies)?;
    let fields = order_fields(&engine.order_template)?;
    let outcome = Mutex::new(Outcome::default());
    console.running();
    std::thread::scope(|scope| -> Result<(), Error> {
        let mut handles = Vec::new();
        for (s, mut session) in sessions {
            let Some(mut targets) = Targets::new(&s) else {
                return Err(Error::Refused(format!(
                    "{}: SocketConnectHost and SocketConnectPort are needed",
                    s.id()
                )));
            };
            let mut log = SessionLog::open(&s, &messages, &console)?;
            let mut a = match engine.orders {
                Some(n) => {
                    let mut o = Orders::new(n, engine.window).with_grace(engine.grace);
                    if let Some(f) = &fields {
                        o = o.with_fields(f.clone());
                    }
                    AnyApp::Orders(Box::new(timed(o, &latencies)))
                }
                None => AnyApp::new(engine.app),
            };
            let opts = Options {
                max_message: engine.max_message,
                spin: engine.spin,
                max_send_queue: engine.send_queue_limit,
                ..Options::for_session(&s, stop)
            };
            let tls = tls_for(engine, &s, &*console, ClientTls::new)?;
            let retry = Duration::from_secs(u64::from(s.reconnect_interval.max(1)));
            let console = &console;
            let outcome = &outcome;
            let placement = s.cpu_affinity.clone();
            handles.push(scope.spawn(move || -> Result<(), Error> {
                // Checked at start-up; only a mask changed since fails.
                if let Some(cores) = &placement
                    && let Err(e) = cores.place_current()
                {
                    log.event(
                        UtcTimestamp::now(),
                        &format!("{e}; the session runs where the engine's threads run"),
                    );
                }
                while !stop.load(Ordering::Relaxed) && !a.done() {
                    // Two engines never log on as one session: only the
                    // lease's holder connects.
                    if !hold_lease(&session, &mut log, stop) {
                        break;
                    }
                    // Outside StartTime/EndTime an initiator does not
                    // connect at all, as QuickFIX's does not.
                    if !await_session_time(&session, &mut log, stop) {
                        break;
                    }
                    let target = targets.next(std::time::Instant::now()).clone();
                    match crate::initiator::connect(&target, stop) {
                        Ok(stream) => {
                            // One `run` per transport, each compiled for it.
                            let res = match &tls {
                                None => run_on(stream, &mut session, &mut a, &mut log, opts),
                                Some(t) => t
                                    .connect(stream, &target.host)
                                    .map_err(ConnectionError::from)
                                    .and_then(|t| run_on(t, &mut session, &mut a, &mut log, opts)),
                            };
                            match res {
                                // A store that is away (a database
                                // restarting) ends this connection, not
                                // the session: it connects again, and
                                // the Logon reloads what it needs.
                                Err(ConnectionError::Session(SessionError::Store(e)))
                                    if e.is_transient() =>
                                {
                                    log.event(
                                        UtcTimestamp::now(),
                                        &format!("Disconnected: {e}; connecting again"),
                                    );
                                    log.flush();
                                }
                                res => res.context(|| format!("session {}", log.id()))?,
                            }
                            if a.done() {
                                break;
                            }
                        }
                        // The sentence names the address that failed:
                        // the source address a bind refused, or the
                        // destination.
                        Err(e) => log.event(UtcTimestamp::now(), &e.to_string()),
                    }
                    if a.done() {
                        break;
                    }
                    let deadline = std::time::Instant::now() + retry;
                    while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
                if let AnyApp::Orders(o) = &a {
                    report(&session, o, log.id(), console, outcome);
                }
                Ok(())
            }));
        }
        for h in handles {
            h.join().map_err(|_| Error::Panicked)??;
        }
        Ok(())
    })?;
    // Every session has logged out: a standby may take them at once.
    keeper.stop();
    if let (Some(f), Some(path)) = (latencies, &engine.latencies) {
        let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
        let flushed = f.out.flush();
        if let Some(e) = f.failed.take() {
            return Err(e).context(|| format!("writing {}", path.display()));
        }
        flushed.context(|| format!("writing {}", path.display()))?;
    }
    Ok(outcome.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// Tells the console how session `id`'s orders went (`answered N`, ...,
/// `seqs SENDER TARGET`) and adds them to `outcome`.
fn report(
    session: &Session<AnyStore>,
    o: &Orders,
    id: &str,
    console: &SharedConsole,
    outcome: &Mutex<Outcome>,
) {
    let st = session.store();
    let r = o.results();
    console.result(&format!("answered {}", r.filled));
    console.result(&format!("rejected {}", r.rejected));
    console.result(&format!("unanswered {}", r.unanswered));
    console.result(&format!("session rejects {}", session.rejects_received()));
    if let Some(t) = o.elapsed() {
        console.result(&format!("seconds {:.6}", t.as_secs_f64()));
    }
    console.result(&format!(
        "seqs {} {}",
        st.next_sender_seq(),
        st.next_target_seq()
    ));
    let mut out = outcome.lock().unwrap_or_else(|p| p.into_inner());
    out.add(id, &r, session.rejects_received());
}

/// How the initiator's orders went, over every session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// What went wrong with the orders, one clause per session that had
    /// rejected or unanswered orders or received a session Reject; empty
    /// when all were filled (or no orders were sent).
    pub failures: Vec<String>,
}

impl Outcome {
    fn add(&mut self, session: &str, r: &OrderResults, session_rejects: u64) {
        let mut why = Vec::new();
        if r.rejected > 0 {
            why.push(format!("{} of {} orders rejected", r.rejected, r.sent));
        }
        if r.unanswered > 0 {
            why.push(format!("{} orders unanswered", r.unanswered));
        }
        if session_rejects > 0 {
            why.push(format!("{session_rejects} session Reject(s) received"));
        }
        if r.business_rejects > 0 && r.rejected == 0 {
            why.push(format!(
                "{} BusinessMessageReject(s) received",
                r.business_rejects
            ));
        }
        if why.is_empty() {
            return;
        }
        let reason = r
            .first_reason
            .as_deref()
            .map(|t| format!(" (first reason: {t})"))
            .unwrap_or_default();
        self.failures
            .push(format!("{session}: {}{reason}", why.join(", ")));
    }
}

/// The order template's fields, when `--order-template` names one.
fn order_fields(path: &Option<PathBuf>) -> Result<Option<OrderFields>, Error> {
    let Some(path) = path else { return Ok(None) };
    let text = crate::whole_file::read(path, crate::whole_file::Kind::OrderTemplate)
        .context(|| format!("reading {}", path.display()))?;
    fixsession::order_template::parse_template(&text)
        .map(Some)
        .map_err(|e| Error::Refused(format!("{}: {e}", path.display())))
}

/// The `--latencies` file, shared by the sessions' threads, with the
/// first write error (kept for the end: a round trip's callback cannot
/// fail the session).
struct Latencies {
    out: BufWriter<File>,
    failed: Option<std::io::Error>,
}

type LatencyFile = Arc<Mutex<Latencies>>;

fn latency_file(path: &Option<PathBuf>) -> Result<Option<LatencyFile>, Error> {
    path.as_ref()
        .map(|p| {
            let f = File::create(p).context(|| format!("creating {}", p.display()))?;
            Ok(Arc::new(Mutex::new(Latencies {
                out: BufWriter::new(f),
                failed: None,
            })))
        })
        .transpose()
}

/// `orders`, timing each round trip into the latencies file if one was
/// asked for.
fn timed(orders: Orders, file: &Option<LatencyFile>) -> Orders {
    match file {
        Some(f) => {
            let f = f.clone();
            orders.time_round_trips(Box::new(move |t| {
                let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
                if f.failed.is_none()
                    && let Err(e) = writeln!(f.out, "{}", t.as_nanos())
                {
                    f.failed = Some(e);
                }
            }))
        }
        None => orders,
    }
}

/// Waits until this engine holds the lease of `session` (at once for a
/// store no other engine shares); false when `stop` came first. One
/// event line while it waits, and one each time the reason changes
/// (none before the keeper's first look, a moment after start-up).
fn hold_lease(session: &Session<AnyStore>, log: &mut SessionLog, stop: &AtomicBool) -> bool {
    let mut said = Vacancy::Unlooked;
    while !stop.load(Ordering::Relaxed) {
        let vacancy = match session.store().standing() {
            Standing::NotHeld(v) => v,
            _ => return true,
        };
        if vacancy != std::mem::replace(&mut said, vacancy) {
            let why = match vacancy {
                Vacancy::Unlooked | Vacancy::Busy => "another engine serves it",
                Vacancy::Unusable => {
                    "no engine can serve it: its lease record is unusable (the lease keeper's \
                     line names the record and why)"
                }
                Vacancy::Unreachable => {
                    "its lease's database is out of reach (the lease keeper's line says what \
                     it answered)"
                }
            };
            log.event(
                UtcTimestamp::now(),
                &format!("Waiting for the session's lease: {why}"),
            );
            log.flush();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Waits, not connected, until `session`'s StartTime/EndTime window is
/// open, saying so in one event line; false when `stop` was set first.
fn await_session_time(
    session: &Session<AnyStore>,
    log: &mut SessionLog,
    stop: &AtomicBool,
) -> bool {
    let mut said = false;
    while !session.is_session_time(UtcTimestamp::now()) {
        if !said {
            log.event(
                UtcTimestamp::now(),
                "Outside of session time (StartTime/EndTime): not connecting until it begins",
            );
            log.flush();
            said = true;
        }
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    !stop.load(Ordering::Relaxed)
}
