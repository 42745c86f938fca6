//! The session times of a settings section, read and checked together.

use jiff::tz::TimeZone;

use super::{Reader, Zone, zone};
use crate::schedule::TimeWindow;
use crate::settings::{SettingsError, TimeOfDay, Weekday};

/// When a session runs and logs on and out, and on which clock.
pub(super) struct Times {
    pub(super) start_time: Option<TimeOfDay>,
    pub(super) end_time: Option<TimeOfDay>,
    pub(super) start_day: Option<Weekday>,
    pub(super) end_day: Option<Weekday>,
    pub(super) logon_time: Option<TimeOfDay>,
    pub(super) logout_time: Option<TimeOfDay>,
    pub(super) logon_day: Option<Weekday>,
    pub(super) logout_day: Option<Weekday>,
    pub(super) use_local_time: bool,
    pub(super) time_zone: Option<TimeZone>,
}

/// Reads the session's times and checks them together as QuickFIX's
/// SessionFactory does: one time zone, start and end (days too) in pairs,
/// no times on a non-stop session, the logon window inside the session's.
pub(super) fn times(r: &Reader<'_>) -> Result<Times, SettingsError> {
    let start = r.zoned_time("StartTime")?;
    let end = r.zoned_time("EndTime")?;
    let (start_time, end_time) = (start.as_ref().map(|t| t.0), end.as_ref().map(|t| t.0));
    let named = match r.raw("TimeZone") {
        Some((v, l)) => Some(zone("TimeZone", v, l)?),
        None => None,
    };
    let zones: Vec<Zone> = [start.and_then(|t| t.1), end.and_then(|t| t.1), named]
        .into_iter()
        .flatten()
        .collect();
    if let Some((first, _)) = zones.first()
        && let Some((_, line)) = zones.iter().find(|(z, _)| z != first)
    {
        return Err(SettingsError::Inconsistent {
            line: *line,
            why: "StartTime, EndTime and TimeZone name different time zones",
        });
    }
    let time_zone = zones.into_iter().next().map(|(z, _)| z);
    if start_time.is_some() != end_time.is_some() {
        return Err(SettingsError::Missing {
            line: r.header,
            key: if start_time.is_some() {
                "EndTime"
            } else {
                "StartTime"
            }
            .into(),
        });
    }
    let (start_day, end_day) = (r.day("StartDay")?, r.day("EndDay")?);
    if start_day.is_some() != end_day.is_some() {
        return Err(SettingsError::Inconsistent {
            line: r.header,
            why: if start_day.is_some() {
                "StartDay used without EndDay"
            } else {
                "EndDay used without StartDay"
            },
        });
    }
    if r.bool("NonStopSession", false)? && (start_time.is_some() || start_day.is_some()) {
        return Err(SettingsError::Inconsistent {
            line: r.header,
            why: "NonStopSession used with StartTime/EndTime/StartDay/EndDay",
        });
    }
    let (logon_time, logout_time) = (r.time("LogonTime")?, r.time("LogoutTime")?);
    let (logon_day, logout_day) = (r.day("LogonDay")?, r.day("LogoutDay")?);
    let use_local_time = r.bool("UseLocalTime", false)?;
    if use_local_time && time_zone.is_some() {
        return Err(SettingsError::Inconsistent {
            line: r.header,
            why: "UseLocalTime=Y and a TimeZone both say which clock session times are read on",
        });
    }
    if let Some((start, end)) = start_time.zip(end_time) {
        // QuickFIX's SessionFactory checks: the logon window lies inside
        // the session's.
        let window = TimeWindow::new(start, end, start_day.zip(end_day));
        if !window.contains_time_on(logon_time.unwrap_or(start), logon_day.or(start_day)) {
            return Err(SettingsError::Inconsistent {
                line: r.header,
                why: "LogonTime must be between StartTime and EndTime",
            });
        }
        if !window.contains_time_on(logout_time.unwrap_or(end), logout_day.or(end_day)) {
            return Err(SettingsError::Inconsistent {
                line: r.header,
                why: "LogoutTime must be between StartTime and EndTime",
            });
        }
        if logon_day.or(start_day).is_some() != logout_day.or(end_day).is_some() {
            return Err(SettingsError::Inconsistent {
                line: r.header,
                why: "LogonDay and LogoutDay go together (or with StartDay and EndDay)",
            });
        }
    } else if logon_time.is_some()
        || logout_time.is_some()
        || logon_day.is_some()
        || logout_day.is_some()
    {
        return Err(SettingsError::Inconsistent {
            line: r.header,
            why: "LogonTime/LogoutTime/LogonDay/LogoutDay need StartTime and EndTime",
        });
    }
    Ok(Times {
        start_time,
        end_time,
        start_day,
        end_day,
        logon_time,
        logout_time,
        logon_day,
        logout_day,
        use_local_time,
        time_zone,
    })
}
