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
    /// Each interleaved round's median, in the histogram's unit, in round
    /// order; empty where the measurement kept no rounds.
    pub rounds: Vec<u64>,
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
    /// How many times faster variant `i` is than the baseline (> 1 means
    /// faster); see [`Comparison::speedup_vs`].
    pub fn speedup(&self, i: usize) -> f64 {
        self.speedup_vs(0, i)
    }

    /// How many times faster variant `i` is than variant `base` (> 1 means
    /// faster): where both kept the same rounds, the median over the rounds
    /// of `base`'s median in the round over `i`'s, so a spell of the
    /// machine's load moves both sides of the ratio it enters; otherwise
    /// `base`'s median over `i`'s, of all their samples (where a spell that
    /// met one variant's share of a round and not the other's moves the
    /// ratio with it).
    pub fn speedup_vs(&self, base: usize, i: usize) -> f64 {
        let (b, v) = (&self.variants[base], &self.variants[i]);
        if !b.rounds.is_empty() && b.rounds.len() == v.rounds.len() {
            let mut ratios: Vec<f64> = b
                .rounds
                .iter()
                .zip(&v.rounds)
                .map(|(&b, &v)| b as f64 / (v as f64).max(1.0))
                .collect();
            ratios.sort_unstable_by(f64::total_cmp);
            return ratios[ratios.len() / 2];
        }
        let b = b.histogram.value_at_quantile(0.5) as f64;
        let v = v.histogram.value_at_quantile(0.5) as f64;
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
    /// Least wall time a variant's share of one round takes: a variant
    /// whose `per_run` operations would take less runs more of them (whole
    /// batches), as many as its calibration says fill this. Zero keeps
    /// `per_run` as it is.
    pub min_round: Duration,
}

/// The share of [`Rounds::min_round`] a variant's calibration runs (after
/// its warm-up, unmeasured, by the time its batches report) to learn its
/// pace.
const CALIBRATION_SHARE: u32 = 4;

/// Fewest batches a calibration runs: their median is its pace, so one
/// batch the thread was preempted in (or several, short of half) cannot
/// make the rounds shorter. Paced by the whole calibration's time, one
/// preemption early on asked a 2 µs scan for a few calls a round.
const CALIBRATION_BATCHES: usize = 9;

/// Most batches a calibration keeps (16 bytes each): for a fast
/// operation in small batches, a quarter of `min_round` was millions of
/// them (`fix bench --batch 1` on a 2 ns lookup: 40 MB), where a median
/// of this many already stands still.
const CALIBRATION_MOST_BATCHES: usize = 1 << 12;

/// Most operations a variant's round is raised to (so an operation timed
/// at nothing cannot ask for an endless round).
const MOST_PER_RUN: usize = 1 << 40;

/// The median time `op` reports for a batch of `batch` operations, over
/// a calibration of at least [`CALIBRATION_BATCHES`] batches and a
/// [`CALIBRATION_SHARE`]th of `min_round` of reported time; at most
/// [`CALIBRATION_MOST_BATCHES`], and at most `min_round` of wall time past
/// the fewest (an operation reporting nothing ends there).
fn batch_pace(op: &mut Op<'_>, batch: usize, min_round: Duration) -> Duration {
    let share = min_round / CALIBRATION_SHARE;
    let (mut times, mut reported, wall) = (Vec::new(), Duration::ZERO, Instant::now());
    while times.len() < CALIBRATION_BATCHES
        || (times.len() < CALIBRATION_MOST_BATCHES
            && reported < share
            && wall.elapsed() < min_round)
    {
        let d = op(batch);
        reported += d;
        times.push(d);
    }
    let middle = times.len() / 2;
    *times.select_nth_unstable(middle).1
}

/// Operations per round for a variant whose batches of `batch` take
/// `batch_time`: `per_run`, or more if `per_run` at that pace would take
/// less than `min_round`, in whole batches.
fn paced_per_run(per_run: usize, batch: usize, min_round: Duration, batch_time: Duration) -> usize {
    if min_round.is_zero() {
        return per_run;
    }
    let batches = min_round.as_nanos().div_ceil(batch_time.as_nanos().max(1));
    let wanted = usize::try_from(batches)
        .ok()
        .and_then(|b| b.checked_mul(batch))
        .unwrap_or(MOST_PER_RUN)
        .min(MOST_PER_RUN);
    per_run.max(wanted)
}

/// Runs the variants interleaved: every variant warms up (and, with a
/// [`Rounds::min_round`], learns its pace), then each of `runs` rounds
/// measures `per_run` operations (or enough to fill `min_round`) of every
/// variant in turn, so drift on a shared machine hits all of them alike.
/// Each batch of `batch` operations adds its mean per operation to the
/// variant's histogram with a count of `batch`.
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
    let mut hs: Vec<(Histogram<u64>, Duration, Vec<u64>)> = ops
        .iter()
        .map(|_| {
            (
                latency_histogram(),
                Duration::ZERO,
                Vec::with_capacity(runs),
            )
        })
        .collect();
    for (_, op) in &mut ops {
        let mut left = r.warmup;
        while left > 0 {
            let n = left.min(batch);
            op(n);
            left -= n;
        }
    }
    // Each variant's pace, learnt over a share of min_round: a round of a
    // few microseconds (20,000 lookups of 2 ns in three rounds) is timed
    // while the caches and the clock are still settling, and one binary
    // read 17 ns in one process and 57 in the next.
    let per_run: Vec<usize> = ops
        .iter_mut()
        .map(|(_, op)| {
            if r.min_round.is_zero() {
                return r.per_run;
            }
            let pace = batch_pace(op, batch, r.min_round);
            paced_per_run(r.per_run, batch, r.min_round, pace)
        })
        .collect();
    for run in 0..runs {
        for (((_, op), (h, el, medians)), &per_run) in ops.iter_mut().zip(&mut hs).zip(&per_run) {
            let mut round = latency_histogram();
            let mut left = per_run;
            let t = Instant::now();
            while left > 0 {
                let n = left.min(batch);
                let d = op(n);
                // Rounded to the nearest ns (the histogram's unit), so
                // sub-10 ns operations are not biased down by truncation.
                let per = ((d.as_nanos() + n as u128 / 2) / n as u128).max(1) as u64;
                // saturating_record counts one; record_n adds the rest.
                round.saturating_record(per);
                let _ = round.record_n(per, n as u64 - 1);
                left -= n;
            }
            *el += t.elapsed();
            medians.push(round.value_at_quantile(0.5));
            let _ = h.add(&round);
        }
        after_run(run)?;
    }
    Ok(Comparison {
        title,
        variants: ops
            .into_iter()
            .zip(hs)
            .map(|((name, _), (histogram, elapsed, rounds))| Variant {
                name,
                histogram,
                elapsed,
                note: None,
                rounds,
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
/// (so a slow case still yields a median of several), and, with `odd`,
/// never stopping on an even count (so a median is one round's, not the
/// mean of two).
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
    /// Whether the measured rounds end on an odd count (within `rounds`).
    pub odd: bool,
}

impl Repeat {
    /// Calls `round(measured)` per [`Repeat`]: `false` for the warm-up
    /// rounds, `true` for the measured ones. Returns how many rounds were
    /// measured; the first error ends the measurement.
    pub fn run<E>(&self, mut round: impl FnMut(bool) -> Result<(), E>) -> Result<u64, E> {
        for _ in 0..self.warmup {
            round(false)?;
        }
        let mut rounds = self.measured();
        while rounds.another() {
            round(true)?;
        }
        Ok(rounds.done())
    }

    /// The measured rounds, counted one at a time from now, for a caller
    /// whose round is not a closure: `while rounds.another() { … }` (the
    /// warm-up is the caller's).
    pub fn measured(&self) -> Repeating {
        Repeating {
            repeat: *self,
            done: 0,
            start: Instant::now(),
        }
    }

    /// Whether another measured round starts after `done` of them and
    /// `elapsed` since the first.
    fn wants(&self, done: u64, elapsed: Duration) -> bool {
        done < self.rounds.max(1)
            && (done < self.min_rounds.max(1)
                || elapsed < self.time
                || (self.odd && done.is_multiple_of(2)))
    }
}

/// The measured rounds of a [`Repeat`], counted as they go
/// ([`Repeat::measured`]).
#[derive(Debug, Clone)]
pub struct Repeating {
    repeat: Repeat,
    done: u64,
    start: Instant,
}

impl Repeating {
    /// Whether another round runs (and counts it).
    pub fn another(&mut self) -> bool {
        let more = self.repeat.wants(self.done, self.start.elapsed());
        self.done += u64::from(more);
        more
    }

    /// Rounds counted so far.
    pub fn done(&self) -> u64 {
        self.done
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
            odd: false,
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

    /// With `odd`, a count the time would end on an even number runs one
    /// more, within the most rounds; the minimum and the cap still hold.
    #[test]
    fn odd_rounds_never_end_on_an_even_count() {
        let r = |rounds, min_rounds, time| Repeat {
            warmup: 0,
            rounds,
            min_rounds,
            time,
            odd: true,
        };
        let long = Duration::from_secs(2);
        let short = Duration::from_millis(250);
        let time = Duration::from_secs(1);
        assert!(r(21, 3, time).wants(2, long));
        assert!(!r(21, 3, time).wants(3, long));
        // Even: one more, so the median is one round's.
        assert!(r(21, 3, time).wants(4, long));
        assert!(r(21, 3, time).wants(5, short));
        assert!(!r(21, 3, time).wants(21, short));
        assert!(!r(21, 23, time).wants(21, long));
        // Without `odd` an even count may end it.
        assert!(
            !Repeat {
                odd: false,
                ..r(21, 3, time)
            }
            .wants(4, long)
        );
        // Counted one at a time: no time at all, an odd minimum.
        let mut rounds = r(21, 4, Duration::ZERO).measured();
        while rounds.another() {}
        assert_eq!(rounds.done(), 5);
    }

    #[test]
    fn an_error_ends_the_rounds() {
        let r = Repeat {
            warmup: 1,
            rounds: 10,
            min_rounds: 10,
            time: Duration::ZERO,
            odd: false,
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
            min_round: Duration::ZERO,
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

    /// A ratio pairs the variants round by round: here each is faster in
    /// two rounds of three, which the paired ratio says (2x), where the
    /// medians of all their samples are equal.
    #[test]
    fn a_ratio_is_the_median_of_the_rounds_ratios() {
        let r = Rounds {
            warmup: 0,
            runs: 3,
            per_run: 40,
            batch: 10,
            min_round: Duration::ZERO,
        };
        // Four batches a round: the call count says which round it is.
        let paced = |per_round: [u64; 3]| -> Op<'_> {
            let mut calls = 0;
            Box::new(move |n| {
                let round = calls / 4;
                calls += 1;
                Duration::from_nanos(per_round[round] * n as u64)
            })
        };
        let mut c = interleave(
            &r,
            "t".into(),
            vec![
                ("base".into(), paced([100, 200, 400])),
                ("row".into(), paced([50, 400, 200])),
            ],
        );
        assert_eq!(c.variants[0].rounds, [100, 200, 400]);
        assert_eq!(c.variants[1].rounds, [50, 400, 200]);
        assert_eq!(c.speedup(1), 2.0);
        assert_eq!(c.speedup_vs(1, 0), 0.5);
        assert_eq!(c.speedup(0), 1.0);
        // Without rounds (or with unequal ones), the medians of all samples.
        c.variants[1].rounds.pop();
        assert_eq!(c.speedup(1), 1.0);
    }

    /// A variant too fast to fill `min_round` with `per_run` operations
    /// runs more of them, in whole batches, as its batches' median time
    /// asks; a slow one keeps `per_run`; a batch the calibration was
    /// preempted in does not shorten the rounds. The operations report
    /// their time without spending it, so the counts are exact.
    #[test]
    fn a_fast_variant_runs_enough_operations_to_fill_its_round() {
        let r = Rounds {
            warmup: 0,
            runs: 2,
            per_run: 30,
            batch: 10,
            min_round: Duration::from_millis(8),
        };
        let calls = std::cell::RefCell::new([0usize; 3]);
        // 1 µs an operation: batches of 10 µs, so 8 ms asks for 800 of them.
        let fast: Op<'_> = Box::new(|n| {
            calls.borrow_mut()[0] += n;
            Duration::from_micros(n as u64)
        });
        // 1 ms an operation: 30 take 30 ms, already more than the round.
        let slow: Op<'_> = Box::new(|n| {
            calls.borrow_mut()[1] += n;
            Duration::from_millis(n as u64)
        });
        // As fast, but its first batch "preempted" for 50 ms.
        let hiccup: Op<'_> = Box::new(|n| {
            let first = calls.borrow()[2] == 0;
            calls.borrow_mut()[2] += n;
            if first {
                Duration::from_millis(50)
            } else {
                Duration::from_micros(n as u64)
            }
        });
        let c = interleave(
            &r,
            "t".into(),
            vec![
                ("fast".into(), fast),
                ("slow".into(), slow),
                ("hiccup".into(), hiccup),
            ],
        );
        let measured: Vec<u64> = c.variants.iter().map(|v| v.histogram.len()).collect();
        assert_eq!(measured, [2 * 8_000, 2 * 30, 2 * 8_000]);
        // The calibrations ran on top, unmeasured: at least their batches.
        let calls = calls.borrow();
        assert!(
            calls[0] >= 2 * 8_000 + CALIBRATION_BATCHES * 10,
            "{calls:?}"
        );
        assert_eq!(calls[1], 2 * 30 + CALIBRATION_BATCHES * 10, "{calls:?}");
    }

    /// A calibration of a fast operation stops at its most batches, well
    /// before a quarter of the round in reported time (a million batches
    /// here), and its pace is still their median.
    #[test]
    fn a_fast_calibration_keeps_a_bounded_sample() {
        let mut calls = 0usize;
        let mut op: Op<'_> = Box::new(|_| {
            calls += 1;
            Duration::from_nanos(if calls.is_multiple_of(100) { 500 } else { 2 })
        });
        let pace = batch_pace(&mut op, 1, Duration::from_millis(8));
        drop(op);
        assert_eq!(calls, CALIBRATION_MOST_BATCHES);
        assert_eq!(pace, Duration::from_nanos(2));
    }

    #[test]
    fn the_pace_rounds_up_to_whole_batches_and_never_below_per_run() {
        let (ms, us) = (Duration::from_millis, Duration::from_micros);
        // Batches of 64 in 640 µs: 10 ms wants 16 of them.
        assert_eq!(paced_per_run(50, 64, ms(10), us(640)), 1_024);
        // Already long enough.
        assert_eq!(paced_per_run(5_000, 64, ms(10), us(640)), 5_000);
        // No floor asked: per_run.
        assert_eq!(paced_per_run(50, 64, Duration::ZERO, us(640)), 50);
        // A pace of nothing counts as 1 ns a batch, and is capped.
        assert_eq!(paced_per_run(50, 1, ms(10), Duration::ZERO), 10_000_000);
        assert_eq!(
            paced_per_run(50, 1 << 20, Duration::from_secs(10), Duration::ZERO),
            MOST_PER_RUN
        );
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
            min_round: Duration::ZERO,
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
