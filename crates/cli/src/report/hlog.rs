//! The `--hlog` HdrHistogram interval log: one tagged interval per row.

use super::*;

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
    let comments = [
        format!("perfkit {} on {}", report.command, report.machine.cpu_model),
        "values in nanoseconds; one interval per report row, tagged section/row".to_string(),
    ];
    // Rows placed in time keep their place; the others follow one another
    // from the end of the latest so far.
    let mut cursor = Duration::ZERO;
    let intervals = report.histograms().map(|(name, row, h)| {
        let length = row.elapsed.unwrap_or(Duration::from_secs(1));
        let start = row.start.unwrap_or(cursor);
        cursor = cursor.max(start + length);
        Ok(LogInterval {
            start,
            length,
            tag: Some(hlog_tag(&name)),
            histogram: h,
        })
    });
    let started = report.started.unwrap_or_else(std::time::SystemTime::now);
    write_intervals(w, &comments, Some(started), intervals)
}

/// One interval of a log being written.
pub(super) struct LogInterval<'h> {
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
pub(super) fn write_intervals<'h>(
    w: &mut dyn Write,
    comments: &[String],
    start_time: Option<std::time::SystemTime>,
    intervals: impl IntoIterator<Item = Result<LogInterval<'h>>>,
) -> Result<()> {
    use hdrhistogram::serialization::V2DeflateSerializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
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
                .map_err(|e| {
                    anyhow::anyhow!(
                        "serialising the interval at {:?} ({}): {e:?}",
                        i.start,
                        i.tag.as_deref().unwrap_or("untagged")
                    )
                })?;
        }
    }
    w.write_all(&buf)?;
    Ok(())
}
