//! `perfkit report merge`: many HdrHistogram interval logs as one report.
//!
//! A run that outgrows one load-generating machine runs on several, each
//! writing an interval log; merging them is how their figures combine.
//! Each log's timestamps are made relative to its own start (its
//! StartTime, else its first interval), so the k-th interval of every log
//! lands in the same slot whatever clock each machine had; intervals of
//! one tag in one slot are added, and so are all of a tag's intervals for
//! its total. The logs are read a line at a time with the hdrhistogram
//! crate's own line parser (`log`), twice: stamps first, histograms
//! second.
//!
//! Logs come from other machines and other tools, so nothing in one is
//! trusted to be small: a line is at most [`MAX_LINE_BYTES`], its
//! histogram is decoded within what the line and its declared range can
//! hold ([`crate::encoded`]), and what the merge keeps is capped:
//! [`MAX_TAGS`] tags, [`MAX_SLOTS`] time slots and [`MAX_COUNTERS`]
//! histogram counters in all. Going past any of them, or past 2^64 − 1
//! samples in a sum, is a [`MergeError`] naming the file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::LogEntry;

use crate::encoded::{Decoder, HistogramError};
use crate::hlog::{HlogError, LogInterval, write_intervals};
use crate::model::{Report, Row, Value};

mod log;

use log::{Layout, for_each_entry, open_file};

/// The name given to intervals without a tag.
pub const UNTAGGED: &str = "(untagged)";

/// The longest line a log may have. A line is one interval; its histogram
/// of a few KiB (a few hundred KiB for a dense 5-digit one) fits many
/// times over, and a log without newlines cannot make the reader hold it
/// whole.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// The most distinct tags a merge keeps. Each tag holds a total histogram
/// (up to 440 KiB at 3 digits over the whole u64 range), so this bounds
/// the totals to under 512 MiB even at worst, while runs tag by operation
/// or phase, a few dozen at most.
pub const MAX_TAGS: usize = 1_024;

/// The most time slots kept for `--intervals` and `--hlog`: ten thousand
/// is 2 h 46 min of one-second slots, more sections than anyone reads; a
/// longer run merges with a wider `--interval`.
pub const MAX_SLOTS: usize = 10_000;

/// The most histogram counters (8 bytes each, 512 MiB in all) the tags'
/// totals and the kept slots may hold together: the cap on what the merge
/// keeps whatever mix of tags, slots and value ranges a log has.
pub const MAX_COUNTERS: usize = 64 << 20;

/// The caps a merge runs under: the constants above, in one value so that
/// tests can reach each cap with small inputs.
#[derive(Debug, Clone, Copy)]
struct Limits {
    tags: usize,
    slots: usize,
    counters: usize,
}

impl Limits {
    /// [`MAX_TAGS`], [`MAX_SLOTS`], [`MAX_COUNTERS`].
    const DEFAULT: Limits = Limits {
        tags: MAX_TAGS,
        slots: MAX_SLOTS,
        counters: MAX_COUNTERS,
    };
}

/// Why a log was refused: each names the file and line (1-based) and what
/// in it went past which bound.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A log could not be opened or read.
    #[error("reading interval log {file}")]
    Read {
        /// The log.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file with neither an interval nor a StartTime.
    #[error("{file}: not an HdrHistogram interval log (no interval, no StartTime)")]
    NotALog {
        /// The file.
        file: String,
    },
    /// A StartTime no time can hold.
    #[error("{file}: StartTime {secs} is out of range")]
    StartTimeOutOfRange {
        /// The log.
        file: String,
        /// The StartTime, in seconds since 1970.
        secs: f64,
    },
    /// A slot width of zero (the binary's `--interval 0`).
    #[error("--interval must be above 0")]
    ZeroInterval,
    /// A line longer than [`MAX_LINE_BYTES`].
    #[error("{file} line {line}: line is longer than {limit} bytes")]
    LineTooLong {
        /// The log.
        file: String,
        /// The line.
        line: u64,
        /// [`MAX_LINE_BYTES`].
        limit: usize,
    },
    /// A line the crate's parser refuses.
    #[error("{file} line {line}: not a valid HdrHistogram interval log: {detail}")]
    Syntax {
        /// The log.
        file: String,
        /// The line.
        line: u64,
        /// The parser's complaint.
        detail: String,
    },
    /// An interval whose histogram cannot be decoded within bounds.
    #[error("{file} line {line}: {error}")]
    Histogram {
        /// The log.
        file: String,
        /// The line.
        line: u64,
        /// What was wrong with it.
        error: HistogramError,
    },
    /// The first tag past [`MAX_TAGS`].
    #[error(
        "{file} line {line}: more than {limit} distinct tags (report merge keeps at most {limit})"
    )]
    TooManyTags {
        /// The log.
        file: String,
        /// The line.
        line: u64,
        /// [`MAX_TAGS`].
        limit: usize,
    },
    /// The first slot past [`MAX_SLOTS`].
    #[error(
        "{file} line {line}: more than {limit} time slots to keep for --intervals/--hlog; \
         use a wider --interval"
    )]
    TooManySlots {
        /// The log.
        file: String,
        /// The line.
        line: u64,
        /// [`MAX_SLOTS`].
        limit: usize,
    },
    /// A tag's total or slot passing 2^64 − 1 samples.
    #[error("{file} line {line}: tag {tag}: {what} passes 2^64 - 1 samples")]
    CountOverflow {
        /// The log.
        file: String,
        /// The line.
        line: u64,
        /// The tag whose sum overflowed.
        tag: String,
        /// Which sum: its total or a slot.
        what: &'static str,
    },
    /// The kept histograms past [`MAX_COUNTERS`].
    #[error(
        "{file} line {line}: the merged histograms would take more than {mib} MiB; \
         merge fewer tags, or use a wider --interval with --intervals/--hlog"
    )]
    TooMuchMemory {
        /// The log.
        file: String,
        /// The line.
        line: u64,
        /// The cap ([`MAX_COUNTERS`]) in MiB of counters.
        mib: usize,
    },
}

/// What one input log held.
#[derive(Debug, Clone)]
pub struct LogInfo {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its StartTime, if it gave one.
    pub start_time: Option<SystemTime>,
    /// How many intervals it held.
    pub intervals: usize,
    /// How many of them start a slot or more before its StartTime: they
    /// are placed at their own (negative) times, not folded into slot 0.
    pub before_start: usize,
}

/// The logs, added up.
#[derive(Debug)]
pub struct Merged {
    /// Each input, in the order given.
    pub logs: Vec<LogInfo>,
    /// The width of a slot.
    pub resolution: Duration,
    /// (slot, tag) → the sum of the intervals that fell there; empty
    /// unless asked for. Slots count from the logs' starts; intervals
    /// stamped before their log's StartTime have negative slots.
    pub slots: BTreeMap<(i64, String), Histogram<u64>>,
    /// tag → everything added under it.
    pub totals: BTreeMap<String, Total>,
    /// One line each, for stderr: what was read but deserves notice
    /// (intervals before a StartTime).
    pub warnings: Vec<String>,
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

/// Reads and adds up the logs at `paths`. `resolution` is the width of a
/// slot; by default the shortest interval any log holds. Each slot's
/// histograms are kept only with `keep_slots` (for `--intervals` and the
/// merged `--hlog`); otherwise memory is each tag's total, one line and
/// one decoded interval.
pub fn merge(
    paths: &[PathBuf],
    resolution: Option<Duration>,
    keep_slots: bool,
) -> Result<Merged, MergeError> {
    merge_from(paths, open_file, resolution, keep_slots)
}

/// [`merge`] over logs `open` reads (each is opened twice: stamps first,
/// histograms second); `paths` only name them. The fuzz target and tests
/// merge bytes in memory through it. An error from `open` is
/// [`MergeError::Read`].
pub fn merge_from<R: BufRead>(
    paths: &[PathBuf],
    open: impl FnMut(&Path) -> std::io::Result<R>,
    resolution: Option<Duration>,
    keep_slots: bool,
) -> Result<Merged, MergeError> {
    merge_within(paths, open, resolution, keep_slots, Limits::DEFAULT)
}

/// [`merge_from`] under `limits`.
fn merge_within<R: BufRead>(
    paths: &[PathBuf],
    mut open: impl FnMut(&Path) -> std::io::Result<R>,
    resolution: Option<Duration>,
    keep_slots: bool,
    limits: Limits,
) -> Result<Merged, MergeError> {
    let mut open = |path: &Path| {
        open(path).map_err(|source| MergeError::Read {
            file: path.display().to_string(),
            source,
        })
    };
    // First pass: stamps and lengths only, so that the slot width is known
    // before anything is added.
    let layouts = paths
        .iter()
        .map(|p| Layout::read(p, open(p)?))
        .collect::<Result<Vec<_>, _>>()?;
    let shortest = layouts
        .iter()
        .map(|l| l.shortest)
        .fold(f64::INFINITY, f64::min);
    let resolution = match resolution {
        Some(r) if r.is_zero() => return Err(MergeError::ZeroInterval),
        Some(r) => r,
        None => Duration::try_from_secs_f64(shortest)
            .ok()
            .filter(|d| !d.is_zero())
            .unwrap_or(Duration::from_secs(1)),
    };
    let width = resolution.as_secs_f64();
    let mut logs = Vec::new();
    let mut warnings = Vec::new();
    let mut slots: BTreeMap<(i64, String), Histogram<u64>> = BTreeMap::new();
    let mut slot_times: BTreeSet<i64> = BTreeSet::new();
    let mut totals: BTreeMap<String, Total> = BTreeMap::new();
    // Counters held by `totals` and `slots` together, against MAX_COUNTERS.
    let mut counters: usize = 0;
    let mut decoder = Decoder::new();
    let mut interval = empty();
    for (path, layout) in paths.iter().zip(&layouts) {
        let file = path.display().to_string();
        let mut before_start = 0;
        let mut tags_here = BTreeSet::new();
        for_each_entry(path, open(path)?, |line, e| {
            let LogEntry::Interval(i) = e else {
                return Ok(());
            };
            decoder
                .decode(i.encoded_histogram(), &mut interval)
                .map_err(|error| MergeError::Histogram {
                    file: file.clone(),
                    line,
                    error,
                })?;
            let tag = i.tag().map_or(UNTAGGED, |t| t.as_str());
            // Rounded to the nearest slot: two machines' "second 5" may
            // start a few milliseconds apart. Saturates for stamps no
            // slot can hold; those are refused when written.
            let slot = (layout.offset(i.start_timestamp().as_secs_f64()) / width).round() as i64;
            if slot < 0 {
                before_start += 1;
            }
            if !totals.contains_key(tag) && totals.len() >= limits.tags {
                return Err(MergeError::TooManyTags {
                    file: file.clone(),
                    line,
                    limit: limits.tags,
                });
            }
            let overflow = |what| MergeError::CountOverflow {
                file: file.clone(),
                line,
                tag: tag.to_string(),
                what,
            };
            if keep_slots {
                if !slot_times.contains(&slot) && slot_times.len() >= limits.slots {
                    return Err(MergeError::TooManySlots {
                        file: file.clone(),
                        line,
                        limit: limits.slots,
                    });
                }
                slot_times.insert(slot);
                let h = slots
                    .entry((slot, tag.to_string()))
                    .or_insert_with(empty_counted(&mut counters));
                add_counted(h, &interval, &mut counters).ok_or_else(|| overflow("a slot"))?;
            }
            let total = totals.entry(tag.to_string()).or_insert_with(|| Total {
                histogram: empty_counted(&mut counters)(),
                logs: 0,
                intervals: 0,
            });
            add_counted(&mut total.histogram, &interval, &mut counters)
                .ok_or_else(|| overflow("its total"))?;
            total.intervals += 1;
            if counters > limits.counters {
                return Err(MergeError::TooMuchMemory {
                    file: file.clone(),
                    line,
                    mib: (limits.counters * 8) >> 20,
                });
            }
            if !tags_here.contains(tag) {
                tags_here.insert(tag.to_string());
            }
            Ok(())
        })?;
        for tag in tags_here {
            if let Some(total) = totals.get_mut(&tag) {
                total.logs += 1;
            }
        }
        if before_start > 0 {
            warnings.push(format!(
                "{file}: {before_start} interval(s) start before its StartTime; \
                 placed at their own times, before the merge's start"
            ));
        }
        logs.push(LogInfo {
            path: path.clone(),
            start_time: layout.start_time(path)?,
            intervals: layout.intervals,
            before_start,
        });
    }
    Ok(Merged {
        logs,
        resolution,
        slots,
        totals,
        warnings,
    })
}

/// A maker of [`empty`] histograms that counts their counters into
/// `counters`.
fn empty_counted(counters: &mut usize) -> impl FnOnce() -> Histogram<u64> + '_ {
    move || {
        let h = empty();
        *counters += h.distinct_values();
        h
    }
}

/// Adds `src` into `dst`, counting any growth of `dst`'s counters into
/// `counters`; `None` when the sum would pass 2^64 − 1 samples (the crate
/// saturates instead). No single counter can overflow while the total,
/// which is at least as large, does not.
fn add_counted(dst: &mut Histogram<u64>, src: &Histogram<u64>, counters: &mut usize) -> Option<()> {
    dst.len().checked_add(src.len())?;
    let before = dst.distinct_values();
    dst.add(src).ok()?;
    *counters += dst.distinct_values().saturating_sub(before);
    Some(())
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
            "{} interval log(s) merged, aligned on their starts, slots of {}",
            self.logs.len(),
            crate::format_ns(self.resolution.as_nanos() as f64)
        );
        let section = report.section("merged");
        for (tag, t) in &self.totals {
            let mut row = Row::new(tag.clone());
            row.tag = (tag != UNTAGGED).then(|| tag.clone());
            // With the slots as rows too, a tag's total is their sum, as
            // in the merged log (the JSON's hlog_tag then names the tag,
            // not a `_2` no log holds).
            if per_interval && tag != UNTAGGED {
                row = row.sum_of(tag.clone());
            }
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
            let early = match log.before_start {
                0 => String::new(),
                n => format!(", {n} before its StartTime"),
            };
            section.notes.push(format!(
                "{}: {} interval(s){early}, {start}",
                log.path.display(),
                log.intervals
            ));
        }
        if per_interval {
            let first = self.first_slot();
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
                row.tag = (tag != UNTAGGED).then(|| tag.clone());
                row.latency = Some(h.clone());
                row.elapsed = Some(self.resolution);
                // Placed where the merged log places it (see write_hlog).
                let since_first = (*slot - first) as f64 * self.resolution.as_secs_f64();
                if tag != UNTAGGED
                    && let Ok(start) = Duration::try_from_secs_f64(since_first)
                {
                    row = row.interval_of(tag.clone(), start);
                }
                section.rows.push(row);
            }
        }
        report
    }

    /// The slot the merged log starts at: the earliest one, or slot 0 (the
    /// earliest StartTime) when none lies before it.
    fn first_slot(&self) -> i64 {
        // The map is ordered by slot first.
        self.slots.keys().next().map_or(0, |(slot, _)| *slot).min(0)
    }

    /// Writes the merged slots as an interval log: one interval per slot
    /// and tag, starting at the earliest StartTime of the inputs (moved
    /// back to the earliest slot when intervals lie before it, since a
    /// log's intervals cannot start before its StartTime).
    pub fn write_hlog(&self, w: &mut dyn std::io::Write) -> Result<(), HlogError> {
        let comments = [format!(
            "perfkit report merge of {} log(s); values as in the inputs",
            self.logs.len()
        )];
        let width = self.resolution.as_secs_f64();
        let first = self.first_slot();
        let mut start_time = self.logs.iter().filter_map(|l| l.start_time).min();
        if first < 0 {
            start_time = start_time
                .map(|t| {
                    Duration::try_from_secs_f64(width * -(first as f64))
                        .ok()
                        .and_then(|back| t.checked_sub(back))
                        .ok_or(HlogError::SlotBeforeTime(first))
                })
                .transpose()?;
        }
        let intervals = self.slots.iter().map(|((slot, tag), h)| {
            let start = Duration::try_from_secs_f64(width * (*slot as f64 - first as f64))
                .map_err(|_| HlogError::SlotBeyondTime(*slot))?;
            Ok(LogInterval {
                start,
                length: self.resolution,
                tag: (tag != UNTAGGED).then(|| tag.clone()),
                histogram: h,
            })
        });
        write_intervals(w, &comments, start_time, intervals)
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
    fn merge_bytes(dir: &Path, bytes: &[u8]) -> Result<Merged, MergeError> {
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

    /// One line of `tag` at second `k`, holding one sample of `value`.
    fn line(tag: &str, k: u64, value: u64) -> String {
        use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
        let mut h = empty();
        h.record(value).unwrap();
        let mut buf = Vec::new();
        V2DeflateSerializer::new().serialize(&h, &mut buf).unwrap();
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode(&buf);
        format!("Tag={tag},{k}.000,1.000,1.000,{b64}\n")
    }

    /// Each cap is reached and named by a merge under small limits: the
    /// counters cap by values that grow one histogram, the others by
    /// counting (report_merge.rs reaches the real tag and slot caps).
    #[test]
    fn each_cap_is_a_typed_error_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.hlog");
        let run = |text: &str, limits: Limits| {
            std::fs::write(&path, text).unwrap();
            merge_within(std::slice::from_ref(&path), open_file, None, true, limits).unwrap_err()
        };
        let small = Limits {
            tags: 2,
            slots: 2,
            counters: 1 << 20,
        };
        let tags = [line("a", 0, 5), line("b", 0, 5), line("c", 0, 5)].concat();
        assert!(matches!(
            run(&tags, small),
            MergeError::TooManyTags {
                line: 3,
                limit: 2,
                ..
            }
        ));
        let slots = [line("a", 0, 5), line("a", 1, 5), line("a", 2, 5)].concat();
        assert!(matches!(
            run(&slots, small),
            MergeError::TooManySlots {
                line: 3,
                limit: 2,
                ..
            }
        ));
        // A tag's total and its slot start at 2,048 counters each; a value
        // near 2^60 grows both past 50,000.
        let wide = [line("a", 0, 5), line("a", 0, 1 << 60)].concat();
        let tight = Limits {
            counters: 50_000,
            ..small
        };
        assert!(matches!(
            run(&wide, tight),
            MergeError::TooMuchMemory { line: 2, .. }
        ));
        // A line past MAX_LINE_BYTES, without its newline.
        let long = vec![b'#'; MAX_LINE_BYTES + 10];
        std::fs::write(&path, long).unwrap();
        let err = merge(std::slice::from_ref(&path), None, false).unwrap_err();
        assert!(matches!(err, MergeError::LineTooLong { line: 1, .. }));
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
