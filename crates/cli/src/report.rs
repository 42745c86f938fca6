//! The one report renderer every subcommand uses.
//!
//! A subcommand measures into [`Report`] (named HDR histograms of
//! nanoseconds plus extra columns), then calls [`emit`] with the
//! [`ReportOptions`] its command line asked for (the binary's `--json`,
//! `--hlog`, `--percentiles` and `--plot` flags). Output forms:
//!
//! - a human table per section: count, min, mean, p50, p90, p99, p99.9, max
//!   with units chosen per value, then the extra columns that fit in
//!   [`TEXT_WIDTH`] columns (`--wide`: all of them), notes as numbered
//!   footnotes;
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
//! ever leaving a half-written one, [`merge`] adds up interval logs and
//! [`encoded`] decodes their histograms within bounds.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use serde_json::{Map, Value as Json, json};

pub mod encoded;
mod hlog;
mod json;
pub mod merge;
mod output;
mod svg;
mod text;

pub use hlog::{hlog_tags, write_hlog};
pub use json::to_json;
pub use output::{Output, is_special_file, write_atomically, write_atomically_with};
pub use svg::{format_tick_ns, render_svg};
pub use text::{
    TEXT_WIDTH, format_ns, min_samples_for, percentile_distribution, render_text, render_text_as,
};

/// The identifier of the JSON document layout; bump when a field changes
/// meaning or disappears.
pub const SCHEMA_ID: &str = "perfkit-report/1";

/// The JSON schema for `--json` output, documented and tested.
pub const SCHEMA: &str = include_str!("../report.schema.json");

pub use perfkit_measure::report::{Headline, Report, Row, RunInfo, Section, Value};
pub use perfkit_measure::{latency_histogram, record};

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
    /// Tables with every column and one line per row, however wide,
    /// instead of fitted to [`TEXT_WIDTH`] columns.
    pub wide: bool,
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
        let open = |path: &Path, what: &str, flag: &str| -> Result<(PathBuf, Output)> {
            // A directory would only be refused at the final rename.
            if path.is_dir() {
                anyhow::bail!("{what} {} is a directory", path.display());
            }
            // Output::create's errors name the path; this says what it is for.
            let out = Output::create(path, true).with_context(|| format!("--{flag}"))?;
            Ok((path.to_path_buf(), out))
        };
        Ok(ReportFiles {
            hlog: hlog.map(|p| open(p, "interval log", "hlog")).transpose()?,
            plot: plot.map(|p| open(p, "plot", "plot")).transpose()?,
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
        render_text_as(report, options.percentiles, options.wide)
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
