//! The flags of `perfkit betree` and their conversion into a [`Task`]:
//! clap's types end here.

use std::path::PathBuf;
use std::time::Duration;

use perfkit::units::parse_duration;
use perfkit_bench::betree::{Options, REPLAYS};

use super::{Bench, EventsFormat, Generate, Generated, Input, Mode, Profile, Search, Task};
use crate::flags::ReportArgs;

/// Arguments of `perfkit betree`.
#[derive(Debug, clap::Args)]
pub struct BetreeArgs {
    #[command(subcommand)]
    command: BetreeCommand,
}

#[derive(Debug, clap::Subcommand)]
enum BetreeCommand {
    /// Write random expressions over `par1..parP` in the reference format.
    GenExprs(GenExprsArgs),
    /// Write random 0/1 events in the reference format.
    GenEvents(GenEventsArgs),
    /// Search every event; one line per event with the matching ids
    /// (1-based positions in the expression file), ascending.
    Search(SearchArgs),
    /// Compare two search outputs; report the first differing event.
    Diff(DiffArgs),
    /// The reference note's benchmark: std, iterator+all and iterator+next
    /// interleaved, per-block comparison, per-event latency, yields, batch.
    Bench(BenchArgs),
}

/// The most `--params` the boolean generators take: every expression uses
/// all of them (about 10 bytes each), so 65,536 already makes each
/// expression over half a megabyte; far past that, one expression would
/// not fit in memory.
const MAX_PARAMS: u64 = 1 << 16;

#[derive(Debug, clap::Args)]
struct GenExprsArgs {
    /// Workload: `boolean` (the reference benchmark's) or `adtech`.
    #[arg(long, value_enum, default_value = "boolean")]
    profile: ProfileArg,
    /// Number of parameters (1..=65536).
    #[arg(long, default_value_t = 128, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_PARAMS))]
    params: usize,
    /// Number of expressions (written one at a time: any count streams).
    #[arg(long, default_value_t = 5000)]
    count: u64,
    /// Seed: the same seed gives the same file.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file (`-` for stdout).
    #[arg(short = 'o', long, default_value = "-")]
    output: PathBuf,
}

#[derive(Debug, clap::Args)]
struct GenEventsArgs {
    /// Workload: `boolean` (the reference benchmark's) or `adtech`.
    #[arg(long, value_enum, default_value = "boolean")]
    profile: ProfileArg,
    /// Number of parameters (1..=65536).
    #[arg(long, default_value_t = 128, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_PARAMS))]
    params: usize,
    /// Number of events (written one at a time: any count streams).
    #[arg(long, default_value_t = 10000)]
    count: u64,
    /// Seed: the same seed gives the same file.
    #[arg(long, default_value_t = 2)]
    seed: u64,
    /// Output file (`-` for stdout).
    #[arg(short = 'o', long, default_value = "-")]
    output: PathBuf,
}

/// Which workload `gen-exprs`/`gen-events` write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ProfileArg {
    /// Random `and`/`or`/`not` trees over `--params` booleans, 0/1 events
    /// (the reference benchmark's files).
    Boolean,
    /// Ad targeting: 200 attributes of mixed types, 3-10 predicates per
    /// expression, Zipf popularity; JSON events (`--events-format json`);
    /// `--params` is ignored.
    Adtech,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ModeArg {
    /// Each event's matches, as `search` returns them.
    Std,
    /// `search_iter` + `search_all`.
    All,
    /// `search_iter` + `search_next` with `--budget`.
    Next,
    /// `search_batch` over all events.
    Batch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum EventsFormatArg {
    /// Erlang lists of 0/1 (or false/true), one per event.
    Ref,
    /// One JSON object per line.
    Json,
}

#[derive(Debug, clap::Args)]
struct InputArgs {
    /// Expression file (Erlang terms: domain list, then `<<"expr">>.` lines).
    #[arg(long)]
    exprs: PathBuf,
    /// Event file (`-` for stdin).
    #[arg(long)]
    events: PathBuf,
    /// Format of the event file.
    #[arg(long, value_enum, default_value = "ref")]
    events_format: EventsFormatArg,
    /// Domains as a JSON array (`[{"name": "age", "type": "integer",
    /// "allow_undefined": false, "min": 0, "max": 120}]`; name, type and
    /// allow_undefined required, bounds optional: min/max or max_strings)
    /// or an Erlang term list; replaces the expression file's own list,
    /// which may then be omitted.
    #[arg(long)]
    domains: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct SearchArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Search mode.
    #[arg(long, value_enum, default_value = "std")]
    mode: ModeArg,
    /// Reductions per step in `next` mode.
    #[arg(long, default_value_t = 2000)]
    budget: u64,
    /// Output file (`-` for stdout).
    #[arg(short = 'o', long, default_value = "-")]
    output: PathBuf,
}

#[derive(Debug, clap::Args)]
struct DiffArgs {
    /// First search output.
    a: PathBuf,
    /// Second search output.
    b: PathBuf,
}

#[derive(Debug, clap::Args)]
struct BenchArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Reductions per step of the cooperative mode.
    #[arg(long, default_value_t = 2000)]
    budget: u64,
    /// Events per block of the comparison table.
    #[arg(long, default_value_t = 1000)]
    block: usize,
    /// Events searched unrecorded first.
    #[arg(long, default_value_t = 50)]
    warmup: usize,
    /// Rounds of the CPU throughput rows (library modes and the command's
    /// own path; the median is reported).
    #[arg(long, default_value_t = 5, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    rounds: usize,
    #[command(flatten)]
    replay: ReplayArgs,
    #[command(flatten)]
    report: ReportArgs,
}

/// The default of `--replay-over`: [`Options::default`]'s threshold.
const REPLAY_OVER: &str = "50us";

/// Which slices of the cooperative mode are replayed, and how often.
#[derive(Debug, Clone, Copy, clap::Args)]
struct ReplayArgs {
    /// Replay the cooperative mode's slices longer than this (wall time).
    #[arg(long, default_value = REPLAY_OVER, value_parser = parse_duration)]
    replay_over: Duration,
    /// Replay at most this many of them, the longest.
    #[arg(long, default_value_t = Options::default().long_slices_kept)]
    replay_top: usize,
    /// Replays of each (at least 1).
    #[arg(long, default_value_t = REPLAYS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    replays: usize,
}

impl BetreeArgs {
    /// The task these flags ask for.
    pub fn task(self) -> Task {
        match self.command {
            BetreeCommand::GenExprs(g) => Task::Generate(Generate {
                what: Generated::Exprs,
                profile: g.profile.into(),
                params: g.params,
                count: g.count,
                seed: g.seed,
                output: g.output,
            }),
            BetreeCommand::GenEvents(g) => Task::Generate(Generate {
                what: Generated::Events,
                profile: g.profile.into(),
                params: g.params,
                count: g.count,
                seed: g.seed,
                output: g.output,
            }),
            BetreeCommand::Search(s) => Task::Search(Search {
                input: s.input.into(),
                mode: s.mode.into(),
                budget: s.budget,
                output: s.output,
            }),
            BetreeCommand::Diff(d) => Task::Diff { a: d.a, b: d.b },
            BetreeCommand::Bench(b) => Task::Bench(Bench {
                options: Options {
                    budget: b.budget,
                    block: b.block,
                    warmup: b.warmup,
                    long_slice_ns: b.replay.replay_over.as_nanos() as u64,
                    long_slices_kept: b.replay.replay_top,
                },
                replays: b.replay.replays,
                rounds: b.rounds,
                report: b.report.options(),
                input: b.input.into(),
            }),
        }
    }
}

impl From<InputArgs> for Input {
    fn from(i: InputArgs) -> Input {
        Input {
            exprs: i.exprs,
            events: i.events,
            events_format: match i.events_format {
                EventsFormatArg::Ref => EventsFormat::Ref,
                EventsFormatArg::Json => EventsFormat::Json,
            },
            domains: i.domains,
        }
    }
}

impl From<ProfileArg> for Profile {
    fn from(p: ProfileArg) -> Profile {
        match p {
            ProfileArg::Boolean => Profile::Boolean,
            ProfileArg::Adtech => Profile::Adtech,
        }
    }
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Std => Mode::Std,
            ModeArg::All => Mode::All,
            ModeArg::Next => Mode::Next,
            ModeArg::Batch => Mode::Batch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        betree: BetreeArgs,
    }

    /// The flags' defaults are the library's: `betree bench` with no
    /// options measures with `Options::default()` and `REPLAYS`.
    #[test]
    fn bench_flag_defaults_are_the_options_defaults() {
        let argv = ["betree", "bench", "--exprs", "e", "--events", "v"];
        let Task::Bench(b) = Cli::try_parse_from(argv).unwrap().betree.task() else {
            panic!("not a bench task");
        };
        assert_eq!(b.options, Options::default());
        assert_eq!(b.replays, REPLAYS);
    }
}
