use super::*;

const H: u32 = 3600;
/// Monday 2026-11-23 00:00:00 UTC.
const MONDAY: i64 = 1_795_392_000;

fn t(h: u32) -> TimeOfDay {
    TimeOfDay(h * H)
}

fn day(s: &str) -> Weekday {
    Weekday::parse(s).unwrap()
}

/// The window as a list of the minutes of the week (from Sunday 00:00)
/// it holds, written out from its description without `TimeWindow`'s
/// arithmetic: the oracle for `contains`.
fn week_minutes(start: u32, end: u32, days: Option<(u8, u8)>) -> Vec<bool> {
    let (start, end) = (start / 60, end / 60);
    let mut m = vec![false; 7 * 1440];
    match days {
        None => {
            for d in 0..7 {
                for x in 0..1440 {
                    m[d * 1440 + x as usize] = if start < end {
                        start <= x && x <= end
                    } else {
                        x >= start || x <= end
                    };
                }
            }
        }
        Some((sd, ed)) => {
            // Walk from the start day's start time to the end day's end
            // time (a whole week round when they meet or cross).
            let from = (usize::from(sd) - 1) * 1440 + start as usize;
            let mut to = (usize::from(ed) - 1) * 1440 + end as usize;
            if to < from || (sd == ed && end <= start) {
                to += 7 * 1440;
            }
            if sd == ed && end > start {
                // QuickFIX moves EndTime back to StartTime: a whole week.
                to = from + 7 * 1440;
            }
            for x in from..=to {
                m[x % (7 * 1440)] = true;
            }
        }
    }
    m
}

/// Checks `w` against the oracle minute by minute over three weeks, and
/// its instances: constant along each run of contained minutes, and the
/// day that run began on.
fn check(w: TimeWindow, start: u32, end: u32, days: Option<(u8, u8)>) {
    let want = week_minutes(start, end, days);
    // Minute 0 of the sweep is Sunday 00:00, the day before MONDAY.
    let sunday = MONDAY - 86_400;
    let mut run_start: Option<Option<i64>> = None;
    for minute in 0..(3 * 7 * 1440) {
        let at = sunday + minute as i64 * 60;
        let inside = w.contains(at);
        assert_eq!(
            inside,
            want[minute % (7 * 1440)],
            "{w:?} at minute {minute} of the week"
        );
        let inst = w.instance(at);
        assert_eq!(inst.is_some(), inside);
        if !inside {
            // A gap: the next run's beginning is seen.
            run_start = Some(None);
            continue;
        }
        match run_start {
            // Before the first gap the run's beginning is unknown.
            None => {}
            Some(None) => run_start = Some(Some(at.div_euclid(86_400))),
            Some(Some(first_day)) => {
                assert_eq!(inst, Some(first_day), "{w:?} at minute {minute}");
            }
        }
    }
}

#[test]
fn daily_windows_match_the_minute_oracle() {
    for (s, e) in [(9, 17), (22, 6), (0, 23), (13, 12)] {
        check(TimeWindow::daily(t(s), t(e)), s * H, e * H, None);
    }
}

#[test]
fn weekly_windows_match_the_minute_oracle() {
    let days = |a: &str, b: &str| (day(a).number(), day(b).number());
    for (s, e, sd, ed) in [
        (8, 17, "mo", "fr"),
        // The FX week: Sunday evening to Friday evening.
        (17, 17, "su", "fr"),
        (22, 6, "fr", "mo"),
        (9, 8, "we", "we"),
        (0, 0, "sa", "su"),
    ] {
        let w = TimeWindow::weekly(t(s), t(e), day(sd), day(ed));
        check(w, s * H, e * H, Some(days(sd, ed)));
    }
}

#[test]
fn a_whole_day_and_a_whole_week_change_instance_where_quickfix_does() {
    // StartTime = EndTime: always inside; numbers belong to the UTC date.
    let w = TimeWindow::daily(t(8), t(8));
    assert!((0..48).all(|h| w.contains(MONDAY + h * 3600)));
    assert_eq!(w.instance(MONDAY + 7 * 3600), w.instance(MONDAY));
    assert_ne!(w.instance(MONDAY + 25 * 3600), w.instance(MONDAY));
    // Same day, EndTime after StartTime: a week from Monday 08:00.
    let w = TimeWindow::weekly(t(8), t(10), day("mo"), day("mo"));
    assert!((0..24 * 14).all(|h| w.contains(MONDAY + h * 3600)));
    let monday_8 = MONDAY + 8 * 3600;
    assert_eq!(w.instance(monday_8), w.instance(monday_8 + 7 * 86_400 - 1));
    assert_ne!(w.instance(monday_8), w.instance(monday_8 - 1));
}

#[test]
fn days_read_as_quickfix_reads_them() {
    for (text, n) in [
        ("su", 1),
        ("Monday", 2),
        ("TU", 3),
        ("wed", 4),
        ("th", 5),
        ("fr", 6),
        ("Sa", 7),
    ] {
        assert_eq!(Weekday::parse(text).map(Weekday::number), Some(n), "{text}");
    }
    for bad in ["", "s", "xx", "7"] {
        assert_eq!(Weekday::parse(bad), None, "{bad:?}");
    }
    assert_eq!(Weekday::of_day(MONDAY / 86_400), day("mo"));
    assert_eq!(Weekday::of_day(0), day("th"), "1970-01-01");
    assert_eq!(Weekday::of_day(-1), day("we"));
}

#[test]
fn local_time_shifts_the_window_by_the_machine_offset() {
    // The offset is checked against `date`, which reads the zone the same
    // way (TZ, else /etc/localtime), for instants a summer time apart.
    for at in [MONDAY, MONDAY - 150 * 86_400] {
        let out = std::process::Command::new("date")
            .args(["-d", &format!("@{at}"), "+%z"])
            .output()
            .expect("the date program");
        let z = String::from_utf8(out.stdout).unwrap();
        let z = z.trim();
        let sign = if z.starts_with('-') { -1 } else { 1 };
        let (h, m): (i64, i64) = (z[1..3].parse().unwrap(), z[3..5].parse().unwrap());
        assert_eq!(local_offset(at), sign * (h * 3600 + m * 60), "{z} at {at}");
    }
    let w = TimeWindow::daily(t(9), t(17));
    let local = w.clone().in_local_time();
    for h in 0..48 {
        let at = MONDAY + h * 3600;
        assert_eq!(local.contains(at), w.contains(at + local_offset(at)), "{h}");
    }
}

#[test]
fn a_named_zone_reads_the_window_on_that_zones_clock() {
    // The oracle is `date` with TZ set, the C library's reading of the
    // same tz database, for a winter day and a summer day.
    let zone = TimeZone::get("America/New_York").expect("tzdata's America/New_York");
    let w = TimeWindow::daily(TimeOfDay(9 * H + 30 * 60), t(16)).in_zone(zone);
    for first in [MONDAY, MONDAY - 150 * 86_400] {
        for half_hours in 0..96 {
            let at = first + half_hours * 1800;
            let out = std::process::Command::new("date")
                .env("TZ", "America/New_York")
                .args(["-d", &format!("@{at}"), "+%H%M"])
                .output()
                .expect("the date program");
            let hhmm: u32 = String::from_utf8(out.stdout)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            let inside = (930..=1600).contains(&hhmm);
            assert_eq!(w.contains(at), inside, "at {at} ({hhmm} in New York)");
        }
    }
}
