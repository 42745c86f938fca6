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
//!
//! This module holds the model and [`emit`]; each output form has its own
//! module (`text`, `json`, `hlog`, `svg`), `output` writes files without
//! ever leaving a half-written one, and [`merge`] adds up interval logs.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use serde_json::{Map, Value as Json, json};

use crate::machine::Machine;

mod hlog;
mod json;
pub mod merge;
mod output;
mod svg;
mod text;

pub use hlog::write_hlog;
pub use json::to_json;
pub use output::{Output, is_special_file, write_atomically, write_atomically_with};
pub use svg::{format_tick_ns, render_svg};
pub use text::{format_ns, min_samples_for, percentile_distribution, render_text};

/// The identifier of the JSON document layout; bump when a field changes
/// meaning or disappears.
pub const SCHEMA_ID: &str = "perfkit-report/1";

/// The JSON schema for `--json` output, documented and tested.
pub const SCHEMA: &str = include_str!("../report.schema.json");

/// The harness's one latency histogram, which every report renders.
pub use perfkit_bench::harness::latency_histogram;

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
    pub summary: Vec<Headline>,
}

/// One headline comparison of two rows measured in the same run:
/// `subject` took `speedup` times less time than `peer` for the same work.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
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

impl Headline {
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

#[cfg(test)]
mod tests;
