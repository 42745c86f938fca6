//! The `--hlog` HdrHistogram interval log: one tagged interval per row.

use std::io::Write;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::model::Report;

/// Why an interval log could not be written.
#[derive(Debug, thiserror::Error)]
pub enum HlogError {
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The hdrhistogram crate could not serialise an interval.
    #[error("serialising the interval at {start:?} ({tag}): {detail}")]
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
/// (`None` for a row without one): the row's own [`crate::Row::tag`], or
/// `section.row` from the names' first words in `[A-Za-z0-9_.-]`, with
/// `/s` spelled `_per_s` and parenthesised asides left out, e.g.
/// "load 1000/s over 1 session(s)" / "corrected (intended send → first
/// ExecutionReport)" → `load_1000_per_s_over_1_session.corrected`. Tags
/// that would repeat get `_2`, `_3`, … in report order.
pub fn hlog_tags(report: &Report) -> Vec<Vec<Option<String>>> {
    let mut seen = std::collections::HashSet::new();
    report
        .sections
        .iter()
        .map(|sec| {
            let section = tag_part(&sec.name);
            sec.rows
                .iter()
                .map(|row| {
                    row.latency.as_ref()?;
                    let base = row
                        .tag
                        .clone()
                        .unwrap_or_else(|| format!("{section}.{}", tag_part(&row.name)));
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

/// Writes every histogram as one tagged interval, laid end to end in time.
pub fn write_hlog(report: &Report, w: &mut dyn Write) -> Result<(), HlogError> {
    let comments = [
        format!("perfkit {} on {}", report.command, report.machine.cpu_model),
        "values in nanoseconds; one interval per report row, tagged section.row \
         (the --json document's hlog_tag names each row in full)"
            .to_string(),
    ];
    let tags: Vec<Option<String>> = hlog_tags(report)
        .into_iter()
        .flatten()
        .flatten()
        .map(Some)
        .collect();
    // Rows placed in time keep their place; the others follow one another
    // from the end of the latest so far.
    let mut cursor = Duration::ZERO;
    let intervals = report.histograms().zip(tags).map(|((_, row, h), tag)| {
        let length = row.elapsed.unwrap_or(Duration::from_secs(1));
        let start = row.start.unwrap_or(cursor);
        cursor = cursor.max(start + length);
        Ok(LogInterval {
            start,
            length,
            tag,
            histogram: h,
        })
    });
    let started = report.started.unwrap_or_else(std::time::SystemTime::now);
    write_intervals(w, &comments, Some(started), intervals)
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
