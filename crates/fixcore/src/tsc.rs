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
        let t = ticks.saturating_sub(self.overhead);
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

    #[test]
    fn counts_a_sleep_within_a_few_percent_of_instant() {
        let Some(tsc) = Tsc::calibrate() else {
            return; // no counter on this target: nothing to check
        };
        let (t0, c0) = (Instant::now(), tsc.now());
        std::thread::sleep(Duration::from_millis(30));
        let (wall, c1) = (t0.elapsed(), tsc.now());
        let counted = tsc.duration(c1 - c0).as_secs_f64();
        let ratio = counted / wall.as_secs_f64();
        assert!((0.9..1.1).contains(&ratio), "tsc/instant = {ratio}");
        assert!(tsc.overhead() < Duration::from_micros(1));
    }
}
