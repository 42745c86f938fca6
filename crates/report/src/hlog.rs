//! The `--hlog` HdrHistogram interval log: one tagged interval per row.

use std::io::Write;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::model::{Logged, Report};

/// Why an interval log could not be written.
#[derive(Debug, thiserror::Error)]
pub enum HlogError {
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The hdrhistogram crate could not serialise an interval.
    #[error("serialising the interval at {} ({tag}): {detail}", crate::format_ns(start.as_nanos() as f64))]
    Serialise {
        /// Where the interval starts.
        start: Duration,
        /// Its tag, or "untagged".
        tag: String,
        /// The crate's complaint.
        detail: String,
    },
    /// A merged slot lies before the earliest time a log can state.
    #[error("slot {0} lies before any time a log can hold")]
    SlotBeforeTime(i64),
    /// A merged slot lies past the latest time a log can state.
    #[error("slot {0} lies beyond any time a log can hold")]
    SlotBeyondTime(i64),
}

/// The longest a tag's section or row part grows before its last words
/// are left out (the JSON's `hlog_tag` still names the whole row).
const PART_MAX: usize = 32;

/// The interval-log tag of every row with a histogram, `[section][row]`
/// (`None` for a row without one, and for one kept out of the log): a
/// series' tag for its intervals and for the rows that are its sum
/// ([`Logged`]), else the row's own [`crate::Row::tag`], or [`hlog_tag`] of
/// the section and row names. Tags of rows of their own that would repeat
/// another tag get `_2`, `_3`, … in report order.
pub fn hlog_tags(report: &Report) -> Vec<Vec<Option<String>>> {
    // A series' rows share its tag; the others must not take it.
    let mut seen: std::collections::HashSet<String> = report
        .sections
        .iter()
        .flat_map(|s| &s.rows)
        .filter_map(|r| match &r.logged {
            Logged::Interval(t) | Logged::SumOf(t) => Some(t.clone()),
            Logged::Own | Logged::Omitted => None,
        })
        .collect();
    report
        .sections
        .iter()
        .map(|sec| {
            sec.rows
                .iter()
                .map(|row| {
                    row.latency.as_ref()?;
                    let base = match &row.logged {
                        Logged::Interval(t) | Logged::SumOf(t) => return Some(t.clone()),
                        Logged::Omitted => return None,
                        Logged::Own => row
                            .tag
                            .clone()
                            .unwrap_or_else(|| hlog_tag(&sec.name, &row.name)),
                    };
                    let mut tag = base.clone();
                    let mut n = 1;
                    while !seen.insert(tag.clone()) {
                        n += 1;
                        tag = format!("{base}_{n}");
                    }
                    Some(tag)
                })
                .collect()
        })
        .collect()
}

/// The tag a row named `row` of section `section` gets: `section.row` from
/// the names' first words in `[A-Za-z0-9_.-]`, with `/s` spelled `_per_s`
/// and parenthesised asides left out, e.g. "load 1000/s over 1
/// session(s)" / "corrected (intended send → first ExecutionReport)" →
/// `load_1000_per_s_over_1_session.corrected`.
pub fn hlog_tag(section: &str, row: &str) -> String {
    format!("{}.{}", tag_part(section), tag_part(row))
}

/// One name's part of a tag: its words outside parentheses, joined by `_`,
/// at most [`PART_MAX`] characters (whole words), `x` for a name with none.
fn tag_part(name: &str) -> String {
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let plain = plain.replace("/s", " per s");
    let mut part = String::new();
    let words = plain
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
        .map(|w| w.trim_matches(['.', '-']))
        .filter(|w| !w.is_empty());
    for w in words {
        if !part.is_empty() && part.len() + 1 + w.len() > PART_MAX {
            break;
        }
        if !part.is_empty() {
            part.push('_');
        }
        part.push_str(w);
    }
    if part.is_empty() {
        part.push('x');
    }
    part
}

/// Writes every histogram the log is to hold ([`Logged`]) as one tagged
/// interval, in order of time: rows placed in time keep their place, the
/// others follow one another from the end of the latest so far. Sums of a
/// series and rows kept out are not written, so a reader that adds up the
/// intervals of each tag counts every sample once.
pub fn write_hlog(report: &Report, w: &mut dyn Write) -> Result<(), HlogError> {
    let comments = [
        format!("perfkit {} on {}", report.command, report.machine.cpu_model),
        "values in nanoseconds; one interval per report row, or per interval of a run, \
         tagged section.row (the --json document's hlog_tag names each row's tag)"
            .to_string(),
    ];
    let tags = hlog_tags(report);
    let mut cursor = Duration::ZERO;
    let mut intervals = Vec::new();
    for (sec, tags) in report.sections.iter().zip(&tags) {
        for (row, tag) in sec.rows.iter().zip(tags) {
            let Some(h) = &row.latency else { continue };
            if matches!(row.logged, Logged::SumOf(_) | Logged::Omitted) {
                continue;
            }
            let length = row.elapsed.unwrap_or(Duration::from_secs(1));
            let start = row.start.unwrap_or(cursor);
            cursor = cursor.max(start + length);
            intervals.push(LogInterval {
                start,
                length,
                tag: tag.clone(),
                histogram: h,
            });
        }
    }
    // Readers take a log's intervals as a time series; stable, so rows
    // that start together keep the report's order.
    intervals.sort_by_key(|i| i.start);
    let started = report.started.unwrap_or_else(std::time::SystemTime::now);
    write_intervals(w, &comments, Some(started), intervals.into_iter().map(Ok))
}

/// One interval of a log being written.
pub(crate) struct LogInterval<'h> {
    /// From the log's StartTime.
    pub start: Duration,
    /// How long it covers.
    pub length: Duration,
    /// A valid tag (no `,` or whitespace), or none.
    pub tag: Option<String>,
    /// Its values, in nanoseconds.
    pub histogram: &'h Histogram<u64>,
}

/// Writes an interval log: `comments`, the StartTime when given, then
/// `intervals` in order, values in nanoseconds (the Interval_Max column in
/// milliseconds).
pub(crate) fn write_intervals<'h>(
    w: &mut dyn Write,
    comments: &[String],
    start_time: Option<std::time::SystemTime>,
    intervals: impl IntoIterator<Item = Result<LogInterval<'h>, HlogError>>,
) -> Result<(), HlogError> {
    use hdrhistogram::serialization::V2DeflateSerializer;
    use hdrhistogram::serialization::interval_log::{
        IntervalLogWriterBuilder, IntervalLogWriterError, Tag,
    };
    let mut serializer = V2DeflateSerializer::new();
    let mut buf = Vec::new();
    {
        let mut builder = IntervalLogWriterBuilder::new();
        for c in comments {
            builder.add_comment(c);
        }
        if let Some(t) = start_time {
            builder.with_start_time(t);
        }
        let mut writer = builder
            .with_max_value_divisor(1e6)
            .begin_log_with(&mut buf, &mut serializer)?;
        for interval in intervals {
            let i = interval?;
            let tag = i.tag.as_deref().and_then(Tag::new);
            writer
                .write_histogram(i.histogram, i.start, i.length, tag)
                .map_err(|e| HlogError::Serialise {
                    start: i.start,
                    tag: i.tag.as_deref().unwrap_or("untagged").to_owned(),
                    detail: match e {
                        IntervalLogWriterError::SerializeError(e) => e.to_string(),
                        IntervalLogWriterError::IoError(e) => e.to_string(),
                    },
                })?;
        }
    }
    w.write_all(&buf)?;
    Ok(())
}
