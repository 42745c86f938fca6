//! Reading one interval log for the merge: a line at a time, within
//! [`MAX_LINE_BYTES`], through the hdrhistogram crate's own line parser;
//! and the first pass over it, which finds where its intervals start
//! before any histogram is decoded.

use std::io::BufRead;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use super::{MAX_LINE_BYTES, MergeError};

/// Timestamps below this many seconds are offsets from the log's start;
/// above it they are times since 1970 (as the Java reader decides).
const ABSOLUTE_AFTER_SECS: f64 = 365.0 * 86_400.0;

/// Calls `f` with each entry of the log `reader` holds and its line
/// number, read a line at a time (an interval log is one entry per line)
/// and never more than [`MAX_LINE_BYTES`] of one, so memory stays that of
/// one line however long the log. An entry the crate's reader cannot
/// parse is an error naming the file and line.
pub(super) fn for_each_entry(
    path: &Path,
    mut reader: impl BufRead,
    mut f: impl FnMut(u64, LogEntry<'_>) -> Result<(), MergeError>,
) -> Result<(), MergeError> {
    use std::io::Read;
    let file = || path.display().to_string();
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|source| MergeError::Read {
                file: file(),
                source,
            })?;
        if n == 0 {
            return Ok(());
        }
        if line.len() > MAX_LINE_BYTES {
            return Err(MergeError::LineTooLong {
                file: file(),
                line: number,
                limit: MAX_LINE_BYTES,
            });
        }
        for entry in IntervalLogIterator::new(&line) {
            let entry = entry.map_err(|e| MergeError::Syntax {
                file: file(),
                line: number,
                detail: match e {
                    hdrhistogram::serialization::interval_log::LogIteratorError::ParseError {
                        offset,
                    } => format!(
                        "column {} starts neither an interval line \
                         ([Tag=NAME,]START,LENGTH,MAX,HISTOGRAM) nor a comment",
                        offset + 1
                    ),
                },
            })?;
            f(number, entry)?;
        }
    }
    Ok(())
}

/// What a first pass over a log finds, before any histogram is decoded:
/// where its intervals start, and its shortest interval.
pub(super) struct Layout {
    /// Its StartTime, in seconds since 1970.
    start_time: Option<f64>,
    /// Its BaseTime, in seconds since 1970.
    base_time: Option<f64>,
    /// The earliest interval start that is a time since 1970 (with
    /// BaseTime or absolute stamps), for a log without StartTime.
    first_absolute: f64,
    /// Its shortest interval of some length, in seconds.
    pub(super) shortest: f64,
    /// How many intervals it holds.
    pub(super) intervals: usize,
}

impl Layout {
    /// The first pass over the log `reader` holds.
    pub(super) fn read(path: &Path, reader: impl BufRead) -> Result<Layout, MergeError> {
        let mut l = Layout {
            start_time: None,
            base_time: None,
            first_absolute: f64::INFINITY,
            shortest: f64::INFINITY,
            intervals: 0,
        };
        for_each_entry(path, reader, |_, e| {
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
            return Err(MergeError::NotALog {
                file: path.display().to_string(),
            });
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
    /// so that each starts at 0. An interval stamped before its log's
    /// StartTime comes out negative: it keeps its own time rather than
    /// being folded into the first slot.
    pub(super) fn offset(&self, ts: f64) -> f64 {
        let absolute = match self.base_time {
            Some(b) => Some(b + ts),
            None if ts >= ABSOLUTE_AFTER_SECS => Some(ts),
            None => None,
        };
        let origin = self.start_time.unwrap_or(self.first_absolute);
        absolute.map_or(ts, |t| t - origin)
    }

    /// StartTime as a time, when the log has one in range.
    pub(super) fn start_time(&self, path: &Path) -> Result<Option<SystemTime>, MergeError> {
        self.start_time
            .map(|s| {
                Duration::try_from_secs_f64(s)
                    .ok()
                    .and_then(|d| UNIX_EPOCH.checked_add(d))
                    .ok_or_else(|| MergeError::StartTimeOutOfRange {
                        file: path.display().to_string(),
                        secs: s,
                    })
            })
            .transpose()
    }
}

/// Opens a log for [`super::merge`]: the file, buffered.
pub(super) fn open_file(path: &Path) -> std::io::Result<std::io::BufReader<std::fs::File>> {
    Ok(std::io::BufReader::new(std::fs::File::open(path)?))
}
