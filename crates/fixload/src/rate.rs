//! Rates as people write them: `50000`, `50k`, `50k/s`, `1M`.

use crate::{Error, Result};

/// Orders per second from `s`, with an optional `k`/`M` and `/s` (one
/// rate: a list is split by the caller). From 1/s, because a rate is shown
/// to the order per second (a step of 0.5/s would be named "0/s") and a
/// run of a few seconds below it sends hardly an order; to 100M/s, far
/// beyond what one generator sends.
///
/// ```
/// assert_eq!(fixload::parse_rate("50k/s").unwrap(), 50_000.0);
/// assert!(fixload::parse_rate("0.5").is_err());
/// ```
pub fn parse_rate(s: &str) -> Result<f64> {
    let t = s.trim().trim_end_matches("/s");
    let (num, scale) = match t.as_bytes().last() {
        Some(b'k' | b'K') => (&t[..t.len() - 1], 1e3),
        Some(b'M') => (&t[..t.len() - 1], 1e6),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v * scale >= 1.0 && v * scale <= 1e8 => Ok(v * scale),
        _ => Err(Error::Rate(s.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_take_units() {
        assert_eq!(parse_rate("50000").unwrap(), 50_000.0);
        assert_eq!(parse_rate("50k").unwrap(), 50_000.0);
        assert_eq!(parse_rate("2.5k/s").unwrap(), 2_500.0);
        assert_eq!(parse_rate("1M/s").unwrap(), 1_000_000.0);
        assert_eq!(parse_rate("1").unwrap(), 1.0);
        assert_eq!(parse_rate("0.5k").unwrap(), 500.0);
        for bad in [
            "", "0", "0.5", "0.999/s", "0.0001k", "-5", "fast", "1e300", "10q",
        ] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_rate("fast").unwrap_err().to_string(),
            "'fast' is not a rate (orders per second from 1 to 100M, e.g. 50000, 50k or 50k/s)"
        );
    }
}
