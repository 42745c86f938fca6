//! `perfkit report merge`: many HdrHistogram interval logs as one report.
//!
//! A run that outgrows one load-generating machine runs on several, each
//! writing an interval log; merging them is how their figures combine.
//! Each log's timestamps are made relative to its own start (its
//! StartTime, else its first interval), so the k-th interval of every log
//! lands in the same slot whatever clock each machine had; intervals of
//! one tag in one slot are added, and so are all of a tag's intervals for
//! its total. The logs are read a line at a time with the hdrhistogram
//! crate's own reader, twice: stamps first, histograms second.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use super::hlog::LogInterval;
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
    /// (slot, tag) → the sum of the intervals that fell there; empty
    /// unless asked for.
    pub slots: BTreeMap<(u64, String), Histogram<u64>>,
    /// tag → everything added under it.
    pub totals: BTreeMap<String, Total>,
}

/// One tag's intervals, added up.
#[derive(Debug)]
pub struct Total {
    /// The sum of its histograms.
    pub histogram: Histogram<u64>,
    /// How many logs held the tag.
    pub logs: usize,
    /// How many intervals were added.
    pub intervals: usize,
}

/// Calls `f` with each entry of the log at `path`, read a line at a time
/// (an interval log is one entry per line), so memory stays that of one
/// line however long the log. An entry the crate's reader cannot parse is
/// an error naming the file and line.
fn for_each_entry(path: &Path, mut f: impl FnMut(LogEntry<'_>) -> Result<()>) -> Result<()> {
    use std::io::BufRead;
    let file = std::fs::File::open(path)
        .with_context(|| format!("reading interval log {}", path.display()))?;
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("reading interval log {}", path.display()))?;
        if n == 0 {
            return Ok(());
        }
        for entry in IntervalLogIterator::new(&line) {
            let entry = entry.map_err(|e| {
                anyhow::anyhow!(
                    "{} line {number}: not a valid HdrHistogram interval log: {e:?}",
                    path.display()
                )
            })?;
            f(entry)?;
        }
    }
    Ok(())
}

/// What a first pass over a log finds, before any histogram is decoded:
/// where its intervals start, and its shortest interval.
struct Layout {
    start_time: Option<f64>,
    base_time: Option<f64>,
    /// The earliest interval start that is a time since 1970 (with
    /// BaseTime or absolute stamps), for a log without StartTime.
    first_absolute: f64,
    shortest: f64,
    intervals: usize,
}

impl Layout {
    fn read(path: &Path) -> Result<Layout> {
        let mut l = Layout {
            start_time: None,
            base_time: None,
            first_absolute: f64::INFINITY,
            shortest: f64::INFINITY,
            intervals: 0,
        };
        for_each_entry(path, |e| {
            match e {
                LogEntry::StartTime(t) => l.start_time = Some(t.as_secs_f64()),
                LogEntry::BaseTime(t) => l.base_time = Some(t.as_secs_f64()),
                LogEntry::Interval(i) => {
                    l.intervals += 1;
                    let length = i.duration().as_secs_f64();
                    if length > 0.0 {
                        l.shortest = l.shortest.min(length);
                    }
                    l.first_absolute = l.first_absolute.min(i.start_timestamp().as_secs_f64());
                }
            }
            Ok(())
        })?;
        if l.intervals == 0 && l.start_time.is_none() && l.base_time.is_none() {
            bail!(
                "{}: not an HdrHistogram interval log (no interval, no StartTime)",
                path.display()
            );
        }
        // Only stamps that are times since 1970 can stand for a start.
        l.first_absolute = match l.base_time {
            Some(b) => b + l.first_absolute,
            None if l.first_absolute >= ABSOLUTE_AFTER_SECS => l.first_absolute,
            None => f64::INFINITY,
        };
        Ok(l)
    }

    /// Seconds from the log's start to an interval stamped `ts`: stamps
    /// are offsets from BaseTime when there is one, times since 1970 when
    /// they are that large, else offsets from StartTime; every log is
    /// placed against its StartTime (or, lacking one, its first interval),
    /// so that each starts at 0.
    fn offset(&self, ts: f64) -> f64 {
        let absolute = match self.base_time {
            Some(b) => Some(b + ts),
            None if ts >= ABSOLUTE_AFTER_SECS => Some(ts),
            None => None,
        };
        let origin = self.start_time.unwrap_or(self.first_absolute);
        absolute.map_or(ts, |t| t - origin).max(0.0)
    }

    /// StartTime as a time, when the log has one in range.
    fn start_time(&self, path: &Path) -> Result<Option<SystemTime>> {
        self.start_time
            .map(|s| {
                Duration::try_from_secs_f64(s)
                    .ok()
                    .and_then(|d| UNIX_EPOCH.checked_add(d))
                    .with_context(|| format!("{}: StartTime {s} is out of range", path.display()))
            })
            .transpose()
    }
}

/// The standard base64 alphabet, decoded; the interval log's histograms
/// are written in it (the crate's reader hands them over still encoded).
fn base64_decode(s: &str) -> Result<Vec<u8>> {
    use base64::Engine;
    Ok(base64::engine::general_purpose::STANDARD.decode(s.trim())?)
}

/// Reads and adds up `paths`. `resolution` is the width of a slot; by
/// default the shortest interval any log holds. Each slot's histograms are
/// kept only with `keep_slots` (for `--intervals` and the merged `--hlog`);
/// otherwise memory is each tag's total and one decoded interval.
pub fn merge(paths: &[PathBuf], resolution: Option<Duration>, keep_slots: bool) -> Result<Merged> {
    // First pass: stamps and lengths only, so that the slot width is known
    // before anything is added.
    let layouts = paths
        .iter()
        .map(|p| Layout::read(p))
        .collect::<Result<Vec<_>>>()?;
    let shortest = layouts
        .iter()
        .map(|l| l.shortest)
        .fold(f64::INFINITY, f64::min);
    let resolution = match resolution {
        Some(r) if r.is_zero() => bail!("--interval must be above 0"),
        Some(r) => r,
        None => Duration::try_from_secs_f64(shortest).unwrap_or(Duration::from_secs(1)),
    };
    let width = resolution.as_secs_f64();
    let mut logs = Vec::new();
    let mut slots: BTreeMap<(u64, String), Histogram<u64>> = BTreeMap::new();
    let mut totals: BTreeMap<String, Total> = BTreeMap::new();
    let mut decoder = Deserializer::new();
    for (path, layout) in paths.iter().zip(&layouts) {
        logs.push(LogInfo {
            path: path.clone(),
            start_time: layout.start_time(path)?,
            intervals: layout.intervals,
        });
        let mut tags_here = BTreeSet::new();
        for_each_entry(path, |e| {
            let LogEntry::Interval(i) = e else {
                return Ok(());
            };
            let ts = i.start_timestamp().as_secs_f64();
            let bytes = base64_decode(i.encoded_histogram()).with_context(|| {
                format!(
                    "{}: interval at {ts} s: histogram is not base64",
                    path.display()
                )
            })?;
            let histogram: Histogram<u64> = decoder.deserialize(&mut &bytes[..]).map_err(|e| {
                anyhow::anyhow!(
                    "{}: interval at {ts} s: bad histogram: {e:?}",
                    path.display()
                )
            })?;
            let tag = i.tag().map_or(UNTAGGED, |t| t.as_str()).to_string();
            // Rounded to the nearest slot: two machines' "second 5" may
            // start a few milliseconds apart.
            let slot = (layout.offset(ts) / width).round() as u64;
            let add = |h: &mut Histogram<u64>| {
                h.add(&histogram)
                    .with_context(|| format!("{}: adding an interval", path.display()))
            };
            if keep_slots {
                add(slots.entry((slot, tag.clone())).or_insert_with(empty))?;
            }
            let total = totals.entry(tag.clone()).or_insert_with(|| Total {
                histogram: empty(),
                logs: 0,
                intervals: 0,
            });
            add(&mut total.histogram)?;
            total.intervals += 1;
            tags_here.insert(tag);
            Ok(())
        })?;
        for tag in tags_here {
            if let Some(total) = totals.get_mut(&tag) {
                total.logs += 1;
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
        for (tag, t) in &self.totals {
            let mut row = Row::new(tag.clone());
            row.latency = Some(t.histogram.clone());
            row.columns.push(("logs".into(), Value::Int(t.logs as i64)));
            row.columns
                .push(("intervals".into(), Value::Int(t.intervals as i64)));
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
        let comments = [format!(
            "perfkit report merge of {} log(s); values as in the inputs",
            self.logs.len()
        )];
        let start_time = self.logs.iter().filter_map(|l| l.start_time).min();
        let intervals = self.slots.iter().map(|((slot, tag), h)| {
            let start = Duration::try_from_secs_f64(self.resolution.as_secs_f64() * *slot as f64)
                .map_err(|_| {
                anyhow::anyhow!("slot {slot} lies beyond any time a log can hold")
            })?;
            Ok(LogInterval {
                start,
                length: self.resolution,
                tag: (tag != UNTAGGED).then(|| tag.clone()),
                histogram: h,
            })
        });
        super::hlog::write_intervals(w, &comments, start_time, intervals)
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

    /// `bytes` as a log file in `dir`, merged alone (slots kept).
    fn merge_bytes(dir: &Path, bytes: &[u8]) -> Result<Merged> {
        let path = dir.join("x.hlog");
        std::fs::write(&path, bytes).unwrap();
        merge(&[path], None, true)
    }

    #[test]
    fn the_sample_log_reads() {
        let dir = tempfile::tempdir().unwrap();
        let m = merge_bytes(dir.path(), &log()).unwrap();
        assert!(m.logs[0].start_time.is_some());
        assert_eq!(m.logs[0].intervals, 2);
        assert_eq!(m.resolution, Duration::from_secs(1));
        assert_eq!(m.slots.len(), 2);
        assert_eq!(m.totals["t"].histogram.len(), 8);
        assert_eq!((m.totals["t"].logs, m.totals["t"].intervals), (1, 2));
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
            if let Ok(m) = merge(&[path], None, true) {
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
            let dir = tempfile::tempdir().unwrap();
            let _ = merge_bytes(dir.path(), &b);
            let _ = merge_bytes(dir.path(), junk.as_bytes());
            let huge = format!(
                "#[StartTime: 99999999999999999999.5 (seconds since epoch), x]\n\
                 Tag=t,18446744073709551615.999,18446744073709551615.0,1.0,{junk}\n"
            );
            let _ = merge_bytes(dir.path(), huge.as_bytes());
        }
    }
}
