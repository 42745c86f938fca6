//! The units a latency is shown in: nanoseconds scaled to ns, µs, ms or
//! s per value, so one table holds 850 ns and 2.50 s without a column of
//! zeros.

/// `ns` in the unit chosen for it (ns, µs, ms or s): the value and the
/// unit's symbol.
pub fn scale_ns(ns: f64) -> (f64, &'static str) {
    if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    }
}

/// Formats nanoseconds with a unit chosen for the value: ns, µs, ms or s.
pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".into();
    }
    let (v, unit) = scale_ns(ns);
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}
