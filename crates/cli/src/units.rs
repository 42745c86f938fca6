//! Human units on the command line: durations (`250us`, `1ms`, `2s`, `1m`)
//! and byte sizes (`64K`, `2MiB`).

use std::time::Duration;

/// Parses a duration with a unit: `ns`, `us`/`µs`, `ms`, `s`, `m`; a bare
/// number is seconds. For clap's `value_parser`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (try 100us, 1ms, 2s)"))?;
    let ns_per_unit = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "" | "s" => 1e9,
        "m" | "min" => 60e9,
        other => {
            return Err(format!(
                "unknown duration unit '{other}' in '{s}' (use ns, us, ms, s, m)"
            ));
        }
    };
    let ns = value * ns_per_unit;
    // Durations are added to instants and multiplied by counts; a year
    // bounds every product well inside what Instant and Duration hold.
    if ns > MAX_DURATION.as_nanos() as f64 {
        return Err(format!(
            "'{s}' is longer than the longest duration taken (365 days)"
        ));
    }
    Ok(Duration::from_nanos(ns.round() as u64))
}

/// A [`parse_duration`] that refuses durations over `max`, for a flag
/// whose value bounds a busy or waiting loop.
pub fn parse_duration_up_to(
    max: Duration,
) -> impl Fn(&str) -> Result<Duration, String> + Clone + Send + Sync + 'static {
    move |s| {
        let d = parse_duration(s)?;
        if d > max {
            return Err(format!("'{}' is longer than {max:?}", s.trim()));
        }
        Ok(d)
    }
}

/// The longest duration [`parse_duration`] takes: 365 days.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Parses a byte size: a number with an optional `K`, `M`, `G` (powers of
/// 1024, with or without `iB`/`B`). For clap's `value_parser`. A number
/// past `u64` is refused as too large, naming the largest size, not as
/// "not a size".
pub fn parse_size(s: &str) -> Result<u64, String> {
    parse_size_up_to(s, u64::MAX, "the largest size")
}

/// [`parse_size`] for a flag whose sizes stop at `max`: a number above it
/// (or past `u64`) is refused with one message naming the limit, `what`
/// it is and its value ("99999999999 is larger than the largest job size,
/// 1G (1073741824 bytes)").
pub fn parse_size_up_to(s: &str, max: u64, what: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("'{s}' is not a size (try 4096, 64K, 2MiB)"));
    }
    let shift = match unit.trim().trim_end_matches("iB").trim_end_matches('B') {
        "" => 0,
        "K" | "k" => 10,
        "M" | "m" => 20,
        "G" | "g" => 30,
        other => {
            return Err(format!(
                "unknown size unit '{other}' in '{s}' (use K, M, G)"
            ));
        }
    };
    // Digits alone fail to parse only by overflowing.
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|&n| n <= max)
        .ok_or_else(|| too_large(t, max, what))
}

/// The message for a size above `max`.
pub fn too_large(s: &str, max: u64, what: &str) -> String {
    format!("{s} is larger than {what}, {}", show_size(max))
}

/// `n` bytes as a size flag takes it back: `1G (1073741824 bytes)`, or the
/// bytes alone when no unit divides them.
pub fn show_size(n: u64) -> String {
    let unit = [(30, 'G'), (20, 'M'), (10, 'K')]
        .into_iter()
        .find(|&(shift, _)| n >= 1 << shift && n.is_multiple_of(1 << shift));
    match unit {
        Some((shift, u)) => format!("{}{u} ({n} bytes)", n >> shift),
        None => format!("{n} bytes"),
    }
}

#[cfg(test)]
mod tests;
