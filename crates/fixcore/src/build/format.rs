//! Allocation-free number formatting for the builder: integers through a
//! two-digits-at-a-time table, exact decimals, UTCTimestamps.

use crate::value::{Decimal, UtcTimestamp, civil_from_days};

static PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Number of decimal digits of `x` (1 for 0).
#[inline]
pub fn digit_count(x: u64) -> usize {
    let mut n = 1;
    let mut p = 10u64;
    while n < 20 && x >= p {
        n += 1;
        p = p.wrapping_mul(10);
    }
    n
}

/// Writes `x` right-aligned to end exactly at `out[..n]` where `n` is its
/// digit count. `out` must hold `n` bytes.
#[inline]
fn write_digits(out: &mut [u8], mut x: u64, n: usize) {
    let mut i = n;
    while x >= 100 {
        let r = (x % 100) as usize;
        x /= 100;
        i -= 2;
        out[i..i + 2].copy_from_slice(&PAIRS[2 * r..2 * r + 2]);
    }
    if x >= 10 {
        i -= 2;
        out[i..i + 2].copy_from_slice(&PAIRS[2 * x as usize..2 * x as usize + 2]);
    } else {
        i -= 1;
        out[i] = b'0' + x as u8;
    }
}

/// Writes `x` at the start of `out` (at least 20 bytes); returns the length.
#[inline]
pub fn uint(out: &mut [u8], x: u64) -> usize {
    let n = digit_count(x);
    write_digits(out, x, n);
    n
}

/// Writes `x` at the start of `out` (at least 21 bytes); returns the length.
#[inline]
pub fn int(out: &mut [u8], x: i64) -> usize {
    if x < 0 {
        out[0] = b'-';
        1 + uint(&mut out[1..], x.unsigned_abs())
    } else {
        uint(out, x as u64)
    }
}

/// Writes `d` (e.g. `-12.50` for mantissa -1250, scale 2) into `out` (at
/// least 24 bytes); returns the length.
pub fn decimal(out: &mut [u8], d: Decimal) -> usize {
    let mut i = 0;
    if d.mantissa < 0 {
        out[0] = b'-';
        i = 1;
    }
    let m = d.mantissa.unsigned_abs();
    let scale = usize::from(d.scale);
    if scale == 0 {
        return i + uint(&mut out[i..], m);
    }
    // Pad with leading zeros so there is at least one integer digit.
    let n = digit_count(m).max(scale + 1);
    let digits = &mut out[i..i + n + 1];
    digits[..n].fill(b'0');
    let nd = digit_count(m);
    write_digits(&mut digits[n - nd..n], m, nd);
    // Open the gap for the point.
    digits.copy_within(n - scale..n, n - scale + 1);
    digits[n - scale] = b'.';
    i + n + 1
}

/// A decimal's text is the wire's (the formatter above), so that `value`
/// need not depend on `build`.
impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut buf = [0u8; 24];
        let n = decimal(&mut buf, *self);
        f.write_str(std::str::from_utf8(&buf[..n]).map_err(|_| std::fmt::Error)?)
    }
}

/// Fractional-second precision of a formatted UTCTimestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimePrecision {
    /// `YYYYMMDD-HH:MM:SS`
    Seconds,
    /// `.sss`
    #[default]
    Millis,
    /// `.ssssss`
    Micros,
    /// `.sssssssss`
    Nanos,
}

/// Writes `t` into `out` (at least 27 bytes); returns the length, or `None`
/// if the year is outside 0..=9999.
pub fn timestamp(out: &mut [u8], t: UtcTimestamp, p: TimePrecision) -> Option<usize> {
    let secs = t.unix_nanos.div_euclid(1_000_000_000);
    let nanos = t.unix_nanos.rem_euclid(1_000_000_000) as u64;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400) as u64;
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return None;
    }
    let nd = digit_count(y as u64);
    out[..4].fill(b'0');
    write_digits(&mut out[4 - nd..4], y as u64, nd);
    let two = |o: &mut [u8], v: u64| o.copy_from_slice(&PAIRS[2 * v as usize..2 * v as usize + 2]);
    two(&mut out[4..6], u64::from(m));
    two(&mut out[6..8], u64::from(d));
    out[8] = b'-';
    two(&mut out[9..11], sod / 3600);
    out[11] = b':';
    two(&mut out[12..14], sod / 60 % 60);
    out[14] = b':';
    two(&mut out[15..17], sod % 60);
    Some(17 + fraction(&mut out[17..], nanos, p))
}

/// The part of a UTCTimestamp after the seconds: `.` and the fraction of
/// `nanos` (below one second) at precision `p`, nothing for seconds; its
/// length. `out` holds at least 10 bytes.
#[inline]
pub fn fraction(out: &mut [u8], nanos: u64, p: TimePrecision) -> usize {
    let (digits, value) = match p {
        TimePrecision::Seconds => return 0,
        TimePrecision::Millis => (3, nanos / 1_000_000),
        TimePrecision::Micros => (6, nanos / 1_000),
        TimePrecision::Nanos => (9, nanos),
    };
    out[0] = b'.';
    out[1..1 + digits].fill(b'0');
    let nd = digit_count(value);
    write_digits(&mut out[1 + digits - nd..1 + digits], value, nd);
    1 + digits
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn s(f: impl FnOnce(&mut [u8]) -> usize) -> String {
        let mut b = [0u8; 32];
        let n = f(&mut b);
        String::from_utf8(b[..n].to_vec()).unwrap()
    }

    #[test]
    fn decimals() {
        assert_eq!(s(|b| decimal(b, Decimal::new(1250, 2))), "12.50");
        assert_eq!(s(|b| decimal(b, Decimal::new(-5, 3))), "-0.005");
        assert_eq!(s(|b| decimal(b, Decimal::new(0, 1))), "0.0");
        assert_eq!(
            s(|b| decimal(b, Decimal::new(i64::MIN, 0))),
            i64::MIN.to_string()
        );
    }

    #[test]
    fn timestamps() {
        let t = UtcTimestamp::parse(b"20180920-18:14:19.508").unwrap();
        assert_eq!(
            s(|b| timestamp(b, t, TimePrecision::Millis).unwrap()),
            "20180920-18:14:19.508"
        );
        assert_eq!(
            s(|b| timestamp(b, t, TimePrecision::Seconds).unwrap()),
            "20180920-18:14:19"
        );
        assert_eq!(
            s(|b| timestamp(b, t, TimePrecision::Nanos).unwrap()),
            "20180920-18:14:19.508000000"
        );
        let early = UtcTimestamp::parse(b"17000101-00:00:00").unwrap();
        assert_eq!(
            s(|b| timestamp(b, early, TimePrecision::Seconds).unwrap()),
            "17000101-00:00:00"
        );
    }

    proptest! {
        #[test]
        fn uint_matches_std(x in any::<u64>()) {
            prop_assert_eq!(s(|b| uint(b, x)), x.to_string());
        }
        #[test]
        fn int_matches_std(x in any::<i64>()) {
            prop_assert_eq!(s(|b| int(b, x)), x.to_string());
        }
        #[test]
        fn decimal_round_trips(
            m in prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX)],
            scale in 0u8..=18,
        ) {
            let d = Decimal::new(m, scale);
            let text = s(|b| decimal(b, d));
            // Independent oracle: place the point in std's rendering.
            let digits = m.unsigned_abs().to_string();
            let padded = format!("{:0>w$}", digits, w = scale as usize + 1);
            let (ip, fp) = padded.split_at(padded.len() - scale as usize);
            let want = format!("{}{}{}{}", if m < 0 { "-" } else { "" }, ip, if scale > 0 { "." } else { "" }, fp);
            prop_assert_eq!(&text, &want);
            prop_assert_eq!(Decimal::parse(text.as_bytes()), Some(d));
        }
        #[test]
        fn timestamp_round_trips(n in -9_000_000_000_000_000_000i64..i64::MAX) {
            let t = UtcTimestamp { unix_nanos: n };
            let text = s(|b| timestamp(b, t, TimePrecision::Nanos).unwrap());
            prop_assert_eq!(UtcTimestamp::parse(text.as_bytes()), Some(t));
        }
    }
}
