//! `perfkit report merge`: many HdrHistogram interval logs as one report.
//!
//! A run that outgrows one load-generating machine runs on several, each
//! writing an interval log; merging them is how their figures combine.
//! Each log's timestamps are made relative to its own start (its BaseTime,
//! else its StartTime), so the k-th interval of every log lands in the
//! same slot whatever clock each machine had; intervals of one tag in one
//! slot are added, and so are all of a tag's intervals for its total.
//! The logs are read with the hdrhistogram crate's own reader.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use super::{Report, Row, Value};

/// The name given to intervals without a tag.
pub const UNTAGGED: &str = "(untagged)";

/// Timestamps below this many seconds are offsets from the log's start;
/// above it they are times since 1970 (as the Java reader decides).
const ABSOLUTE_AFTER_SECS: f64 = 365.0 * 86_400.0;

/// What one input log held.
#[derive(Debug, Clone)]
pub struct LogInfo {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its StartTime, if it gave one.
    pub start_time: Option<SystemTime>,
    /// How many intervals it held.
    pub intervals: usize,
}

/// The logs, added up.
#[derive(Debug)]
pub struct Merged {
    /// Each input, in the order given.
    pub logs: Vec<LogInfo>,
    /// The width of a slot.
    pub resolution: Duration,
    /// (slot, tag) → the sum of the intervals that fell there.
    pub slots: BTreeMap<(u64, String), Histogram<u64>>,
    /// tag → the sum of all its intervals, and how many logs had it.
    pub totals: BTreeMap<String, (Histogram<u64>, usize)>,
}

/// One interval as read, before it is placed.
struct Interval {
    tag: String,
    /// Seconds from the log's start.
    start: f64,
    length: f64,
    histogram: Histogram<u64>,
}

/// Reads one log: its StartTime and intervals, timestamps relative to its
/// start. Any entry the reader cannot parse, or a histogram it cannot
/// decode, is an error naming the file.
fn read_log(path: &Path) -> Result<(Option<SystemTime>, Vec<Interval>)> {
    let bytes =
        std::fs::read(path).with_context(|| format!("reading interval log {}", path.display()))?;
    parse_log(path, &bytes)
}

/// [`read_log`] of bytes already read; `path` names them in errors.
fn parse_log(path: &Path, bytes: &[u8]) -> Result<(Option<SystemTime>, Vec<Interval>)> {
    let mut start_time = None;
    let mut base_time = None;
    let mut raw = Vec::new();
    let mut decoder = Deserializer::new();
    for entry in IntervalLogIterator::new(bytes) {
        let entry = entry.map_err(|e| {
            anyhow::anyhow!(
                "{}: not a valid HdrHistogram interval log: {e:?}",
                path.display()
            )
        })?;
        match entry {
            LogEntry::StartTime(t) => start_time = Some(t.as_secs_f64()),
            LogEntry::BaseTime(t) => base_time = Some(t.as_secs_f64()),
            LogEntry::Interval(i) => {
                let start = i.start_timestamp().as_secs_f64();
                let encoded = i.encoded_histogram();
                let bytes = base64_decode(encoded).with_context(|| {
                    format!(
                        "{}: interval at {start} s: histogram is not base64",
                        path.display()
                    )
                })?;
                let histogram: Histogram<u64> =
                    decoder.deserialize(&mut &bytes[..]).map_err(|e| {
                        anyhow::anyhow!(
                            "{}: interval at {start} s: bad histogram: {e:?}",
                            path.display()
                        )
                    })?;
                let tag = i
                    .tag()
                    .map_or(UNTAGGED.to_string(), |t| t.as_str().to_string());
                raw.push((tag, start, i.duration().as_secs_f64(), histogram));
            }
        }
    }
    if raw.is_empty() && start_time.is_none() && base_time.is_none() {
        bail!(
            "{}: not an HdrHistogram interval log (no interval, no StartTime)",
            path.display()
        );
    }
    // Stamps are offsets from BaseTime when there is one, times since 1970
    // when they are that large, else offsets from StartTime; every log is
    // then placed against its StartTime (or, lacking one, its first
    // interval), so that each starts at 0.
    let absolute = |ts: f64| match base_time {
        Some(b) => Some(b + ts),
        None if ts >= ABSOLUTE_AFTER_SECS => Some(ts),
        None => None,
    };
    let first = raw
        .iter()
        .filter_map(|(_, ts, _, _)| absolute(*ts))
        .fold(f64::INFINITY, f64::min);
    let origin = start_time.unwrap_or(first);
    let intervals = raw
        .into_iter()
        .map(|(tag, start, length, histogram)| {
            let start = absolute(start).map_or(start, |t| t - origin);
            Interval {
                tag,
                start: start.max(0.0),
                length,
                histogram,
            }
        })
        .collect();
    let start_time = match start_time {
        None => None,
        Some(s) => Some(
            Duration::try_from_secs_f64(s)
                .ok()
                .and_then(|d| UNIX_EPOCH.checked_add(d))
                .with_context(|| format!("{}: StartTime {s} is out of range", path.display()))?,
        ),
    };
    Ok((start_time, intervals))
}

/// The standard base64 alphabet, decoded; the interval log's histograms
/// are written in it (the crate's reader hands them over still encoded).
fn base64_decode(s: &str) -> Result<Vec<u8>> {
    use base64::Engine;
    Ok(base64::engine::general_purpose::STANDARD.decode(s.trim())?)
}

/// Reads and adds up `paths`. `resolution` is the width of a slot; by
/// default the shortest interval any log holds.
pub fn merge(paths: &[PathBuf], resolution: Option<Duration>) -> Result<Merged> {
    let mut logs = Vec::new();
    let mut all = Vec::new();
    for path in paths {
        let (start_time, intervals) = read_log(path)?;
        logs.push(LogInfo {
            path: path.clone(),
            start_time,
            intervals: intervals.len(),
        });
        all.push(intervals);
    }
    let shortest = all
        .iter()
        .flatten()
        .map(|i| i.length)
        .filter(|l| *l > 0.0)
        .fold(f64::INFINITY, f64::min);
    let resolution = match resolution {
        Some(r) if r.is_zero() => bail!("--interval must be above 0"),
        Some(r) => r,
        None => Duration::try_from_secs_f64(shortest).unwrap_or(Duration::from_secs(1)),
    };
    let width = resolution.as_secs_f64();
    let mut slots: BTreeMap<(u64, String), Histogram<u64>> = BTreeMap::new();
    let mut totals: BTreeMap<String, (Histogram<u64>, usize)> = BTreeMap::new();
    for (n, intervals) in all.into_iter().enumerate() {
        for i in intervals {
            // Rounded to the nearest slot: two machines' "second 5" may
            // start a few milliseconds apart.
            let slot = (i.start / width).round() as u64;
            let add = |h: &mut Histogram<u64>| {
                h.add(&i.histogram)
                    .with_context(|| format!("{}: adding an interval", paths[n].display()))
            };
            add(slots.entry((slot, i.tag.clone())).or_insert_with(empty))?;
            let total = totals.entry(i.tag).or_insert_with(|| (empty(), 0));
            add(&mut total.0)?;
            // Counted once per log: logs are read one after the other.
            if total.1 < n + 1 {
                total.1 = n + 1;
            }
        }
    }
    Ok(Merged {
        logs,
        resolution,
        slots,
        totals,
    })
}

/// A histogram that grows to whatever it is given, at the precision
/// perfkit records with.
fn empty() -> Histogram<u64> {
    let mut h = Histogram::new(3).expect("3 significant digits is valid");
    h.auto(true);
    h
}

impl Merged {
    /// The report: one row per tag with its total, and with
    /// `per_interval` a section per slot.
    pub fn report(&self, per_interval: bool) -> Report {
        let mut report = Report::new("report merge");
        report.run.timing = format!(
            "{} interval log(s) merged, aligned on their starts, slots of {:?}",
            self.logs.len(),
            self.resolution
        );
        let section = report.section("merged");
        for (tag, (h, logs)) in &self.totals {
            let slots = self.slots.keys().filter(|(_, t)| t == tag).count();
            let mut row = Row::new(tag.clone());
            row.latency = Some(h.clone());
            row.columns.push(("logs".into(), Value::Int(*logs as i64)));
            row.columns.push(("slots".into(), Value::Int(slots as i64)));
            section.rows.push(row);
        }
        for log in &self.logs {
            let start = log.start_time.map_or("no StartTime".to_string(), |t| {
                format!(
                    "StartTime {:.3}",
                    t.duration_since(UNIX_EPOCH)
                        .unwrap_or_default()
                        .as_secs_f64()
                )
            });
            section.notes.push(format!(
                "{}: {} interval(s), {start}",
                log.path.display(),
                log.intervals
            ));
        }
        if per_interval {
            for ((slot, tag), h) in &self.slots {
                let name = format!(
                    "interval at {:.3} s",
                    *slot as f64 * self.resolution.as_secs_f64()
                );
                let section = match report.sections.iter().position(|s| s.name == name) {
                    Some(i) => &mut report.sections[i],
                    None => report.section(name),
                };
                let mut row = Row::new(tag.clone());
                row.latency = Some(h.clone());
                row.elapsed = Some(self.resolution);
                section.rows.push(row);
            }
        }
        report
    }

    /// Writes the merged slots as an interval log: one interval per slot
    /// and tag, starting at the earliest StartTime of the inputs.
    pub fn write_hlog(&self, w: &mut dyn std::io::Write) -> Result<()> {
        use hdrhistogram::serialization::V2DeflateSerializer;
        use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
        let mut serializer = V2DeflateSerializer::new();
        let mut buf = Vec::new();
        {
            let mut builder = IntervalLogWriterBuilder::new();
            builder.add_comment(&format!(
                "perfkit report merge of {} log(s); values as in the inputs",
                self.logs.len()
            ));
            if let Some(t) = self.logs.iter().filter_map(|l| l.start_time).min() {
                builder.with_start_time(t);
            }
            let mut writer = builder
                .with_max_value_divisor(1e6)
                .begin_log_with(&mut buf, &mut serializer)?;
            for ((slot, tag), h) in &self.slots {
                let start =
                    Duration::try_from_secs_f64(self.resolution.as_secs_f64() * *slot as f64)
                        .map_err(|_| {
                            anyhow::anyhow!("slot {slot} lies beyond any time a log can hold")
                        })?;
                let tag = (tag != UNTAGGED).then(|| Tag::new(tag)).flatten();
                writer
                    .write_histogram(h, start, self.resolution, tag)
                    .map_err(|e| anyhow::anyhow!("serialising slot {slot}: {e:?}"))?;
            }
        }
        w.write_all(&buf)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A small valid log: a StartTime and two tagged intervals.
    fn log() -> Vec<u8> {
        use hdrhistogram::serialization::V2DeflateSerializer;
        use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
        let mut h = empty();
        for v in [1u64, 50, 5_000, 2_000_000] {
            h.record(v).unwrap();
        }
        let mut buf = Vec::new();
        let mut ser = V2DeflateSerializer::new();
        let mut w = IntervalLogWriterBuilder::new()
            .with_start_time(UNIX_EPOCH + Duration::from_secs(1_795_435_200))
            .begin_log_with(&mut buf, &mut ser)
            .unwrap();
        for k in 0..2u64 {
            w.write_histogram(
                &h,
                Duration::from_secs(k),
                Duration::from_secs(1),
                Tag::new("t"),
            )
            .unwrap();
        }
        drop(w);
        buf
    }

    #[test]
    fn the_sample_log_reads() {
        let (start, intervals) = parse_log(Path::new("x"), &log()).unwrap();
        assert!(start.is_some());
        assert_eq!(intervals.len(), 2);
        assert_eq!(intervals[1].start, 1.0);
        assert_eq!(intervals[0].histogram.len(), 4);
    }

    /// Stamps and lengths near u64::MAX seconds on a valid histogram: an
    /// error or a report, never an overflow panic, through the merge and
    /// the writing of the merged log.
    #[test]
    fn extreme_stamps_are_refused_or_merged_without_panic() {
        let text = String::from_utf8(log()).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with("Tag=t,1."))
            .unwrap()
            .to_string();
        let histogram = line.rsplit(',').next().unwrap();
        let dir = tempfile::tempdir().unwrap();
        for (start, length) in [
            ("18446744073709551615.999", "1.0"),
            ("1.0", "18446744073709551615.999"),
            ("9999999999.0", "0.000"),
        ] {
            let path = dir.path().join("x.hlog");
            let stamped = format!("Tag=t,{start},{length},1.0,{histogram}\n");
            std::fs::write(&path, [text.as_str(), stamped.as_str()].concat()).unwrap();
            if let Ok(m) = merge(&[path], None) {
                let _ = m.report(true);
                let _ = m.write_hlog(&mut Vec::new());
            }
        }
    }

    proptest! {
        /// Untrusted bytes: a log cut anywhere, with bytes changed, or
        /// lines of log-like characters, is read or refused, never a panic
        /// (stamps near u64::MAX seconds included).
        #[test]
        fn damaged_logs_never_panic(
            cut in 0usize..2_000,
            edits in proptest::collection::vec((0usize..2_000, any::<u8>()), 0..8),
            junk in "[0-9.,A-Za-z=#:\\[\\] \n]{0,200}",
        ) {
            let mut b = log();
            b.truncate(cut.min(b.len()));
            for (at, byte) in edits {
                if !b.is_empty() {
                    let n = b.len();
                    b[at % n] = byte;
                }
            }
            let _ = parse_log(Path::new("x"), &b);
            let _ = parse_log(Path::new("x"), junk.as_bytes());
            let huge = format!(
                "#[StartTime: 99999999999999999999.5 (seconds since epoch), x]\n\
                 Tag=t,18446744073709551615.999,18446744073709551615.0,1.0,{junk}\n"
            );
            let _ = parse_log(Path::new("x"), huge.as_bytes());
        }
    }
}
