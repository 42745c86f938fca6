//! `perfkit betree`: generate reference-format data, search it in the three
//! modes, compare outputs, and run the reference note's benchmark.

use std::fs;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::flags::ReportArgs;
use anyhow::{Context, Result, bail};
use betree::reference::{self, Term};
use betree::workload::Adtech;
use betree::{Event, Index, Schema, SearchStep};
use perfkit::report::{self, Report, Row, Value};
use perfkit::units::parse_duration;
use perfkit_bench::betree::{self as measure, BenchReport, Options, Replayed, SliceCpu};

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
    profile: Profile,
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
    profile: Profile,
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
enum Profile {
    /// Random `and`/`or`/`not` trees over `--params` booleans, 0/1 events
    /// (the reference benchmark's files).
    Boolean,
    /// Ad targeting: 200 attributes of mixed types, 3-10 predicates per
    /// expression, Zipf popularity; JSON events (`--events-format json`);
    /// `--params` is ignored.
    Adtech,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Mode {
    /// Each event's matches, as `search` returns them (computed with the
    /// batch path, which gives the same ids faster).
    Std,
    /// `search_iter` + `search_all`.
    All,
    /// `search_iter` + `search_next` with `--budget`.
    Next,
    /// `search_batch` over all events.
    Batch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum EventsFormat {
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
    events_format: EventsFormat,
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
    mode: Mode,
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
    #[command(flatten)]
    replay: ReplayArgs,
    #[command(flatten)]
    report: ReportArgs,
}

/// Defaults of [`ReplayArgs`], shared by the command line and `perfkit
/// bench`: room for every slice over the threshold in a 5,000-event run on
/// the 2-vCPU development VM under load (570-670 were), and enough replays
/// that their least is stable (one slice's replays spread by about 30 %).
const REPLAY_OVER: &str = "50us";
const REPLAY_TOP: usize = 1000;
const REPLAYS: usize = 5;

/// Which slices of the cooperative mode are replayed, and how often.
#[derive(Debug, Clone, Copy, clap::Args)]
struct ReplayArgs {
    /// Replay the cooperative mode's slices longer than this (wall time).
    #[arg(long, default_value = REPLAY_OVER, value_parser = parse_duration)]
    replay_over: Duration,
    /// Replay at most this many of them, the longest.
    #[arg(long, default_value_t = REPLAY_TOP)]
    replay_top: usize,
    /// Replays of each (at least 1).
    #[arg(long, default_value_t = REPLAYS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    replays: usize,
}

impl ReplayArgs {
    /// The benchmark's options: the search settings given, and these
    /// replay settings.
    fn options(&self, budget: u64, block: usize, warmup: usize) -> Options {
        Options {
            budget,
            block,
            warmup,
            long_slice_ns: self.replay_over.as_nanos() as u64,
            long_slices_kept: self.replay_top,
        }
    }
}

impl Default for ReplayArgs {
    fn default() -> Self {
        ReplayArgs {
            replay_over: parse_duration(REPLAY_OVER).expect("a valid constant"),
            replay_top: REPLAY_TOP,
            replays: REPLAYS,
        }
    }
}

/// Runs `perfkit betree`.
pub fn run(args: BetreeArgs) -> Result<ExitCode> {
    match args.command {
        BetreeCommand::GenExprs(a) if a.profile == Profile::Adtech => {
            let w = Adtech::new();
            stream_output(&a.output, |out| {
                w.write_exprs(out, usize::try_from(a.count).unwrap_or(usize::MAX), a.seed)
            })?;
            Ok(ExitCode::SUCCESS)
        }
        BetreeCommand::GenEvents(a) if a.profile == Profile::Adtech => {
            let w = Adtech::new();
            stream_output(&a.output, |out| {
                w.write_events(out, usize::try_from(a.count).unwrap_or(usize::MAX), a.seed)
            })?;
            Ok(ExitCode::SUCCESS)
        }
        BetreeCommand::GenExprs(a) => {
            stream_output(&a.output, |out| {
                write_boolean_exprs(out, a.params, a.count, a.seed)
            })?;
            Ok(ExitCode::SUCCESS)
        }
        BetreeCommand::GenEvents(a) => {
            stream_output(&a.output, |out| {
                write_boolean_events(out, a.params, a.count, a.seed)
            })?;
            Ok(ExitCode::SUCCESS)
        }
        BetreeCommand::Search(a) => search(a),
        BetreeCommand::Diff(a) => diff(a),
        BetreeCommand::Bench(a) => {
            let (index, events, build) = load(&a.input)?;
            let opts = a.replay.options(a.budget, a.block, a.warmup);
            let rep = bench_report(&index, &events, build, opts, a.replay.replays)?;
            super::emit(&rep, &a.report)
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

/// Streams generated output to `path` (`-`: stdout) through a buffer; a
/// file is written to a temporary sibling and renamed when complete.
fn stream_output(
    path: &Path,
    gen_into: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    if path == Path::new("-") {
        let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
        gen_into(&mut out)?;
        out.flush()?;
        Ok(())
    } else {
        report::write_atomically(path, |f| {
            let mut out = BufWriter::with_capacity(1 << 16, f);
            gen_into(&mut out)?;
            out.flush()?;
            Ok(())
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
fn load_index(input: &InputArgs) -> Result<(Index, Duration)> {
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
    // Each text is handed over and dropped once parsed, before its
    // expression is compiled.
    for (n, (line, term)) in terms.into_iter().enumerate() {
        let (Term::Binary(e) | Term::Str(e)) = term else {
            bail!("{exprs_path} line {line}: expected <<\"expression\">>");
        };
        index
            .insert_owned(n as u64 + 1, e)
            .with_context(|| format!("{exprs_path} line {line} (expression {})", n + 1))?;
    }
    let build = t.elapsed();
    Ok((index, build))
}

/// Loads the expressions into an index (timing the build) and every event,
/// for the benchmark, which replays them.
fn load(input: &InputArgs) -> Result<(Index, Vec<Event>, Duration)> {
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
    path: String,
    source: EventSource,
    /// Events read so far (their 1-based number in errors).
    read: usize,
}

enum EventSource {
    Ref(reference::EventStream<Box<dyn BufRead>>),
    Json {
        reader: Box<dyn BufRead>,
        line: usize,
        text: String,
    },
}

impl<'a> EventReader<'a> {
    fn open(input: &InputArgs, schema: &'a Schema) -> Result<Self> {
        let path = input.events.display().to_string();
        let reader: Box<dyn BufRead> = if input.events == Path::new("-") {
            Box::new(io::stdin().lock())
        } else {
            let f = fs::File::open(&input.events).with_context(|| format!("reading {path}"))?;
            Box::new(io::BufReader::with_capacity(1 << 16, f))
        };
        let source = match input.events_format {
            EventsFormat::Ref => EventSource::Ref(reference::EventStream::new(reader)),
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
        let path = &self.path;
        let ev = match &mut self.source {
            EventSource::Ref(stream) => {
                let Some((_, values)) = stream
                    .next_event()
                    .with_context(|| format!("reading {path}"))?
                else {
                    return Ok(None);
                };
                Event::from_bools(self.schema, &values)
                    .with_context(|| format!("{path}: event {}", self.read + 1))?
            }
            EventSource::Json { reader, line, text } => loop {
                text.clear();
                let n = reader
                    .read_line(text)
                    .with_context(|| format!("reading {path} line {}", *line + 1))?;
                if n == 0 {
                    return Ok(None);
                }
                *line += 1;
                if !text.trim().is_empty() {
                    break Event::from_json(self.schema, text.trim_end_matches(['\n', '\r']))
                        .with_context(|| format!("{path} line {line}"))?;
                }
            },
        };
        self.read += 1;
        Ok(Some(ev))
    }
}

/// Events searched together: enough for the batch path's lanes to pay
/// off, few enough that the batch and its results stay small.
pub(crate) const SEARCH_BATCH: usize = 1024;

fn search(a: SearchArgs) -> Result<ExitCode> {
    refuse_output_over_input(&a.output, &a.input)?;
    let (index, _) = load_index(&a.input)?;
    let mut events = EventReader::open(&a.input, index.schema())?;
    let mut run = |out: &mut dyn Write| search_stream(&index, &mut events, &a, out);
    if a.output == Path::new("-") {
        let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
        run(&mut out)?;
        out.flush()?;
    } else {
        // An input or search error is reported as it is, not as a failure
        // to write the output (the partial output is removed either way).
        let mut input_err = None;
        let written = report::write_atomically(&a.output, |f| {
            let mut out = BufWriter::with_capacity(1 << 16, f);
            if let Err(e) = run(&mut out) {
                if e.downcast_ref::<io::Error>().is_none() {
                    input_err = Some(e);
                    bail!("search failed");
                }
                return Err(e);
            }
            Ok(out.flush()?)
        });
        if let Some(e) = input_err {
            return Err(e);
        }
        written.with_context(|| format!("writing {}", a.output.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses an output that is one of the input files (the same file by
/// device and inode, so also through a symlink or a hard link): renaming
/// the finished output over it would replace the user's expression, event
/// or domain file with search results.
fn refuse_output_over_input(output: &Path, input: &InputArgs) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    if output == Path::new("-") {
        return Ok(());
    }
    let Ok(out) = fs::metadata(output) else {
        return Ok(());
    };
    let inputs = [
        ("expression file", Some(&input.exprs)),
        ("event file", Some(&input.events)),
        ("domain file", input.domains.as_ref()),
    ];
    for (what, path) in inputs {
        let Some(path) = path.filter(|p| p.as_path() != Path::new("-")) else {
            continue;
        };
        if fs::metadata(path).is_ok_and(|m| m.dev() == out.dev() && m.ino() == out.ino()) {
            bail!(
                "refusing to write {}: it is the {what} {}",
                output.display(),
                path.display()
            );
        }
    }
    Ok(())
}

/// Searches the events in batches of [`SEARCH_BATCH`], writing each
/// batch's lines before reading the next. `std` and `batch` both go
/// through `search_batch`, which returns what `search` does per event
/// (the benchmark checks it) several times faster.
fn search_stream(
    index: &Index,
    events: &mut EventReader,
    a: &SearchArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let mut batch = Vec::with_capacity(SEARCH_BATCH);
    let mut first = 1usize;
    let ids_text = IdText::new();
    let mut line = Vec::new();
    // Reused batch after batch: fresh lists of thousands of ids per event
    // were a tenth of a dense run (allocation, growth and page faults).
    let mut found: Vec<Vec<u64>> = Vec::new();
    loop {
        batch.clear();
        while batch.len() < SEARCH_BATCH {
            match events.next_event()? {
                Some(ev) => batch.push(ev),
                None => break,
            }
        }
        if batch.is_empty() {
            return Ok(());
        }
        let at = |i: usize| format!("{}: event {}", a.input.events.display(), first + i);
        let results: &[Vec<u64>] = match a.mode {
            Mode::Std | Mode::Batch => match index.search_batch_into(&batch, &mut found) {
                Ok(()) => &found,
                // Name the event at fault: the batch path checks them all
                // before it starts, the plain one each on its own.
                Err(e) => {
                    for (i, ev) in batch.iter().enumerate() {
                        index.search(ev).with_context(|| at(i))?;
                    }
                    return Err(e).with_context(|| at(0));
                }
            },
            mode => batch
                .iter()
                .enumerate()
                .map(|(i, ev)| {
                    let r = if mode == Mode::All {
                        index.search_iter(ev).map(|it| index.search_all(it))
                    } else {
                        index.search_iter(ev).map(|mut it| {
                            loop {
                                if let SearchStep::Done(ids) = index.search_next(&mut it, a.budget)
                                {
                                    break ids;
                                }
                            }
                        })
                    };
                    r.with_context(|| at(i))
                })
                .collect::<Result<Vec<_>>>()
                .map(|r| {
                    found = r;
                    &found[..]
                })?,
        };
        // Each line is formatted here and handed over whole: two calls
        // through `dyn Write` per id cost more than the search itself on
        // dense workloads (thousands of ids per event).
        for ids in results {
            out.write_all(ids_text.line(ids, &mut line))?;
        }
        first += batch.len();
    }
}

/// Writes id lists as text fast: ids below [`IdText::TABLE`] (every id of
/// most indexes) are copied from a table of " 1234" texts, eight bytes
/// at a time, instead of being formatted one by one; a dense search prints
/// thousands of ids per event, and formatting them was a tenth of its time.
struct IdText {
    /// Per id: a space, its digits, zero padding to eight bytes; and how
    /// many bytes of that are text.
    table: Vec<([u8; 8], u8)>,
}

impl IdText {
    /// Ids with an entry: five digits at most, so space + digits fit.
    const TABLE: u64 = 1 << 16;

    fn new() -> IdText {
        let mut num = itoa::Buffer::new();
        let table = (0..IdText::TABLE)
            .map(|id| {
                let digits = num.format(id).as_bytes();
                let mut text = [0u8; 8];
                text[0] = b' ';
                text[1..=digits.len()].copy_from_slice(digits);
                (text, digits.len() as u8 + 1)
            })
            .collect();
        IdText { table }
    }

    /// `ids` separated by spaces, then a newline, written in `line`.
    fn line<'a>(&self, ids: &[u64], line: &'a mut Vec<u8>) -> &'a [u8] {
        line.clear();
        line.reserve(ids.len() * 8 + 1);
        let mut num = itoa::Buffer::new();
        for &id in ids {
            match usize::try_from(id).ok().and_then(|i| self.table.get(i)) {
                Some((text, len)) => {
                    // The whole entry, then cut back to its text: a fixed
                    // eight-byte copy instead of a variable-length one.
                    line.extend_from_slice(text);
                    line.truncate(line.len() - (8 - *len as usize));
                }
                None => {
                    line.push(b' ');
                    line.extend_from_slice(num.format(id).as_bytes());
                }
            }
        }
        line.push(b'\n');
        // Every id wrote a separating space before it; the first has none.
        &line[usize::from(!ids.is_empty())..]
    }
}

/// Compares two search outputs line by line, reading both as it goes
/// (memory holds one line of each, whatever the files' length), and stops
/// at the first difference.
fn diff(a: DiffArgs) -> Result<ExitCode> {
    let mut ra = DiffSide::open(&a.a, false)?;
    // The same stdin twice: the first side reads it all, so the second
    // sees it already at its end (as when each side was read whole).
    let mut rb = DiffSide::open(&a.b, a.a == Path::new("-"))?;
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
                a.a.display(),
                show(x),
                a.b.display(),
                show(y)
            )?;
            out.flush()?;
            return Ok(ExitCode::FAILURE);
        }
        events += 1;
    }
    writeln!(out, "identical: {events} events")?;
    out.flush()?;
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

/// Everything the benchmark measured, for [`fill`].
struct Measured {
    run: BenchReport,
    cpu: SliceCpu,
    /// [`control_loop`] against the CPU pass's slices.
    control: hdrhistogram::Histogram<u64>,
    opts: Options,
    replays: usize,
    replayed: Vec<Replayed>,
}

/// Runs the benchmark, the CPU-clock pass, the control loop and the
/// replays.
fn measure_all(index: &Index, events: &[Event], opts: Options, replays: usize) -> Result<Measured> {
    let run = measure::run(index, events, opts).context("running the benchmark")?;
    let cpu = slice_cpu(index, events, opts.budget)?;
    let control = control_loop(&cpu.slices);
    let replayed =
        measure::replay(index, events, &run, replays).context("replaying the long slices")?;
    Ok(Measured {
        run,
        cpu,
        control,
        opts,
        replays,
        replayed,
    })
}

/// Builds the report of the reference benchmark.
fn bench_report(
    index: &Index,
    events: &[Event],
    build: Duration,
    opts: Options,
    replays: usize,
) -> Result<Report> {
    let m = measure_all(index, events, opts, replays)?;
    let mut rep = Report::new("betree bench");
    rep.run.iterations = m.run.events as u64;
    rep.run.warmup = opts.warmup.min(events.len()) as u64;
    rep.run.timing = "std::time::Instant around each search and each search_next step".into();
    fill(&mut rep, index, &m, build, "");
    Ok(rep)
}

/// The machine's own stalls: a loop of fixed work as long as the median
/// slice, run as many times as there were slices. Its tail (interrupts,
/// hypervisor exits, preemption) is what any code of that length sees
/// here, so the slices' tail is read against it.
fn control_loop(slices: &hdrhistogram::Histogram<u64>) -> hdrhistogram::Histogram<u64> {
    let target = Duration::from_nanos(slices.value_at_quantile(0.5).max(1));
    // Calibrate the work per loop on the thread's CPU clock.
    let spin = |n: u64| {
        let mut x = 1u64;
        for i in 0..n {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
        }
        x
    };
    let probe = 100_000;
    let t = perfkit_bench::harness::clock::thread_cpu();
    std::hint::black_box(spin(probe));
    let per = (perfkit_bench::harness::clock::thread_cpu() - t)
        .as_nanos()
        .max(1) as f64
        / probe as f64;
    let n = ((target.as_nanos() as f64 / per) as u64).max(1);
    let mut h = report::latency_histogram();
    for _ in 0..slices.len() {
        let t = Instant::now();
        std::hint::black_box(spin(n));
        report::record(&mut h, t.elapsed());
    }
    h
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

/// The `next` mode's slices again, on the thread's CPU clock.
fn slice_cpu(index: &Index, events: &[Event], budget: u64) -> Result<SliceCpu> {
    let ns = || perfkit_bench::harness::clock::thread_cpu().as_nanos() as u64;
    measure::slice_cpu(index, events, budget, ns).context("timing slices on the CPU clock")
}

/// Adds the benchmark's sections to `rep`, names prefixed by `prefix`.
fn fill(rep: &mut Report, index: &Index, m: &Measured, build: Duration, prefix: &str) {
    let (r, cpu) = (&m.run, &m.cpu);
    let std_total = r.modes[0].total_ns.max(1) as f64;
    let s = rep.section(format!("{prefix}index"));
    s.row(
        Row::new("build")
            .elapsed(build)
            .col("build_ms", Value::num(build.as_secs_f64() * 1e3, 1))
            .col("expressions", index.len())
            .col("attributes", index.schema().len())
            .col(
                "index_mib",
                Value::num(index.memory_bytes() as f64 / (1 << 20) as f64, 1),
            ),
    );
    let s = rep.section(format!("{prefix}search per event"));
    for (k, m) in r.modes.iter().enumerate() {
        let name = [
            "std (search)",
            "all (search_iter + search_all)",
            "next (search_iter + search_next)",
        ][k];
        let mut row = Row::new(name)
            .latency(m.per_event.clone())
            .col(
                "events_per_s",
                Value::num(r.events as f64 / (m.total_ns.max(1) as f64 / 1e9), 0),
            )
            .col("vs_std", Value::num(m.total_ns as f64 / std_total, 3));
        if k == 2 {
            row = row
                .col("max_slice_us", Value::num(m.max_slice_ns as f64 / 1e3, 1))
                .col("max_slice_cpu_us", Value::num(cpu.max_ns as f64 / 1e3, 1));
        }
        s.row(row);
    }
    s.row(
        Row::new(format!("next: time between yields (budget {})", r.budget))
            .latency(r.modes[2].slices.clone()),
    );
    s.row(
        Row::new(format!("next: CPU time per slice (budget {})", r.budget))
            .latency(cpu.slices.clone()),
    );
    s.row(
        Row::new("control: fixed CPU loop of the median slice's length").latency(m.control.clone()),
    );
    let batch_eps = r.events as f64 / (r.batch_ns.max(1) as f64 / 1e9);
    s.row(
        Row::new("batch (search_batch, all events)")
            .elapsed(Duration::from_nanos(r.batch_ns))
            .col("events_per_s", Value::num(batch_eps, 0))
            .col("vs_std", Value::num(r.batch_ns as f64 / std_total, 3)),
    );
    s.note(format!(
        "{} events, {} matches in total, identical in every mode (checked); {} candidates evaluated in total",
        r.events, r.matches, r.candidates
    ));
    s.note("the slice rows and max_slice come from a further next pass per event that times every slice; the per-event and per-block times of the three modes are taken without that instrumentation (one clock pair per search), so its cost is not in the penalty");
    s.note("max_slice: longest wall time between two yields, which counts time the OS had the thread descheduled; max_slice_cpu: longest CPU time of one slice (thread CPU clock, a separate pass; in a VM it also counts time the hypervisor took); the control row is fixed work of the median slice's length, timed the same number of times: its tail is the machine's, not the search's");
    let per_event = |n: u64| Value::num(n as f64 / r.events.max(1) as f64, 1);
    let sel = rep.section(format!("{prefix}selection"));
    sel.row(
        Row::new("candidates evaluated vs matches, per event")
            .col("candidates_per_event", per_event(r.candidates))
            .col("matches_per_event", per_event(r.matches))
            .col(
                "candidates_per_match",
                Value::num(r.candidates as f64 / r.matches.max(1) as f64, 2),
            ),
    );
    sel.note("candidates: expressions the index selected for evaluation (counted in a further untimed search per event); the closer to matches, the more the index prunes");
    let s = rep.section(format!(
        "{prefix}relative difference per block of {} events vs std",
        r.block
    ));
    for (k, c) in r.comparisons.iter().enumerate() {
        s.row(
            Row::new(["all", "next"][k])
                .col("min_pct", Value::num(c.min * 100.0, 2))
                .col("max_pct", Value::num(c.max * 100.0, 2))
                .col("median_pct", Value::num(c.median * 100.0, 2))
                .col("p99_pct", Value::num(c.p99 * 100.0, 2))
                .col("better_pct", Value::num(c.better_share * 100.0, 0))
                .col("total_ratio", Value::num(c.total_ratio, 3)),
        );
    }
    s.note("negative = faster than std; better_pct = share of blocks faster than std");
    fill_replays(rep, m, prefix);
}

/// The replay section: how long the longest slices take once the machine's
/// stalls are taken out.
fn fill_replays(rep: &mut Report, m: &Measured, prefix: &str) {
    let r = &m.run;
    let us = |ns: u64| Value::num(ns as f64 / 1e3, 1);
    let mut least = report::latency_histogram();
    for x in &m.replayed {
        report::record(&mut least, Duration::from_nanos(x.min_ns()));
    }
    let min_max = m.replayed.iter().map(Replayed::min_ns).max().unwrap_or(0);
    let median_max = m
        .replayed
        .iter()
        .map(Replayed::median_ns)
        .max()
        .unwrap_or(0);
    let s = rep.section(format!(
        "{prefix}next: slices over {} replayed (budget {})",
        report::format_ns(m.opts.long_slice_ns as f64),
        r.budget
    ));
    s.row(
        Row::new(format!(
            "least time of each replayed slice (timed pass + {} replays)",
            m.replays
        ))
        .latency(least)
        .col("threshold_us", us(m.opts.long_slice_ns))
        .col("slices", r.modes[2].slices.len())
        .col("over_threshold", r.over_threshold)
        .col("replayed", m.replayed.len())
        .col("replays_each", m.replays)
        .col("raw_max_us", us(r.modes[2].max_slice_ns))
        .col("replay_min_max_us", us(min_max))
        .col("replay_median_max_us", us(median_max))
        .col("unreplayed_max_us", us(r.unkept_max_ns))
        .col("replayed_estimate_max_us", us(min_max.max(r.unkept_max_ns))),
    );
    // The slice whose least time is the longest: its replays show whether
    // that least time was one lucky run or what the slice always takes.
    if let Some(w) = m.replayed.iter().max_by_key(|x| (x.min_ns(), x.slice.ns)) {
        let mut h = report::latency_histogram();
        for &ns in &w.replays_ns {
            report::record(&mut h, Duration::from_nanos(ns));
        }
        s.row(
            Row::new(format!(
                "worst replayed slice: its {} replays",
                w.replays_ns.len()
            ))
            .latency(h)
            .col("event", w.slice.event + 1)
            .col("slice", w.slice.slice + 1)
            .col("reductions", w.slice.reductions)
            .col("raw_us", us(w.slice.ns))
            .col("min_us", us(w.min_ns()))
            .col("median_us", us(w.median_ns())),
        );
    }
    s.note(format!(
        "every slice of the next mode over {} in the timed pass (the longest {} at most) is run again {} times: same event, same budget, same slice number, and each replay checks it spends the same reductions (it does, or the run fails)",
        report::format_ns(m.opts.long_slice_ns as f64),
        m.opts.long_slices_kept,
        m.replays
    ));
    s.note("why it is fair: the work is deterministic and the machine's stalls (interrupts, preemption, hypervisor exits) only add time, so the least of several runs of the same work estimates the work; each replay first repeats what ran before the slice in the timed pass (the previous event's three timed modes and its sliced next pass, this event's three timed modes, next's earlier slices), so caches and predictors hold what they held then, and the replays go round-robin over all slices, so one slice's runs are spread over the phase, not back to back under the same stall");
    s.note("replay_min_max: the longest least time (timed pass and replays) of any replayed slice; replay_median_max: the longest median of replays; unreplayed_max: the longest slice not replayed");
    s.note(format!(
        "replayed_estimate_max = max(replay_min_max, unreplayed_max): the longest slice once each replayed slice counts at the least of its {} runs (timed pass and {} replays) and every other slice at its raw time; a best-of-{} estimate, not a bound: it leans optimistic, since the least run can be a lucky one below what the slice usually takes (replay_median_max shows the typical), and raw_max is what the timed pass really saw",
        m.replays + 1,
        m.replays,
        m.replays + 1
    ));
}

/// The betree part of `perfkit bench`: the reference workload generated in
/// process (5,000 expressions × 128 parameters, 1,000 events).
pub fn default_workload(rep: &mut Report) -> Result<()> {
    let params = 128;
    let exprs = reference::random_expressions(params, 5000, 1);
    let schema = Schema::boolean_params(params);
    let t = Instant::now();
    let mut index = Index::new(schema.clone());
    for (i, e) in exprs.iter().enumerate() {
        index.insert(i as u64 + 1, e)?;
    }
    let build = t.elapsed();
    let events = reference::random_events(params, 1000, 2)
        .iter()
        .map(|v| Event::from_bools(&schema, v))
        .collect::<betree::Result<Vec<_>>>()?;
    let replay = ReplayArgs::default();
    let opts = replay.options(2000, 250, 20);
    let m = measure_all(&index, &events, opts, replay.replays)?;
    fill(rep, &index, &m, build, "betree: ");
    Ok(())
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

#[cfg(test)]
mod id_text_tests {
    use super::IdText;

    #[test]
    fn lines_are_the_ids_as_decimal_text() {
        let t = IdText::new();
        let mut buf = Vec::new();
        let cases: [&[u64]; 6] = [
            &[],
            &[0],
            &[1, 9, 10, 99, 100, 999, 1000, 9999, 10000],
            &[65534, 65535, 65536, 65537],
            &[u64::MAX, 7, u64::from(u32::MAX) + 1],
            &[42; 3],
        ];
        for ids in cases {
            // The oracle: std's formatting, joined.
            let want: Vec<String> = ids.iter().map(u64::to_string).collect();
            let want = format!("{}\n", want.join(" "));
            // A dirty buffer from a longer line before must not leak in.
            buf.extend_from_slice(b"leftover leftover");
            assert_eq!(t.line(ids, &mut buf), want.as_bytes(), "{ids:?}");
        }
    }
}
