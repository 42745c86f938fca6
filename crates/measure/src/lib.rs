//! The measurement foundation every perfkit benchmark stands on: the
//! latency histogram, the interleaving runner and its comparison model,
//! and the checked probes of CPU time, memory and the machine. A crate of
//! its own so that libraries (stress's harness, zipstream's example) use
//! the probes without depending on `perfkit-bench`'s comparisons; the
//! report a measurement returns is `perfkit-report`'s, which states the
//! [`machine`] probed here.
//!
//! ```
//! let mut h = perfkit_measure::latency_histogram();
//! let cpu = perfkit_measure::clock::thread_cpu();
//! perfkit_measure::record(&mut h, cpu);
//! assert_eq!(h.len(), 1);
//! ```
//!
//! - [`latency_histogram`]: nanoseconds from 1 ns to one hour, 3
//!   significant digits, for every latency this crate (and the binary's
//!   reports) records;
//! - [`interleave`]: variants measured in turn, round after round, into a
//!   [`Comparison`] of [`Variant`]s; [`Repeat`]: warm-up and measured
//!   rounds bounded by a count and a time, for benchmarks whose round
//!   measures every variant once;
//! - [`clock`]: thread, process and child-process CPU clocks that report
//!   a failed read instead of returning zero;
//! - [`memory`]: resident set, its peak (resettable) and thread count from
//!   `/proc/self/status`;
//! - [`tsc`]: the time-stamp counter, calibrated, for timings shorter than
//!   a clock read;
//! - [`child`]: a child process run to completion, with the wall time, CPU
//!   time and peak RSS the kernel accounts to it;
//! - [`machine`]: the CPU model and core count every report states.

pub mod child;
pub mod clock;
mod interleave;
pub mod machine;
pub mod memory;
pub mod tsc;

pub use interleave::{
    Comparison, Op, Repeat, Repeating, Rounds, Variant, interleave, interleave_with,
};

use std::time::Duration;

use hdrhistogram::Histogram;

/// Longest latency a histogram holds: one hour, in nanoseconds. Longer
/// samples are clamped to it (`saturating_record`), not dropped.
pub const LATENCY_MAX_NS: u64 = 3_600_000_000_000;

/// A new latency histogram: nanoseconds, 1 ns to [`LATENCY_MAX_NS`], 3
/// significant digits (0.1 % resolution at every magnitude).
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_MAX_NS, 3).expect("static bounds are valid")
}

/// Records a duration into a nanosecond histogram: below 1 ns counts as
/// 1 ns, above [`LATENCY_MAX_NS`] as the top.
pub fn record(h: &mut Histogram<u64>, d: Duration) {
    h.saturating_record(d.as_nanos().clamp(1, u64::MAX as u128) as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latency_histogram_spans_a_nanosecond_to_an_hour_at_three_digits() {
        let mut h = latency_histogram();
        h.record(1).unwrap();
        h.record(LATENCY_MAX_NS).unwrap();
        assert!(h.record(LATENCY_MAX_NS * 2).is_err());
        // 3 significant digits: 123,456 ns is kept within 0.1 %.
        h.record(123_456).unwrap();
        let v = h.value_at_quantile(0.5);
        assert!(v.abs_diff(123_456) <= 124, "{v}");
    }
}
