//! Typed FIX values: integers, decimal prices, UTC timestamps, chars, booleans.
//!
//! Prices are kept as an exact decimal (mantissa and scale) because binary
//! floating point cannot represent most prices and rounding them changes
//! orders.

/// Parses a FIX `int`: optional `-`, then digits, within `i64` (so
/// `i64::MIN`, whose magnitude exceeds `i64::MAX`, is accepted: the builder
/// writes it).
pub fn parse_int(v: &[u8]) -> Option<i64> {
    let (neg, digits) = match v.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, v),
    };
    signed(neg, parse_uint(digits)?)
}

/// `magnitude` with a sign, if it fits `i64`.
fn signed(neg: bool, magnitude: u64) -> Option<i64> {
    if neg {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Parses an unsigned decimal integer (1–20 digits) without overflow.
pub fn parse_uint(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 20 {
        return None;
    }
    let mut x: u64 = 0;
    for &b in v {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        x = x.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(x)
}

/// An exact decimal: `mantissa × 10^-scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// Unscaled value.
    pub mantissa: i64,
    /// Digits after the decimal point (0–18).
    pub scale: u8,
}

impl Decimal {
    /// `mantissa × 10^-scale`. `scale` above 18 is clamped to 18.
    pub const fn new(mantissa: i64, scale: u8) -> Decimal {
        Decimal {
            mantissa,
            scale: if scale > 18 { 18 } else { scale },
        }
    }

    /// Parses a FIX `float`/`Price`: optional `-`, digits, optional `.` and
    /// digits; the mantissa must fit `i64` and the scale be at most 18.
    pub fn parse(v: &[u8]) -> Option<Decimal> {
        let (neg, body) = match v.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, v),
        };
        // The magnitude is gathered unsigned so that i64::MIN's, one more
        // than i64::MAX, still fits; the sign is applied at the end.
        let mut m: u64 = 0;
        let mut digits = 0u32;
        // Overflow (not digit count) bounds the mantissa, so leading zeros
        // such as 0.00000005 cost nothing.
        let mut scale: Option<u8> = None;
        for &b in body {
            if b == b'.' {
                if scale.is_some() {
                    return None;
                }
                scale = Some(0);
                continue;
            }
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            digits += 1;
            m = m.checked_mul(10)?.checked_add(u64::from(d))?;
            if let Some(s) = scale.as_mut() {
                *s += 1;
                if *s > 18 {
                    return None;
                }
            }
        }
        if digits == 0 {
            return None;
        }
        Some(Decimal {
            mantissa: signed(neg, m)?,
            scale: scale.unwrap_or(0),
        })
    }

    /// Nearest `f64` (for display and statistics, never for order logic).
    pub fn to_f64(self) -> f64 {
        self.mantissa as f64 / 10f64.powi(i32::from(self.scale))
    }
}

/// A UTCTimestamp (`YYYYMMDD-HH:MM:SS[.sss|.ssssss|.sssssssss]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UtcTimestamp {
    /// Nanoseconds since 1970-01-01T00:00:00Z.
    pub unix_nanos: i64,
}

pub(crate) use civil::{civil_from_days, days_from_civil, days_in_month};

fn digits<const N: usize>(v: &[u8]) -> Option<u32> {
    let mut x = 0u32;
    for &b in v.get(..N)? {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        x = x * 10 + u32::from(d);
    }
    Some(x)
}

impl UtcTimestamp {
    /// The wall clock now.
    pub fn now() -> UtcTimestamp {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        UtcTimestamp {
            unix_nanos: i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        }
    }

    /// Parses `YYYYMMDD-HH:MM:SS` with optional `.` and 3, 6 or 9 digits.
    /// Years outside 1677..=2262 (the `i64` nanosecond range) are refused.
    /// Leap second 60 is accepted as FIX allows it.
    pub fn parse(v: &[u8]) -> Option<UtcTimestamp> {
        if v.len() < 17 || v[8] != b'-' || v[11] != b':' || v[14] != b':' {
            return None;
        }
        let y = i64::from(digits::<4>(v)?);
        let mo = digits::<2>(&v[4..])?;
        let d = digits::<2>(&v[6..])?;
        let h = digits::<2>(&v[9..])?;
        let mi = digits::<2>(&v[12..])?;
        let s = digits::<2>(&v[15..])?;
        if !(1..=12).contains(&mo)
            || d == 0
            || d > days_in_month(y, mo)
            || h > 23
            || mi > 59
            || s > 60
        {
            return None;
        }
        let frac = &v[17..];
        let nanos: i64 = match frac.len() {
            0 => 0,
            4 if frac[0] == b'.' => i64::from(digits::<3>(&frac[1..])?) * 1_000_000,
            7 if frac[0] == b'.' => i64::from(digits::<6>(&frac[1..])?) * 1_000,
            10 if frac[0] == b'.' => i64::from(digits::<9>(&frac[1..])?),
            _ => return None,
        };
        let secs = days_from_civil(y, mo, d) * 86_400
            + i64::from(h) * 3600
            + i64::from(mi) * 60
            + i64::from(s);
        // i64 nanoseconds span 1677..2262; outside that the value is refused.
        Some(UtcTimestamp {
            unix_nanos: secs.checked_mul(1_000_000_000)?.checked_add(nanos)?,
        })
    }

    /// (year, month, day, hour, minute, second, nanosecond).
    pub fn to_parts(self) -> (i64, u32, u32, u32, u32, u32, u32) {
        let secs = self.unix_nanos.div_euclid(1_000_000_000);
        let nanos = self.unix_nanos.rem_euclid(1_000_000_000) as u32;
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400) as u32;
        let (y, m, d) = civil_from_days(days);
        (y, m, d, sod / 3600, sod / 60 % 60, sod % 60, nanos)
    }
}

/// A FIX `char`: exactly one byte.
pub fn parse_char(v: &[u8]) -> Option<u8> {
    match v {
        [c] => Some(*c),
        _ => None,
    }
}

/// A FIX `Boolean`: `Y` or `N`.
pub fn parse_bool(v: &[u8]) -> Option<bool> {
    match v {
        b"Y" => Some(true),
        b"N" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ints() {
        assert_eq!(parse_int(b"-42"), Some(-42));
        assert_eq!(parse_int(b"0"), Some(0));
        assert_eq!(parse_int(b""), None);
        assert_eq!(parse_int(b"-"), None);
        assert_eq!(parse_int(b"1x"), None);
        assert_eq!(parse_int(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int(b"9223372036854775808"), None);
        assert_eq!(parse_int(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_int(b"-9223372036854775809"), None);
        assert_eq!(parse_int(b"-18446744073709551615"), None);
        assert_eq!(parse_uint(b"18446744073709551616"), None);
    }

    #[test]
    fn decimals_are_exact() {
        assert_eq!(Decimal::parse(b"123.45"), Some(Decimal::new(12345, 2)));
        assert_eq!(Decimal::parse(b"-0.1"), Some(Decimal::new(-1, 1)));
        assert_eq!(Decimal::parse(b"7"), Some(Decimal::new(7, 0)));
        assert_eq!(Decimal::parse(b"7."), Some(Decimal::new(7, 0)));
        assert_eq!(Decimal::parse(b".5"), Some(Decimal::new(5, 1)));
        assert_eq!(Decimal::parse(b"1.2.3"), None);
        assert_eq!(Decimal::parse(b"."), None);
        assert_eq!(Decimal::parse(b"1e5"), None);
        assert_eq!(
            Decimal::parse(b"-922337203.6854775808"),
            Some(Decimal::new(i64::MIN, 10))
        );
        assert_eq!(Decimal::parse(b"922337203.6854775808"), None);
        assert_eq!(
            Decimal::parse(b"9223372036854775807"),
            Some(Decimal::new(i64::MAX, 0))
        );
        // 0.1 + 0.2 style values keep every digit.
        assert_eq!(
            Decimal::parse(b"0.30000000000000004").map(|d| d.mantissa),
            Some(30000000000000004)
        );
    }

    #[test]
    fn timestamps() {
        let t = UtcTimestamp::parse(b"20180920-18:14:19.508").unwrap();
        // 2018-09-20T18:14:19.508Z, computed with `date -u -d ... +%s`.
        assert_eq!(t.unix_nanos, 1_537_467_259_508_000_000);
        assert_eq!(
            UtcTimestamp::parse(b"19700101-00:00:00")
                .unwrap()
                .unix_nanos,
            0
        );
        assert_eq!(
            UtcTimestamp::parse(b"20240229-23:59:59.123456789")
                .unwrap()
                .to_parts(),
            (2024, 2, 29, 23, 59, 59, 123_456_789)
        );
        for bad in [
            &b"20230229-00:00:00"[..],
            b"20181320-18:14:19",
            b"20180920-24:00:00",
            b"20180920-18:14:19.5",
            b"20180920 18:14:19",
            b"2018092-18:14:19",
        ] {
            assert_eq!(
                UtcTimestamp::parse(bad),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn chars_and_bools() {
        assert_eq!(parse_char(b"1"), Some(b'1'));
        assert_eq!(parse_char(b"12"), None);
        assert_eq!(parse_bool(b"Y"), Some(true));
        assert_eq!(parse_bool(b"N"), Some(false));
        assert_eq!(parse_bool(b"y"), None);
    }

    proptest! {
        #[test]
        fn civil_round_trip(days in -1_000_000i64..1_000_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }

        #[test]
        fn int_matches_std(x in any::<i64>()) {
            prop_assert_eq!(parse_int(x.to_string().as_bytes()), Some(x));
        }

        #[test]
        fn decimal_matches_string(int in 0u64..1_000_000_000, frac in "[0-9]{0,8}") {
            let s = if frac.is_empty() { int.to_string() } else { format!("{int}.{frac}") };
            let d = Decimal::parse(s.as_bytes()).unwrap();
            prop_assert_eq!(d.scale as usize, frac.len());
            let want: i64 = format!("{int}{frac}").parse().unwrap();
            prop_assert_eq!(d.mantissa, want);
        }
    }
}
