//! The report model: what a measurement returns for a renderer to show.
//!
//! A [`Report`] is the machine it ran on, how it was measured
//! ([`RunInfo`]), [`Section`]s of [`Row`]s (a name, an optional HDR
//! histogram of nanoseconds, extra columns of [`Value`]s) and headline
//! comparisons ([`Headline`]). It is plain data, so a measurement never
//! decides how it is shown: the renderers beside it in this crate do.
//!
//! Column names are snake_case with the unit in the name (`throughput_mb_s`,
//! `p99_ns`); the table derives its headers from them.

use std::time::Duration;

use hdrhistogram::Histogram;

use perfkit_measure::machine::Machine;

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
    /// When the histogram's time began, from [`Report::started`], for a row
    /// that is one interval of a time series (the interval log places it
    /// there); rows without it are laid end to end.
    pub start: Option<Duration>,
    /// The interval-log tag of the row's histogram, for a row that stands
    /// for a tag some log already had (a merge of logs); `None` lets the
    /// renderer derive a short one from the section and row names.
    pub tag: Option<String>,
    /// What the row's histogram is in the interval log: an interval of
    /// its own (the default), one of a series, the sum of a series, or
    /// samples the log already holds.
    pub logged: Logged,
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
            start: None,
            tag: None,
            logged: Logged::Own,
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

    /// Places the row's histogram at `d` after [`Report::started`].
    pub fn start(mut self, d: Duration) -> Row {
        self.start = Some(d);
        self
    }

    /// Makes the row one interval of the series `tag`, placed at `start`
    /// after [`Report::started`]: the rows of a series share the tag, as
    /// an HdrHistogram log's intervals of one stream do.
    pub fn interval_of(mut self, tag: impl Into<String>, start: Duration) -> Row {
        self.logged = Logged::Interval(tag.into());
        self.start = Some(start);
        self
    }

    /// Makes the row the sum of the series `tag`'s intervals (a run's
    /// total over its intervals): the log holds its samples as those
    /// intervals, so it is not written again.
    pub fn sum_of(mut self, tag: impl Into<String>) -> Row {
        self.logged = Logged::SumOf(tag.into());
        self
    }

    /// Keeps the row out of the interval log: its samples are ones the log
    /// holds under another row, timed another way (a load's uncorrected
    /// latency of the orders whose corrected latency is logged).
    pub fn not_logged(mut self) -> Row {
        self.logged = Logged::Omitted;
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

/// What a row's histogram is in the `--hlog` interval log, where a reader
/// adds up the intervals of each tag: every sample is written once, under
/// one tag, and a tag's intervals run forward in time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Logged {
    /// One interval under a tag of its own, derived from the section and
    /// row names unless [`Row::tag`] gives one.
    #[default]
    Own,
    /// One interval of the series named by the tag, at the row's
    /// [`Row::start`] ([`Row::interval_of`]).
    Interval(String),
    /// The sum of the intervals of the series named by the tag
    /// ([`Row::sum_of`]); not written.
    SumOf(String),
    /// Samples the log holds under other rows ([`Row::not_logged`]); not
    /// written, and no tag.
    Omitted,
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
    /// The command that produced it, e.g. `"fix bench"`.
    pub command: String,
    /// The machine it ran on.
    pub machine: Machine,
    /// How it was measured.
    pub run: RunInfo,
    /// The tables.
    pub sections: Vec<Section>,
    /// Headline comparisons, one line each, printed after the tables.
    pub summary: Vec<Headline>,
    /// When the measurement began, for a report whose rows are intervals
    /// of a time series (the interval log's StartTime); `None` for the
    /// time the report is written.
    pub started: Option<std::time::SystemTime>,
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
            started: None,
        }
    }

    /// Appends a section and returns it for filling.
    pub fn section(&mut self, name: impl Into<String>) -> &mut Section {
        self.sections.push(Section::new(name));
        self.sections.last_mut().expect("just pushed")
    }

    /// Every row with a histogram, named `section/row`.
    pub fn histograms(&self) -> impl Iterator<Item = (String, &Row, &Histogram<u64>)> {
        self.sections.iter().flat_map(|s| {
            s.rows.iter().filter_map(move |r| {
                r.latency
                    .as_ref()
                    .map(|h| (format!("{}/{}", s.name, r.name), r, h))
            })
        })
    }
}
