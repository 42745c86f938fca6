//! Per-call timing on the CPU's time-stamp counter, for calls too short to
//! time with a clock read each (`Instant::now` costs ~20 ns here, as much as
//! the call). The counter's rate is calibrated against `Instant`, and the
//! cost of an empty read pair is measured so reports can state it and
//! subtract it.

use std::time::{Duration, Instant};

/// A calibrated time-stamp counter.
#[derive(Debug, Clone, Copy)]
pub struct Tsc {
    ns_per_tick: f64,
    /// Ticks between the two reads of an empty pair (median of many).
    overhead: u64,
}

impl Tsc {
    /// Calibrates over ~20 ms; `None` where there is no usable counter
    /// (not x86_64, or a counter that does not advance).
    pub fn calibrate() -> Option<Tsc> {
        let (t0, c0) = (Instant::now(), read()?);
        while t0.elapsed() < Duration::from_millis(20) {
            std::hint::spin_loop();
        }
        let (ns, c1) = (t0.elapsed().as_nanos() as f64, read()?);
        let ticks = c1.checked_sub(c0).filter(|&t| t > 0)? as f64;
        let mut pairs: Vec<u64> = (0..1001)
            .filter_map(|_| {
                let a = read()?;
                let b = read()?;
                Some(b.saturating_sub(a))
            })
            .collect();
        pairs.sort_unstable();
        Some(Tsc {
            ns_per_tick: ns / ticks,
            overhead: pairs[pairs.len() / 2],
        })
    }

    /// Current counter value.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        read().unwrap_or(0)
    }

    /// Duration of `ticks` counted between two [`Tsc::now`] reads, less the
    /// cost of the reads themselves.
    pub fn duration(&self, ticks: u64) -> Duration {
        self.total_duration(1, ticks)
    }

    /// Total duration of `calls` calls, each counted between two
    /// [`Tsc::now`] reads, whose tick counts sum to `ticks`, less the cost
    /// of the `calls` read pairs. The overhead is subtracted from the sum
    /// once (saturating) and the result converted once, so neither rounding
    /// each call to a whole nanosecond nor clipping each at zero biases the
    /// total.
    pub fn total_duration(&self, calls: u64, ticks: u64) -> Duration {
        let t = ticks.saturating_sub(calls.saturating_mul(self.overhead));
        Duration::from_nanos((t as f64 * self.ns_per_tick).round() as u64)
    }

    /// Ticks in `d`.
    pub fn ticks(&self, d: Duration) -> u64 {
        (d.as_nanos() as f64 / self.ns_per_tick).round() as u64
    }

    /// What an empty pair of reads costs, subtracted by [`Tsc::duration`].
    pub fn overhead(&self) -> Duration {
        Duration::from_nanos((self.overhead as f64 * self.ns_per_tick).round() as u64)
    }
}

/// Reads the counter between load fences, so the reads neither drift into
/// nor out of the code they bracket.
#[inline(always)]
fn read() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: lfence and rdtsc exist on every x86_64 CPU, touch no
        // memory and have no preconditions.
        let t = unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        };
        Some(t)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    // No wall-clock bounds (DESIGN: unit tests never assert them; a loaded
    // machine preempts a calibration or a sleep for as long as it likes):
    // these check what a broken calibration or conversion would get wrong.

    #[test]
    fn calibrations_are_positive_finite_and_agree() {
        let (Some(a), Some(b)) = (Tsc::calibrate(), Tsc::calibrate()) else {
            return; // no counter on this target: nothing to check
        };
        for t in [a, b] {
            assert!(
                t.ns_per_tick.is_finite() && t.ns_per_tick > 0.0,
                "ns per tick {}",
                t.ns_per_tick
            );
        }
        // The counter's rate does not change between two calibrations; a
        // factor of 2 leaves room for one preempted 20 ms window.
        let ratio = a.ns_per_tick / b.ns_per_tick;
        assert!((0.5..=2.0).contains(&ratio), "calibrations differ: {ratio}");
    }

    #[test]
    fn counter_advances_and_conversions_invert() {
        let Some(tsc) = Tsc::calibrate() else {
            return;
        };
        // Saturating: on a thread that migrates between cores, the second
        // read must not wrap below the first.
        let c0 = tsc.now();
        std::thread::sleep(Duration::from_millis(1));
        let elapsed = tsc.now().saturating_sub(c0);
        assert!(
            elapsed > tsc.overhead,
            "a sleep counted {elapsed} ticks, an empty read pair {}",
            tsc.overhead
        );
        // `duration` subtracts the read overhead that `overhead` reports.
        assert_eq!(tsc.duration(2 * tsc.overhead), tsc.overhead());
        assert_eq!(tsc.duration(tsc.overhead), Duration::ZERO);
        // A total subtracts one overhead per call, once, and saturates.
        assert_eq!(tsc.total_duration(3, 3 * tsc.overhead), Duration::ZERO);
        assert_eq!(tsc.total_duration(3, 2 * tsc.overhead), Duration::ZERO);
        assert_eq!(
            tsc.total_duration(3, 4 * tsc.overhead),
            tsc.duration(2 * tsc.overhead)
        );
        // `ticks` and `duration` invert each other, to within rounding.
        let slack = tsc.ns_per_tick.ceil() as u128 + 1;
        for d in [1_000u64, 1_000_000, 1_000_000_000].map(Duration::from_nanos) {
            let back = tsc.duration(tsc.ticks(d) + tsc.overhead);
            assert!(
                back.as_nanos().abs_diff(d.as_nanos()) <= slack,
                "{d:?} -> {back:?}"
            );
            let total = tsc.total_duration(1000, tsc.ticks(d) + 1000 * tsc.overhead);
            assert!(
                total.as_nanos().abs_diff(d.as_nanos()) <= slack,
                "{d:?} over 1000 calls -> {total:?}"
            );
        }
    }
}
