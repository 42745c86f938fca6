//! The flags of `perfkit betree` and their conversion into a [`Task`]:
//! clap's types end here.

use std::path::PathBuf;
use std::time::Duration;

use betree::workload::{self, Shape};
use perfkit::units::parse_duration;
use perfkit_bench::betree::atree::Settings as PeerSettings;
use perfkit_bench::betree::sweep::Settings as SweepSettings;
use perfkit_bench::betree::{Options, REPLAYS};

use super::{
    Bench, EventsFormat, Generate, Generated, Input, Mode, Profile, Search, Sweep, Task, VsAtree,
};
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
    /// Workload: `boolean` (the reference benchmark's), `adtech` or
    /// `deep-negation`.
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
    #[command(flatten)]
    shape: ShapeArgs,
}

#[derive(Debug, clap::Args)]
struct GenEventsArgs {
    /// Workload: `boolean` (the reference benchmark's), `adtech` or
    /// `deep-negation`.
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
    #[command(flatten)]
    shape: ShapeArgs,
}

/// The adtech generator's parameters (`--profile adtech` only); unset ones
/// keep the profile's values, or the grid point's with `--grid-point`.
/// Expressions and events fit together when generated with the same ones.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Workload shape (--profile adtech)")]
struct ShapeArgs {
    /// Start from point N (1-24) of `betree bench --sweep`'s grid.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=24))]
    grid_point: Option<usize>,
    /// Attributes in the schema (adtech: 200).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=workload::MAX_ATTRS as u64))]
    attributes: Option<usize>,
    /// Zipf exponent of attribute and value popularity (adtech: 0.8 and 1.0).
    #[arg(long, value_name = "S")]
    zipf: Option<f64>,
    /// Zipf exponent of value popularity alone.
    #[arg(long, value_name = "S")]
    value_zipf: Option<f64>,
    /// Predicates per expression, LO-HI (adtech: 3-10).
    #[arg(long, value_name = "LO-HI", value_parser = parse_range)]
    predicates: Option<(usize, usize)>,
    /// Share of predicates negated, `40%` or `0.4`: `not (…)` over
    /// always-defined attributes, `<>`/`not in`/`none of` elsewhere
    /// (adtech: its own mix).
    #[arg(long, value_name = "SHARE", value_parser = parse_share)]
    negation: Option<f64>,
    /// Distinct values of string attributes, comma-separated (adtech:
    /// 10,100,1000,10000).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    str_cards: Option<Vec<usize>>,
    /// Attributes per event, LO-HI (adtech: 40-120).
    #[arg(long, value_name = "LO-HI", value_parser = parse_range)]
    event_attrs: Option<(usize, usize)>,
    /// The most popular attributes, defined by every event (adtech: 0).
    #[arg(long, value_name = "N")]
    always_defined: Option<usize>,
    /// Target share of (expression, event) pairs that match, `2%` or
    /// `0.02`, met by calibration (adtech: none, about 2 %).
    #[arg(long, value_name = "SHARE", value_parser = parse_share)]
    match_rate: Option<f64>,
    /// Values of a string `in (…)` set, LO-HI (adtech: 2-6).
    #[arg(long, value_name = "LO-HI", value_parser = parse_range)]
    in_set: Option<(usize, usize)>,
    /// Values of a list's `one of (…)` set, LO-HI (adtech: 2-5).
    #[arg(long, value_name = "LO-HI", value_parser = parse_range)]
    one_of: Option<(usize, usize)>,
    /// Values of a `not in`/`none of` set, LO-HI (adtech: 1-3).
    #[arg(long, value_name = "LO-HI", value_parser = parse_range)]
    negated_set: Option<(usize, usize)>,
    /// Values of a list attribute in an event, LO-HI (adtech: 1-6).
    #[arg(long, value_name = "LO-HI", value_parser = parse_range)]
    event_lists: Option<(usize, usize)>,
}

impl ShapeArgs {
    /// Whether any shape flag was given.
    fn given(&self) -> bool {
        self.grid_point.is_some()
            || self.attributes.is_some()
            || self.zipf.is_some()
            || self.value_zipf.is_some()
            || self.predicates.is_some()
            || self.negation.is_some()
            || self.str_cards.is_some()
            || self.event_attrs.is_some()
            || self.always_defined.is_some()
            || self.match_rate.is_some()
            || self.in_set.is_some()
            || self.one_of.is_some()
            || self.negated_set.is_some()
            || self.event_lists.is_some()
    }

    /// The shape these flags describe (checked when the generator is
    /// built).
    fn shape(self) -> Shape {
        let mut s = match self.grid_point {
            Some(n) => workload::grid().swap_remove(n - 1),
            None => Shape::default(),
        };
        if let Some(v) = self.attributes {
            s.attributes = v;
        }
        if let Some(v) = self.zipf {
            s.attr_zipf = v;
            s.value_zipf = v;
        }
        if let Some(v) = self.value_zipf {
            s.value_zipf = v;
        }
        if let Some(v) = self.predicates {
            s.predicates = v;
        }
        if self.negation.is_some() {
            s.negation = self.negation;
        }
        if let Some(v) = self.str_cards {
            s.str_cards = v;
        }
        if let Some(v) = self.event_attrs {
            s.event_attrs = v;
        }
        if let Some(v) = self.always_defined {
            s.always_defined = v;
        }
        if self.match_rate.is_some() {
            s.match_rate = self.match_rate;
        }
        if let Some(v) = self.in_set {
            s.lists.in_set = v;
        }
        if let Some(v) = self.one_of {
            s.lists.one_of = v;
        }
        if let Some(v) = self.negated_set {
            s.lists.negated = v;
        }
        if let Some(v) = self.event_lists {
            s.lists.event = v;
        }
        s
    }
}

/// `LO-HI` (or one number for both) as an inclusive range.
fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let num = |t: &str| {
        t.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{t}` is not a whole number"))
    };
    let (lo, hi) = match s.split_once('-') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => (num(s)?, num(s)?),
    };
    if hi < lo {
        return Err(format!("{lo}-{hi}: the low end is above the high end"));
    }
    Ok((lo, hi))
}

/// A share as `40%` or `0.4`, 0 to 1.
fn parse_share(s: &str) -> Result<f64, String> {
    let (t, scale) = match s.strip_suffix('%') {
        Some(t) => (t, 100.0),
        None => (s, 1.0),
    };
    let v = t
        .trim()
        .parse::<f64>()
        .map_err(|_| format!("`{s}` is not a share (`40%` or `0.4`)"))?
        / scale;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("`{s}` is not between 0 and 1 (0% and 100%)"));
    }
    Ok(v)
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
    /// Deep negation (a `perfkit bench` workload): 4 integers over
    /// 0..=10^9 and 3 strings, all in every event; a string equality and
    /// an `and`/`or` tree 2-4 deep with half its nodes negated; JSON
    /// events; `--params` is ignored.
    DeepNegation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ModeArg {
    /// 512 events at a time, bit-parallel when they select many expressions each
    Std,
    /// One event at a time (`search_iter` + `search_all`)
    All,
    /// One event at a time in steps of `--budget` (`search_next`)
    Next,
    /// 512 events at a time, always bit-parallel
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

/// `betree bench`'s input: as [`InputArgs`], but not needed by `--sweep`
/// or `--vs-atree`.
#[derive(Debug, clap::Args)]
struct BenchInputArgs {
    /// Expression file (Erlang terms: domain list, then `<<"expr">>.` lines).
    #[arg(
        long,
        required_unless_present = "generated",
        conflicts_with = "generated"
    )]
    exprs: Option<PathBuf>,
    /// Event file (`-` for stdin).
    #[arg(
        long,
        required_unless_present = "generated",
        conflicts_with = "generated"
    )]
    events: Option<PathBuf>,
    /// Format of the event file.
    #[arg(long, value_enum, default_value = "ref")]
    events_format: EventsFormatArg,
    /// Domains as a JSON array or an Erlang term list (see `search`).
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
    /// Also write the index build's and the search's wall and CPU times
    /// to this file, one line of `key=nanoseconds` (how `perfkit bench`
    /// times the search alone).
    #[arg(long, value_name = "FILE")]
    times: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct DiffArgs {
    /// First search output.
    a: PathBuf,
    /// Second search output.
    b: PathBuf,
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("generated").args(["sweep", "vs_atree"])))]
struct BenchArgs {
    #[command(flatten)]
    input: BenchInputArgs,
    /// Instead of one file pair, run the fixed grid of 24 generated
    /// workload shapes (attributes {50, 200, 400} x Zipf {0.6, 1.4} x
    /// predicates {2-4, 8-15} x negation {0%, 40%}) and print each point's
    /// events/s (CPU), candidates per match and index memory, worst first.
    #[arg(long)]
    sweep: bool,
    /// Instead of one file pair, run the a-tree crate beside betree on the
    /// same expressions (translated; what cannot be is left out and
    /// counted) and events: the adtech profile at 100,000 expressions and
    /// three grid points at 20,000; prints both's events/s (CPU) and their
    /// ratio, and fails if their ids differ on any event.
    #[arg(long)]
    vs_atree: bool,
    /// With `--sweep` or `--vs-atree`: small instances (2,000 expressions,
    /// 40 events, one round) instead of 20,000 (100,000) and 300.
    #[arg(long, requires = "generated")]
    quick: bool,
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
                shaped: g.shape.given(),
                shape: g.shape.shape(),
            }),
            BetreeCommand::GenEvents(g) => Task::Generate(Generate {
                what: Generated::Events,
                profile: g.profile.into(),
                params: g.params,
                count: g.count,
                seed: g.seed,
                output: g.output,
                shaped: g.shape.given(),
                shape: g.shape.shape(),
            }),
            BetreeCommand::Search(s) => Task::Search(Search {
                input: s.input.into(),
                mode: s.mode.into(),
                budget: s.budget,
                output: s.output,
                times: s.times,
            }),
            BetreeCommand::Diff(d) => Task::Diff { a: d.a, b: d.b },
            BetreeCommand::Bench(b) if b.sweep => Task::Sweep(Sweep {
                settings: SweepSettings {
                    rounds: if b.quick { 1 } else { b.rounds },
                    ..if b.quick {
                        SweepSettings::quick()
                    } else {
                        SweepSettings::default()
                    }
                },
                report: b.report.options(),
            }),
            BetreeCommand::Bench(b) if b.vs_atree => Task::VsAtree(VsAtree {
                settings: PeerSettings {
                    rounds: if b.quick { 1 } else { b.rounds },
                    ..if b.quick {
                        PeerSettings::quick()
                    } else {
                        PeerSettings::default()
                    }
                },
                report: b.report.options(),
            }),
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

impl From<BenchInputArgs> for Input {
    fn from(i: BenchInputArgs) -> Input {
        InputArgs {
            // clap requires both without `--sweep`, the only way here.
            exprs: i.exprs.unwrap_or_default(),
            events: i.events.unwrap_or_default(),
            events_format: i.events_format,
            domains: i.domains,
        }
        .into()
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
            ProfileArg::DeepNegation => Profile::DeepNegation,
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
mod tests;
