//! The reference note's benchmark as data: the plain, iterate-all and
//! iterate-next searches run interleaved on every event, timed per event,
//! per block of events and per cooperative slice. The caller renders.

use std::time::Instant;

use hdrhistogram::Histogram;

use crate::coop::SearchStep;
use crate::event::Event;
use crate::index::Index;
use crate::{Error, Result};

/// Timings of one search mode.
#[derive(Debug, Clone)]
pub struct ModeStats {
    /// Mode name: `std`, `all` or `next`.
    pub name: &'static str,
    /// Per-event latency, nanoseconds.
    pub per_event: Histogram<u64>,
    /// Sum of per-event durations per block of events, nanoseconds.
    pub blocks_ns: Vec<u64>,
    /// Longest time between two yields (0 for non-cooperative modes).
    pub max_slice_ns: u64,
    /// Time between two yields, nanoseconds (empty for non-cooperative modes).
    pub slices: Histogram<u64>,
    /// Total time, nanoseconds.
    pub total_ns: u64,
}

/// The per-block relative difference of a mode against `std`
/// (`(mode - std) / std`; negative is better).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// Smallest relative difference.
    pub min: f64,
    /// Largest relative difference.
    pub max: f64,
    /// Median.
    pub median: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Share of blocks where the mode was faster than `std`, 0..=1.
    pub better_share: f64,
    /// Total time of the mode over total time of `std`.
    pub total_ratio: f64,
}

/// Result of [`run`].
#[derive(Debug, Clone)]
pub struct BenchReport {
    /// Events searched per mode.
    pub events: usize,
    /// Events per block.
    pub block: usize,
    /// Budget of the `next` mode, reductions.
    pub budget: u64,
    /// The three modes: `std`, `all`, `next`.
    pub modes: [ModeStats; 3],
    /// `all` and `next` against `std`.
    pub comparisons: [Comparison; 2],
    /// Wall time of `search_batch` over all events, nanoseconds.
    pub batch_ns: u64,
    /// Total matches found (identical in every mode, checked).
    pub matches: u64,
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds")
}

/// Runs the benchmark. The three modes run one after another on each event,
/// in an order that rotates with the event, and must agree; `search_batch`
/// runs afterwards over all events and must agree too. The first `warmup`
/// events are searched in every mode first, unrecorded.
pub fn run(
    index: &Index,
    events: &[Event],
    budget: u64,
    block: usize,
    warmup: usize,
) -> Result<BenchReport> {
    let block = block.max(1);
    for ev in events.iter().take(warmup) {
        let _ = index.search(ev)?;
        let _ = index.search_all(index.search_iter(ev)?);
        let mut it = index.search_iter(ev)?;
        while index.search_next(&mut it, budget) == SearchStep::Continue {}
    }
    let names = ["std", "all", "next"];
    let mut modes = names.map(|name| ModeStats {
        name,
        per_event: hist(),
        blocks_ns: Vec::new(),
        max_slice_ns: 0,
        slices: hist(),
        total_ns: 0,
    });
    let mut block_acc = [0u64; 3];
    let mut matches = 0u64;
    let mut expected = Vec::with_capacity(events.len());
    for (i, ev) in events.iter().enumerate() {
        let mut results: [Option<Vec<u64>>; 3] = [None, None, None];
        for k in 0..3 {
            let m = (i + k) % 3;
            let t = Instant::now();
            let ids = match m {
                0 => index.search(ev)?,
                1 => {
                    let it = index.search_iter(ev)?;
                    index.search_all(it)
                }
                _ => {
                    let mut it = index.search_iter(ev)?;
                    let mut last = t;
                    loop {
                        let step = index.search_next(&mut it, budget);
                        let now = Instant::now();
                        let slice = (now - last).as_nanos() as u64;
                        last = now;
                        modes[2].max_slice_ns = modes[2].max_slice_ns.max(slice);
                        let _ = modes[2].slices.record(slice.max(1));
                        if let SearchStep::Done(ids) = step {
                            break ids;
                        }
                    }
                }
            };
            let ns = t.elapsed().as_nanos() as u64;
            let _ = modes[m].per_event.record(ns.max(1));
            modes[m].total_ns += ns;
            block_acc[m] += ns;
            results[m] = Some(ids);
        }
        let [a, b, c] = results.map(|r| r.expect("every mode ran"));
        if a != b || a != c {
            return Err(Error::Event(format!(
                "event {}: the search modes disagree (std {} ids, all {}, next {})",
                i + 1,
                a.len(),
                b.len(),
                c.len()
            )));
        }
        matches += a.len() as u64;
        expected.push(a);
        if (i + 1) % block == 0 || i + 1 == events.len() {
            for m in 0..3 {
                modes[m].blocks_ns.push(std::mem::take(&mut block_acc[m]));
            }
        }
    }
    let t = Instant::now();
    let batch = index.search_batch(events)?;
    let batch_ns = t.elapsed().as_nanos() as u64;
    if batch != expected {
        return Err(Error::Event("search_batch disagrees with search".into()));
    }
    let comparisons = [compare(&modes[1], &modes[0]), compare(&modes[2], &modes[0])];
    Ok(BenchReport {
        events: events.len(),
        block,
        budget,
        modes,
        comparisons,
        batch_ns,
        matches,
    })
}

/// CPU time of the `next` mode's slices, from [`slice_cpu`].
#[derive(Debug, Clone)]
pub struct SliceCpu {
    /// CPU time of the calling thread per slice (one `search_next` call),
    /// nanoseconds.
    pub slices: Histogram<u64>,
    /// The longest.
    pub max_ns: u64,
}

/// Runs the `next` mode over `events` again and times every slice on
/// `thread_cpu` (the calling thread's CPU clock, in nanoseconds, which the
/// caller supplies so this crate needs no platform code).
///
/// The wall time between yields that [`run`] reports also counts the time
/// the OS had the thread descheduled, which on a shared machine reaches
/// milliseconds whatever the search does; CPU time is what the search
/// itself held the executor for. It is a separate pass because a thread
/// CPU clock read is a system call (~0.2 µs here): two per slice inside
/// [`run`]'s timed `next` mode would add several percent to it and spoil
/// its comparison with `std`.
pub fn slice_cpu(
    index: &Index,
    events: &[Event],
    budget: u64,
    thread_cpu: impl Fn() -> u64,
) -> Result<SliceCpu> {
    let mut slices = hist();
    let mut max_ns = 0;
    for ev in events {
        let mut it = index.search_iter(ev)?;
        loop {
            let t = thread_cpu();
            let step = index.search_next(&mut it, budget);
            let ns = thread_cpu().saturating_sub(t);
            max_ns = max_ns.max(ns);
            let _ = slices.record(ns.max(1));
            if let SearchStep::Done(_) = step {
                break;
            }
        }
    }
    Ok(SliceCpu { slices, max_ns })
}

fn compare(mode: &ModeStats, base: &ModeStats) -> Comparison {
    let mut rel: Vec<f64> = mode
        .blocks_ns
        .iter()
        .zip(&base.blocks_ns)
        .map(|(&m, &b)| (m as f64 - b as f64) / (b.max(1) as f64))
        .collect();
    rel.sort_by(f64::total_cmp);
    let q = |p: f64| {
        if rel.is_empty() {
            0.0
        } else {
            rel[((rel.len() - 1) as f64 * p).round() as usize]
        }
    };
    Comparison {
        min: rel.first().copied().unwrap_or(0.0),
        max: rel.last().copied().unwrap_or(0.0),
        median: q(0.5),
        p99: q(0.99),
        better_share: if rel.is_empty() {
            0.0
        } else {
            rel.iter().filter(|r| **r < 0.0).count() as f64 / rel.len() as f64
        },
        total_ratio: mode.total_ns as f64 / base.total_ns.max(1) as f64,
    }
}
