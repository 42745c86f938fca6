//! The whole of `perfkit fix bench`: the parts it runs ([`Part`]), in
//! order, with what they measure ([`Suite`]), into one report
//! ([`measure`]), each part a section in perfkit-measure's report model.

use crate::error::{Error, Result, StepContext};
use crate::rounds::{in_ns, median_of, paired_values};
use perfkit_measure::Comparison;
use perfkit_report::{Report, Row, RunInfo, Value};

mod comparison;

use comparison::{add_comparison, batched_row};

use super::quickfix::{ParseSide, QuickfixRows, parse_beside_quickfix};
use super::{Settings, failover, session};

/// A part of the suite, in the order they run and are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The structural scan, per SIMD path ([`super::scan()`]).
    Scan,
    /// The validated parse, beside QuickFIX's when its peer is built
    /// ([`parse_beside_quickfix`]).
    Parse,
    /// Building messages ([`super::build`]).
    Build,
    /// The message stores ([`super::store`]).
    Store,
    /// The deferred hot path ([`super::deferred()`]).
    Deferred,
    /// Pinned vs unpinned ([`super::affinity()`]).
    Affinity,
    /// Loopback round trips per transport ([`super::transport()`]).
    Transport,
    /// Whole engines over loopback ([`session`]).
    Session,
    /// Kill -9 of the engine serving to the standby's first answer
    /// ([`failover`]).
    Failover,
}

impl Part {
    /// Every part, in the order they run.
    pub const ALL: [Part; 9] = [
        Part::Scan,
        Part::Parse,
        Part::Build,
        Part::Store,
        Part::Deferred,
        Part::Affinity,
        Part::Transport,
        Part::Session,
        Part::Failover,
    ];

    /// The part's name, as `--only` takes it and progress shows it.
    pub fn name(self) -> &'static str {
        match self {
            Part::Scan => "scan",
            Part::Parse => "parse",
            Part::Build => "build",
            Part::Store => "store",
            Part::Deferred => "deferred",
            Part::Affinity => "affinity",
            Part::Transport => "transport",
            Part::Session => "session",
            Part::Failover => "failover",
        }
    }

    /// The part named `name`.
    pub fn from_name(name: &str) -> Option<Part> {
        Part::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What `perfkit fix bench` measures: the parts, how much of each, and on
/// which messages.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Counts for every comparison, and the measuring thread's core.
    pub settings: Settings,
    /// The parts to run; empty runs them all.
    pub parts: Vec<Part>,
    /// Messages to parse instead of the built-in samples, every one valid
    /// (the parse part refuses the first invalid one).
    pub input: Option<Vec<Vec<u8>>>,
    /// The session part's orders, window and rounds.
    pub session: session::Load,
    /// The failover part's kills.
    pub kills: usize,
}

impl Default for Suite {
    /// What `perfkit fix bench` measures by default: every part, with
    /// [`Settings::default`], and per session pairing and run 10,000
    /// orders one at a time, then 50,000 with 100 in flight.
    fn default() -> Suite {
        let settings = Settings::default();
        Suite {
            settings,
            parts: Vec::new(),
            input: None,
            session: session::Load {
                latency_orders: 10_000,
                orders: 50_000,
                window: 100,
                runs: settings.runs,
                spin: session::INITIATOR_SPIN,
            },
            kills: failover::KILLS,
        }
    }
}

impl Suite {
    /// The short run `perfkit bench` makes of every part but
    /// [`Part::Failover`] (a minute of kills).
    pub fn quick() -> Suite {
        let settings = Settings {
            iterations: 20_000,
            warmup: 2_000,
            runs: 5,
            batch: 100,
            transport_iterations: 2_000,
            pin: None,
            min_round: super::MIN_ROUND,
        };
        Suite {
            settings,
            parts: Part::ALL
                .into_iter()
                .filter(|&p| p != Part::Failover)
                .collect(),
            input: None,
            session: session::Load {
                latency_orders: 2_000,
                orders: 10_000,
                window: 100,
                // Each is a pair of engines started and stopped: three
                // keep the part near its old length.
                runs: 3,
                spin: session::INITIATOR_SPIN,
            },
            kills: failover::KILLS,
        }
    }

    /// Whether `part` runs.
    pub fn wants(&self, part: Part) -> bool {
        self.parts.is_empty() || self.parts.contains(&part)
    }
}

/// Measures every part `suite` asks for, in [`Part::ALL`]'s order, into
/// one report. `progress` is told each part's name as it starts;
/// `perfkit` starts the binary's own acceptor and initiator for the
/// session part.
///
/// With [`Settings::pin`] the calling thread is pinned for the rest of its
/// life (threads it spawns that are meant to run unpinned get the mask the
/// process started with back; see `fixcore::affinity`).
pub fn measure(
    suite: &Suite,
    progress: &dyn Fn(&str),
    perfkit: &dyn crate::invocation::Launcher,
) -> Result<Report> {
    let s = &suite.settings;
    if s.iterations == 0 || s.runs == 0 || s.batch == 0 {
        return Err(Error::Invalid(
            "iterations, runs and batch must be at least 1".to_owned(),
        ));
    }
    // Before pinning: the machine's core count is read from this thread's
    // affinity mask, which pinning shrinks to one core.
    let mut report = Report::new("fix bench");
    // Threads inherit their spawner's pin, so fixcore remembers the mask
    // the process started with before the first pin and gives it back to
    // every thread meant to run unpinned; reports read placements back.
    fixcore::affinity::remember_original();
    let pinned = match s.pin {
        Some(core) => {
            fixcore::affinity::pin_current(core)
                .during_with(|| format!("pinning the measuring thread to core {core}"))?;
            Some(format!(
                "core {core} (the measuring thread; helper threads run on another core or on \
                 the process's original {}-core mask, as each section's notes say)",
                fixcore::affinity::usable().len()
            ))
        }
        None if suite.wants(Part::Affinity) => {
            Some("no thread but the affinity section's pinned row".to_owned())
        }
        None => None,
    };
    let mut parts: Vec<Measured> = Vec::new();
    for part in Part::ALL.into_iter().filter(|&p| suite.wants(p)) {
        progress(part.name());
        match part {
            Part::Scan => parts.extend(super::scan(s).into_iter().map(Measured::Batched)),
            Part::Parse => parts.push(Measured::Parse(parse_beside_quickfix(
                s,
                suite.input.as_deref(),
            )?)),
            Part::Build => parts.push(Measured::Batched(super::build(s))),
            Part::Store => parts.extend(super::store(s).into_iter().map(Measured::Batched)),
            Part::Deferred => {
                let c = super::deferred(s).during("deferred processor")?;
                parts.push(Measured::Batched(c));
            }
            Part::Affinity => {
                let c = super::affinity(s).during("pinning threads")?;
                parts.push(Measured::Batched(c));
            }
            Part::Transport => {
                let c = super::transport(s).during("loopback echo")?;
                parts.push(Measured::Plain(c));
            }
            Part::Session => {
                let load = suite.session;
                parts.push(Measured::Session(session::measure(load, perfkit)?, load));
            }
            Part::Failover => {
                // Its engines and database start from the process's
                // original mask, not from the measuring thread's pin.
                let m = fixcore::affinity::with_placement(None, || {
                    failover::measure(suite.kills, perfkit)
                })
                .map_err(|e| Error::Program(format!("placing the failover engines: {e}")))?
                .during("failover")?;
                parts.push(Measured::Failover(m));
            }
        }
    }
    report.run = RunInfo {
        iterations: s.iterations as u64,
        warmup: s.warmup as u64,
        runs: s.runs as u64,
        pinned,
        timing: s.timing(),
    };
    for p in parts {
        match p {
            Measured::Plain(c) => add_comparison(&mut report, c, false),
            Measured::Batched(c) => add_comparison(&mut report, c, true),
            Measured::Parse(side) => add_parse(&mut report, side),
            Measured::Session(m, load) => add_session(&mut report, m, load),
            Measured::Failover(m) => add_failover(&mut report, m),
        }
    }
    Ok(report)
}

/// A measured part, in report order.
enum Measured {
    /// Rendered by [`add_comparison`], histograms in nanoseconds.
    Plain(Comparison),
    /// Rendered by [`add_comparison`], histograms in tenths of a
    /// nanosecond (the batched rows, [`super::UNITS_PER_NS`]).
    Batched(Comparison),
    /// fixcore's parse rows with QuickFIX's beside them.
    Parse(ParseSide),
    /// Whole engines over loopback.
    Session(session::Measured, session::Load),
    Failover(failover::Measured),
}

fn add_failover(report: &mut Report, m: failover::Measured) {
    let section = report.section("failover: kill -9 of the engine serving → the standby's answer");
    if let Some(why) = m.missing {
        section.note(why);
        return;
    }
    let mut h = perfkit_measure::latency_histogram();
    for t in &m.times {
        h.saturating_record((t.as_nanos() as u64).max(1));
    }
    let total: std::time::Duration = m.times.iter().sum();
    section.row(
        Row::new("perfkit initiator ↔ two perfkit acceptors, PostgreSQL store")
            .latency(h)
            .elapsed(total)
            .col("kills", Value::num(m.times.len() as f64, 0)),
    );
    section.note(format!(
        "{} times the acceptor serving is killed (kill -9) {} ms into an order flow (20 in \
         flight) and started again as the standby; each time: the kill to the first \
         ExecutionReport the initiator receives on its next session (its message log's \
         millisecond stamps, the same clock); HeartBtInt=1, ReconnectInterval=1, the store and \
         the leases in a PostgreSQL cluster the run starts. The bound: the initiator waits \
         ReconnectInterval (1 s) before it connects to the other engine, which took the lease \
         within its 100 ms poll of the dead holder's advisory lock; the Logon, the store's \
         reading and the gap's resend follow",
        m.times.len(),
        failover::FLOW_MS
    ));
}

/// The ratio column on QuickFIX rows.
const QUICKFIX_RATIO: &str = "quickfix_over_perfkit_x";

fn add_parse(report: &mut Report, side: ParseSide) {
    let ParseSide { ours, quickfix } = side;
    // Every measured call is recorded once: the count is the histogram's.
    let calls = ours.variants.first().map_or(0, |v| v.histogram.len());
    let section = report.section(ours.title);
    let median = |h: &hdrhistogram::Histogram<u64>| h.value_at_quantile(0.5) as f64;
    match quickfix {
        Ok(QuickfixRows {
            measured: theirs,
            version,
        }) => {
            for (v, q) in ours.variants.into_iter().zip(theirs) {
                let ratio = median(&q.histogram) / super::median_ns(&v.histogram).max(0.1);
                let name = format!("QuickFIX {}", v.name);
                section.row(batched_row(v));
                section.row(
                    Row::new(name)
                        .latency(q.histogram)
                        .elapsed(q.elapsed)
                        .col(QUICKFIX_RATIO, Value::num(ratio, 2)),
                );
            }
            section.note(format!(
                "{QUICKFIX_RATIO} = median of the QuickFIX row / median of the perfkit row above \
                 it (> 1: perfkit's parse is faster)"
            ));
            let version = match version {
                Some(v) => format!("QuickFIX from Debian libquickfix-dev {v}"),
                None => format!(
                    "QuickFIX (version not recorded: no {} beside the peer; `cargo xtask peers` \
                     writes it)",
                    crate::peer::QUICKFIX_VERSION_FILE
                ),
            };
            section.note(format!(
                "QuickFIX rows: {version} in the quickfix-parse peer (g++ -O2): a new \
                 FIX::Message(string, dictionary, validate=true) per call, what a QuickFIX \
                 session does with each message it reads: 8/9/35 order, BodyLength, CheckSum, \
                 header/body/trailer and groups by a FIX 4.4 dictionary written for these \
                 messages (Debian ships none); it accepts duplicate tags, and neither side \
                 checks types or required fields (DataDictionary::validate is not included)"
            ));
            section.note(format!(
                "both timed alike, run k of perfkit then run k of QuickFIX, in one invocation: \
                 the warm-up calls per row untimed before the first run, then per run that \
                 run's share of the {calls} calls per row in batches of --batch per clock read (perfkit: \
                 std::time::Instant; QuickFIX: std::chrono::steady_clock; both \
                 clock_gettime(CLOCK_MONOTONIC)), each batch's mean per call rounded (perfkit: to \
                 0.1 ns; QuickFIX: to 1 ns, its peer's unit) and recorded once per call; with --pin the peer is pinned to the same core. \
                 One difference in what a call does: perfkit reuses one Parser per row \
                 (its tables stay warm across calls, as fixcore is meant to be used), while \
                 QuickFIX constructs a new FIX::Message per call (as its sessions do)"
            ));
        }
        Err(why) => {
            for v in ours.variants {
                section.row(batched_row(v));
            }
            section.note(why);
        }
    }
    for n in ours.notes {
        section.note(n);
    }
    section.note("NexusFIX is not measured by this command: there is no peer for it");
}

/// The session section: a row per pairing (round trips as its latency
/// columns), with orders/s and the acceptor's CPU per order as medians
/// over the runs, and each ratio to QuickFIX ↔ QuickFIX when it ran (the
/// orders/s one paired round by round, each round's rate in the JSON).
fn add_session(report: &mut Report, m: session::Measured, load: session::Load) {
    let p50 = |h: &hdrhistogram::Histogram<u64>| h.value_at_quantile(0.5) as f64;
    let median = |v: &[f64]| median_of(v.to_vec());
    let figures: Vec<(f64, f64, f64)> = m
        .pairings
        .iter()
        .map(|p| {
            let cpu: Vec<f64> = p.acceptor_cpu.iter().map(|d| d.as_nanos() as f64).collect();
            (p50(&p.round_trips), median(&p.orders_per_s), median(&cpu))
        })
        .collect();
    let reference = m.pairings.iter().position(|p| p.reference);
    // Each run's rate and p50 of the reference, which the rows below pair
    // with.
    let reference_rates = reference.map(|r| m.pairings[r].orders_per_s.clone());
    let reference_p50s = reference.map(|r| m.pairings[r].p50_rounds.clone());
    let names: Vec<String> = m.pairings.iter().map(|p| p.name.clone()).collect();
    // The database server's CPU per order (the PostgreSQL store's row).
    let database_cpu = m
        .pairings
        .iter()
        .find(|p| !p.database_cpu.is_empty())
        .map(|p| {
            median(
                &p.database_cpu
                    .iter()
                    .map(|d| d.as_nanos() as f64)
                    .collect::<Vec<_>>(),
            )
        });
    let section = report.section("session: NewOrderSingle → ExecutionReport over loopback");
    for (p, &(_, rate, cpu)) in m.pairings.into_iter().zip(&figures) {
        let mut row = Row::new(p.name)
            .latency(p.round_trips)
            .elapsed(p.latency_elapsed)
            .col("orders_per_s", Value::num(rate, 0))
            .col("acceptor_cpu_us_per_order", Value::num(cpu / 1e3, 2));
        if let (Some(rates), Some(p50s)) = (&reference_rates, &reference_p50s) {
            // Paired by round: the pairings of a round run one after the
            // other, so a slow spell of the machine moves both sides.
            let as_f64 = |v: &[u64]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
            row = row
                .col(
                    "p50_vs_quickfix_x",
                    Value::num(paired_values(&as_f64(&p.p50_rounds), &as_f64(p50s)), 2),
                )
                .col(
                    "orders_per_s_vs_quickfix_x",
                    Value::num(paired_values(&p.orders_per_s, rates), 2),
                );
        }
        let runs: Vec<String> = p.orders_per_s.iter().map(|r| format!("{r:.0}")).collect();
        let p50s: Vec<String> = p.p50_rounds.iter().map(u64::to_string).collect();
        row = row
            .json_col("orders_per_s_runs", runs.join(" "))
            .json_col("p50_ns_runs", p50s.join(" "))
            // Each round's CPU beside its rate: perfkit ↔ perfkit's rate is
            // bimodal from one pair of processes to the next, and whether a
            // slow round costs more CPU an order or leaves the acceptor
            // idle is told by the two side by side.
            .json_col("acceptor_cpu_ns_per_order_runs", in_ns(&p.acceptor_cpu));
        section.row(row.col("note", format!("placement: {}", m.placement)));
    }
    section.note(how_measured(&load));
    if reference.is_some() {
        section.note(
            "p50_vs_quickfix_x = the median over the rounds of each round's p50 round trip / \
             QuickFIX ↔ QuickFIX's in the same round (< 1: faster; p50_ns_runs has each \
             round's, in order); orders_per_s_vs_quickfix_x = the same of orders/s (> 1: \
             faster; orders_per_s_runs)",
        );
    }
    comparison_notes(section, &names, &figures, database_cpu, m.empty_commit);
    let row_of = |name: &str| names.iter().position(|n| n == name).map(|i| figures[i]);
    add_floor(
        section,
        m.floor,
        row_of("perfkit initiator ↔ perfkit acceptor").map(|r| r.0),
        load.spin,
    );
    if let Some(why) = m.postgres_missing {
        section.note(why);
    }
    if let Some(why) = m.tls_missing {
        section.note(why);
    }
    if let Some(why) = m.missing {
        section.note(why);
    }
}

/// How the session section was measured, for its note.
fn how_measured(load: &session::Load) -> String {
    format!(
        "each run, per pairing: a fresh acceptor process (`--app exec`: an ExecutionReport new, \
         then one filled, per order), then {} orders one at a time (the latency columns: \
         NewOrderSingle sent to its first ExecutionReport, timed by the initiator process), then \
         {} orders with {} unfilled in flight (orders_per_s: first sent to last filled; \
         acceptor_cpu: the acceptor process's CPU clock over that phase / orders); medians of {} \
         runs; FIX.4.4, in-memory stores (the FileStorePath row: the acceptor on a QuickFIX-layout file store; the PostgreSQL store row: on QuickFIX's PostgreSQL tables in a cluster the run starts), plain TCP (the TLS row: SocketUseSSL=Y both ways, P-256 certificates), no data dictionary, TCP_NODELAY, both engines from the same \
         QuickFIX settings files; {}",
        load.latency_orders,
        load.orders,
        load.window,
        load.runs,
        if load.spin.is_zero() {
            "every engine blocks at once (`fix bench --spin 0`)".to_owned()
        } else {
            format!(
                "in the one-at-a-time phase the perfkit initiator busy-polls its socket for up \
                 to {:?} before blocking (`--spin`); otherwise every engine blocks at once",
                load.spin
            )
        }
    )
}

/// The session section's notes that set rows side by side: TLS against
/// plain TCP, the PostgreSQL store against the file store and against
/// QuickFIX's, and one empty commit against the PostgreSQL row's round
/// trip. `figures` holds each row's (p50 round trip, orders/s, acceptor
/// CPU per order) in ns, in the order of `names`.
fn comparison_notes(
    section: &mut perfkit_report::Section,
    names: &[String],
    figures: &[(f64, f64, f64)],
    database_cpu: Option<f64>,
    empty_commit: Option<std::time::Duration>,
) {
    // TLS beside plain TCP: what encryption adds to the acceptor's CPU.
    let cpu_of = |suffix: &str| {
        names
            .iter()
            .position(|n| n == &format!("perfkit initiator ↔ perfkit acceptor{suffix}"))
            .map(|i| figures[i].2)
    };
    if let (Some(plain), Some(tls)) = (cpu_of(""), cpu_of(", TLS")) {
        section.note(format!(
            "TLS (rustls, aws-lc-rs, both sides): the perfkit acceptor's CPU per order is {:.2} µs \
             over TLS against {:.2} µs over plain TCP ({:.2}x)",
            tls / 1e3,
            plain / 1e3,
            tls / plain.max(1e-9)
        ));
    }
    // The stores side by side: what persisting each order costs the
    // acceptor, and its rate.
    let rate_of = |suffix: &str| {
        names
            .iter()
            .position(|n| n == &format!("perfkit initiator ↔ perfkit acceptor{suffix}"))
            .map(|i| figures[i].1)
    };
    if let (Some(file), Some(pg), Some(file_rate), Some(pg_rate), Some(db)) = (
        cpu_of(", FileStorePath"),
        cpu_of(", PostgreSQL store"),
        rate_of(", FileStorePath"),
        rate_of(", PostgreSQL store"),
        database_cpu,
    ) {
        section.note(format!(
            "PostgreSQL store (QuickFIX's tables in a local PostgreSQL; each round's messages and \
             numbers in one statement before the round is sent; commits reach the kernel, not \
             the disk, as the file store's do): the perfkit acceptor's CPU per order is {:.2} µs \
             against {:.2} µs with FileStorePath ({:.2}x), at {:.0} orders/s against {:.0} \
             ({:.2}x); the database server used {:.2} µs of CPU per order besides (its processes' \
             /proc clock ticks over the phase), {:.2} µs with the acceptor's",
            pg / 1e3,
            file / 1e3,
            pg / file.max(1e-9),
            pg_rate,
            file_rate,
            pg_rate / file_rate.max(1e-9),
            db / 1e3,
            (db + pg) / 1e3
        ));
    }
    let row_of = |name: &str| names.iter().position(|n| n == name).map(|i| figures[i]);
    if let (Some(pg), Some(qf_file)) = (
        row_of("perfkit initiator ↔ perfkit acceptor, PostgreSQL store"),
        row_of("QuickFIX initiator ↔ QuickFIX acceptor, FileStorePath"),
    ) {
        section.note(format!(
            "the perfkit acceptor on its PostgreSQL store answers {:.0} orders/s, {:.2}x \
             QuickFIX ↔ QuickFIX with QuickFIX's FileStore (FileStoreSync=N) at {:.0}",
            pg.1,
            pg.1 / qf_file.1.max(1e-9),
            qf_file.1
        ));
    }
    if let (Some(pg), Some(file), Some(commit)) = (
        row_of("perfkit initiator ↔ perfkit acceptor, PostgreSQL store"),
        row_of("perfkit initiator ↔ perfkit acceptor, FileStorePath"),
        empty_commit,
    ) {
        let commit = commit.as_nanos() as f64;
        section.note(format!(
            "one empty commit (BEGIN; COMMIT) to the same cluster takes {:.1} µs (median of \
             1,000, the store's client over loopback TCP): the PostgreSQL store row's p50 round \
             trip is {:.1} µs, the FileStorePath row's {:.1} µs, {:.2} commits apart",
            commit / 1e3,
            pg.0 / 1e3,
            file.0 / 1e3,
            (pg.0 - file.0) / commit.max(1.0)
        ));
    }
}

/// The round trip's floor: its row, and perfkit ↔ perfkit's p50 (`ours`,
/// in ns, when that pairing ran) as a multiple of it.
fn add_floor(
    section: &mut perfkit_report::Section,
    floor: std::result::Result<session::Floor, String>,
    ours: Option<f64>,
    spin: std::time::Duration,
) {
    let floor = match floor {
        Ok(f) => f,
        Err(why) => {
            section.note(why);
            return;
        }
    };
    let p50 = floor.round_trips.value_at_quantile(0.5) as f64;
    section.row(
        Row::new("floor: C, one order at a time, no FIX work")
            .latency(floor.round_trips)
            .elapsed(floor.elapsed),
    );
    let waits = if spin.is_zero() {
        "blocking in poll at once".to_owned()
    } else {
        format!("busy-polling for up to {spin:?}, then blocking")
    };
    section.note(format!(
        "floor: `fix-roundtrip-floor` (`cargo xtask peers`), each run after the pairings: a {}-byte \
         order written at once and answered by a forked acceptor with two {}-byte messages in one \
         write (fixcore's sample NewOrderSingle and ExecutionReport), over one loopback TCP \
         connection with TCP_NODELAY, the initiator {waits} as perfkit's does; no FIX work{}",
        floor.sizes.0,
        floor.sizes.1,
        match ours {
            Some(o) => format!(
                "; perfkit ↔ perfkit's p50 round trip is {:.1} µs, {:.2}x the floor's {:.1} µs",
                o / 1e3,
                o / p50.max(1.0),
                p50 / 1e3
            ),
            None => String::new(),
        }
    ));
}

#[cfg(test)]
mod tests {
    use super::comparison::P50_TENTHS;
    use super::*;
    use std::cell::RefCell;

    /// Runs nothing: the parts these tests ask for run in this process.
    struct NoProcess;

    impl crate::invocation::Launcher for NoProcess {
        fn command(&self, what: &crate::invocation::Invocation<'_>) -> std::process::Command {
            panic!("an in-process part asked to run {what:?}")
        }
    }

    #[test]
    fn every_part_is_found_by_its_name() {
        for p in Part::ALL {
            assert_eq!(Part::from_name(p.name()), Some(p));
        }
        assert_eq!(Part::from_name("Scan"), None);
    }

    /// The parts asked for run in the suite's order, not the order asked,
    /// and only their sections are reported.
    #[test]
    fn only_the_parts_asked_for_are_measured_and_reported() {
        let suite = Suite {
            settings: crate::fix::tests::tiny(),
            parts: vec![Part::Build, Part::Scan],
            ..Suite::quick()
        };
        let seen = RefCell::new(Vec::new());
        let report = measure(
            &suite,
            &|p| seen.borrow_mut().push(p.to_owned()),
            &NoProcess,
        )
        .unwrap();
        assert_eq!(*seen.borrow(), ["scan", "build"]);
        assert!(report.sections.iter().any(|s| s.name.starts_with("build")));
        assert!(
            report
                .sections
                .iter()
                .all(|s| s.name.starts_with("scan") || s.name.starts_with("build")),
            "{:?}",
            report.sections.iter().map(|s| &s.name).collect::<Vec<_>>()
        );
        assert_eq!((report.run.iterations, report.run.runs), (200, 2));
        assert_eq!(report.run.pinned, None, "no pin, no affinity part");
    }

    /// The batched rows show their median to a tenth of a nanosecond in
    /// the text and the JSON, and their ratio is taken at that resolution.
    #[test]
    fn batched_rows_show_their_median_to_the_tenth() {
        let suite = Suite {
            settings: crate::fix::tests::tiny(),
            parts: vec![Part::Store],
            ..Suite::quick()
        };
        let report = measure(&suite, &|_| {}, &NoProcess).unwrap();
        let row = &report.sections[0].rows[1];
        let Some(Value::Num { value, decimals }) = row.get(P50_TENTHS) else {
            panic!("no {P50_TENTHS} on {}", row.name)
        };
        assert_eq!(*decimals, if *value < 100.0 { 1 } else { 0 });
        let tenths = row.latency.as_ref().map(|h| h.value_at_quantile(0.5));
        assert!(tenths.is_some_and(|ns| (ns as f64 - value).abs() <= 0.5 + value / 100.0));
        let text = perfkit_report::render_text(&report, false);
        assert!(
            text.contains(&format!("{value:.1}")) || *value >= 100.0,
            "{text}"
        );
    }
}
