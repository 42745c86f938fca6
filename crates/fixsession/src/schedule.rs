//! Session schedules: QuickFIX's session and logon times (`TimeRange`).
//!
//! A [`TimeWindow`] is daily (`StartTime`/`EndTime`) or weekly (with
//! `StartDay`/`EndDay`), in UTC, in the machine's local time
//! (`UseLocalTime`) or in a named zone (QuickFIX/J's `TimeZone`). A session asks two things of it: is this instant
//! inside ([`TimeWindow::contains`]), and which occurrence of the window
//! is it ([`TimeWindow::instance`]): sequence numbers belong to one
//! occurrence and are reset when the next one begins.

use std::fmt;

use jiff::tz::TimeZone;

const DAY: i64 = 86_400;

/// A time of day, seconds since midnight (StartTime, EndTime, LogonTime,
/// LogoutTime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimeOfDay(pub u32);

impl TimeOfDay {
    /// Reads `HH:MM:SS`.
    pub(crate) fn parse(s: &str) -> Option<TimeOfDay> {
        let b = s.as_bytes();
        if b.len() != 8 || b[2] != b':' || b[5] != b':' {
            return None;
        }
        let two = |i: usize| -> Option<u32> {
            let (h, l) = (b[i], b[i + 1]);
            (h.is_ascii_digit() && l.is_ascii_digit())
                .then(|| u32::from(h - b'0') * 10 + u32::from(l - b'0'))
        };
        let (h, m, sec) = (two(0)?, two(3)?, two(6)?);
        (h < 24 && m < 60 && sec < 60).then_some(TimeOfDay(h * 3600 + m * 60 + sec))
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        write!(f, "{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    }
}

/// A day of the week (StartDay, EndDay, LogonDay, LogoutDay), numbered
/// as QuickFIX numbers them: Sunday 1 to Saturday 7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Weekday(u8);

impl Weekday {
    /// Day `n`, Sunday 1 to Saturday 7; `None` otherwise.
    pub fn new(n: u8) -> Option<Weekday> {
        (1..=7).contains(&n).then_some(Weekday(n))
    }

    /// Reads a day as QuickFIX does: its first two letters in any case
    /// (`su`, `Monday`, `TU`...).
    pub(crate) fn parse(s: &str) -> Option<Weekday> {
        let abbr = s.get(..2)?.to_ascii_lowercase();
        let n = ["su", "mo", "tu", "we", "th", "fr", "sa"]
            .iter()
            .position(|&d| d == abbr)?;
        Some(Weekday(n as u8 + 1))
    }

    /// The day `days` days after 1970-01-01 (a Thursday) falls on.
    pub fn of_day(days: i64) -> Weekday {
        // In 1..=7, so it fits.
        Weekday((days + 4).rem_euclid(7) as u8 + 1)
    }

    /// Sunday 1 to Saturday 7.
    pub fn number(self) -> u8 {
        self.0
    }
}

/// The clock a window's times and days are read on.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Zone {
    Utc,
    /// The machine's (`TZ`, else `/etc/localtime`).
    Local,
    /// A named zone, with its daylight saving rules.
    Named(TimeZone),
}

/// A daily or weekly window of time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeWindow {
    start: u32,
    end: u32,
    days: Option<(Weekday, Weekday)>,
    zone: Zone,
}

impl TimeWindow {
    /// From `start` to `end` every day; across midnight when `end` is
    /// earlier than `start`; the whole day when they are equal.
    pub fn daily(start: TimeOfDay, end: TimeOfDay) -> TimeWindow {
        TimeWindow {
            start: start.0,
            end: end.0,
            days: None,
            zone: Zone::Utc,
        }
    }

    /// From `start` on `start_day` to `end` on `end_day`, every week. With
    /// the same day for both, the window runs a whole week from `start`
    /// (QuickFIX moves an `end` later than `start` back to `start`).
    pub fn weekly(
        start: TimeOfDay,
        end: TimeOfDay,
        start_day: Weekday,
        end_day: Weekday,
    ) -> TimeWindow {
        let end = if start_day == end_day && end > start {
            start
        } else {
            end
        };
        TimeWindow {
            start: start.0,
            end: end.0,
            days: Some((start_day, end_day)),
            zone: Zone::Utc,
        }
    }

    /// Weekly from `start` on the first day to `end` on the second when
    /// `days` are given, else daily.
    pub fn new(start: TimeOfDay, end: TimeOfDay, days: Option<(Weekday, Weekday)>) -> TimeWindow {
        match days {
            Some((sd, ed)) => TimeWindow::weekly(start, end, sd, ed),
            None => TimeWindow::daily(start, end),
        }
    }

    /// The same window read in the machine's local time instead of UTC.
    pub fn in_local_time(self) -> TimeWindow {
        TimeWindow {
            zone: Zone::Local,
            ..self
        }
    }

    /// The same window read in `zone` (QuickFIX/J's `TimeZone`):
    /// `09:00` in `America/New_York` is 14:00 UTC in winter and 13:00 in
    /// summer.
    pub fn in_zone(self, zone: TimeZone) -> TimeWindow {
        TimeWindow {
            zone: Zone::Named(zone),
            ..self
        }
    }

    /// Whether `time_of_day` on `day` lies inside (QuickFIX checks that
    /// LogonTime and LogoutTime lie inside the session's window with it).
    pub fn contains_time_on(&self, time_of_day: TimeOfDay, day: Option<Weekday>) -> bool {
        match (self.days, day) {
            (Some(_), Some(d)) => self.contains_parts(d, time_of_day.0),
            _ => self.contains_tod(time_of_day.0),
        }
    }

    /// Whether the instant `unix_secs` lies inside.
    pub fn contains(&self, unix_secs: i64) -> bool {
        let (day, tod) = self.split(unix_secs);
        match self.days {
            None => self.contains_tod(tod),
            Some(_) => self.contains_parts(Weekday::of_day(day), tod),
        }
    }

    /// Which occurrence of the window `unix_secs` falls in, `None` outside
    /// it: the day it began (days since 1970 in the window's time), so two
    /// instants are in the same occurrence when they give the same number.
    pub fn instance(&self, unix_secs: i64) -> Option<i64> {
        if !self.contains(unix_secs) {
            return None;
        }
        let (day, tod) = self.split(unix_secs);
        let (start, end) = (self.start, self.end);
        Some(match self.days {
            // A window across midnight belongs to the day it started.
            None if start > end && tod <= end => day - 1,
            None => day,
            // QuickFIX's getRangeStartDate: the last start day at or
            // before this instant.
            Some((start_day, _)) => {
                let wd = i64::from(Weekday::of_day(day).number());
                let sd = i64::from(start_day.number());
                if wd > sd {
                    day - wd + sd
                } else if wd < sd {
                    day - wd + sd - 7
                } else if tod >= start {
                    day
                } else {
                    day - 7
                }
            }
        })
    }

    /// (day since 1970, second of the day) of `unix_secs` in the window's
    /// time.
    fn split(&self, unix_secs: i64) -> (i64, u32) {
        let offset = match &self.zone {
            Zone::Utc => 0,
            Zone::Local => local_offset(unix_secs),
            Zone::Named(tz) => jiff::Timestamp::from_second(unix_secs)
                .map(|t| i64::from(tz.to_offset(t).seconds()))
                .unwrap_or(0),
        };
        let t = unix_secs.saturating_add(offset);
        // In 0..86_400, so it fits.
        (t.div_euclid(DAY), t.rem_euclid(DAY) as u32)
    }

    fn contains_tod(&self, tod: u32) -> bool {
        let (start, end) = (self.start, self.end);
        if start < end {
            start <= tod && tod <= end
        } else {
            // Across midnight, or (start = end) the whole day.
            tod >= start || tod <= end
        }
    }

    /// QuickFIX's isInRange with days.
    fn contains_parts(&self, day: Weekday, tod: u32) -> bool {
        let Some((sd, ed)) = self.days else {
            return self.contains_tod(tod);
        };
        let (d, sd, ed) = (day.number(), sd.number(), ed.number());
        if sd == ed {
            return d != sd || self.contains_tod(tod);
        }
        let outside_days = if sd < ed {
            d < sd || d > ed
        } else {
            d < sd && d > ed
        };
        !(outside_days || (d == sd && tod < self.start) || (d == ed && tod > self.end))
    }
}

/// The machine's UTC offset in seconds at `unix_secs` (as `localtime_r`
/// gives it: the `TZ` variable, else `/etc/localtime`); 0 when unknown.
fn local_offset(unix_secs: i64) -> i64 {
    let Some(t) = libc::time_t::try_from(unix_secs).ok() else {
        return 0;
    };
    // SAFETY: `tm` is plain data for which all-zero bytes are a valid
    // value, and `localtime_r` writes only into it, reading `t`; both
    // outlive the call.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return 0;
        }
        #[allow(clippy::useless_conversion)] // c_long is i32 on 32-bit targets
        i64::from(tm.tm_gmtoff)
    }
}

#[cfg(test)]
mod tests;
