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
use perfkit::report::Report;
use perfkit::units::parse_duration;
use perfkit_bench::fix::Settings;
use perfkit_bench::fix::session as session_bench;
use perfkit_bench::fix::suite::{Part, Suite};
use serde_json::{Map, Value as Json};

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
    #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(Part::ALL.map(Part::name)))]
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

    /// The suite the micro benchmarks ask for.
    fn suite(&self) -> Result<Suite> {
        if self.iterations == 0 || self.runs == 0 || self.batch == 0 {
            bail!("--iterations, --runs and --batch must be at least 1");
        }
        let input = match &self.input {
            Some(path) => Some(read_messages(path)?),
            None => None,
        };
        Ok(Suite {
            settings: Settings {
                iterations: self.iterations,
                warmup: self.warmup_count()?,
                runs: self.runs,
                batch: self.batch,
                transport_iterations: self.transport_iterations.max(1),
                pin: self.pin,
            },
            parts: self
                .only
                .iter()
                .filter_map(|o| Part::from_name(o))
                .collect(),
            input,
            session: session_bench::Load {
                latency_orders: self.session_latency_orders,
                orders: self.session_orders,
                window: self.session_window,
                runs: self.runs,
            },
        })
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
    let report = measure(&args.suite()?, args.report.json)?;
    super::emit(&report, &args.report.options())
}

/// Measures `suite` into a report (also for `perfkit bench`), showing
/// each part's name on a terminal unless `json`.
pub fn measure(suite: &Suite, json: bool) -> Result<Report> {
    cap_scan_path()?;
    let progress = super::progress(None, json);
    let report = perfkit_bench::fix::suite::measure(suite, &|part| {
        progress.set_message(part.to_owned());
    });
    progress.finish_and_clear();
    report
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
