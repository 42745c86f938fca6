//! `perfkit betree`: generate reference-format data, search it in the three
//! modes, compare outputs, and run the reference note's benchmark.

use std::fs;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use betree::stream::{self, EventReader, ExprFile, StreamError};
use betree::workload::{Adtech, Shape};
use betree::{Event, Index, Schema};
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

/// Which file a generator writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generated {
    /// Expressions.
    Exprs,
    /// Events.
    Events,
}

/// Which workload `gen-exprs`/`gen-events` write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Random `and`/`or`/`not` trees over booleans, 0/1 events (the
    /// reference benchmark's files).
    Boolean,
    /// Ad targeting: 200 attributes of mixed types, JSON events.
    Adtech,
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

pub use betree::stream::{EventsFormat, Mode};

/// The files a search or benchmark reads.
#[derive(Debug)]
pub struct Input {
    /// The expression file.
    pub exprs: PathBuf,
    /// The event file (`-`: stdin).
    pub events: PathBuf,
    /// Its format.
    pub events_format: EventsFormat,
    /// Domains replacing the expression file's own list.
    pub domains: Option<PathBuf>,
}

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
            let count = usize::try_from(g.count).unwrap_or(usize::MAX);
            if g.shaped && g.profile != Profile::Adtech {
                bail!("the workload shape flags need --profile adtech");
            }
            let adtech = match g.profile {
                Profile::Adtech => Some(Adtech::with_shape(g.shape)?),
                Profile::Boolean => None,
            };
            stream_output(&g.output, |out| match (&adtech, g.what) {
                (Some(a), Generated::Exprs) => a.write_exprs(out, count, g.seed),
                (Some(a), Generated::Events) => a.write_events(out, count, g.seed),
                (None, Generated::Exprs) => {
                    stream::write_boolean_exprs(out, g.params, g.count, g.seed)
                }
                (None, Generated::Events) => {
                    stream::write_boolean_events(out, g.params, g.count, g.seed)
                }
            })?;
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

fn read_input(path: &Path) -> Result<String> {
    if path == Path::new("-") {
        let mut s = String::new();
        io::stdin()
            .read_to_string(&mut s)
            .context("reading stdin")?;
        Ok(s)
    } else {
        fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
    }
}

/// What a failed write to stdout is, for the message: the OS's words alone
/// ("No space left on device") do not say what was being written.
pub(super) const STDOUT: &str = "writing standard output";

/// Streams generated output to `path` (`-`: stdout) through a buffer; a
/// file is written to a temporary sibling and renamed when complete.
fn stream_output(
    path: &Path,
    gen_into: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    if path == Path::new("-") {
        let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
        gen_into(&mut out)
            .and_then(|()| out.flush())
            .context(STDOUT)
    } else {
        write_atomically(path, |f| {
            let mut out = BufWriter::with_capacity(1 << 16, f);
            gen_into(&mut out)?;
            out.flush()
        })
        .with_context(|| format!("writing {}", path.display()))
    }
}

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

/// Loads the expressions into an index, timing the build.
fn load_index(input: &Input) -> Result<(Index, Duration)> {
    fix_mmap_threshold();
    let text = read_input(&input.exprs)?;
    let exprs_path = input.exprs.display().to_string();
    let mut file = ExprFile::parse(text, &exprs_path)?;
    if let Some(path) = &input.domains {
        let t = read_input(path)?;
        file.set_domains(&t, &path.display().to_string())?;
    }
    match file.build() {
        Err(StreamError::NoDomains { name }) => {
            bail!("{name}: the first term must be the domain list (or give --domains)")
        }
        built => Ok(built?),
    }
}

/// Loads the expressions into an index (timing the build) and every event,
/// for the benchmark, which replays them.
fn load(input: &Input) -> Result<(Index, Vec<Event>, Duration)> {
    let (index, build) = load_index(input)?;
    let events = stream::read_all(&mut open_events(input, index.schema())?)?;
    Ok((index, events, build))
}

/// The event file (`-`: stdin), its events read one at a time.
fn open_events<'a>(input: &Input, schema: &'a Schema) -> Result<EventReader<'a>> {
    let path = input.events.display().to_string();
    let reader: Box<dyn BufRead> = if input.events == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        let f = fs::File::open(&input.events).with_context(|| format!("reading {path}"))?;
        Box::new(io::BufReader::with_capacity(1 << 16, f))
    };
    Ok(EventReader::new(reader, path, input.events_format, schema))
}

/// Compares two search outputs line by line ([`stream::compare`]) and
/// says where they first differ.
fn diff(a: &Path, b: &Path) -> Result<ExitCode> {
    let mut ra = output_lines(a, false)?;
    // The same stdin twice: the first side reads it all, so the second
    // sees it already at its end (as when each side was read whole).
    let mut rb = output_lines(b, a == Path::new("-"))?;
    let mut out = BufWriter::new(io::stdout().lock());
    let (line, code) = match stream::compare(&mut ra, &mut rb)? {
        stream::Comparison::Identical(events) => {
            (format!("identical: {events} events"), ExitCode::SUCCESS)
        }
        stream::Comparison::Differs { event, a: x, b: y } => {
            let show = |v: Option<String>| match v.as_deref() {
                Some("") => "no match".to_string(),
                Some(s) => format!("`{s}`"),
                None => "no such event".to_string(),
            };
            let line = format!(
                "event {event} differs: {} has {}, {} has {}",
                a.display(),
                show(x),
                b.display(),
                show(y)
            );
            (line, ExitCode::FAILURE)
        }
    };
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .context(STDOUT)?;
    Ok(code)
}

/// One side of `betree diff`: `path` (`-`: stdin; `exhausted`: stdin
/// already read whole by the other side, so nothing).
fn output_lines(path: &Path, exhausted: bool) -> Result<stream::OutputLines> {
    let (reader, name): (Box<dyn BufRead>, String) = if path == Path::new("-") {
        let reader: Box<dyn BufRead> = if exhausted {
            Box::new(io::empty())
        } else {
            Box::new(io::stdin().lock())
        };
        (reader, "stdin".into())
    } else {
        let f = fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
        (
            Box::new(io::BufReader::with_capacity(1 << 16, f)),
            path.display().to_string(),
        )
    };
    Ok(stream::OutputLines::new(reader, name))
}
