//! The flags of `perfkit fix` and its subcommands, and their conversion
//! into the settings each subcommand's module (or the library behind it)
//! runs on: the only place in `fix` that names clap. Each entry point
//! converts its flags before any work starts and hands the settings to
//! the subcommand's module.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};
use perfkit::units::parse_duration;
use perfkit_bench::fix::Settings;
use perfkit_bench::fix::suite::{Part, Suite};

use super::bench::Task;
use fixengine::assembly::{App, EngineSettings};

use super::{check, load};
use crate::flags::ReportArgs;

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
    /// run (`perfkit fix-bench` is the same command).
    Bench(Box<FixBenchArgs>),
    /// Open-loop load against a FIX engine: NewOrderSingles on a fixed
    /// schedule over the initiator sessions of a QuickFIX settings file,
    /// each timed to its first ExecutionReport; the generator's CPU per
    /// order beside its floor, measured in the same run.
    Load(Box<FixLoadArgs>),
    /// Validate FIX messages (`|`-separated, one per line, or SOH-separated
    /// as a byte stream or a log, line breaks allowed); exit 1 if any is
    /// invalid.
    Check(FixCheckArgs),
    /// Run the FIX acceptor sessions of a QuickFIX settings file (one
    /// port, many sessions); Ctrl-C logs them out.
    Acceptor(AcceptorArgs),
    /// Run the FIX initiator sessions of a QuickFIX settings file,
    /// reconnecting when a connection drops; Ctrl-C logs them out.
    Initiator(InitiatorArgs),
}

impl FixArgs {
    /// What these flags ask `perfkit fix` to do, each subcommand's flags
    /// converted into its settings.
    pub fn task(self) -> Result<super::Task> {
        Ok(match self.command {
            FixCommand::Bench(a) => super::Task::Bench(a.task()?),
            FixCommand::Load(a) => super::Task::Load(a.task()?),
            FixCommand::Check(a) => super::Task::Check(a.into()),
            FixCommand::Acceptor(a) => super::Task::Acceptor(a.into()),
            FixCommand::Initiator(a) => super::Task::Initiator(a.into()),
        })
    }
}

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
    /// 10000).
    #[arg(long, value_parser = parse_warmup)]
    pub warmup: Option<Warmup>,
    /// Interleaved rounds: every variant measures a slice in each.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Pin the measuring thread to CORE (and the echo client; the server
    /// gets another core).
    #[arg(long, value_name = "CORE")]
    pub pin: Option<usize>,
    /// Only these parts (comma separated): scan, parse, build, store,
    /// deferred, affinity, transport, session, failover.
    #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(Part::ALL.map(Part::name)))]
    pub only: Vec<String>,
    /// Calls per clock read in the batched timings (1..=65536; each
    /// batch's inputs are held at once).
    #[arg(long, default_value_t = 100, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1 << 16))]
    pub batch: usize,
    /// Loopback round trips per transport (summed over its rounds: at
    /// least 15, more with a larger `--runs`; at most 2^40).
    #[arg(long, default_value_t = 20_000, value_parser = count_parser())]
    pub transport_iterations: usize,
    /// Least time of each batched variant's share of a round (at most
    /// 10s): a faster variant runs more calls than `--iterations` gives it,
    /// paced by a short unmeasured calibration; 0 keeps `--iterations`.
    #[arg(long, value_name = "DURATION", default_value = "20ms",
          value_parser = perfkit::units::parse_duration_up_to(MAX_MIN_ROUND))]
    pub min_round: Duration,
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
    /// Session part: how long perfkit's initiator (and the round trip's
    /// floor) busy-polls its socket in the one-at-a-time phase before
    /// blocking (at most 10ms); 0 blocks at once.
    #[arg(long, value_name = "DURATION", default_value = "100us",
          value_parser = perfkit::units::parse_duration_up_to(MAX_SPIN))]
    pub spin: Duration,
    /// Failover part: kills of the engine serving (1..=1000).
    #[arg(long, default_value_t = perfkit_bench::fix::failover::KILLS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub failover_kills: usize,
    /// The hidden alias of `fix load SETTINGS` (its older spelling): the
    /// load generator instead of the micro benchmarks, with the flags
    /// below; `--warmup` is then a duration and `--pin` the sender's core.
    #[arg(long, hide = true, value_name = "SETTINGS")]
    pub connect: Option<PathBuf>,
    /// With --connect: orders per second over all sessions (50000, 50k,
    /// 50k/s); a comma-separated list runs each in turn (a sweep).
    #[arg(long, hide = true, value_delimiter = ',', value_parser = fixload::parse_rate, requires = "connect")]
    pub rate: Vec<f64>,
    /// With --connect: how long each rate is measured (over zero).
    #[arg(long, hide = true, default_value = "10s", value_parser = parse_measured)]
    pub duration: Duration,
    /// With --connect: run only the first K initiator sessions of the file.
    #[arg(long, hide = true, value_name = "K", requires = "connect",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub sessions: Option<usize>,
    /// With --connect: most unanswered orders per session; a full window
    /// holds the sender back (those orders count from their intended time).
    #[arg(long, hide = true, default_value_t = 100,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=1 << 20))]
    pub window: u64,
    /// With --connect: the width of each reported interval (at least 1ms;
    /// a run plus its grace may span at most 3600 of them).
    #[arg(long, hide = true, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// With --connect: how long to wait for the last answers.
    #[arg(long, hide = true, default_value = "5s", value_parser = parse_duration)]
    pub grace: Duration,
    /// With --connect: orders due within DURATION (at most 10ms) of the
    /// sender's last round wait for its next one, so at high rates they go
    /// out together, each up to DURATION late (and timed from when it was
    /// due). Longer windows wake the sender less often: less CPU per order.
    #[arg(long, hide = true, value_name = "DURATION", default_value = "250us", value_parser = perfkit::units::parse_duration_up_to(MAX_COALESCE))]
    pub coalesce: Duration,
    /// With --connect: how the generator talks to the sockets: io-uring
    /// where the kernel has it (auto), or always std calls, or always
    /// io-uring (an error where it is missing).
    #[arg(long, hide = true, value_enum, default_value_t = IoArg::Auto)]
    pub io: IoArg,
    /// With --connect: the NewOrderSingle's fields (tag=value, separated by
    /// `|`, SOH or lines) instead of 21=1|55=MSFT|54=1|38=100|40=1.
    #[arg(long, hide = true, value_name = "FILE", requires = "connect")]
    pub order_template: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Arguments of `perfkit fix load`: each flag has one meaning.
#[derive(Debug, Clone, clap::Args)]
pub struct FixLoadArgs {
    /// A QuickFIX settings file: its initiator sessions (SocketConnectHost
    /// and SocketConnectPort) carry the load.
    #[arg(value_name = "SETTINGS")]
    pub settings: PathBuf,
    /// Orders per second over all sessions (50000, 50k, 50k/s); a
    /// comma-separated list runs each in turn (a sweep).
    #[arg(long, required = true, value_delimiter = ',', value_parser = fixload::parse_rate)]
    pub rate: Vec<f64>,
    /// How long each rate is measured (over zero).
    #[arg(long, default_value = "10s", value_parser = parse_measured)]
    pub duration: Duration,
    /// How long orders go out at the rate before measuring starts.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Run only the first K initiator sessions of the file.
    #[arg(long, value_name = "K",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub sessions: Option<usize>,
    /// Most unanswered orders per session; a full window holds the sender
    /// back (those orders count from their intended time).
    #[arg(long, default_value_t = 100,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=1 << 20))]
    pub window: u64,
    /// The width of each reported interval (at least 1ms; a run plus its
    /// grace may span at most 3600 of them).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// How long to wait for the last answers.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub grace: Duration,
    /// Orders due within DURATION (at most 10ms) of the sender's last round
    /// wait for its next one, so at high rates they go out together, each
    /// up to DURATION late (and timed from when it was due). Longer windows
    /// wake the sender less often: less CPU per order.
    #[arg(long, value_name = "DURATION", default_value = "250us", value_parser = perfkit::units::parse_duration_up_to(MAX_COALESCE))]
    pub coalesce: Duration,
    /// How the generator talks to the sockets: io-uring where the kernel
    /// has it (auto), or always std calls, or always io-uring (an error
    /// where it is missing).
    #[arg(long, value_enum, default_value_t = IoArg::Auto)]
    pub io: IoArg,
    /// The NewOrderSingle's fields (tag=value, separated by `|`, SOH or
    /// lines) instead of 21=1|55=MSFT|54=1|38=100|40=1.
    #[arg(long, value_name = "FILE")]
    pub order_template: Option<PathBuf>,
    /// Pin the generator's sender to CORE and its receiver to the next core
    /// (the floor's two threads likewise).
    #[arg(long, value_name = "CORE")]
    pub pin: Option<usize>,
    #[command(flatten)]
    pub report: ReportArgs,
}

impl FixLoadArgs {
    /// The sweep these flags ask for, against the file's sessions.
    pub fn task(&self) -> Result<load::Task> {
        let mut sweep = fixload::Settings::new(self.rate.clone());
        sweep.run = fixload::Plan {
            duration: self.duration,
            warmup: self.warmup,
            interval: self.interval,
            window: self.window,
            grace: self.grace,
            pin: self.pin,
            coalesce: self.coalesce,
            io: self.io.into(),
            ..sweep.run
        };
        if let Some(path) = &self.order_template {
            sweep.run.template = load::read_template(path)?;
        }
        Ok(load::Task {
            engine: load::Connect {
                settings: self.settings.clone(),
                sessions: self.sessions,
            },
            sweep,
            report: self.report.options(),
        })
    }
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
    /// What these flags ask `fix bench` to do: the micro benchmarks'
    /// suite, or with `--connect` (the hidden alias) the load sweep.
    pub fn task(&self) -> Result<Task> {
        Ok(match &self.connect {
            Some(settings) => Task::Load(self.as_load(settings)?.task()?),
            None => Task::Suite {
                suite: self.suite()?,
                report: self.report.options(),
            },
        })
    }

    /// The micro benchmarks' warm-up count.
    fn warmup_count(&self) -> Result<usize> {
        match self.warmup {
            None => Ok(10_000),
            Some(Warmup::Count(n)) => Ok(n),
            Some(Warmup::Time(_)) => {
                bail!("--warmup takes a number of operations here (a duration is for `fix load`)")
            }
        }
    }

    /// `fix bench --connect SETTINGS …` spelt as `fix load SETTINGS …`.
    fn as_load(&self, settings: &Path) -> Result<FixLoadArgs> {
        if self.rate.is_empty() {
            bail!("--connect needs --rate (orders per second; a list sweeps)");
        }
        let warmup = match self.warmup {
            None => fixload::Plan::default().warmup,
            Some(Warmup::Time(d)) => d,
            Some(Warmup::Count(_)) => bail!("--warmup with --connect takes a duration (e.g. 2s)"),
        };
        Ok(FixLoadArgs {
            settings: settings.to_owned(),
            rate: self.rate.clone(),
            duration: self.duration,
            warmup,
            sessions: self.sessions,
            window: self.window,
            interval: self.interval,
            grace: self.grace,
            coalesce: self.coalesce,
            io: self.io,
            order_template: self.order_template.clone(),
            pin: self.pin,
            report: self.report.clone(),
        })
    }

    /// The suite the micro benchmarks ask for.
    fn suite(&self) -> Result<Suite> {
        if self.iterations == 0 || self.runs == 0 || self.batch == 0 {
            bail!("--iterations, --runs and --batch must be at least 1");
        }
        let input = match &self.input {
            Some(path) => Some(super::bench::read_messages(path)?),
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
                min_round: self.min_round,
            },
            parts: self
                .only
                .iter()
                .filter_map(|o| Part::from_name(o))
                .collect(),
            input,
            session: perfkit_bench::fix::session::Load {
                latency_orders: self.session_latency_orders,
                orders: self.session_orders,
                window: self.session_window,
                runs: self.runs,
                spin: self.spin,
            },
            kills: self.failover_kills,
        })
    }
}

/// Arguments of `perfkit fix check`.
#[derive(Debug, clap::Args)]
pub struct FixCheckArgs {
    /// The input, or `-` for stdin.
    pub input: PathBuf,
    /// Print every message as a JSON object, one per line in input order:
    /// a valid one as tag -> value (groups as arrays of objects), an
    /// invalid one as {"line"/"offset": where, "error": why}; problems are
    /// also listed on stderr.
    #[arg(long)]
    pub json: bool,
    /// Also validate each message against a QuickFIX XML data dictionary
    /// (required fields, tags the message type defines, enum values,
    /// formats, field order, groups), as a QuickFIX session with
    /// UseDataDictionary=Y would; its Length/Data pairs decide how data
    /// fields are read. SendingTime is not compared with the clock.
    #[arg(long, value_name = "XML")]
    pub dictionary: Option<PathBuf>,
    /// With --dictionary, a FIXT.1.1 input's application dictionary (e.g.
    /// FIX50SP2.xml); --dictionary is then the transport one (FIXT11.xml).
    #[arg(long, value_name = "XML", requires = "dictionary")]
    pub app_dictionary: Option<PathBuf>,
}

impl From<FixCheckArgs> for check::Check {
    fn from(a: FixCheckArgs) -> Self {
        check::Check {
            input: a.input,
            json: a.json,
            dictionary: a.dictionary,
            app_dictionary: a.app_dictionary,
        }
    }
}

/// Largest message a session accepts by default (a longer one is garbled).
const MAX_MESSAGE: usize = 1 << 20;

/// `--app`: which application answers the counterparty's messages.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum AppArg {
    /// Send back each NewOrderSingle, SecurityDefinition and Email (what
    /// QuickFIX's acceptance tests expect); other types are unsupported.
    Echo,
    /// Answer each NewOrderSingle with ExecutionReports: new, then filled.
    Exec,
}

impl From<AppArg> for App {
    fn from(a: AppArg) -> Self {
        match a {
            AppArg::Echo => Self::Echo,
            AppArg::Exec => Self::Exec,
        }
    }
}

/// Arguments of `perfkit fix acceptor`, and those `perfkit fix initiator`
/// shares with it.
#[derive(Debug, clap::Args)]
pub struct SessionArgs {
    /// A QuickFIX settings file; its sessions of this command's
    /// ConnectionType are run.
    pub settings: PathBuf,
    /// The application.
    #[arg(long, value_enum, default_value = "echo")]
    pub app: AppArg,
    /// Also write every message sent and received to FILE.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Largest message accepted, in bytes.
    #[arg(long, default_value_t = MAX_MESSAGE,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(64..=1 << 30))]
    pub max_message: usize,
    /// Busy-poll each socket for up to DURATION (at most 10ms) before
    /// blocking when it has nothing to read: lower round-trip latency for
    /// a core kept busy. 0 (the default) blocks at once.
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = perfkit::units::parse_duration_up_to(MAX_SPIN))]
    pub spin: Duration,
    /// Most bytes kept for a counterparty that does not read (suffixes
    /// K, M, G); past it the connection is dropped. A counterparty that
    /// reads nothing at all is also dropped after two heartbeat
    /// intervals.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = send_queue_limit)]
    pub send_queue_limit: usize,
    /// Start on a damaged FileStorePath store: cut it at its last good
    /// record (what follows can no longer be resent and is gap-filled)
    /// and warn, instead of refusing to start. Sequence numbers already
    /// sent are never reused.
    #[arg(long)]
    pub recover_store: bool,
    /// Run every session over TLS, as QuickFIX/C++'s SSL acceptor and
    /// initiator classes do (QuickFIX/J's `SocketUseSSL=Y` turns it on
    /// per session). The certificates come from the settings file's
    /// `ServerCertificateFile`, `CertificationAuthoritiesFile`... keys.
    #[arg(long)]
    pub tls: bool,
    /// Run every thread of the engine on CORES (`2`, `2,3`, `0-3`, as
    /// Linux lists cores); a session's own PerfkitCpuAffinity places its
    /// connection thread instead. Unplaced by default.
    #[arg(long, value_name = "CORES")]
    pub pin: Option<fixcore::affinity::CoreSet>,
}

/// Arguments of `perfkit fix acceptor`: those it shares with the
/// initiator, and the cap on sessions its templates make.
#[derive(Debug, clap::Args)]
pub struct AcceptorArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// Most sessions made from `AcceptorTemplate=Y` templates live at once
    /// (connected, or holding their state in memory between
    /// connections). Past it their Logons are closed without an answer,
    /// with one warning per episode. The default keeps an acceptor under
    /// `ulimit -n 1024` with room for its configured sessions.
    #[arg(long, value_name = "N", default_value_t = fixengine::acceptor::MAX_DYNAMIC,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1 << 20))]
    pub max_dynamic_sessions: usize,
}

impl From<AcceptorArgs> for EngineSettings {
    fn from(a: AcceptorArgs) -> Self {
        EngineSettings {
            max_dynamic: a.max_dynamic_sessions,
            ..a.session.into()
        }
    }
}

/// Arguments of `perfkit fix initiator`: the acceptor's, and the orders it
/// may send (flags an acceptor has no use for, so they are not its).
#[derive(Debug, clap::Args)]
pub struct InitiatorArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// Send N NewOrderSingles once logged on (at most `--window`
    /// unanswered at a time), log out when each is filled or rejected,
    /// then exit, printing `answered N` (filled), `rejected R`,
    /// `unanswered U` and the final `seqs SENDER TARGET`. Exits 1 when an
    /// order was rejected, the counterparty sent a Reject, or orders went
    /// unanswered for `--grace`.
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=1 << 32))]
    pub orders: Option<u64>,
    /// With `--orders`: write each order's round trip (nanoseconds from
    /// sending it to receiving its first ExecutionReport) to FILE, one
    /// number per line, and print `seconds S` (first order sent to last
    /// filled).
    #[arg(long, value_name = "FILE", requires = "orders")]
    pub latencies: Option<PathBuf>,
    /// Unfilled orders allowed in flight with `--orders`.
    #[arg(long, default_value_t = ORDERS_WINDOW,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=1 << 20))]
    pub window: u64,
    /// With `--orders`: the NewOrderSingle's fields from FILE (tag=value,
    /// separated by `|`, SOH or lines; `fix load --order-template`'s
    /// format), e.g. a limit order `55=IBM|54=1|38=100|40=2|44=25.50|21=1`,
    /// instead of 21=1|55=MSFT|54=1|38=100|40=1. ClOrdID and TransactTime
    /// are added.
    #[arg(long, value_name = "FILE", requires = "orders")]
    pub order_template: Option<PathBuf>,
    /// With `--orders`: how long the last orders may go unanswered before
    /// the session logs out without them and the command exits 1.
    #[arg(long, value_name = "DURATION", default_value = "5s", requires = "orders",
          value_parser = parse_duration)]
    pub grace: Duration,
}

/// Unfilled orders allowed in flight with `--orders`, by default.
const ORDERS_WINDOW: u64 = 100;

/// `--send-queue-limit`: a size of at least 64 KiB.
fn send_queue_limit(s: &str) -> std::result::Result<usize, String> {
    let n = perfkit::units::parse_size(s)?;
    if n < 64 << 10 {
        return Err(format!("{s} is below 64K"));
    }
    usize::try_from(n).map_err(|_| format!("{s} is too large"))
}

/// Longest `--spin`: the session's timers run between waits, and a spin
/// much longer than a round trip buys nothing.
const MAX_SPIN: Duration = Duration::from_millis(10);

/// The longest `--min-round`: a variant's round past ten seconds is a
/// typo, not a measurement.
const MAX_MIN_ROUND: Duration = Duration::from_secs(10);

impl From<SessionArgs> for EngineSettings {
    fn from(a: SessionArgs) -> Self {
        EngineSettings {
            settings: a.settings,
            app: a.app.into(),
            log: a.log,
            orders: None,
            latencies: None,
            window: ORDERS_WINDOW,
            order_template: None,
            grace: fixengine::apps::GRACE,
            max_message: a.max_message,
            spin: a.spin,
            send_queue_limit: a.send_queue_limit,
            recover_store: a.recover_store,
            tls: a.tls,
            max_dynamic: fixengine::acceptor::MAX_DYNAMIC,
            cpu_affinity: a.pin,
        }
    }
}

impl From<InitiatorArgs> for EngineSettings {
    fn from(a: InitiatorArgs) -> Self {
        EngineSettings {
            orders: a.orders,
            latencies: a.latencies,
            window: a.window,
            order_template: a.order_template,
            grace: a.grace,
            ..a.session.into()
        }
    }
}

#[cfg(test)]
mod tests;
