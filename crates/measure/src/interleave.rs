//! The one comparison model and the one interleaving runner: variants of
//! the same work measured in turn, round after round, into histograms of
//! nanoseconds per operation.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::latency_histogram;

/// One measured variant.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Name, e.g. `avx512vbmi2`.
    pub name: String,
    /// Nanoseconds per operation.
    pub histogram: Histogram<u64>,
    /// Wall time spent measuring.
    pub elapsed: Duration,
    /// Extra facts (flags in effect, fallbacks, placement).
    pub note: Option<String>,
}

/// A before/after (or A/B/C…) comparison.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Section title, e.g. `scan NewOrderSingle (211 B)`.
    pub title: String,
    /// The variants, the baseline first.
    pub variants: Vec<Variant>,
    /// Free-text notes.
    pub notes: Vec<String>,
    /// Whether the variants are alternatives to compare with the first
    /// (false when they are simply different inputs).
    pub compare: bool,
    /// A second variant every row is also compared with (e.g. tokio for
    /// the transports, whose first variant is blocking I/O).
    pub also_vs: Option<usize>,
}

impl Comparison {
    /// Median of the baseline divided by the median of variant `i` (> 1
    /// means variant `i` is faster).
    pub fn speedup(&self, i: usize) -> f64 {
        self.speedup_vs(0, i)
    }

    /// Median of variant `base` divided by the median of variant `i` (> 1
    /// means variant `i` is faster).
    pub fn speedup_vs(&self, base: usize, i: usize) -> f64 {
        let b = self.variants[base].histogram.value_at_quantile(0.5) as f64;
        let v = self.variants[i].histogram.value_at_quantile(0.5) as f64;
        b / v.max(1.0)
    }
}

/// A variant under measurement: runs `n` operations and returns the time
/// spent on the operations proper (set-up between batches excluded).
pub type Op<'a> = Box<dyn FnMut(usize) -> Duration + 'a>;

/// How [`interleave`] spreads its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rounds {
    /// Unmeasured operations per variant before the first round.
    pub warmup: usize,
    /// Interleaved rounds.
    pub runs: usize,
    /// Measured operations per variant in each round.
    pub per_run: usize,
    /// Operations per clock read.
    pub batch: usize,
}

/// Runs the variants interleaved: every variant warms up, then each of
/// `runs` rounds measures `per_run` operations of every variant in turn, so
/// drift on a shared machine hits all of them alike. Each batch of `batch`
/// operations adds its mean per operation to the variant's histogram with
/// a count of `batch`.
pub fn interleave(r: &Rounds, title: String, ops: Vec<(String, Op<'_>)>) -> Comparison {
    interleave_with(r, title, ops, |_| Ok::<(), std::convert::Infallible>(()))
        .unwrap_or_else(|never| match never {})
}

/// [`interleave`], calling `after_run(k)` (outside every timing) once run
/// `k` of every variant is done; its first error ends the measurement.
pub fn interleave_with<E>(
    r: &Rounds,
    title: String,
    mut ops: Vec<(String, Op<'_>)>,
    mut after_run: impl FnMut(usize) -> std::result::Result<(), E>,
) -> std::result::Result<Comparison, E> {
    let batch = r.batch.max(1);
    let runs = r.runs.max(1);
    let mut hs: Vec<(Histogram<u64>, Duration)> = ops
        .iter()
        .map(|_| (latency_histogram(), Duration::ZERO))
        .collect();
    for (_, op) in &mut ops {
        let mut left = r.warmup;
        while left > 0 {
            let n = left.min(batch);
            op(n);
            left -= n;
        }
    }
    let per_run = r.per_run;
    for run in 0..runs {
        for ((_, op), (h, el)) in ops.iter_mut().zip(&mut hs) {
            let mut left = per_run;
            let t = Instant::now();
            while left > 0 {
                let n = left.min(batch);
                let d = op(n);
                // Rounded to the nearest ns (the histogram's unit), so
                // sub-10 ns operations are not biased down by truncation.
                let per = ((d.as_nanos() + n as u128 / 2) / n as u128).max(1) as u64;
                h.saturating_record(per);
                // saturating_record counted one; add the rest of the batch.
                let _ = h.record_n(per, n as u64 - 1);
                left -= n;
            }
            *el += t.elapsed();
        }
        after_run(run)?;
    }
    Ok(Comparison {
        title,
        variants: ops
            .into_iter()
            .zip(hs)
            .map(|((name, _), (histogram, elapsed))| Variant {
                name,
                histogram,
                elapsed,
                note: None,
            })
            .collect(),
        notes: Vec::new(),
        compare: true,
        also_vs: None,
    })
}

/// How long a measurement that repeats whole rounds runs: `warmup`
/// unmeasured rounds, then measured ones until `rounds` are done or `time`
/// has passed, whichever comes first, but never fewer than `min_rounds`
/// (so a slow case still yields a median of several).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    /// Unmeasured rounds first.
    pub warmup: u64,
    /// Most measured rounds (at least one is run).
    pub rounds: u64,
    /// Fewest measured rounds, whatever the time.
    pub min_rounds: u64,
    /// Wall time after which no further measured round starts.
    pub time: Duration,
}

impl Repeat {
    /// Calls `round(measured)` per [`Repeat`]: `false` for the warm-up
    /// rounds, `true` for the measured ones. Returns how many rounds were
    /// measured; the first error ends the measurement.
    pub fn run<E>(&self, mut round: impl FnMut(bool) -> Result<(), E>) -> Result<u64, E> {
        for _ in 0..self.warmup {
            round(false)?;
        }
        let start = Instant::now();
        let mut n = 0;
        while n < self.rounds.max(1) && (n < self.min_rounds.max(1) || start.elapsed() < self.time)
        {
            round(true)?;
            n += 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(r: Repeat, each: Duration) -> (u64, u64, u64) {
        let (mut warm, mut measured) = (0, 0);
        let n = r
            .run(|m| {
                if m {
                    measured += 1;
                } else {
                    warm += 1;
                }
                std::thread::sleep(each);
                Ok::<(), ()>(())
            })
            .unwrap();
        (warm, measured, n)
    }

    #[test]
    fn repeat_stops_at_the_round_count_or_the_time_but_not_below_the_minimum() {
        let r = |rounds, min_rounds, time| Repeat {
            warmup: 2,
            rounds,
            min_rounds,
            time,
        };
        // Plenty of time: the round count stops it.
        assert_eq!(
            count(r(5, 1, Duration::from_secs(60)), Duration::ZERO),
            (2, 5, 5)
        );
        // No time at all: the minimum still runs.
        assert_eq!(count(r(100, 3, Duration::ZERO), Duration::ZERO), (2, 3, 3));
        // 5 ms rounds, 30 ms of time: stopped by the clock, well before 100.
        let (_, m, _) = count(
            r(100, 1, Duration::from_millis(30)),
            Duration::from_millis(5),
        );
        assert!((1..=8).contains(&m), "{m}");
        // At least one measured round even when none is asked for.
        assert_eq!(count(r(0, 0, Duration::ZERO), Duration::ZERO), (2, 1, 1));
    }

    #[test]
    fn an_error_ends_the_rounds() {
        let r = Repeat {
            warmup: 1,
            rounds: 10,
            min_rounds: 10,
            time: Duration::ZERO,
        };
        let mut calls = 0;
        let got = r.run(|m| {
            calls += 1;
            if m { Err("stop") } else { Ok(()) }
        });
        assert_eq!((got, calls), (Err("stop"), 2));
    }

    #[test]
    fn interleave_fills_every_variant_with_its_own_times() {
        let r = Rounds {
            warmup: 10,
            runs: 3,
            per_run: 40,
            batch: 10,
        };
        let slow: Op<'_> = Box::new(|n| Duration::from_nanos(500 * n as u64));
        let fast: Op<'_> = Box::new(|n| Duration::from_nanos(100 * n as u64));
        let c = interleave(
            &r,
            "t".into(),
            vec![("slow".into(), slow), ("fast".into(), fast)],
        );
        assert_eq!(c.variants.len(), 2);
        assert!(c.variants.iter().all(|v| v.histogram.len() == 120));
        assert_eq!(c.variants[0].histogram.value_at_quantile(0.5), 500);
        assert_eq!(c.variants[1].histogram.value_at_quantile(0.5), 100);
        assert!((c.speedup(1) - 5.0).abs() < 0.01);
    }

    /// The rounds alternate the variants: after the warm-up, every round
    /// runs each variant once, in order, so drift hits them alike.
    #[test]
    fn rounds_run_the_variants_in_turn() {
        let r = Rounds {
            warmup: 0,
            runs: 3,
            per_run: 1,
            batch: 1,
        };
        let order = std::cell::RefCell::new(Vec::new());
        let op = |name: &'static str| -> Op<'_> {
            let order = &order;
            Box::new(move |_| {
                order.borrow_mut().push(name);
                Duration::from_nanos(1)
            })
        };
        interleave(
            &r,
            "t".into(),
            vec![("a".into(), op("a")), ("b".into(), op("b"))],
        );
        assert_eq!(*order.borrow(), ["a", "b", "a", "b", "a", "b"]);
    }
}
