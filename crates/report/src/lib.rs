//! The report every perfkit measurement returns, and every way it is
//! shown: one crate, as ripgrep's printer is one, so that the libraries
//! that measure and the binary that renders agree on one model.
//!
//! A measurement fills a [`Report`] (sections of [`Row`]s: named HDR
//! histograms of nanoseconds plus extra columns, and [`Headline`]
//! comparisons); the binary calls [`emit`] with the [`ReportOptions`] its
//! command line asked for. Output forms:
//!
//! - a human table per section ([`render_text`]): count, min, mean, p50,
//!   p90, p99, p99.9, max with units chosen per value, then the extra
//!   columns that fit in [`TEXT_WIDTH`] columns (`--wide`: all of them),
//!   notes as numbered footnotes;
//! - `--json` ([`to_json`]): one JSON document (schema [`SCHEMA`], the
//!   file `report.schema.json` beside this crate's manifest, `"schema":
//!   "perfkit-report/1"`), nothing else on stdout;
//! - `--hlog FILE` ([`write_hlog`]): the HdrHistogram interval-log format,
//!   one tagged interval per row, or per interval of a time series
//!   ([`Logged`]), each sample written once;
//! - `--percentiles` ([`percentile_distribution`]): the standard
//!   HdrHistogram percentile distribution of every row, in microseconds;
//! - `--plot FILE.svg` ([`render_svg`]): every row's percentile spectrum.
//!
//! The `--hlog` and `--plot` files are written through [`landing::Output`],
//! which never leaves a half-written one. [`merge`] adds up interval logs other runs wrote, decoding their
//! histograms within bounds with [`encoded`].
//!
//! Column names are snake_case with the unit in the name (`throughput_mb_s`,
//! `p99_ns`); the table derives its headers from them.
//!
//! ```
//! use perfkit_measure::{latency_histogram, record};
//! use perfkit_report::{Report, Row, Value, render_text};
//! let mut h = latency_histogram();
//! record(&mut h, std::time::Duration::from_micros(42));
//! let mut rep = Report::new("example");
//! rep.section("demo").row(Row::new("call").latency(h).col("ratio", Value::num(3.0, 2)));
//! assert_eq!(rep.histograms().count(), 1);
//! assert!(render_text(&rep, false).contains("42.0 µs"));
//! ```

#![forbid(unsafe_code)]

mod causes;
mod emit;
pub mod encoded;
#[doc(hidden)]
pub mod fuzzing;
mod hlog;
mod json;
pub mod merge;
mod model;
mod svg;
mod text;
mod units;

pub use causes::{one_line, os_words};
pub use emit::{EmitError, ReportFiles, ReportOptions, emit, emit_to};
pub use hlog::{HlogError, hlog_tag, hlog_tags, write_hlog};
pub use json::{SCHEMA, SCHEMA_ID, to_json};
pub use model::{Headline, Logged, Report, Row, RunInfo, Section, Value};
pub use svg::{PlotError, format_tick_ns, render_svg};
pub use text::{TEXT_WIDTH, min_samples_for, percentile_distribution, render_text, render_text_as};
pub use units::{format_ns, scale_ns};

#[cfg(test)]
mod tests;
