//! The proleptic Gregorian calendar as day counts: a date to the days
//! since 1970-01-01 and back, in constant time and without tables (Howard
//! Hinnant's `days_from_civil` and `civil_from_days`, which hold for any
//! year an `i64` of days can reach).
//!
//! fixcore formats and parses UTCTimestamps with it, zipstream converts
//! DOS dates, and the binary prints listings' dates: one calendar, so the
//! three cannot disagree.
//!
//! ```
//! assert_eq!(civil::days_from_civil(2000, 3, 1), 11_017);
//! assert_eq!(civil::civil_from_days(11_017), (2000, 3, 1));
//! assert_eq!(civil::days_in_month(2000, 2), 29);
//! ```

#![forbid(unsafe_code)]

/// Days from 1970-01-01 to year `y`, month `m` (1..=12), day `d`
/// (1..=31); negative before 1970. A day past its month's end counts on
/// into the next month.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    // Years start in March, so February's leap day ends the year.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The (year, month, day) that is `days` days after 1970-01-01: the
/// inverse of [`days_from_civil`].
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    // In range by construction: doy < 366 and mp < 12.
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// How many days month `m` (1..=12) of year `y` has.
pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Dates whose day numbers are known independently (the Unix epoch,
    /// leap days of a 400-year and a 100-year, the DOS epoch, the 2038
    /// rollover, a date before 1970).
    #[test]
    fn known_dates() {
        for (date, days) in [
            ((1970, 1, 1), 0),
            ((2000, 2, 29), 11_016),
            ((1900, 3, 1), -25_508),
            ((1980, 1, 1), 3_652),
            ((2038, 1, 19), 24_855),
            ((1969, 12, 31), -1),
        ] {
            assert_eq!(days_from_civil(date.0, date.1, date.2), days, "{date:?}");
            assert_eq!(civil_from_days(days), date);
        }
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2024, 2), 29);
    }

    proptest! {
        /// Every day maps to a valid date that maps back, and the next
        /// day is the next date.
        #[test]
        fn round_trip(days in -1_000_000_000i64..1_000_000_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert!((1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m));
            prop_assert_eq!(days_from_civil(y, m, d), days);
            let next = civil_from_days(days + 1);
            let want = if d < days_in_month(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
            prop_assert_eq!(next, want);
        }
    }
}
