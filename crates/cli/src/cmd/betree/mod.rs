//! `perfkit betree`: generate reference-format data, search it in the three
//! modes, compare outputs, and run the reference note's benchmark.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
pub use betree::stream::files::Generated;
use betree::stream::files::{self, FilesError, Workload};
use betree::stream::{self, StreamError};
use betree::workload::{Adtech, Shape};
use betree::{Event, Index};
use landing::write_atomically;
use perfkit_bench::betree::{self as measure, Options};
use perfkit_report::{Report, ReportOptions};

mod args;
mod bench;
mod search;

pub use args::BetreeArgs;

use bench::{bench_report, sweep_report, vs_atree_report};
use search::search;

/// What `perfkit betree` was asked to do.
#[derive(Debug)]
pub enum Task {
    /// Write generated expressions or events.
    Generate(Generate),
    /// Search every event.
    Search(Search),
    /// Compare two search outputs.
    Diff {
        /// The first output.
        a: PathBuf,
        /// The second.
        b: PathBuf,
    },
    /// The reference benchmark.
    Bench(Bench),
    /// The workload grid.
    Sweep(Sweep),
    /// betree beside the a-tree crate.
    VsAtree(VsAtree),
}

/// Which workload `gen-exprs`/`gen-events` write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Random `and`/`or`/`not` trees over booleans, 0/1 events (the
    /// reference benchmark's files).
    Boolean,
    /// Ad targeting: 200 attributes of mixed types, JSON events.
    Adtech,
    /// Few attributes, wide integer ranges, string equality and negation
    /// nested deep ([`betree::workload::DeepNegation`]), JSON events.
    DeepNegation,
}

/// A generator's run.
#[derive(Debug)]
pub struct Generate {
    /// Expressions or events.
    pub what: Generated,
    /// The workload.
    pub profile: Profile,
    /// Parameters of the boolean profile.
    pub params: usize,
    /// How many to write.
    pub count: u64,
    /// The same seed gives the same file.
    pub seed: u64,
    /// Where (`-`: stdout).
    pub output: PathBuf,
    /// The adtech profile's parameters.
    pub shape: Shape,
    /// Whether any were given (the boolean profile takes none).
    pub shaped: bool,
}

/// `betree bench --sweep`'s run.
#[derive(Debug)]
pub struct Sweep {
    /// How big each point's instance is.
    pub settings: measure::sweep::Settings,
    /// How to render the report.
    pub report: ReportOptions,
}

/// `betree bench --vs-atree`'s run.
#[derive(Debug)]
pub struct VsAtree {
    /// How big each workload's instance is.
    pub settings: measure::atree::Settings,
    /// How to render the report.
    pub report: ReportOptions,
}

pub use betree::stream::files::Input;
pub use betree::stream::{EventsFormat, Mode};

/// A search's run.
#[derive(Debug)]
pub struct Search {
    /// What to read.
    pub input: Input,
    /// How to search.
    pub mode: Mode,
    /// Reductions per step in `next` mode.
    pub budget: u64,
    /// Where to write (`-`: stdout).
    pub output: PathBuf,
    /// Where to write the build's and the search's times, if anywhere.
    pub times: Option<PathBuf>,
}

/// A benchmark's run.
#[derive(Debug)]
pub struct Bench {
    /// What to read.
    pub input: Input,
    /// What the benchmark does.
    pub options: Options,
    /// Replays of each long slice.
    pub replays: usize,
    /// Rounds of the CPU throughput comparison (library modes beside the
    /// command's own path).
    pub rounds: usize,
    /// How to render the report.
    pub report: ReportOptions,
}

/// Runs `perfkit betree`.
pub fn run(task: Task) -> Result<ExitCode> {
    match task {
        Task::Generate(g) => {
            if g.shaped && g.profile != Profile::Adtech {
                bail!("the workload shape flags need --profile adtech");
            }
            let workload = match g.profile {
                Profile::Adtech => Workload::Adtech(Box::new(Adtech::with_shape(g.shape)?)),
                Profile::Boolean => Workload::Boolean { params: g.params },
                Profile::DeepNegation => Workload::DeepNegation,
            };
            let mut stdout = io::stdout().lock();
            files::generate(&workload, g.what, g.count, g.seed, &g.output, &mut stdout)?;
            Ok(ExitCode::SUCCESS)
        }
        Task::Search(s) => search(s),
        Task::Diff { a, b } => diff(&a, &b),
        Task::Bench(b) => {
            let (index, events, build) = load(&b.input)?;
            let rep = bench_report(&index, &events, build, &b)?;
            super::emit(&rep, &b.report)
        }
        Task::Sweep(s) => {
            let rep = sweep_report(&s)?;
            super::emit(&rep, &s.report)
        }
        Task::VsAtree(v) => {
            let rep = vs_atree_report(&v)?;
            super::emit(&rep, &v.report)
        }
    }
}

/// What a failed write to stdout is, for the message: the OS's words alone
/// ("No space left on device") do not say what was being written.
const STDOUT: &str = "writing standard output";

/// Keeps glibc's mmap threshold at its default (128 KiB) for the rest of
/// the process. glibc raises the threshold to the size of each mmapped
/// block freed, so once the expression file's text (one block the size
/// of the file) is dropped, the index's arrays and tables, growing by
/// doubling, come from the heap below that size, and every block they
/// leave behind stays resident: ~6 MB, 1.5x the text, for one 4 MiB
/// expression (issue 18.6). With the threshold fixed they grow in mmapped
/// blocks (by `mremap`, without a copy) and freed ones go back at once.
///
/// Fixing one threshold also fixes glibc's trim threshold at its 128 KiB
/// start, and the heap is then shrunk and grown again around every
/// search's temporaries: 218 → 1,576 `brk` calls and 0.28 → 0.41 s of
/// system time for 20,000 events against 5,000 expressions. A trim
/// threshold of 64 MiB keeps that at 331 calls (0.06-0.08 s) without
/// raising the large expression's peak (23.7 MB either way).
fn fix_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets allocator parameters (under the
    // allocator's own lock); no memory is touched.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

/// Loads the expressions into an index, timing the build
/// ([`Input::load_index`]).
fn load_index(input: &Input) -> Result<(Index, Duration)> {
    fix_mmap_threshold();
    input.load_index().map_err(domains_hint)
}

/// Loads the expressions into an index (timing the build) and every event,
/// for the benchmark, which replays them ([`Input::load`]).
fn load(input: &Input) -> Result<(Index, Vec<Event>, Duration)> {
    fix_mmap_threshold();
    input.load().map_err(domains_hint)
}

/// An expression file without its domain list gets the flag that gives
/// one.
fn domains_hint(e: FilesError) -> anyhow::Error {
    match e {
        FilesError::Stream(StreamError::NoDomains { name }) => {
            anyhow::anyhow!("{name}: the first term must be the domain list (or give --domains)")
        }
        e => e.into(),
    }
}

/// Compares two search outputs line by line ([`files::diff`]) and says
/// where they first differ.
fn diff(a: &Path, b: &Path) -> Result<ExitCode> {
    let comparison = files::diff(a, b)?;
    let code = match comparison {
        stream::Comparison::Identical(_) => ExitCode::SUCCESS,
        stream::Comparison::Differs { .. } => ExitCode::FAILURE,
    };
    let mut out = BufWriter::new(io::stdout().lock());
    writeln!(out, "{}", comparison.describe(a, b))
        .and_then(|()| out.flush())
        .context(STDOUT)?;
    Ok(code)
}
