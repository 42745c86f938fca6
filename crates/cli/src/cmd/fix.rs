//! `perfkit fix bench` (the FIX hot path, before/after pairs measured in one
//! run, and fixcore's parser beside QuickFIX's when the peer is built; also
//! reachable as `perfkit fix-bench`, its older name),
//! `perfkit fix check` (validate FIX messages from a file or stdin) and
//! `perfkit fix acceptor` / `initiator` (the session engine, [`session`]).

mod check;
mod input;
mod load;
mod session;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::flags::ReportArgs;
use anyhow::{Context, Result, bail};
use fixcore::dictionary::DataDictionary;
use fixcore::dictionary::validate::Validator;
use fixcore::parse::{Node, Parser};
use perfkit::report::{Report, Row, RunInfo, Value};
use perfkit::units::parse_duration;
use perfkit_bench::fix::quickfix::{ParseSide, QuickfixRows, parse_beside_quickfix};
use perfkit_bench::fix::session as session_bench;
use perfkit_bench::fix::{self as measure, Settings};
use perfkit_measure::Comparison;
use serde_json::{Map, Value as Json};

/// The parts of `fix bench` that can be selected with `--only`.
const PARTS: [&str; 8] = [
    "scan",
    "parse",
    "build",
    "store",
    "deferred",
    "affinity",
    "transport",
    "session",
];

/// Iteration counts: up to 2^40, so adding a warm-up to a count, or
/// multiplying it by a batch, cannot overflow (`--transport-iterations
/// 18446744073709551615` panicked on the sum).
fn count_parser() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1 << 40)
}

/// Arguments of `perfkit fix bench` (and of its alias `perfkit fix-bench`).
#[derive(Debug, Clone, clap::Args)]
pub struct FixBenchArgs {
    /// Measured operations per variant (summed over runs; at most 2^40).
    #[arg(long, default_value_t = 100_000, value_parser = count_parser())]
    pub iterations: usize,
    /// Unmeasured operations per variant first (at most 2^40; default
    /// 10000); with --connect, a duration of orders sent before measuring
    /// (default 1s).
    #[arg(long, value_parser = parse_warmup)]
    pub warmup: Option<Warmup>,
    /// Interleaved rounds: every variant measures a slice in each.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Pin the measuring thread to CORE (and the echo client; the server
    /// gets another core). With `--connect`: the load generator's
    /// sender to CORE, its receiver to the next core.
    #[arg(long, value_name = "CORE")]
    pub pin: Option<usize>,
    /// Only these parts (comma separated): scan, parse, build, store,
    /// deferred, affinity, transport, session.
    #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(PARTS))]
    pub only: Vec<String>,
    /// Calls per clock read in the batched timings (1..=65536; each
    /// batch's inputs are held at once).
    #[arg(long, default_value_t = 100, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1 << 16))]
    pub batch: usize,
    /// Loopback round trips per transport (summed over runs; at most 2^40).
    #[arg(long, default_value_t = 20_000, value_parser = count_parser())]
    pub transport_iterations: usize,
    /// Benchmark parsing of the messages in FILE (as `fix check` reads
    /// them: `|`-separated one per line, or SOH-separated) instead of the
    /// built-in samples.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Session part: orders per throughput phase (per pairing and run).
    #[arg(long, default_value_t = 50_000,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=1 << 32))]
    pub session_orders: u64,
    /// Session part: orders per latency phase (one in flight).
    #[arg(long, default_value_t = 10_000,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=1 << 32))]
    pub session_latency_orders: u64,
    /// Session part: unfilled orders in flight in the throughput phase.
    #[arg(long, default_value_t = 100,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=1 << 20))]
    pub session_window: u64,
    /// Run the open-loop load generator against the initiator sessions of
    /// this QuickFIX settings file (SocketConnectHost/Port) instead of the
    /// micro benchmarks.
    #[arg(long, value_name = "SETTINGS")]
    pub connect: Option<PathBuf>,
    /// With --connect: orders per second over all sessions (50000, 50k,
    /// 50k/s); a comma-separated list runs each in turn (a sweep).
    #[arg(long, value_delimiter = ',', value_parser = fixload::parse_rate, requires = "connect")]
    pub rate: Vec<f64>,
    /// With --connect: how long each rate is measured (over zero).
    #[arg(long, default_value = "10s", value_parser = parse_measured)]
    pub duration: Duration,
    /// With --connect: run only the first K initiator sessions of the file.
    #[arg(long, value_name = "K", requires = "connect",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub sessions: Option<usize>,
    /// With --connect: most unanswered orders per session; a full window
    /// holds the sender back (those orders count from their intended time).
    #[arg(long, default_value_t = 100,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=1 << 20))]
    pub window: u64,
    /// With --connect: the width of each reported interval (at least 1ms;
    /// a run plus its grace may span at most 3600 of them).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// With --connect: how long to wait for the last answers.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub grace: Duration,
    /// With --connect: orders due within DURATION (at most 10ms) of the
    /// sender's last round wait for its next one, so at high rates they go
    /// out together, each up to DURATION late (and timed from when it was
    /// due). Longer windows wake the sender less often: less CPU per order.
    #[arg(long, value_name = "DURATION", default_value = "250us", value_parser = perfkit::units::parse_duration_up_to(MAX_COALESCE))]
    pub coalesce: Duration,
    /// With --connect: how the generator talks to the sockets: io-uring
    /// where the kernel has it (auto), or always std calls, or always
    /// io-uring (an error where it is missing).
    #[arg(long, value_enum, default_value_t = IoArg::Auto)]
    pub io: IoArg,
    /// With --connect: the NewOrderSingle's fields (tag=value, separated by
    /// `|`, SOH or lines) instead of 21=1|55=MSFT|54=1|38=100|40=1.
    #[arg(long, value_name = "FILE", requires = "connect")]
    pub order_template: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// `--warmup`: a count of operations for the micro benchmarks, a duration
/// (with its unit) for the load generator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Warmup {
    /// Operations.
    Count(usize),
    /// Time.
    Time(Duration),
}

/// Longest `--coalesce`: a window is what orders may wait, so much over a
/// millisecond makes every order late.
const MAX_COALESCE: Duration = Duration::from_millis(10);

/// `--io`: how the load generator reaches the sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IoArg {
    /// io_uring where the kernel has it, std calls otherwise.
    Auto,
    /// `send`/`recv`/`poll`.
    Std,
    /// io_uring, or an error.
    IoUring,
}

impl From<IoArg> for fixload::Io {
    fn from(a: IoArg) -> Self {
        match a {
            IoArg::Auto => Self::Auto,
            IoArg::Std => Self::Std,
            IoArg::IoUring => Self::Uring,
        }
    }
}

/// A `--duration` value: how long each rate is measured, over zero (a
/// zero-length measured part would report an empty run as a result).
fn parse_measured(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err(format!(
            "'{}' measures nothing: give a duration over zero (e.g. 10s)",
            s.trim()
        ));
    }
    Ok(d)
}

fn parse_warmup(s: &str) -> Result<Warmup, String> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return match t.parse::<usize>() {
            Ok(n) if n <= 1 << 40 => Ok(Warmup::Count(n)),
            _ => Err(format!("{t} is not in 0..=1099511627776")),
        };
    }
    parse_duration(t).map(Warmup::Time)
}

impl FixBenchArgs {
    /// The micro benchmarks' warm-up count.
    fn warmup_count(&self) -> Result<usize> {
        match self.warmup {
            None => Ok(10_000),
            Some(Warmup::Count(n)) => Ok(n),
            Some(Warmup::Time(_)) => {
                bail!("--warmup takes a number of operations here (a duration is for --connect)")
            }
        }
    }

    /// The load generator's warm-up, when given.
    fn warmup_for_load(&self) -> Result<Option<Duration>> {
        match self.warmup {
            None => Ok(None),
            Some(Warmup::Time(d)) => Ok(Some(d)),
            Some(Warmup::Count(_)) => {
                bail!("--warmup with --connect takes a duration (e.g. 2s)")
            }
        }
    }

    /// The load sweep `--connect SETTINGS` asks for.
    fn load(&self, settings: &std::path::Path) -> Result<(load::Connect, fixload::Settings)> {
        if self.rate.is_empty() {
            bail!("--connect needs --rate (orders per second; a list sweeps)");
        }
        let mut sweep = fixload::Settings {
            duration: self.duration,
            interval: self.interval,
            window: self.window,
            grace: self.grace,
            pin: self.pin,
            coalesce: self.coalesce,
            io: self.io.into(),
            ..fixload::Settings::new(self.rate.clone())
        };
        if let Some(d) = self.warmup_for_load()? {
            sweep.warmup = d;
        }
        if let Some(path) = &self.order_template {
            sweep.template = load::read_template(path)?;
        }
        let engine = load::Connect {
            settings: settings.to_owned(),
            sessions: self.sessions,
        };
        Ok((engine, sweep))
    }

    /// Short settings for `perfkit bench`.
    pub fn quick(report: ReportArgs) -> FixBenchArgs {
        FixBenchArgs {
            iterations: 20_000,
            warmup: Some(Warmup::Count(2_000)),
            runs: 3,
            pin: None,
            only: Vec::new(),
            batch: 100,
            transport_iterations: 2_000,
            input: None,
            session_orders: 10_000,
            session_latency_orders: 2_000,
            session_window: 100,
            connect: None,
            rate: Vec::new(),
            duration: Duration::from_secs(10),
            sessions: None,
            window: 100,
            interval: Duration::from_secs(1),
            grace: Duration::from_secs(5),
            order_template: None,
            coalesce: Duration::from_micros(250),
            io: IoArg::Auto,
            report,
        }
    }
}

/// Runs the benchmark and renders it: `perfkit fix bench`.
pub fn bench(args: FixBenchArgs) -> Result<ExitCode> {
    if let Some(settings) = &args.connect {
        let (engine, sweep) = args.load(settings)?;
        let swept = load::measure(&engine, &sweep, args.report.json)?;
        super::emit(&swept.report, &args.report.options())?;
        if !swept.problems.is_empty() {
            bail!("{}", swept.problems.join("; "));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let report = measure(&args)?;
    super::emit(&report, &args.report.options())
}

/// Measures everything asked for into a report.
pub fn measure(args: &FixBenchArgs) -> Result<Report> {
    if args.iterations == 0 || args.runs == 0 || args.batch == 0 {
        bail!("--iterations, --runs and --batch must be at least 1");
    }
    let s = Settings {
        iterations: args.iterations,
        warmup: args.warmup_count()?,
        runs: args.runs,
        batch: args.batch,
        transport_iterations: args.transport_iterations.max(1),
        pin: args.pin,
    };
    cap_scan_path()?;
    let want = |p: &str| args.only.is_empty() || args.only.iter().any(|o| o == p);
    // Before pinning: the machine's core count is read from this thread's
    // affinity mask, which pinning shrinks to one core.
    let mut report = Report::new("fix-bench");
    // Threads inherit their spawner's pin, so fixcore remembers the mask
    // the process started with before the first pin and gives it back to
    // every thread meant to run unpinned; reports read placements back.
    fixcore::affinity::remember_original();
    let pinned = match args.pin {
        Some(core) => {
            fixcore::affinity::pin_current(core)
                .with_context(|| format!("pinning the measuring thread to core {core}"))?;
            Some(format!(
                "core {core} (the measuring thread; helper threads run on another core or on \
                 the process's original {}-core mask, as each section's notes say)",
                fixcore::affinity::usable().len()
            ))
        }
        None if want("affinity") => {
            Some("no thread but the affinity section's pinned row".to_owned())
        }
        None => None,
    };
    let input = match &args.input {
        Some(path) => Some(read_messages(path)?),
        None => None,
    };
    let progress = super::progress(None, args.report.json);
    let mut parts: Vec<Part> = Vec::new();
    if want("scan") {
        progress.set_message("scan");
        parts.extend(measure::scan(&s).into_iter().map(Part::Plain));
    }
    if want("parse") {
        progress.set_message("parse");
        parts.push(Part::Parse(parse_beside_quickfix(&s, input.as_deref())?));
    }
    if want("build") {
        progress.set_message("build");
        parts.push(Part::Plain(measure::build(&s)));
    }
    if want("store") {
        progress.set_message("store");
        parts.extend(measure::store(&s).into_iter().map(Part::Plain));
    }
    if want("deferred") {
        progress.set_message("deferred");
        let c = measure::deferred(&s).context("deferred processor")?;
        parts.push(Part::Plain(c));
    }
    if want("affinity") {
        progress.set_message("affinity");
        let c = measure::affinity(&s).context("pinning threads")?;
        parts.push(Part::Plain(c));
    }
    if want("transport") {
        progress.set_message("transport");
        let c = measure::transport(&s).context("loopback echo")?;
        parts.push(Part::Plain(c));
    }
    if want("session") {
        progress.set_message("session");
        let load = session_bench::Load {
            latency_orders: args.session_latency_orders,
            orders: args.session_orders,
            window: args.session_window,
            runs: args.runs,
        };
        parts.push(Part::Session(session_bench::measure(load)?, load));
    }
    progress.finish_and_clear();
    report.run = RunInfo {
        iterations: args.iterations as u64,
        warmup: args.warmup_count()? as u64,
        runs: args.runs as u64,
        pinned,
        timing: s.timing(),
    };
    for p in parts {
        match p {
            Part::Plain(c) => add_comparison(&mut report, c),
            Part::Parse(side) => add_parse(&mut report, side),
            Part::Session(m, load) => add_session(&mut report, m, load),
        }
    }
    Ok(report)
}

/// A measured part of fix-bench, in report order.
enum Part {
    /// Rendered by [`add_comparison`].
    Plain(Comparison),
    /// fixcore's parse rows with QuickFIX's beside them.
    Parse(ParseSide),
    /// Whole engines over loopback.
    Session(session_bench::Measured, session_bench::Load),
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
                let ratio = median(&q.histogram) / median(&v.histogram).max(1.0);
                let name = format!("QuickFIX {}", v.name);
                section.row(Row::new(v.name).latency(v.histogram).elapsed(v.elapsed));
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
                    perfkit_bench::peer::QUICKFIX_VERSION_FILE
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
                 clock_gettime(CLOCK_MONOTONIC)), each batch's mean per call rounded to 1 ns \
                 and recorded once per call; with --pin the peer is pinned to the same core. \
                 One difference in what a call does: perfkit reuses one Parser per row \
                 (its tables stay warm across calls, as fixcore is meant to be used), while \
                 QuickFIX constructs a new FIX::Message per call (as its sessions do)"
            ));
        }
        Err(why) => {
            for v in ours.variants {
                section.row(Row::new(v.name).latency(v.histogram).elapsed(v.elapsed));
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
/// over the runs, and each ratio to QuickFIX ↔ QuickFIX when it ran.
fn add_session(report: &mut Report, m: session_bench::Measured, load: session_bench::Load) {
    let p50 = |h: &hdrhistogram::Histogram<u64>| h.value_at_quantile(0.5) as f64;
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let figures: Vec<(f64, f64, f64)> = m
        .pairings
        .iter()
        .map(|p| {
            let cpu: Vec<f64> = p.acceptor_cpu.iter().map(|d| d.as_nanos() as f64).collect();
            (p50(&p.round_trips), median(&p.orders_per_s), median(&cpu))
        })
        .collect();
    let reference = m.pairings.iter().position(|p| p.reference);
    let section = report.section("session: NewOrderSingle → ExecutionReport over loopback");
    for (p, &(rtt, rate, cpu)) in m.pairings.into_iter().zip(&figures) {
        let mut row = Row::new(p.name)
            .latency(p.round_trips)
            .elapsed(p.latency_elapsed)
            .col("orders_per_s", Value::num(rate, 0))
            .col("acceptor_cpu_us_per_order", Value::num(cpu / 1e3, 2));
        if let Some(r) = reference {
            let (ref_rtt, ref_rate, _) = figures[r];
            row = row
                .col("p50_vs_quickfix_x", Value::num(rtt / ref_rtt.max(1.0), 2))
                .col(
                    "orders_per_s_vs_quickfix_x",
                    Value::num(rate / ref_rate.max(1e-9), 2),
                );
        }
        section.row(row);
    }
    section.note(format!(
        "each run, per pairing: a fresh acceptor process (`--app exec`: an ExecutionReport new, \
         then one filled, per order), then {} orders one at a time (the latency columns: \
         NewOrderSingle sent to its first ExecutionReport, timed by the initiator process), then \
         {} orders with {} unfilled in flight (orders_per_s: first sent to last filled; \
         acceptor_cpu: the acceptor process's CPU clock over that phase / orders); medians of {} \
         runs; FIX.4.4, in-memory stores (the FileStorePath row: the acceptor on a QuickFIX-layout file store), no data dictionary, TCP_NODELAY, both engines from the same \
         QuickFIX settings files; in the one-at-a-time phase the perfkit initiator busy-polls its \
         socket for up to {} before blocking (`--spin`); otherwise every engine blocks at once",
        load.latency_orders,
        load.orders,
        load.window,
        load.runs,
        perfkit_bench::fix::session::INITIATOR_SPIN
    ));
    if reference.is_some() {
        section.note(
            "p50_vs_quickfix_x = p50 round trip / QuickFIX ↔ QuickFIX's (< 1: faster); \
             orders_per_s_vs_quickfix_x = orders/s / QuickFIX ↔ QuickFIX's (> 1: faster)",
        );
    }
    if let Some(why) = m.missing {
        section.note(why);
    }
}

fn add_comparison(report: &mut Report, c: Comparison) {
    let speedups: Vec<f64> = (0..c.variants.len()).map(|i| c.speedup(i)).collect();
    let baseline = c
        .variants
        .first()
        .map(|v| v.name.clone())
        .unwrap_or_default();
    // A second reference, e.g. tokio for the transports: its ratio column.
    let second = c.also_vs.filter(|&j| c.compare && j < c.variants.len());
    let second_ratios: Vec<f64> = match second {
        Some(j) => (0..c.variants.len()).map(|i| c.speedup_vs(j, i)).collect(),
        None => Vec::new(),
    };
    let second_name = second.map(|j| c.variants[j].name.clone());
    let second_col = second_name
        .as_deref()
        .map(|n| format!("speedup_vs_{}_x", snake(n)));
    let section = report.section(c.title);
    for (i, v) in c.variants.into_iter().enumerate() {
        let mut row = Row::new(v.name).latency(v.histogram).elapsed(v.elapsed);
        if c.compare {
            row = row.col("speedup_x", Value::num(speedups[i], 2));
        }
        if let Some(col) = &second_col {
            row = row.col(col, Value::num(second_ratios[i], 2));
        }
        if let Some(note) = v.note {
            row = row.col("note", note);
        }
        section.row(row);
    }
    if c.compare {
        section.note(format!(
            "speedup_x = median of {baseline} / median of the row (> 1: faster than {baseline})"
        ));
    }
    if let (Some(col), Some(name)) = (&second_col, &second_name) {
        section.note(format!(
            "{col} = median of {name} / median of the row (> 1: faster than {name})"
        ));
    }
    for n in c.notes {
        section.note(n);
    }
}

/// `io_uring+defer_taskrun` → `io_uring_defer_taskrun`, for column names.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_owned()
}

/// Opens `fix check`'s or `fix-bench --input`'s input (`-` is stdin) and
/// hands every message and problem in it to `sink`, in bounded chunks.
fn each_input_message(path: &std::path::Path, sink: impl input::Sink) -> Result<()> {
    let name = path.display().to_string();
    if path.as_os_str() == "-" {
        input::each_message(io::stdin().lock(), &name, sink)
    } else {
        let file = std::fs::File::open(path).with_context(|| format!("reading {name}"))?;
        input::each_message(file, &name, sink)
    }
}

/// Collects `fix-bench --input`'s messages; the first invalid one is an
/// error.
struct Collect<'p> {
    path: &'p std::path::Path,
    parser: Parser,
    msgs: Vec<Vec<u8>>,
}

impl input::Sink for &mut Collect<'_> {
    fn message(&mut self, bytes: &[u8]) -> Result<Option<String>> {
        match self.parser.parse(bytes) {
            Ok(_) => {
                self.msgs.push(bytes.to_vec());
                Ok(None)
            }
            Err(e) => Ok(Some(e.to_string())),
        }
    }

    fn problem(&mut self, origin: input::Origin, why: &str) -> Result<()> {
        bail!(
            "{}: {origin}: {why} (fix-bench --input needs valid messages; see `perfkit fix check`)",
            self.path.display()
        )
    }
}

/// The messages of a `--input` file, found as `fix check` finds them; the
/// first invalid one is an error. The benchmark needs them all in memory;
/// the file is not held beside them.
fn read_messages(path: &std::path::Path) -> Result<Vec<Vec<u8>>> {
    let mut c = Collect {
        path,
        parser: Parser::new(),
        msgs: Vec::new(),
    };
    each_input_message(path, &mut c)?;
    if c.msgs.is_empty() {
        bail!("{}: no messages", path.display());
    }
    Ok(c.msgs)
}

/// Arguments of `perfkit fix`.
#[derive(Debug, clap::Args)]
pub struct FixArgs {
    #[command(subcommand)]
    command: FixCommand,
}

#[derive(Debug, clap::Subcommand)]
enum FixCommand {
    /// The FIX hot path: scan, parse, build, store, deferred, affinity,
    /// transport and session, each as a before/after pair measured in one
    /// run (`perfkit fix-bench` is the same command); with --connect, the
    /// open-loop load generator against a FIX engine.
    Bench(Box<FixBenchArgs>),
    /// Validate FIX messages (`|`-separated, one per line, or SOH-separated
    /// as a byte stream or a log, line breaks allowed); exit 1 if any is
    /// invalid.
    Check(check::FixCheckArgs),
    /// Run the FIX acceptor sessions of a QuickFIX settings file (one
    /// port, many sessions); Ctrl-C logs them out.
    Acceptor(session::SessionArgs),
    /// Run the FIX initiator sessions of a QuickFIX settings file,
    /// reconnecting when a connection drops; Ctrl-C logs them out.
    Initiator(session::SessionArgs),
}

/// Applies `FIXCORE_SCAN` (`scalar`, `avx2`, `avx512` or `avx512vbmi2`):
/// fixcore's scanner is capped at that path for this process, so each path
/// can be benchmarked and checked. Unset or empty caps nothing; a value
/// naming no path is an error, so a typo cannot quietly measure the
/// fastest path instead of the one asked for.
fn cap_scan_path() -> Result<()> {
    use fixcore::scan::ScanPath;
    let Some(raw) = std::env::var_os("FIXCORE_SCAN").filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let Some(cap) = raw.to_str().and_then(ScanPath::from_name) else {
        bail!(
            "FIXCORE_SCAN={:?} names no scan path (expected scalar, avx2, avx512 or avx512vbmi2)",
            raw.to_string_lossy()
        );
    };
    ScanPath::cap(cap).map(drop).map_err(|in_use| {
        anyhow::anyhow!(
            "FIXCORE_SCAN={}: the scan path was already fixed at {}",
            cap.name(),
            in_use.name()
        )
    })
}

/// Dispatches `perfkit fix ...`.
pub fn run(args: FixArgs) -> Result<ExitCode> {
    match args.command {
        FixCommand::Bench(a) => bench(*a),
        FixCommand::Check(a) => check::check(a),
        FixCommand::Acceptor(a) => cap_scan_path().and_then(|()| session::acceptor(a)),
        FixCommand::Initiator(a) => cap_scan_path().and_then(|()| session::initiator(a)),
    }
}

#[cfg(test)]
mod tests;
