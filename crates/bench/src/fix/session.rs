//! The `session` part of `perfkit fix bench`: whole FIX engines over loopback, each an
//! initiator process sending NewOrderSingles to an acceptor process that
//! answers each with ExecutionReports (new, then filled), the same way for
//! every pairing of perfkit and QuickFIX/C++ (the `quickfix-session` peer
//! that `cargo xtask peers` builds).
//!
//! Per pairing and round, against one acceptor process:
//! - a latency phase: one order in flight at a time; each order's round
//!   trip (sent to its first ExecutionReport, timed by the initiator) goes
//!   into the pairing's histogram;
//! - a throughput phase: `window` unfilled orders in flight; orders per
//!   second from the first order sent to the last one filled (the
//!   initiator's clock), and the acceptor's CPU time over the phase read
//!   from its process CPU clock (every thread, exited ones included)
//!   divided by the orders.
//!
//! Both engines run with in-memory stores (but for one perfkit ↔
//! perfkit row whose acceptor keeps a `FileStorePath` store, one whose
//! acceptor keeps its store in PostgreSQL, in a temporary cluster the run
//! starts (QuickFIX's tables; commits reach the kernel, not the disk, as
//! the file store's do), and one
//! whose sessions run over TLS, `SocketUseSSL=Y`, on certificates the
//! `openssl` CLI makes for the run), no data dictionary,
//! ResetOnLogon and SocketNodelay, from the same QuickFIX settings files.
//! In the latency phase the perfkit initiator busy-polls its socket for
//! up to [`Load::spin`] ([`INITIATOR_SPIN`] unless `fix bench --spin`
//! says otherwise) before blocking (`--spin`), as a latency-bound client
//! of a perfkit engine would be set up; QuickFIX has no such setting. In
//! the throughput phase it blocks, and the acceptors, whose CPU is
//! measured, always block at once.
//!
//! Beside the pairings, each run also times the round trip's floor
//! (`floor`): the same exchange in C with no FIX work, waiting as the
//! perfkit initiator does.

mod acceptor;
mod floor;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

pub(super) use acceptor::Acceptor;

use crate::error::{Error, IoContext, Result, StepContext};
use crate::invocation::{Invocation, Launcher};
use crate::peer::{self, QUICKFIX_SESSION, Unavailable};
use crate::rounds::alternating;
use perfkit_measure::latency_histogram;
use perfkit_report::one_line;

/// How the notes name the peer when its rows are left out.
const LABEL: &str = "QuickFIX session engine";

/// The perfkit initiator's `--spin` in the latency phase by default: on
/// this kind of virtual machine a thread blocked in `poll` takes tens of
/// microseconds to wake when its CPU sits idle, which was most of a
/// one-at-a-time round trip. 100 µs covers the acceptor's answer, so the
/// initiator's own wake-up drops out.
pub const INITIATOR_SPIN: Duration = Duration::from_micros(100);

/// How many orders each phase sends, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Load {
    /// Orders in the latency phase (one in flight).
    pub latency_orders: u64,
    /// Orders in the throughput phase.
    pub orders: u64,
    /// Unfilled orders in flight in the throughput phase.
    pub window: u64,
    /// Rounds; the pairings alternate their order from round to round.
    pub runs: usize,
    /// How long the perfkit initiator (and the floor's) busy-polls its
    /// socket in the latency phase before blocking; zero blocks at once.
    pub spin: Duration,
}

/// Which engine plays a side.
#[derive(Clone)]
pub(super) enum Engine<'a> {
    /// The `perfkit` binary, as its launcher starts it.
    Perfkit(&'a dyn Launcher),
    /// The QuickFIX peer program.
    Quickfix(PathBuf),
}

impl Engine<'_> {
    fn name(&self) -> &'static str {
        match self {
            Engine::Perfkit(_) => "perfkit",
            Engine::Quickfix(_) => "QuickFIX",
        }
    }
}

/// What a pairing's sessions run on besides the two engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// Plain TCP, in-memory stores.
    Plain,
    /// The acceptor keeps a `FileStorePath` store: what a session that
    /// must survive a restart pays.
    FileStore,
    /// The acceptor keeps its store in PostgreSQL (`PostgreSQLStore*`):
    /// what a session a standby can take over pays.
    Postgres,
    /// TLS both ways (rustls on each side): what encryption costs.
    Tls,
}

/// One pairing's figures over every round.
pub struct Pairing {
    /// `initiator ↔ acceptor`.
    pub name: String,
    /// Whether both sides are QuickFIX (the reference row).
    pub reference: bool,
    /// Round trips of the latency phases, in ns.
    pub round_trips: Histogram<u64>,
    /// Each round's median round trip, in ns, in round order.
    pub p50_rounds: Vec<u64>,
    /// Wall time of the latency phases.
    pub latency_elapsed: Duration,
    /// Orders per second, one per round.
    pub orders_per_s: Vec<f64>,
    /// The acceptor's CPU per order, one per round.
    pub acceptor_cpu: Vec<Duration>,
    /// The database server's CPU per order, one per round (the
    /// PostgreSQL store's row only).
    pub database_cpu: Vec<Duration>,
}

/// The session part's result: the pairings measured, and why QuickFIX's
/// were left out if they were.
pub struct Measured {
    /// In the order perfkit↔perfkit, perfkit↔perfkit with the acceptor on
    /// a file store, perfkit↔QuickFIX, QuickFIX↔perfkit, QuickFIX↔QuickFIX
    /// (the last three only with the peer).
    pub pairings: Vec<Pairing>,
    /// Where the engines ran, in words for the rows' notes.
    pub placement: String,
    /// The note replacing the QuickFIX pairings.
    pub missing: Option<String>,
    /// The note replacing the TLS pairing (no `openssl` to make its
    /// certificates).
    pub tls_missing: Option<String>,
    /// The note replacing the PostgreSQL store's pairing (no PostgreSQL
    /// to start).
    pub postgres_missing: Option<String>,
    /// The median round trip of one empty commit to the PostgreSQL store
    /// row's cluster, timed in the same run (with the row).
    pub empty_commit: Option<Duration>,
    /// The round trips of the floor program (`floor`), every run's,
    /// with the sizes it exchanged; or the note saying why it was not run.
    pub floor: std::result::Result<Floor, String>,
}

/// The round trip's floor over every run.
pub struct Floor {
    /// Round trips, in ns.
    pub round_trips: Histogram<u64>,
    /// Wall time of its runs.
    pub elapsed: Duration,
    /// The order's and each answer's size, in bytes.
    pub sizes: (usize, usize),
}

/// Empty commits timed for [`Measured::empty_commit`].
const EMPTY_COMMITS: usize = 1_000;

/// Runs every pairing `load.runs` times; `perfkit` starts perfkit's side.
pub fn measure(load: Load, perfkit: &dyn Launcher) -> Result<Measured> {
    // Every process this part starts (the engines, the database, the
    // floor) starts from the mask the process started with, not from the
    // measuring thread's `--pin`; each pairing's two engines then get a
    // core each where two are usable.
    fixcore::affinity::with_placement(None, || measure_placed(load, perfkit))
        .map_err(|e| Error::Program(format!("placing the session engines: {e}")))?
}

/// [`measure`] on the process's original mask.
fn measure_placed(load: Load, perfkit: &dyn Launcher) -> Result<Measured> {
    let placed = fixcore::affinity::pair(None);
    let ours = Engine::Perfkit(perfkit);
    let peer = peer::start_or_note(
        QUICKFIX_SESSION,
        LABEL,
        " (needs g++ and libquickfix-dev)",
        |exe| Ok(exe.to_owned()),
    );
    let dir = tempfile::tempdir().doing("creating a directory for the session settings")?;
    // (initiator, acceptor, variant).
    let mut sides = vec![
        (ours.clone(), ours.clone(), Variant::Plain),
        (ours.clone(), ours.clone(), Variant::FileStore),
    ];
    let cluster = super::pg::Cluster::start();
    let postgres_missing = match &cluster {
        Ok(_) => {
            sides.push((ours.clone(), ours.clone(), Variant::Postgres));
            None
        }
        Err(e) => Some(format!(
            "perfkit ↔ perfkit with the acceptor's store in PostgreSQL not measured: {}",
            one_line(e)
        )),
    };
    let cluster = cluster.ok();
    let floor_program = peer::start_or_note(
        peer::ROUNDTRIP_FLOOR,
        "the round trip's floor (C, no FIX work)",
        " (needs a C compiler)",
        |exe| Ok(exe.to_owned()),
    );
    let mut floor = Floor {
        round_trips: latency_histogram(),
        elapsed: Duration::ZERO,
        sizes: floor::message_sizes(),
    };
    let tls_missing = match certificates(dir.path()) {
        Ok(()) => {
            sides.push((ours.clone(), ours.clone(), Variant::Tls));
            None
        }
        Err(e) => Some(format!(
            "perfkit ↔ perfkit over TLS not measured: {}",
            one_line(&e)
        )),
    };
    let missing = match peer {
        Ok(qf) => {
            let qf = Engine::Quickfix(qf);
            sides.push((ours.clone(), qf.clone(), Variant::Plain));
            sides.push((qf.clone(), ours, Variant::Plain));
            sides.push((qf.clone(), qf.clone(), Variant::Plain));
            // QuickFIX's FileStore (FileStoreSync=N, its default: into the
            // kernel, as the PostgreSQL cluster's commits are).
            sides.push((qf.clone(), qf, Variant::FileStore));
            None
        }
        Err(Unavailable(why)) => Some(why),
    };
    let mut pairings: Vec<Pairing> = sides
        .iter()
        .map(|(i, a, variant)| Pairing {
            name: format!(
                "{} initiator ↔ {} acceptor{}",
                i.name(),
                a.name(),
                match variant {
                    Variant::Plain => "",
                    Variant::FileStore => ", FileStorePath",
                    Variant::Postgres => ", PostgreSQL store",
                    Variant::Tls => ", TLS",
                }
            ),
            reference: matches!((i, a), (Engine::Quickfix(_), Engine::Quickfix(_)))
                && *variant == Variant::Plain,
            round_trips: latency_histogram(),
            p50_rounds: Vec::new(),
            latency_elapsed: Duration::ZERO,
            orders_per_s: Vec::new(),
            acceptor_cpu: Vec::new(),
            database_cpu: Vec::new(),
        })
        .collect();
    for run in 0..load.runs {
        for i in alternating(sides.len(), run) {
            let (initiator, acceptor, variant) = &sides[i];
            one_round(
                initiator,
                acceptor,
                *variant,
                load,
                dir.path(),
                cluster.as_ref(),
                placed,
                &mut pairings[i],
            )
            .during_with(|| format!("session bench, {}", pairings[i].name))?;
        }
        if let Ok(exe) = &floor_program {
            floor::round(exe, load, dir.path(), &mut floor)
                .during("session bench, the round trip's floor")?;
        }
    }
    let empty_commit = match &cluster {
        Some(c) => Some(c.empty_commit(EMPTY_COMMITS)?),
        None => None,
    };
    Ok(Measured {
        pairings,
        placement: match placed {
            Some((ini, acc)) => format!(
                "the initiator's process pinned to core {ini} and the acceptor's to core {acc} \
                 (every thread of each); the database and the floor on the process's original mask"
            ),
            None => fixcore::affinity::pair_note(None),
        },
        missing,
        tls_missing,
        postgres_missing,
        empty_commit,
        floor: floor_program.map(|_| floor).map_err(|Unavailable(why)| why),
    })
}

/// Makes the TLS pairing's certificates in `dir` with the `openssl` CLI:
/// a CA (`ca.pem`) and a certificate for 127.0.0.1 it signs
/// (`server.pem`, `server.key`), P-256 keys.
fn certificates(dir: &Path) -> Result<()> {
    let run = |args: &[&str]| -> Result<()> {
        let out = Command::new("openssl")
            .current_dir(dir)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .doing("running openssl")?;
        if !out.status.success() {
            return Err(Error::Program(format!(
                "openssl {}: {}",
                args[0],
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(())
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    run(&[
        &["req", "-x509"][..],
        &ec,
        &[
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=perfkit bench CA",
        ],
    ]
    .concat())?;
    run(&[
        &["req"][..],
        &ec,
        &[
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    ]
    .concat())?;
    std::fs::write(dir.join("server.ext"), "subjectAltName=IP:127.0.0.1\n")
        .doing("writing server.ext")?;
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ])
}

/// One round of one pairing: a fresh acceptor, the latency phase, the
/// throughput phase.
// Each argument is one of the run's settings; a struct would only rename them.
#[allow(clippy::too_many_arguments)]
fn one_round(
    initiator: &Engine,
    acceptor: &Engine,
    variant: Variant,
    load: Load,
    dir: &Path,
    cluster: Option<&super::pg::Cluster>,
    placed: Option<(usize, usize)>,
    into: &mut Pairing,
) -> Result<()> {
    let (ini_core, acc_core) = placed.map_or((None, None), |(i, a)| (Some(i), Some(a)));
    let port = free_port()?;
    let store = match (variant, cluster) {
        (Variant::Postgres, Some(c)) => c.store_settings(),
        (Variant::Postgres, None) => {
            return Err(Error::Invalid(
                "no PostgreSQL cluster for its row".to_owned(),
            ));
        }
        _ => String::new(),
    };
    let acc_cfg = settings(dir, "acceptor", port, variant, &store)?;
    let ini_cfg = settings(dir, "initiator", port, variant, "")?;
    let server = Acceptor::start(acceptor, &acc_cfg, &dir.join("acceptor.log"), acc_core)?;
    let latencies = dir.join("latencies");
    let started = Instant::now();
    run_initiator(
        initiator,
        &ini_cfg,
        load.latency_orders,
        1,
        load.spin,
        &latencies,
        dir,
        ini_core,
    )?;
    into.latency_elapsed += started.elapsed();
    let mut round = latency_histogram();
    let n = record_round_trips(&latencies, &mut round)?;
    into.p50_rounds.push(round.value_at_quantile(0.5));
    let _ = into.round_trips.add(&round);
    if n != load.latency_orders {
        return Err(Error::Mismatch(format!(
            "the {} initiator timed {n} round trips of {} orders",
            initiator.name(),
            load.latency_orders
        )));
    }
    let before = server.cpu()?;
    let db_before = match (variant, cluster) {
        (Variant::Postgres, Some(c)) => Some(c.cpu()?),
        _ => None,
    };
    let seconds = run_initiator(
        initiator,
        &ini_cfg,
        load.orders,
        load.window,
        Duration::ZERO,
        &latencies,
        dir,
        ini_core,
    )?;
    let cpu = server.cpu()?.saturating_sub(before);
    let per_order = |d: Duration| d / u32::try_from(load.orders.max(1)).unwrap_or(u32::MAX);
    if let (Some(b), Some(c)) = (db_before, cluster) {
        into.database_cpu
            .push(per_order(c.cpu()?.saturating_sub(b)));
    }
    server.stop()?;
    into.orders_per_s
        .push(load.orders as f64 / seconds.max(1e-9));
    into.acceptor_cpu.push(per_order(cpu));
    Ok(())
}

/// Waits for `child`, a program that times `orders` orders itself, for a
/// generous minute plus a millisecond an order; past that it is killed and
/// the answer is `None`. `what` names it in an error.
fn wait_for_orders(child: &mut Child, orders: u64, what: &str) -> Result<Option<ExitStatus>> {
    let deadline = Instant::now() + Duration::from_secs(60) + Duration::from_millis(orders);
    loop {
        if let Some(status) = child
            .try_wait()
            .doing_with(|| format!("waiting for {what}"))?
        {
            return Ok(Some(status));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        // Coarse: the program times itself; this only notices the end.
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Records each round trip of `latencies` (ns, one a line, as the
/// initiators and the floor write them) into `into`; returns how many.
fn record_round_trips(latencies: &Path, into: &mut Histogram<u64>) -> Result<u64> {
    let text = std::fs::read_to_string(latencies)
        .doing_with(|| format!("reading {}", latencies.display()))?;
    let mut n = 0u64;
    for line in text.lines() {
        let ns: u64 = line.trim().parse().map_err(|source| Error::Number {
            what: format!("a round trip of {line:?} ns"),
            source,
        })?;
        into.saturating_record(ns.max(1));
        n += 1;
    }
    Ok(n)
}

/// A port nobody listens on now (the acceptor binds it right after; see
/// [`perfkit_peers::port`]).
pub(crate) fn free_port() -> Result<u16> {
    perfkit_peers::port::unclaimed().doing("finding a free port")
}

/// A QuickFIX settings file both engines read: one FIX.4.4 session, a
/// memory store (an acceptor's `FileStorePath` in `dir` for
/// [`Variant::FileStore`]), no dictionary, ResetOnLogon so each initiator
/// run starts at 1, TCP_NODELAY (QuickFIX's default is off, which puts
/// Nagle's algorithm and delayed acknowledgements, tens of ms, into its
/// round trips); for [`Variant::Tls`], `SocketUseSSL=Y` with the acceptor
/// presenting `server.pem` and the initiator checking it against
/// `ca.pem`. `extra` is more lines for the file (the PostgreSQL store's).
fn settings(dir: &Path, role: &str, port: u16, variant: Variant, extra: &str) -> Result<PathBuf> {
    let (sender, target, socket) = match role {
        "initiator" => (
            "BENCH",
            "EXCH",
            format!("SocketConnectHost=127.0.0.1\nSocketConnectPort={port}\nReconnectInterval=1\n"),
        ),
        _ => ("EXCH", "BENCH", format!("SocketAcceptPort={port}\n")),
    };
    let socket = match (variant, role) {
        (Variant::FileStore, "acceptor") => format!(
            "{socket}FileStorePath={}\n",
            dir.join(format!("store-{port}")).display()
        ),
        (Variant::Tls, _) => format!(
            "{socket}SocketUseSSL=Y\nServerCertificateFile={0}/server.pem\n\
             ServerCertificateKeyFile={0}/server.key\nCertificationAuthoritiesFile={0}/ca.pem\n",
            dir.display()
        ),
        _ => socket,
    };
    let path = dir.join(format!("{role}.cfg"));
    std::fs::write(
        &path,
        format!(
            "[DEFAULT]\nConnectionType={role}\n{socket}{extra}HeartBtInt=30\nStartTime=00:00:00\n\
             EndTime=00:00:00\nUseDataDictionary=N\nResetOnLogon=Y\nSocketNodelay=Y\n\n[SESSION]\n\
             BeginString=FIX.4.4\nSenderCompID={sender}\nTargetCompID={target}\n"
        ),
    )
    .doing_with(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// Starts `cmd` pinned to `core` (its every thread: a child starts with
/// its forking thread's mask), or on the calling thread's mask for `None`.
fn spawn_on(core: Option<usize>, cmd: &mut Command) -> std::io::Result<Child> {
    match core {
        None => cmd.spawn(),
        Some(c) => fixcore::affinity::with_placement(Some(c), || cmd.spawn())
            .map_err(std::io::Error::other)?,
    }
}

/// Runs `engine`'s initiator for `orders` orders, `window` in flight, its
/// round trips written to `latencies`, perfkit's busy-polling for `spin`
/// (QuickFIX has no such setting); returns its `seconds` (first order
/// sent to last filled).
// Each argument is one of the run's settings; a struct would only rename them.
#[allow(clippy::too_many_arguments)]
fn run_initiator(
    engine: &Engine,
    cfg: &Path,
    orders: u64,
    window: u64,
    spin: Duration,
    latencies: &Path,
    dir: &Path,
    core: Option<usize>,
) -> Result<f64> {
    let out_path = dir.join("initiator.out");
    let err_path = dir.join("initiator.err");
    let mut cmd = match engine {
        // One order at a time is latency-bound; a flood is not, and a
        // spinning reader would shrink its batches (and take a core from
        // the acceptor whose CPU is measured): the throughput phase passes
        // zero.
        Engine::Perfkit(perfkit) => perfkit.command(&Invocation::FixInitiator {
            settings: cfg,
            orders,
            window,
            latencies,
            spin: Some(&format!("{}ns", spin.as_nanos())),
            log: None,
        }),
        Engine::Quickfix(exe) => {
            let mut c = Command::new(exe);
            c.arg("initiator")
                .arg(cfg)
                .arg(orders.to_string())
                .arg(window.to_string())
                .arg(latencies);
            c
        }
    };
    let create =
        |path: &Path| File::create(path).doing_with(|| format!("creating {}", path.display()));
    cmd.stdin(Stdio::null())
        .stdout(create(&out_path)?)
        .stderr(create(&err_path)?);
    let mut child = spawn_on(core, &mut cmd)
        .doing_with(|| format!("starting the {} initiator", engine.name()))?;
    let what = format!("the {} initiator", engine.name());
    let Some(status) = wait_for_orders(&mut child, orders, &what)? else {
        return Err(Error::Program(format!(
            "{what} did not finish {orders} orders in time: {}",
            std::fs::read_to_string(&err_path)
                .unwrap_or_default()
                .trim()
        )));
    };
    let out = std::fs::read_to_string(&out_path).unwrap_or_default();
    if !status.success() {
        return Err(Error::Program(format!(
            "the {} initiator failed ({status}): {} {}",
            engine.name(),
            out.trim(),
            std::fs::read_to_string(&err_path)
                .unwrap_or_default()
                .trim()
        )));
    }
    let field = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_owned()))
    };
    if field("answered ").as_deref() != Some(orders.to_string().as_str()) {
        return Err(Error::Program(format!(
            "the {} initiator said {out:?}",
            engine.name()
        )));
    }
    field("seconds ")
        .and_then(|v| v.parse::<f64>().ok())
        .ok_or_else(|| {
            Error::Program(format!(
                "no `seconds` from the {} initiator: {out:?}",
                engine.name()
            ))
        })
}
