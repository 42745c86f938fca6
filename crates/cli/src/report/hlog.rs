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
