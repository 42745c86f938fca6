//! The one report renderer every subcommand uses.
//!
//! A subcommand measures into [`Report`] (named HDR histograms of
//! nanoseconds plus extra columns), then calls [`emit`] with the
//! [`ReportOptions`] its command line asked for (the binary's `--json`,
//! `--hlog`, `--percentiles` and `--plot` flags). Output forms:
//!
//! - a human table per section: count, min, mean, p50, p90, p99, p99.9, max
//!   with units chosen per value, then the extra columns;
//! - `--json`: one JSON document (schema `report.schema.json` beside this
//!   crate's manifest, `"schema": "perfkit-report/1"`), nothing else on stdout;
//! - `--hlog FILE`: the HdrHistogram interval-log format, one tagged
//!   interval per row;
//! - `--percentiles`: the standard HdrHistogram percentile distribution of
//!   every row, in microseconds;
//! - `--plot FILE.svg`: every row's percentile spectrum on one chart.
//!
//! Column names are snake_case with the unit in the name (`throughput_mb_s`,
//! `p99_ns`); the table derives its headers from them.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use serde_json::{Map, Value as Json, json};

use crate::machine::Machine;

pub mod merge;

/// The identifier of the JSON document layout; bump when a field changes
/// meaning or disappears.
pub const SCHEMA_ID: &str = "perfkit-report/1";

/// The JSON schema for `--json` output, documented and tested.
pub const SCHEMA: &str = include_str!("../report.schema.json");

/// A new latency histogram in nanoseconds: 1 ns to 1 hour, 3 significant
/// digits (0.1 % resolution), the HdrHistogram default precision.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("static bounds are valid")
}

/// Records a duration into a nanosecond histogram, saturating at the top.
pub fn record(h: &mut Histogram<u64>, d: Duration) {
    h.saturating_record(d.as_nanos().clamp(1, u64::MAX as u128) as u64);
}

/// How a report is rendered: what the binary's `--json`, `--hlog`,
/// `--percentiles` and `--plot` flags asked for. Plain data, so a caller
/// without a command line (a test, another tool) renders the same way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportOptions {
    /// One JSON document instead of tables (nothing else on the output).
    pub json: bool,
    /// Also write every histogram to this file in HdrHistogram
    /// interval-log format.
    pub hlog: Option<PathBuf>,
    /// Also print the full HdrHistogram percentile distribution of each row.
    pub percentiles: bool,
    /// Also draw every row's latency percentile spectrum to this SVG file.
    pub plot: Option<PathBuf>,
}

/// A value in an extra column.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A measured or derived number; `decimals` is for the table only.
    Num {
        /// The value.
        value: f64,
        /// Digits after the point in the table.
        decimals: usize,
    },
    /// A count.
    Int(i64),
    /// A word such as a verdict.
    Text(String),
}

impl Value {
    /// A number shown with `decimals` digits in the table.
    pub fn num(value: f64, decimals: usize) -> Value {
        Value::Num { value, decimals }
    }

    fn to_json(&self) -> Json {
        match self {
            Value::Num { value, .. } if value.is_finite() => json!(value),
            Value::Num { .. } => Json::Null,
            Value::Int(i) => json!(i),
            Value::Text(s) => json!(s),
        }
    }

    fn to_cell(&self) -> String {
        match self {
            Value::Num { value, decimals } if value.is_finite() => format!("{value:.decimals$}"),
            Value::Num { .. } => "-".into(),
            Value::Int(i) => i.to_string(),
            Value::Text(s) => s.clone(),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s)
    }
}
impl From<u64> for Value {
    fn from(i: u64) -> Self {
        Value::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}
impl From<usize> for Value {
    fn from(i: usize) -> Self {
        Value::from(i as u64)
    }
}

/// One measured thing: an optional latency histogram plus extra columns.
#[derive(Debug, Clone)]
pub struct Row {
    /// The row's name (unique within its section).
    pub name: String,
    /// Per-operation latency in nanoseconds, warm-up excluded.
    pub latency: Option<Histogram<u64>>,
    /// Wall time the histogram covers (for the interval log).
    pub elapsed: Option<Duration>,
    /// Extra columns, in display order: snake_case names with units.
    pub columns: Vec<(String, Value)>,
    /// Columns kept in JSON only: older names a newer column replaced in
    /// the table, still written so scripts reading this schema id keep
    /// working.
    pub json_only: Vec<(String, Value)>,
}

impl Row {
    /// A row with no data yet.
    pub fn new(name: impl Into<String>) -> Row {
        Row {
            name: name.into(),
            latency: None,
            elapsed: None,
            columns: Vec::new(),
            json_only: Vec::new(),
        }
    }

    /// Sets the latency histogram.
    pub fn latency(mut self, h: Histogram<u64>) -> Row {
        self.latency = Some(h);
        self
    }

    /// Sets the wall time the histogram covers.
    pub fn elapsed(mut self, d: Duration) -> Row {
        self.elapsed = Some(d);
        self
    }

    /// Appends an extra column.
    pub fn col(mut self, name: &str, v: impl Into<Value>) -> Row {
        self.columns.push((name.to_owned(), v.into()));
        self
    }

    /// Appends a column written to JSON only (see [`Row::json_only`]).
    pub fn json_col(mut self, name: &str, v: impl Into<Value>) -> Row {
        self.json_only.push((name.to_owned(), v.into()));
        self
    }

    /// The value of a column, if present.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// A titled group of rows shown as one table.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// The section title.
    pub name: String,
    /// The rows.
    pub rows: Vec<Row>,
    /// Free-text lines printed under the table (and kept in JSON).
    pub notes: Vec<String>,
}

impl Section {
    /// An empty section.
    pub fn new(name: impl Into<String>) -> Section {
        Section {
            name: name.into(),
            ..Section::default()
        }
    }

    /// Appends a row.
    pub fn row(&mut self, row: Row) -> &mut Section {
        self.rows.push(row);
        self
    }

    /// Appends a note.
    pub fn note(&mut self, note: impl Into<String>) -> &mut Section {
        self.notes.push(note.into());
        self
    }
}

/// How a run was made: what every report states.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// Measured iterations per row (the largest, when rows differ).
    pub iterations: u64,
    /// Warm-up iterations per row, excluded from the histograms.
    pub warmup: u64,
    /// Repetitions of the whole measurement.
    pub runs: u64,
    /// Where threads were pinned, or `None` when they were not.
    pub pinned: Option<String>,
    /// How time was taken (e.g. "Instant per call").
    pub timing: String,
}

impl Default for RunInfo {
    fn default() -> Self {
        RunInfo {
            iterations: 0,
            warmup: 0,
            runs: 1,
            pinned: None,
            timing: "std::time::Instant around each call".into(),
        }
    }
}

/// A whole report: what was run, on what, and the sections.
#[derive(Debug, Clone)]
pub struct Report {
    /// The command that produced it, e.g. `"compress bench"`.
    pub command: String,
    /// The machine it ran on.
    pub machine: Machine,
    /// How it was measured.
    pub run: RunInfo,
    /// The tables.
    pub sections: Vec<Section>,
    /// Headline comparisons, one line each, printed after the tables.
    pub summary: Vec<Comparison>,
}

/// One headline comparison of two rows measured in the same run:
/// `subject` took `speedup` times less time than `peer` for the same work.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// What perfkit ran, e.g. `"zstdkit fast compress"`.
    pub subject: String,
    /// What it is compared with, e.g. `"zstd CLI -1"`.
    pub peer: String,
    /// Peer time over subject time (or subject rate over peer rate): above
    /// 1 the subject is faster.
    pub speedup: f64,
    /// Which measurement the ratio comes from, e.g. `"median wall time"`.
    pub basis: String,
}

impl Comparison {
    /// The summary line: `perfkit X is N× faster than PEER (basis)`.
    pub fn line(&self) -> String {
        if !(self.speedup.is_finite() && self.speedup > 0.0) {
            return format!(
                "perfkit {} could not be compared with {} ({}: no valid measurement)",
                self.subject, self.peer, self.basis
            );
        }
        let (factor, word) = if self.speedup >= 1.0 {
            (self.speedup, "faster")
        } else {
            (1.0 / self.speedup, "slower")
        };
        format!(
            "perfkit {} is {factor:.2}× {word} than {} ({})",
            self.subject, self.peer, self.basis
        )
    }
}

impl Report {
    /// An empty report for `command` on this machine.
    pub fn new(command: impl Into<String>) -> Report {
        Report {
            command: command.into(),
            machine: Machine::detect(),
            run: RunInfo::default(),
            sections: Vec::new(),
            summary: Vec::new(),
        }
    }

    /// Appends a section and returns it for filling.
    pub fn section(&mut self, name: impl Into<String>) -> &mut Section {
        self.sections.push(Section::new(name));
        self.sections.last_mut().expect("just pushed")
    }

    /// Every row with a histogram, named `section/row`.
    fn histograms(&self) -> impl Iterator<Item = (String, &Row, &Histogram<u64>)> {
        self.sections.iter().flat_map(|s| {
            s.rows.iter().filter_map(move |r| {
                r.latency
                    .as_ref()
                    .map(|h| (format!("{}/{}", s.name, r.name), r, h))
            })
        })
    }
}

/// The `--hlog` and `--plot` files of one run, opened (their temporary
/// siblings created) before anything is measured, so an unwritable path
/// fails at once instead of after the whole run.
#[derive(Debug, Default)]
pub struct ReportFiles {
    hlog: Option<(PathBuf, Output)>,
    plot: Option<(PathBuf, Output)>,
}

impl ReportFiles {
    /// Opens the files `options` names, if any.
    pub fn open(options: &ReportOptions) -> Result<ReportFiles> {
        Self::open_paths(options.hlog.as_deref(), options.plot.as_deref())
    }

    /// Opens `hlog` and `plot` (either may be absent) through [`Output`].
    pub fn open_paths(hlog: Option<&Path>, plot: Option<&Path>) -> Result<ReportFiles> {
        let open = |path: &Path, what: &str| -> Result<(PathBuf, Output)> {
            // A directory would only be refused at the final rename.
            if path.is_dir() {
                anyhow::bail!("{what} {} is a directory", path.display());
            }
            let out = Output::create(path, true)
                .with_context(|| format!("opening {what} {}", path.display()))?;
            Ok((path.to_path_buf(), out))
        };
        Ok(ReportFiles {
            hlog: hlog.map(|p| open(p, "interval log")).transpose()?,
            plot: plot.map(|p| open(p, "plot")).transpose()?,
        })
    }

    /// Takes the interval log out, for a command that writes its own (the
    /// merge of many logs); [`emit_to`] then writes no interval log.
    pub fn take_hlog(&mut self) -> Option<(PathBuf, Output)> {
        self.hlog.take()
    }

    /// Whether these are the files `options` names (the same paths, or none).
    pub fn matches(&self, options: &ReportOptions) -> bool {
        self.hlog.as_ref().map(|(p, _)| p.as_path()) == options.hlog.as_deref()
            && self.plot.as_ref().map(|(p, _)| p.as_path()) == options.plot.as_deref()
    }
}

/// Renders `report` as `options` ask: JSON or tables on `out`, and the
/// optional files. Files are written to a temporary sibling and renamed, so
/// a failure never leaves a half-written file behind.
pub fn emit(report: &Report, options: &ReportOptions, out: &mut dyn Write) -> Result<()> {
    emit_to(report, options, out, ReportFiles::open(options)?)
}

/// [`emit`] into files opened earlier with [`ReportFiles::open`].
pub fn emit_to(
    report: &Report,
    options: &ReportOptions,
    out: &mut dyn Write,
    files: ReportFiles,
) -> Result<()> {
    // Rendered whole first, then written with write_all: a reader that went
    // away is then an io::Error (BrokenPipe) the caller recognises, where
    // serde_json's writer would wrap it in its own error type.
    let text = if options.json {
        let mut doc = serde_json::to_string_pretty(&to_json(report))?;
        doc.push('\n');
        doc
    } else {
        render_text(report, options.percentiles)
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    if let Some((path, mut file)) = files.hlog {
        write_hlog(report, file.file_mut())
            .and_then(|()| file.commit())
            .with_context(|| format!("writing interval log {}", path.display()))?;
    }
    if let Some((path, mut file)) = files.plot {
        render_svg(report)
            .and_then(|svg| Ok(file.file_mut().write_all(svg.as_bytes())?))
            .and_then(|()| file.commit())
            .with_context(|| format!("writing plot {}", path.display()))?;
    }
    Ok(())
}

/// Writes a file through [`Output`]: a temporary sibling renamed into place
/// on success, or in place for a device, FIFO or socket.
pub fn write_atomically(
    path: &Path,
    f: impl FnOnce(&mut std::fs::File) -> Result<()>,
) -> Result<()> {
    write_atomically_with(path, true, f)
}

/// [`write_atomically`], refusing an existing regular file (or a symlink to
/// one) unless `clobber`, as [`Output::create`] does.
pub fn write_atomically_with(
    path: &Path,
    clobber: bool,
    f: impl FnOnce(&mut std::fs::File) -> Result<()>,
) -> Result<()> {
    let mut out = Output::create(path, clobber)?;
    f(out.file_mut())?;
    out.commit()
}

/// Whether `path` names, through any symlinks, an existing device, FIFO or
/// socket (`/dev/null`, a named pipe, `/dev/stdout` when stdout is a pipe):
/// output to it is written in place. Renaming a temporary file over it
/// would replace the node itself, and as root that turns `/dev/null` into
/// a regular file for every program on the machine.
pub fn is_special_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// An output file being written; every command opens its output files
/// here, so the rules below hold for all of them.
///
/// - A path that is, or is a symlink to, a device, FIFO or socket is
///   opened and written **in place**: nothing is renamed, and a failure
///   may leave partial data in the pipe or device (there is nothing else
///   to do with one).
/// - Anything else is written to a temporary file that [`Output::commit`]
///   renames into place; dropping an uncommitted `Output` deletes it, so a
///   failure leaves the directory as it was.
/// - A symlink is never replaced. A path that is a symlink to a regular
///   file is resolved first, and the temporary file is created beside the
///   *resolved* target and renamed over that: the link stays a link and
///   names the new data, and a failure leaves the old file as it was. `-o /dev/stdout` with stdout redirected to a file is this case:
///   `/dev/stdout` → `/proc/self/fd/1` → that file, which is replaced.
///   A symlink that cannot be resolved (dangling, a loop) is refused.
#[derive(Debug)]
pub struct Output {
    kind: OutputKind,
}

#[derive(Debug)]
enum OutputKind {
    InPlace(std::fs::File),
    Temp {
        tmp: tempfile::NamedTempFile,
        target: PathBuf,
        clobber: bool,
        /// Lists `tmp` for deletion on a fatal signal until it is renamed
        /// or deleted (declared after `tmp`, so unlisted after it goes).
        _listed: crate::cleanup::Registration,
    },
}

impl Output {
    /// Opens `path` for writing as the type doc describes. With `clobber`
    /// false an existing regular file (or a symlink to one) is refused,
    /// here and again, atomically, at [`Output::commit`]; devices and FIFOs
    /// are written whatever `clobber` says.
    pub fn create(path: &Path, clobber: bool) -> Result<Output> {
        if is_special_file(path) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("opening {}", path.display()))?;
            return Ok(Output {
                kind: OutputKind::InPlace(file),
            });
        }
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let target = if is_link {
            std::fs::canonicalize(path).with_context(|| {
                format!(
                    "{} is a symlink that cannot be resolved; refusing to replace it",
                    path.display()
                )
            })?
        } else {
            path.to_path_buf()
        };
        if !clobber && target.exists() {
            anyhow::bail!("{} already exists; use -f to overwrite", path.display());
        }
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let tmp = temp_sibling(dir)
            .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
        let _listed = crate::cleanup::register(tmp.path().to_path_buf());
        Ok(Output {
            kind: OutputKind::Temp {
                tmp,
                target,
                clobber,
                _listed,
            },
        })
    }

    /// Whether this output is written in place (a device, FIFO or socket):
    /// it cannot be seeked, renamed, or given permissions.
    pub fn is_in_place(&self) -> bool {
        matches!(self.kind, OutputKind::InPlace(_))
    }

    /// The file to write to.
    pub fn file_mut(&mut self) -> &mut std::fs::File {
        match &mut self.kind {
            OutputKind::InPlace(f) => f,
            OutputKind::Temp { tmp, .. } => tmp.as_file_mut(),
        }
    }

    /// Flushes, and renames a temporary file into place (refusing an
    /// existing target when created with `clobber` false).
    pub fn commit(self) -> Result<()> {
        match self.kind {
            OutputKind::InPlace(mut f) => Ok(f.flush()?),
            OutputKind::Temp {
                mut tmp,
                target,
                clobber,
                _listed,
            } => {
                tmp.as_file_mut().flush()?;
                let persisted = if clobber {
                    tmp.persist(&target)
                } else {
                    tmp.persist_noclobber(&target)
                };
                persisted
                    .map_err(|e| e.error)
                    .with_context(|| format!("writing {}", target.display()))?;
                Ok(())
            }
        }
    }
}

/// A temporary file in `dir` for output that is renamed into place on
/// success. It is created with mode 0666 less the umask (open(2) applies
/// it), as a plain `File::create` would be, not tempfile's private 0600.
fn temp_sibling(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut b = tempfile::Builder::new();
    b.prefix(".perfkit-").suffix(".partial");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(dir)
}

/// Formats nanoseconds with a unit chosen for the value: ns, µs, ms or s.
pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".into();
    }
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// The summary quantiles every table and JSON row carries.
const SUMMARY: [(&str, f64); 4] = [("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p999", 0.999)];

/// The fewest samples for which quantile `q` says more than the maximum:
/// 1/(1-q), so p99 needs 100 samples and p99.9 needs 1000. The table shows
/// `-` below it; JSON keeps the key (the histogram's value, which is then
/// the maximum) so documents stay one shape, and `count` tells the reader.
pub fn min_samples_for(q: f64) -> u64 {
    (1.0 / (1.0 - q)).round() as u64
}

fn summary_json(h: &Histogram<u64>) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("count".into(), json!(h.len()));
    m.insert("min_ns".into(), json!(h.min()));
    m.insert("mean_ns".into(), json!(h.mean()));
    for (name, q) in SUMMARY {
        m.insert(format!("{name}_ns"), json!(h.value_at_quantile(q)));
    }
    m.insert("max_ns".into(), json!(h.max()));
    m.insert("stdev_ns".into(), json!(h.stdev()));
    m
}

/// The JSON document for a report.
pub fn to_json(report: &Report) -> Json {
    let sections: Vec<Json> = report
        .sections
        .iter()
        .map(|s| {
            let rows: Vec<Json> = s
                .rows
                .iter()
                .map(|r| {
                    let mut m = Map::new();
                    m.insert("name".into(), json!(r.name));
                    m.insert(
                        "latency".into(),
                        r.latency
                            .as_ref()
                            .map_or(Json::Null, |h| Json::Object(summary_json(h))),
                    );
                    if let Some(e) = r.elapsed {
                        m.insert("elapsed_ns".into(), json!(e.as_nanos() as u64));
                    }
                    for (k, v) in r.columns.iter().chain(&r.json_only) {
                        m.insert(k.clone(), v.to_json());
                    }
                    Json::Object(m)
                })
                .collect();
            json!({ "name": s.name, "rows": rows, "notes": s.notes })
        })
        .collect();
    let mut doc = json!({
        "schema": SCHEMA_ID,
        "tool": { "name": "perfkit", "version": env!("CARGO_PKG_VERSION") },
        "command": report.command,
        "machine": {
            "cpu_model": report.machine.cpu_model,
            "cores": report.machine.cores,
            "os": report.machine.os,
        },
        "run": {
            "iterations": report.run.iterations,
            "warmup": report.run.warmup,
            "runs": report.run.runs,
            "pinned": report.run.pinned,
            "timing": report.run.timing,
        },
        "sections": sections,
    });
    if !report.summary.is_empty() {
        let summary: Vec<Json> = report
            .summary
            .iter()
            .map(|c| {
                json!({
                    "line": c.line(),
                    "subject": c.subject,
                    "peer": c.peer,
                    "speedup": if c.speedup.is_finite() { json!(c.speedup) } else { Json::Null },
                    "basis": c.basis,
                })
            })
            .collect();
        doc["summary"] = Json::Array(summary);
    }
    doc
}

/// Renders the human tables.
pub fn render_text(report: &Report, percentiles: bool) -> String {
    let mut s = String::new();
    let r = &report.run;
    let _ = writeln!(
        s,
        "perfkit {} — {} ({} cores){}",
        report.command,
        report.machine.cpu_model,
        report.machine.cores,
        // A report that measured nothing itself (a merge of logs) has no
        // iterations or threads to state.
        if r.iterations == 0 {
            String::new()
        } else {
            format!(
                ", {} iterations + {} warm-up, {} run(s), threads {}",
                r.iterations,
                r.warmup,
                r.runs,
                r.pinned
                    .as_deref()
                    .map_or_else(|| "not pinned".to_owned(), |p| format!("pinned to {p}"))
            )
        },
    );
    let _ = writeln!(s, "timing: {}", r.timing);
    for sec in &report.sections {
        let _ = writeln!(s, "\n== {} ==", sec.name);
        s.push_str(&table(sec));
        for n in &sec.notes {
            let _ = writeln!(s, "  {n}");
        }
    }
    if !report.summary.is_empty() {
        let _ = writeln!(s, "\n== summary ==");
        for c in &report.summary {
            let _ = writeln!(s, "  {}", c.line());
        }
    }
    if percentiles {
        for (name, _, h) in report.histograms() {
            let _ = writeln!(s, "\n-- percentile distribution: {name} (values in µs) --");
            s.push_str(&percentile_distribution(h, 1000.0));
        }
    }
    s
}

fn table(sec: &Section) -> String {
    let has_latency = sec.rows.iter().any(|r| r.latency.is_some());
    let mut extra: Vec<&str> = Vec::new();
    for r in &sec.rows {
        for (k, _) in &r.columns {
            if !extra.contains(&k.as_str()) {
                extra.push(k);
            }
        }
    }
    let mut header = vec!["name".to_owned()];
    if has_latency {
        header.extend(
            ["count", "min", "mean", "p50", "p90", "p99", "p99.9", "max"].map(String::from),
        );
    }
    header.extend(extra.iter().map(|k| column_title(k)));
    let mut cells: Vec<Vec<String>> = vec![header];
    for r in &sec.rows {
        let mut line = vec![r.name.clone()];
        if has_latency {
            match &r.latency {
                Some(h) if !h.is_empty() => {
                    line.push(h.len().to_string());
                    line.push(format_ns(h.min() as f64));
                    line.push(format_ns(h.mean()));
                    for (_, q) in SUMMARY {
                        line.push(if h.len() >= min_samples_for(q) {
                            format_ns(h.value_at_quantile(q) as f64)
                        } else {
                            "-".to_owned()
                        });
                    }
                    line.push(format_ns(h.max() as f64));
                }
                _ => line.extend(std::iter::repeat_n("-".to_owned(), 8)),
            }
        }
        for k in &extra {
            line.push(r.get(k).map_or_else(|| "-".to_owned(), Value::to_cell));
        }
        cells.push(line);
    }
    let widths: Vec<usize> = (0..cells[0].len())
        .map(|c| {
            cells
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for (i, line) in cells.iter().enumerate() {
        for (c, cell) in line.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c == 0 {
                let _ = write!(s, "{cell}{}", " ".repeat(pad));
            } else {
                let _ = write!(s, "  {}{cell}", " ".repeat(pad));
            }
        }
        s.push('\n');
        if i == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
            s.push_str(&"-".repeat(total));
            s.push('\n');
        }
    }
    s
}

/// `throughput_mb_s` → `throughput MB/s`: the unit suffix becomes a unit.
fn column_title(key: &str) -> String {
    const UNITS: [(&str, &str); 8] = [
        ("_mb_s", " MB/s"),
        ("_mib_s", " MiB/s"),
        ("_ns", " (ns)"),
        ("_us", " (µs)"),
        ("_ms", " (ms)"),
        ("_mib", " (MiB)"),
        ("_bytes", " (B)"),
        ("_per_s", "/s"),
    ];
    for (suffix, unit) in UNITS {
        if let Some(stem) = key.strip_suffix(suffix) {
            return format!("{}{unit}", stem.replace('_', " "));
        }
    }
    key.replace('_', " ")
}

/// The standard HdrHistogram percentile distribution (five ticks per half
/// distance), values divided by `scale`, with the usual footer.
pub fn percentile_distribution(h: &Histogram<u64>, scale: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut total = 0u64;
    for v in h.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let value = v.value_iterated_to() as f64 / scale;
        if q < 1.0 {
            let _ = writeln!(
                s,
                "{value:12.3} {q:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - q)
            );
        } else {
            let _ = writeln!(s, "{value:12.3} {q:2.12} {total:10}");
        }
    }
    let _ = writeln!(
        s,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        h.mean() / scale,
        h.stdev() / scale
    );
    let _ = writeln!(
        s,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        h.max() as f64 / scale,
        h.len()
    );
    let _ = writeln!(
        s,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        h.distinct_values()
    );
    s
}

/// Interval-log tags may not hold separators; keep a readable subset.
fn hlog_tag(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_./:".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes every histogram as one tagged interval, laid end to end in time.
pub fn write_hlog(report: &Report, w: &mut dyn Write) -> Result<()> {
    use hdrhistogram::serialization::V2DeflateSerializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
    let mut serializer = V2DeflateSerializer::new();
    let mut buf = Vec::new();
    {
        let mut writer = IntervalLogWriterBuilder::new()
            .add_comment(&format!(
                "perfkit {} on {}",
                report.command, report.machine.cpu_model
            ))
            .add_comment("values in nanoseconds; one interval per report row, tagged section/row")
            .with_start_time(std::time::SystemTime::now())
            .with_max_value_divisor(1e6)
            .begin_log_with(&mut buf, &mut serializer)?;
        let mut start = Duration::ZERO;
        for (name, row, h) in report.histograms() {
            let tag = hlog_tag(&name);
            let length = row.elapsed.unwrap_or(Duration::from_secs(1));
            writer
                .write_histogram(h, start, length, Tag::new(&tag))
                .map_err(|e| anyhow::anyhow!("serialising histogram {name}: {e}"))?;
            start += length;
        }
    }
    w.write_all(&buf)?;
    Ok(())
}

/// One line of a plot: a row's percentile spectrum as (x, log10 ns) points,
/// x being log10(1/(1-p)).
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

/// A section's series, drawn as one panel.
struct Panel {
    title: String,
    series: Vec<Series>,
}

/// Qualitative colours that stay apart from each other and readable on
/// white (Tableau 10 with its pale yellow and grey darkened); past ten
/// series the colours repeat with dashed, then dotted lines.
const PALETTE: [(u8, u8, u8); 10] = [
    (0x4E, 0x79, 0xA7),
    (0xF2, 0x8E, 0x2B),
    (0xE1, 0x57, 0x59),
    (0x76, 0xB7, 0xB2),
    (0x59, 0xA1, 0x4F),
    (0xB6, 0x99, 0x2D),
    (0xB0, 0x7A, 0xA1),
    (0xFF, 0x9D, 0xA7),
    (0x9C, 0x75, 0x5F),
    (0x79, 0x70, 0x6E),
];

/// How series `i` is drawn: a palette colour and a dash pattern (none,
/// dashed, dotted) as (dash length, gap) in pixels.
fn series_style(i: usize) -> (plotters::style::RGBColor, Option<(u32, u32)>) {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    let dash = match (i / PALETTE.len()) % 3 {
        0 => None,
        1 => Some((9, 5)),
        _ => Some((2, 4)),
    };
    (plotters::style::RGBColor(r, g, b), dash)
}

/// A tick label for a latency axis: the unit chosen for the value and no
/// needless digits ("1 µs", "20 ms", "500 ns").
pub fn format_tick_ns(ns: f64) -> String {
    if !ns.is_finite() || ns <= 0.0 {
        return "-".into();
    }
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

/// Shortens `s` to `max` characters with an ellipsis, for legend entries
/// and panel titles that must fit their box.
fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Width of the whole plot, and of each panel's legend column.
const PLOT_WIDTH: u32 = 1100;
const LEGEND_WIDTH: u32 = 360;
/// Height of one legend entry, and the least height of a panel.
const LEGEND_LINE: u32 = 17;
const PANEL_MIN_HEIGHT: u32 = 330;
const TITLE_HEIGHT: u32 = 44;

/// Draws each section's histograms as one panel of a tall SVG: x is the
/// percentile on the log(1/(1-p)) axis HdrHistogram plots use, y the
/// latency on a log axis with unit-aware ticks (ns, µs, ms, s); each panel
/// has its own legend beside it, one entry per row.
pub fn render_svg(report: &Report) -> Result<String> {
    use plotters::prelude::*;
    let panels: Vec<Panel> = report
        .sections
        .iter()
        .map(|sec| Panel {
            title: sec.name.clone(),
            series: sec
                .rows
                .iter()
                .filter_map(|r| r.latency.as_ref().map(|h| (r, h)))
                .filter(|(_, h)| !h.is_empty())
                .map(|(r, h)| Series {
                    name: r.name.clone(),
                    // Percentiles beyond 1 - 1/count are the maximum
                    // repeated, not information: the line stops there.
                    points: h
                        .iter_quantiles(5)
                        .map(|v| v.quantile_iterated_to())
                        .map(|q| q.min(1.0 - 1.0 / h.len().max(2) as f64))
                        .map(|q| {
                            (
                                (1.0 / (1.0 - q)).log10(),
                                (h.value_at_quantile(q).max(1) as f64).log10(),
                            )
                        })
                        .collect(),
                })
                .collect(),
        })
        .filter(|p| !p.series.is_empty())
        .collect();
    let heights: Vec<u32> = panels
        .iter()
        .map(|p| PANEL_MIN_HEIGHT.max(60 + LEGEND_LINE * p.series.len() as u32))
        .collect();
    let total = TITLE_HEIGHT + heights.iter().sum::<u32>().max(PANEL_MIN_HEIGHT);
    let err = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("plot: {e}");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (PLOT_WIDTH, total)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        root.draw(&Text::new(
            format!(
                "perfkit {}: latency by percentile, one panel per section (log scale)",
                report.command
            ),
            (16, 12),
            ("sans-serif", 20).into_font(),
        ))
        .map_err(err)?;
        if panels.is_empty() {
            root.draw(&Text::new(
                "no latency histograms in this report",
                (16, TITLE_HEIGHT as i32 + 20),
                ("sans-serif", 16).into_font(),
            ))
            .map_err(err)?;
        }
        let mut top = TITLE_HEIGHT;
        for (panel, height) in panels.iter().zip(&heights) {
            let area = root.clone().shrink((0, top), (PLOT_WIDTH, *height));
            top += height;
            draw_panel(&area, panel)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn draw_panel<DB: plotters::prelude::DrawingBackend>(
    area: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel,
) -> Result<()> {
    use plotters::prelude::*;
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("plot: {e}");
    let (chart_area, legend_area) = area.split_horizontally(PLOT_WIDTH - LEGEND_WIDTH);
    let all = || panel.series.iter().flat_map(|s| s.points.iter());
    let x_max = all().map(|p| p.0).fold(1.0f64, f64::max).ceil();
    // Whole decades, at least two, so every y tick is 1, 10 or 100 of a
    // unit.
    let y_lo = all().map(|p| p.1).fold(f64::INFINITY, f64::min).floor();
    let mut y_hi = all().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max).ceil();
    if y_hi - y_lo < 2.0 {
        y_hi = y_lo + 2.0;
    }
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(fit(&panel.title, 90), ("sans-serif", 17))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(72)
        .build_cartesian_2d(0f64..x_max, y_lo..y_hi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("percentile")
        .y_desc("latency")
        .x_labels(x_max as usize + 1)
        .y_labels((y_hi - y_lo) as usize + 1)
        .x_label_formatter(&|x| {
            let p = 100.0 * (1.0 - 10f64.powf(-x));
            format!("{p:.*}%", (x.round() as usize).saturating_sub(2))
        })
        .y_label_formatter(&|y| format_tick_ns(10f64.powf(*y)))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 14))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.12))
        .draw()
        .map_err(err)?;
    for (i, s) in panel.series.iter().enumerate() {
        let (color, dash) = series_style(i);
        let style = color.stroke_width(2);
        let pts = s.points.iter().copied();
        match dash {
            None => chart
                .draw_series(LineSeries::new(pts, style))
                .map_err(err)?,
            Some((len, gap)) => chart
                .draw_series(DashedLineSeries::new(pts, len, gap, style))
                .map_err(err)?,
        };
    }
    // The legend: its own column, one entry per series, so it never
    // covers the lines and always fits (the panel grows with it).
    let font = ("sans-serif", 13).into_font();
    for (i, s) in panel.series.iter().enumerate() {
        let (color, dash) = series_style(i);
        let y = 48 + (i as u32 * LEGEND_LINE) as i32;
        let style = color.stroke_width(3);
        match dash {
            None => legend_area
                .draw(&PathElement::new(vec![(8, y), (40, y)], style))
                .map_err(err)?,
            Some((len, gap)) => {
                let mut x = 8;
                while x < 40 {
                    let end = (x + len as i32).min(40);
                    legend_area
                        .draw(&PathElement::new(vec![(x, y), (end, y)], style))
                        .map_err(err)?;
                    x = end + gap as i32;
                }
            }
        }
        legend_area
            .draw(&Text::new(fit(&s.name, 44), (48, y - 7), font.clone()))
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_chosen_per_value() {
        assert_eq!(format_ns(850.0), "850 ns");
        assert_eq!(format_ns(12_345.0), "12.3 µs");
        assert_eq!(format_ns(4_560_000.0), "4.56 ms");
        assert_eq!(format_ns(2.5e9), "2.50 s");
    }

    #[test]
    fn column_titles_turn_unit_suffixes_into_units() {
        assert_eq!(column_title("throughput_mb_s"), "throughput MB/s");
        assert_eq!(column_title("predicted_us"), "predicted (µs)");
        assert_eq!(column_title("ratio"), "ratio");
    }

    #[test]
    fn table_lists_quantiles_computed_from_the_samples() {
        let mut h = latency_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap(); // 1 µs .. 1 ms, uniform
        }
        let mut rep = Report::new("test");
        rep.section("s").row(
            Row::new("uniform")
                .latency(h)
                .col("ratio", Value::num(2.5, 2)),
        );
        let text = render_text(&rep, false);
        let line = text.lines().find(|l| l.starts_with("uniform")).unwrap();
        let cells: Vec<&str> = line
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        // Independent expectation: the p-th value of 1..=1000 µs is p·1000 µs
        // (within the histogram's 0.1 % precision).
        assert_eq!(
            cells,
            [
                "uniform", "1000", "1.00 µs", "501 µs", "500 µs", "900 µs", "990 µs", "999 µs",
                "1.00 ms", "2.50"
            ]
        );
    }

    fn row_cells(rep: &Report, name: &str) -> Vec<String> {
        render_text(rep, false)
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap()
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn percentile_cells_appear_once_the_count_supports_them() {
        let row = |n: u64| {
            let mut h = latency_histogram();
            for v in 1..=n {
                h.record(v * 1000).unwrap();
            }
            Row::new(format!("n{n}")).latency(h)
        };
        let mut rep = Report::new("test");
        rep.section("s")
            .row(row(9))
            .row(row(10))
            .row(row(99))
            .row(row(100))
            .row(row(999));
        // Columns: name, count, min, mean, p50, p90, p99, p99.9, max.
        let q = |name: &str| row_cells(&rep, name)[4..8].to_vec();
        let dash = |c: &String| c == "-";
        assert_eq!(
            q("n9 ").iter().map(dash).collect::<Vec<_>>(),
            [false, true, true, true]
        );
        assert_eq!(
            q("n10 ").iter().map(dash).collect::<Vec<_>>(),
            [false, false, true, true]
        );
        assert_eq!(
            q("n99 ").iter().map(dash).collect::<Vec<_>>(),
            [false, false, true, true]
        );
        assert_eq!(
            q("n100 ").iter().map(dash).collect::<Vec<_>>(),
            [false, false, false, true]
        );
        assert_eq!(
            q("n999 ").iter().map(dash).collect::<Vec<_>>(),
            [false, false, false, true]
        );
        // JSON keeps every key whatever the count.
        let doc = to_json(&rep);
        let lat = &doc["sections"][0]["rows"][0]["latency"];
        assert!(lat["p99_ns"].is_u64() && lat["p999_ns"].is_u64());
    }

    #[test]
    fn summary_lines_say_faster_or_slower_by_the_factor() {
        let c = |speedup: f64| Comparison {
            subject: "x".into(),
            peer: "y".into(),
            speedup,
            basis: "b".into(),
        };
        assert_eq!(c(2.5).line(), "perfkit x is 2.50× faster than y (b)");
        assert_eq!(c(0.5).line(), "perfkit x is 2.00× slower than y (b)");
        assert!(c(f64::NAN).line().contains("could not be compared"));
        assert!(c(0.0).line().contains("could not be compared"));
        let mut rep = Report::new("t");
        rep.summary.push(c(4.0));
        assert!(render_text(&rep, false).contains("== summary ==\n  perfkit x is 4.00× faster"));
        assert_eq!(to_json(&rep)["summary"][0]["speedup"], 4.0);
        assert!(to_json(&Report::new("t")).get("summary").is_none());
    }

    #[test]
    fn tick_labels_carry_their_unit_and_no_spare_digits() {
        assert_eq!(format_tick_ns(1.0), "1 ns");
        assert_eq!(format_tick_ns(100.0), "100 ns");
        assert_eq!(format_tick_ns(1e3), "1 µs");
        assert_eq!(format_tick_ns(2.5e4), "25 µs");
        assert_eq!(format_tick_ns(1e8), "100 ms");
        assert_eq!(format_tick_ns(1e10), "10 s");
    }

    #[test]
    fn the_first_thirty_series_styles_are_all_different() {
        let styles: Vec<_> = (0..30).map(series_style).collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[..i] {
                assert_ne!(a, b);
            }
        }
    }
}
