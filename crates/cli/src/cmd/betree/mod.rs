//! `perfkit betree`: generate reference-format data, search it in the three
//! modes, compare outputs, and run the reference note's benchmark.

use std::fs;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use betree::reference::{self, Term};
use betree::workload::{Adtech, Shape};
use betree::{BatchPath, Event, Index, Schema, Scratch, SearchStep};
use landing::write_atomically;
use perfkit_bench::betree::{self as measure, Options};
use perfkit_report::{Report, ReportOptions};

mod args;
mod bench;
mod search;

pub use args::BetreeArgs;

pub use bench::default_workload;
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

/// How `search` searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `search_batch`: each chunk of 512 events bit-parallel or event by
    /// event, whichever its events' selections favour.
    Std,
    /// `search_iter` + `search_all`.
    All,
    /// `search_iter` + `search_next` with a budget.
    Next,
    /// `search_batch_by` with every chunk bit-parallel.
    Batch,
}

/// The format of an event file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventsFormat {
    /// Erlang lists of 0/1 (or false/true), one per event.
    Ref,
    /// One JSON object per line.
    Json,
}

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
                (None, Generated::Exprs) => write_boolean_exprs(out, g.params, g.count, g.seed),
                (None, Generated::Events) => write_boolean_events(out, g.params, g.count, g.seed),
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

/// Writes the boolean profile's expression file one expression at a time
/// (the same bytes as [`reference::write_expr_file`] over
/// [`reference::random_expressions`]), so `--count` bounds time, not memory.
fn write_boolean_exprs(
    out: &mut dyn Write,
    params: usize,
    count: u64,
    seed: u64,
) -> io::Result<()> {
    let header = reference::write_expr_file(&reference::params_domains(params), &[]);
    out.write_all(header.as_bytes())?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut line = String::new();
    for _ in 0..count {
        line.clear();
        reference::push_expr_term(&mut line, &reference::random_expression(&mut rng, params));
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// Writes the boolean profile's event file one event at a time (the same
/// bytes as [`reference::write_event_file`] over [`reference::random_events`]).
fn write_boolean_events(
    out: &mut dyn Write,
    params: usize,
    count: u64,
    seed: u64,
) -> io::Result<()> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut values = Vec::with_capacity(params);
    let mut line = String::new();
    for _ in 0..count {
        values.clear();
        values.extend((0..params).map(|_| rng.bool()));
        line.clear();
        reference::write_event(&mut line, &values);
        out.write_all(line.as_bytes())?;
    }
    Ok(())
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
    let mut terms = reference::read_terms(&text, "expression file")
        .with_context(|| format!("reading {exprs_path}"))?;
    // The terms own their text: the file's copy goes before the index is
    // built (one large expression would otherwise be held twice).
    drop(text);
    let mut domains = match terms.first() {
        Some((line, t @ Term::List(_))) => {
            let d = reference::domains_from_term(t, *line)
                .with_context(|| format!("reading {exprs_path}"))?;
            terms.remove(0);
            Some(d)
        }
        _ => None,
    };
    if let Some(path) = &input.domains {
        let t = read_input(path)?;
        domains = Some(if looks_like_json(&t) {
            betree::domain::domains_from_json(&t)
                .with_context(|| format!("reading {}", path.display()))?
        } else {
            let terms = reference::read_terms(&t, "domain file")
                .with_context(|| format!("reading {}", path.display()))?;
            let (line, first) = terms
                .first()
                .with_context(|| format!("{}: no domain list", path.display()))?;
            reference::domains_from_term(first, *line)
                .with_context(|| format!("reading {}", path.display()))?
        });
    }
    let Some(domains) = domains else {
        bail!("{exprs_path}: the first term must be the domain list (or give --domains)");
    };
    let schema = Schema::from_domains(domains).with_context(|| format!("reading {exprs_path}"))?;
    let t = Instant::now();
    let mut index = Index::new(schema.clone());
    let mut bulk = index.bulk();
    // Each text is handed over and dropped once parsed, before its
    // expression is compiled.
    for (n, (line, term)) in terms.into_iter().enumerate() {
        let (Term::Binary(e) | Term::Str(e)) = term else {
            bail!("{exprs_path} line {line}: expected <<\"expression\">>");
        };
        bulk.insert_owned(n as u64 + 1, e)
            .with_context(|| format!("{exprs_path} line {line} (expression {})", n + 1))?;
    }
    drop(bulk);
    let build = t.elapsed();
    Ok((index, build))
}

/// Loads the expressions into an index (timing the build) and every event,
/// for the benchmark, which replays them.
fn load(input: &Input) -> Result<(Index, Vec<Event>, Duration)> {
    let (index, build) = load_index(input)?;
    let mut events = Vec::new();
    let mut stream = EventReader::open(input, index.schema())?;
    while let Some(ev) = stream.next_event()? {
        events.push(ev);
    }
    Ok((index, events, build))
}

/// Events read one at a time from the event file (or stdin), so a search
/// holds one batch of them, never the file.
struct EventReader<'a> {
    schema: &'a Schema,
    /// The event file's name, for errors.
    path: String,
    source: EventSource,
    /// Events read so far (their 1-based number in errors).
    read: usize,
}

enum EventSource {
    Ref {
        stream: reference::EventStream<Box<dyn BufRead>>,
        /// The values of the event being read, reused event after event.
        values: Vec<bool>,
    },
    Json {
        reader: Box<dyn BufRead>,
        line: usize,
        text: String,
    },
}

impl<'a> EventReader<'a> {
    fn open(input: &Input, schema: &'a Schema) -> Result<Self> {
        let path = input.events.display().to_string();
        let reader: Box<dyn BufRead> = if input.events == Path::new("-") {
            Box::new(io::stdin().lock())
        } else {
            let f = fs::File::open(&input.events).with_context(|| format!("reading {path}"))?;
            Box::new(io::BufReader::with_capacity(1 << 16, f))
        };
        let source = match input.events_format {
            EventsFormat::Ref => EventSource::Ref {
                stream: reference::EventStream::new(reader),
                values: Vec::new(),
            },
            EventsFormat::Json => EventSource::Json {
                reader,
                line: 0,
                text: String::new(),
            },
        };
        Ok(EventReader {
            schema,
            path,
            source,
            read: 0,
        })
    }

    fn next_event(&mut self) -> Result<Option<Event>> {
        let mut ev = Event::empty(self.schema);
        Ok(self.next_event_into(&mut ev)?.then_some(ev))
    }

    /// Reads the next event into `ev`, reusing its buffers (and the
    /// reader's), and says whether there was one: a search streams
    /// thousands of events through one batch of them.
    fn next_event_into(&mut self, ev: &mut Event) -> Result<bool> {
        let path = &self.path;
        match &mut self.source {
            EventSource::Ref { stream, values } => {
                if stream
                    .next_event_into(values)
                    .with_context(|| format!("reading {path}"))?
                    .is_none()
                {
                    return Ok(false);
                }
                ev.set_bools(self.schema, values)
                    .with_context(|| format!("{path}: event {}", self.read + 1))?;
            }
            EventSource::Json { reader, line, text } => loop {
                text.clear();
                let n = reader
                    .read_line(text)
                    .with_context(|| format!("reading {path} line {}", *line + 1))?;
                if n == 0 {
                    return Ok(false);
                }
                *line += 1;
                if !text.trim().is_empty() {
                    ev.set_json(self.schema, text.trim_end_matches(['\n', '\r']))
                        .with_context(|| format!("{path} line {line}"))?;
                    break;
                }
            },
        }
        self.read += 1;
        Ok(true)
    }
}

/// Events searched together: one lane group of the batch path (512), so
/// its lanes are full. A batch's output lines are held until its last
/// expression is searched (7.5 MB of text on the dense profile, 2,534 ids
/// an event), so a larger batch holds more for no fuller lanes. When the
/// lines were formatted after the search, from lists of ids, the command
/// ran at 0.748-0.749x the library's search_batch against 0.710-0.738x
/// with 1,024 (dense profile, `betree bench` CPU rows, two interleaved
/// runs); adtech did not change (0.91-0.96x either way).
pub(crate) const SEARCH_BATCH: usize = 512;

/// Compares two search outputs line by line, reading both as it goes
/// (memory holds one line of each, whatever the files' length), and stops
/// at the first difference.
fn diff(a: &Path, b: &Path) -> Result<ExitCode> {
    let mut ra = DiffSide::open(a, false)?;
    // The same stdin twice: the first side reads it all, so the second
    // sees it already at its end (as when each side was read whole).
    let mut rb = DiffSide::open(b, a == Path::new("-"))?;
    let mut out = BufWriter::new(io::stdout().lock());
    let mut events = 0usize;
    loop {
        let (x, y) = (ra.next_line()?, rb.next_line()?);
        if x.is_none() && y.is_none() {
            break;
        }
        if x != y {
            let show = |v: Option<&str>| match v {
                Some("") => "no match".to_string(),
                Some(s) => format!("`{s}`"),
                None => "no such event".to_string(),
            };
            writeln!(
                out,
                "event {} differs: {} has {}, {} has {}",
                events + 1,
                a.display(),
                show(x),
                b.display(),
                show(y)
            )
            .and_then(|()| out.flush())
            .context(STDOUT)?;
            return Ok(ExitCode::FAILURE);
        }
        events += 1;
    }
    writeln!(out, "identical: {events} events")
        .and_then(|()| out.flush())
        .context(STDOUT)?;
    Ok(ExitCode::SUCCESS)
}

/// One side of `betree diff`: its lines one at a time, split as
/// [`str::lines`] splits (at `\n` or `\r\n`; a last line needs no end).
struct DiffSide {
    reader: Box<dyn BufRead>,
    name: String,
    line: String,
}

impl DiffSide {
    /// Opens `path` (`-`: stdin; `exhausted`: stdin already read whole by
    /// the other side, so nothing).
    fn open(path: &Path, exhausted: bool) -> Result<Self> {
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
        Ok(DiffSide {
            reader,
            name,
            line: String::new(),
        })
    }

    /// The next line without its ending, or `None` at the end. Not UTF-8
    /// is an error, as it is for a whole-file read.
    fn next_line(&mut self) -> Result<Option<&str>> {
        self.line.clear();
        let n = self
            .reader
            .read_line(&mut self.line)
            .with_context(|| format!("reading {}", self.name))?;
        if n == 0 {
            return Ok(None);
        }
        if self.line.ends_with('\n') {
            self.line.pop();
            if self.line.ends_with('\r') {
                self.line.pop();
            }
        }
        Ok(Some(&self.line))
    }
}

/// Whether a domain file is JSON rather than an Erlang term list. Both
/// open with `[{`; a JSON object's first key is a string, an Erlang tuple's
/// first element an atom. (Looking at the end instead failed on Erlang files
/// that close with a `%` comment.)
fn looks_like_json(text: &str) -> bool {
    let mut rest = text.trim_start().strip_prefix('[').map(str::trim_start);
    if let Some(r) = rest {
        if r.starts_with(']') {
            // `[]` parses either way; JSON reads it the same.
            return true;
        }
        rest = r.strip_prefix('{').map(str::trim_start);
    }
    rest.is_some_and(|r| r.starts_with('"') || r.starts_with('}'))
}

#[cfg(test)]
mod domain_format_tests {
    use super::looks_like_json;

    #[test]
    fn json_and_erlang_domain_files_are_told_apart() {
        assert!(looks_like_json(r#" [ {"name": "a", "type": "bool"} ]"#));
        assert!(looks_like_json("[]"));
        assert!(looks_like_json("[{}]"));
        assert!(!looks_like_json("[{par1,bool,disallow_undefined}].\n"));
        assert!(!looks_like_json(
            "[{par1,bool,disallow_undefined}]. % trailing comment\n"
        ));
        assert!(!looks_like_json("% header\n[{age,int,allow_undefined}]."));
    }
}
