//! `perfkit fix-bench` (the FIX hot path, before/after pairs measured in one
//! run) and `perfkit fix check` (validate FIX messages from a file or stdin).

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use fixcore::frame::Framer;
use fixcore::measure::{self, Comparison, Settings};
use fixcore::parse::{Node, Parser};
use perfkit::report::{Report, ReportArgs, Row, RunInfo, Value};
use serde_json::{Map, Value as Json};

/// The parts of `fix-bench` that can be selected with `--only`.
const PARTS: [&str; 7] = [
    "scan",
    "parse",
    "build",
    "store",
    "deferred",
    "affinity",
    "transport",
];

/// Arguments of `perfkit fix-bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct FixBenchArgs {
    /// Measured operations per variant (summed over runs).
    #[arg(long, default_value_t = 100_000)]
    pub iterations: usize,
    /// Unmeasured operations per variant first.
    #[arg(long, default_value_t = 10_000)]
    pub warmup: usize,
    /// Interleaved rounds: every variant measures a slice in each.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Pin the measuring thread to CORE (and the echo client; the server
    /// gets another core).
    #[arg(long, value_name = "CORE")]
    pub pin: Option<usize>,
    /// Only these parts (comma separated): scan, parse, build, store,
    /// deferred, affinity, transport.
    #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(PARTS))]
    pub only: Vec<String>,
    /// Calls per clock read in the batched timings.
    #[arg(long, default_value_t = 100)]
    pub batch: usize,
    /// Loopback round trips per transport (summed over runs).
    #[arg(long, default_value_t = 20_000)]
    pub transport_iterations: usize,
    /// Benchmark parsing of the messages in FILE (SOH- or `|`-separated,
    /// one per line) instead of the built-in samples.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
}

impl FixBenchArgs {
    /// Short settings for `perfkit bench`.
    pub fn quick(report: ReportArgs) -> FixBenchArgs {
        FixBenchArgs {
            iterations: 20_000,
            warmup: 2_000,
            runs: 3,
            pin: None,
            only: Vec::new(),
            batch: 100,
            transport_iterations: 2_000,
            input: None,
            report,
        }
    }
}

/// Runs the benchmark and renders it.
pub fn run(args: FixBenchArgs) -> Result<ExitCode> {
    let report = measure(&args)?;
    super::emit(&report, &args.report)
}

/// Measures everything asked for into a report.
pub fn measure(args: &FixBenchArgs) -> Result<Report> {
    if args.iterations == 0 || args.runs == 0 || args.batch == 0 {
        bail!("--iterations, --runs and --batch must be at least 1");
    }
    let s = Settings {
        iterations: args.iterations,
        warmup: args.warmup,
        runs: args.runs,
        batch: args.batch,
        transport_iterations: args.transport_iterations.max(1),
        pin: args.pin,
    };
    // A bad FIXCORE_SCAN is an error here rather than a panic in the scanner.
    fixcore::scan::ScanPath::configured()?;
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
    let mut parts: Vec<Comparison> = Vec::new();
    if want("scan") {
        progress.set_message("scan");
        parts.extend(measure::scan(&s));
    }
    if want("parse") {
        progress.set_message("parse");
        parts.push(measure::parse(&s, input.as_deref()).context("benchmarking the parser")?);
    }
    if want("build") {
        progress.set_message("build");
        parts.push(measure::build(&s));
    }
    if want("store") {
        progress.set_message("store");
        parts.extend(measure::store(&s));
    }
    if want("deferred") {
        progress.set_message("deferred");
        parts.push(measure::deferred(&s).context("deferred processor")?);
    }
    if want("affinity") {
        progress.set_message("affinity");
        parts.push(measure::affinity(&s).context("pinning threads")?);
    }
    if want("transport") {
        progress.set_message("transport");
        parts.push(measure::transport(&s).context("loopback echo")?);
    }
    progress.finish_and_clear();
    report.run = RunInfo {
        iterations: args.iterations as u64,
        warmup: args.warmup as u64,
        runs: args.runs as u64,
        pinned,
        timing: s.timing(),
    };
    for c in parts {
        add_comparison(&mut report, c);
    }
    Ok(report)
}

fn add_comparison(report: &mut Report, c: Comparison) {
    let speedups: Vec<f64> = (0..c.variants.len()).map(|i| c.speedup(i)).collect();
    let baseline = c
        .variants
        .first()
        .map(|v| v.name.clone())
        .unwrap_or_default();
    let section = report.section(c.title);
    for (i, v) in c.variants.into_iter().enumerate() {
        let mut row = Row::new(v.name).latency(v.histogram).elapsed(v.elapsed);
        if c.compare {
            row = row.col("speedup_x", Value::num(speedups[i], 2));
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
    for n in c.notes {
        section.note(n);
    }
}

/// Reads `path` (or stdin for `-`) whole.
fn read_input(path: &std::path::Path) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    if path.as_os_str() == "-" {
        io::stdin()
            .lock()
            .read_to_end(&mut data)
            .context("reading stdin")?;
    } else {
        data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    }
    Ok(data)
}

/// One message of a line-oriented file, with `|` turned into SOH when the
/// line has no SOH of its own.
fn line_message(line: &[u8]) -> Vec<u8> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.contains(&1) {
        line.to_vec()
    } else {
        line.iter()
            .map(|&b| if b == b'|' { 1 } else { b })
            .collect()
    }
}

fn read_messages(path: &std::path::Path) -> Result<Vec<Vec<u8>>> {
    let data = read_input(path)?;
    let mut parser = Parser::new();
    let mut msgs = Vec::new();
    for (i, line) in data.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let m = line_message(line);
        if let Err(e) = parser.parse(&m) {
            bail!(
                "{}: line {}: {e} (fix-bench --input needs valid messages; see `perfkit fix check`)",
                path.display(),
                i + 1
            );
        }
        msgs.push(m);
    }
    if msgs.is_empty() {
        bail!("{}: no messages", path.display());
    }
    Ok(msgs)
}

/// Arguments of `perfkit fix`.
#[derive(Debug, clap::Args)]
pub struct FixArgs {
    #[command(subcommand)]
    command: FixCommand,
}

#[derive(Debug, clap::Subcommand)]
enum FixCommand {
    /// Validate FIX messages (SOH- or `|`-separated, one per line, or a raw
    /// byte stream); exit 1 if any is invalid.
    Check(FixCheckArgs),
}

/// Arguments of `perfkit fix check`.
#[derive(Debug, clap::Args)]
pub struct FixCheckArgs {
    /// The input, or `-` for stdin.
    pub input: PathBuf,
    /// Print every valid message as a JSON object of tag -> value (groups
    /// as arrays of objects), one per line; problems go to stderr.
    #[arg(long)]
    pub json: bool,
}

/// Dispatches `perfkit fix ...`.
pub fn run_fix(args: FixArgs) -> Result<ExitCode> {
    match args.command {
        FixCommand::Check(a) => check(a),
    }
}

/// Where a message came from, for messages about it.
enum Origin {
    Line(usize),
    Offset(u64),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Line(l) => write!(f, "line {l}"),
            Origin::Offset(o) => write!(f, "offset {o}"),
        }
    }
}

fn check(args: FixCheckArgs) -> Result<ExitCode> {
    fixcore::scan::ScanPath::configured()?;
    let data = read_input(&args.input)?;
    let name = args.input.display().to_string();
    // A raw stream ends its messages with SOH; a line file has newlines
    // between messages.
    let line_mode = data.contains(&b'\n');
    let mut items: Vec<(Origin, std::result::Result<Vec<u8>, String>)> = Vec::new();
    if line_mode {
        for (i, line) in data.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            items.push((Origin::Line(i + 1), Ok(line_message(line))));
        }
    } else {
        let mut framer = Framer::new(1 << 20);
        framer.push(&data);
        loop {
            let at = framer.position();
            match framer.next_frame() {
                Some(Ok(f)) => items.push((Origin::Offset(at), Ok(f.to_vec()))),
                Some(Err(e)) => items.push((Origin::Offset(at), Err(e.to_string()))),
                None => break,
            }
        }
        if framer.buffered() > 0 {
            items.push((
                Origin::Offset(framer.position()),
                Err(format!(
                    "{} trailing bytes do not form a complete message",
                    framer.buffered()
                )),
            ));
        }
    }
    let mut parser = Parser::new();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut stderr = io::stderr().lock();
    let (mut valid, mut invalid) = (0usize, 0usize);
    let mut problems = Vec::new();
    for (origin, item) in &items {
        let outcome = match item {
            Ok(bytes) => match parser.parse(bytes) {
                Ok(msg) => {
                    if args.json {
                        let obj = nodes_json(&msg.nodes());
                        serde_json::to_writer(&mut out, &obj)?;
                        writeln!(out)?;
                    }
                    Ok(())
                }
                Err(e) => Err(e.to_string()),
            },
            Err(e) => Err(e.clone()),
        };
        match outcome {
            Ok(()) => valid += 1,
            Err(reason) => {
                invalid += 1;
                problems.push(format!("{name}: {origin}: {reason}"));
            }
        }
    }
    if args.json {
        for p in &problems {
            writeln!(stderr, "perfkit: {p}")?;
        }
    } else {
        writeln!(out, "{name}: {valid} valid, {invalid} invalid")?;
        for p in &problems {
            writeln!(out, "{p}")?;
        }
    }
    out.flush()?;
    if valid + invalid == 0 {
        writeln!(stderr, "perfkit: {name}: no FIX messages found")?;
        return Ok(ExitCode::FAILURE);
    }
    Ok(if invalid > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn nodes_json(nodes: &[Node<'_>]) -> Json {
    let mut m = Map::new();
    for n in nodes {
        match n {
            Node::Field(f) => {
                m.insert(
                    f.tag.to_string(),
                    Json::String(String::from_utf8_lossy(f.value).into_owned()),
                );
            }
            Node::Group(count, entries) => {
                m.insert(
                    count.tag.to_string(),
                    Json::Array(entries.iter().map(|e| nodes_json(e)).collect()),
                );
            }
        }
    }
    Json::Object(m)
}
