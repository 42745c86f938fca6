//! The measurements behind `perfkit betree bench`: the reference note's
//! benchmark as data: the plain, iterate-all and
//! iterate-next searches run interleaved on every event, timed per event
//! and per block of events; a further `next` pass per event times each
//! cooperative slice (kept out of the per-event times); then the longest slices
//! replayed to tell the search's own time from the machine's stalls. The
//! caller renders.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use betree::{Error, Event, Index, Result, Schema, SearchStep, reference};
use hdrhistogram::Histogram;

use perfkit_measure::{clock, latency_histogram, record};

pub mod atree;
pub mod report;
pub mod sweep;
mod throughput;

pub use throughput::{BATCH, CommandPath, Throughput, ThroughputRow, throughput};

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
pub struct ModeDiff {
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
    pub comparisons: [ModeDiff; 2],
    /// Wall time of `search_batch` over all events, nanoseconds.
    pub batch_ns: u64,
    /// Total matches found (identical in every mode, checked).
    pub matches: u64,
    /// Total candidates the selection chose for evaluation (counted in an
    /// untimed search of every event): beside `matches`, how much the
    /// index prunes.
    pub candidates: u64,
    /// The `next` mode's slices longer than [`Options::long_slice_ns`], the
    /// longest [`Options::long_slices_kept`] of them, in event order.
    pub long_slices: Vec<LongSlice>,
    /// How many slices were longer than [`Options::long_slice_ns`] (kept
    /// or not).
    pub over_threshold: u64,
    /// The longest slice not in `long_slices`, nanoseconds.
    pub unkept_max_ns: u64,
}

/// What [`run`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Reductions per `search_next` call of the `next` mode.
    pub budget: u64,
    /// Events per block of the per-block comparison (0 counts as 1).
    pub block: usize,
    /// Events searched in every mode first, unrecorded.
    pub warmup: usize,
    /// Slices of the `next` mode longer than this (wall time, nanoseconds)
    /// are remembered for [`replay`].
    pub long_slice_ns: u64,
    /// At most this many of them, the longest.
    pub long_slices_kept: usize,
}

/// How many times each long slice is replayed by default: enough that
/// their least is stable (one slice's replays spread by about 30 %).
pub const REPLAYS: usize = 5;

impl Default for Options {
    /// `perfkit betree bench`'s defaults. Up to 1,000 slices over 50 µs
    /// are kept: room for every one in a 5,000-event run on the 2-vCPU
    /// development VM under load (570-670 were).
    fn default() -> Options {
        Options {
            budget: 2000,
            block: 1000,
            warmup: 50,
            long_slice_ns: 50_000,
            long_slices_kept: 1000,
        }
    }
}

impl Options {
    /// The short run of `perfkit bench`'s betree part: blocks of 250
    /// events, 20 warm-up events.
    pub fn quick() -> Options {
        Options {
            block: 250,
            warmup: 20,
            ..Options::default()
        }
    }
}

/// One `next`-mode slice, identified so that it can be run again: the
/// search of one event is deterministic, so the same event, budget and
/// slice number are the same work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LongSlice {
    /// Position of the event in the events given to [`run`].
    pub event: usize,
    /// Which `search_next` call of that event's search, from 0.
    pub slice: usize,
    /// Reductions the call spent.
    pub reductions: u64,
    /// Wall time of the slice in the timed pass, nanoseconds.
    pub ns: u64,
}

/// The order of the three modes on event `i` (0 `std`, 1 `all`, 2
/// `next`): rotated per event so that no mode always runs first, on caches
/// the previous event left, or last.
fn mode_order(i: usize) -> [usize; 3] {
    [i % 3, (i + 1) % 3, (i + 2) % 3]
}

/// A search [`run`] makes of each event: one of the three modes (see
/// [`mode_order`]) timed whole, or the `next` mode's pass timed per slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    Timed(usize),
    Sliced,
}

/// The searches [`run`] makes of event `i`, in the order it makes them: the
/// three modes timed whole, then the sliced pass. [`replay`] repeats them
/// to leave caches and predictors as `run` left them.
fn passes(i: usize) -> [Pass; 4] {
    let [a, b, c] = mode_order(i).map(Pass::Timed);
    [a, b, c, Pass::Sliced]
}

/// One slice of a `next`-mode search (one `search_next` call), as
/// [`each_slice`] saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slice {
    /// Which call of the search, from 0.
    no: usize,
    /// Reductions the call spent.
    reductions: u64,
    /// Its time on the clock given to [`each_slice`].
    ns: u64,
}

/// Steps the `next`-mode search of `ev` with `budget` one slice at a time,
/// timing each on `clock` (nanoseconds), and hands each slice to `f`, which
/// may stop the search with [`ControlFlow::Break`]. Returns the matching ids
/// when the search finished, `None` when `f` stopped it before.
///
/// Every pass of this module that times slices steps the search here, so
/// they all time the same thing: a slice runs from the clock read just
/// before its `search_next` call to the one just after it, and slice 0 also
/// counts `search_iter` (validating the event and sizing the memo), which is
/// part of the work before the first yield, as in [`Index::search_async`].
/// `f`, and so the measurement's own bookkeeping, runs between the two
/// reads that end one slice and start the next.
fn each_slice(
    index: &Index,
    ev: &Event,
    budget: u64,
    mut clock: impl FnMut() -> u64,
    mut f: impl FnMut(Slice) -> ControlFlow<()>,
) -> Result<Option<Vec<u64>>> {
    let mut start = clock();
    let mut it = index.search_iter(ev)?;
    let mut no = 0;
    let mut spent = 0;
    loop {
        let step = index.search_next(&mut it, budget);
        let ns = clock().saturating_sub(start);
        let flow = f(Slice {
            no,
            reductions: it.reductions() - spent,
            ns,
        });
        if let SearchStep::Done(ids) = step {
            return Ok(Some(ids));
        }
        if flow.is_break() {
            return Ok(None);
        }
        spent = it.reductions();
        no += 1;
        start = clock();
    }
}

/// Wall time in nanoseconds since the clock was made: the clock of the
/// slices of [`run`] and [`replay`].
fn wall_clock() -> impl FnMut() -> u64 {
    let base = Instant::now();
    move || base.elapsed().as_nanos() as u64
}

/// Searches `ev` in mode `m` (see [`mode_order`]), untimed.
fn search_in(index: &Index, ev: &Event, m: usize, budget: u64) -> Result<Vec<u64>> {
    Ok(match m {
        0 => index.search(ev)?,
        1 => index.search_all(index.search_iter(ev)?),
        _ => {
            let mut it = index.search_iter(ev)?;
            loop {
                if let SearchStep::Done(ids) = index.search_next(&mut it, budget) {
                    break ids;
                }
            }
        }
    })
}

/// The candidates the selection chooses for `ev`, from a search of its own
/// (untimed).
fn candidates_of(index: &Index, ev: &Event) -> Result<u64> {
    let mut it = index.search_iter(ev)?;
    let step = index.search_next(&mut it, u64::MAX);
    debug_assert!(
        matches!(step, SearchStep::Done(_)),
        "an unbounded step ends"
    );
    Ok(it.candidates() as u64)
}

/// The longest slices over a threshold, kept in a bounded min-heap.
struct Longest {
    threshold_ns: u64,
    keep: usize,
    heap: BinaryHeap<Reverse<(u64, LongSlice)>>,
    over: u64,
    unkept_max_ns: u64,
}

impl Longest {
    fn offer(&mut self, s: LongSlice) {
        if s.ns <= self.threshold_ns {
            self.unkept_max_ns = self.unkept_max_ns.max(s.ns);
            return;
        }
        self.over += 1;
        self.heap.push(Reverse((s.ns, s)));
        if self.heap.len() > self.keep {
            let Reverse((ns, _)) = self.heap.pop().expect("over capacity, so not empty");
            self.unkept_max_ns = self.unkept_max_ns.max(ns);
        }
    }
}

/// Runs the benchmark. The three modes run one after another on each event,
/// in an order that rotates with the event, and must agree; `search_batch`
/// runs afterwards over all events and must agree too. The first
/// `opts.warmup` events are searched in every mode first, unrecorded.
pub fn run(index: &Index, events: &[Event], opts: Options) -> Result<BenchReport> {
    let Options {
        budget,
        block,
        warmup,
        ..
    } = opts;
    let block = block.max(1);
    for ev in events.iter().take(warmup) {
        for m in 0..3 {
            search_in(index, ev, m, budget)?;
        }
    }
    let mut longest = Longest {
        threshold_ns: opts.long_slice_ns,
        keep: opts.long_slices_kept,
        heap: BinaryHeap::new(),
        over: 0,
        unkept_max_ns: 0,
    };
    let names = ["std", "all", "next"];
    let mut modes = names.map(|name| ModeStats {
        name,
        per_event: latency_histogram(),
        blocks_ns: Vec::new(),
        max_slice_ns: 0,
        slices: latency_histogram(),
        total_ns: 0,
    });
    let mut block_acc = [0u64; 3];
    let mut matches = 0u64;
    let mut candidates = 0u64;
    let mut expected = Vec::with_capacity(events.len());
    for (i, ev) in events.iter().enumerate() {
        let mut results: [Option<Vec<u64>>; 3] = [None, None, None];
        let mut sliced = None;
        for pass in passes(i) {
            match pass {
                Pass::Timed(m) => {
                    // The modes are timed bare: one clock pair around the
                    // whole search, as a caller that yields between slices
                    // would see it.
                    let t = Instant::now();
                    let ids = search_in(index, ev, m, budget)?;
                    let ns = t.elapsed().as_nanos() as u64;
                    let _ = modes[m].per_event.record(ns.max(1));
                    modes[m].total_ns += ns;
                    block_acc[m] += ns;
                    results[m] = Some(ids);
                }
                Pass::Sliced => {
                    // The time between yields, in a pass of its own: two
                    // clock reads, a histogram record and the long-slice
                    // bookkeeping per slice are the measurement's cost, not
                    // the search's, and inside the timed `next` mode they
                    // would add ~1 % to its penalty.
                    let next = &mut modes[2];
                    sliced = each_slice(index, ev, budget, wall_clock(), |s| {
                        next.max_slice_ns = next.max_slice_ns.max(s.ns);
                        let _ = next.slices.record(s.ns.max(1));
                        longest.offer(LongSlice {
                            event: i,
                            slice: s.no,
                            reductions: s.reductions,
                            ns: s.ns,
                        });
                        ControlFlow::Continue(())
                    })?;
                }
            }
        }
        let sliced = sliced.expect("the sliced pass runs to the end");
        if results[2].as_ref() != Some(&sliced) {
            return Err(Error::Event(format!(
                "event {}: the sliced next pass disagrees with the timed one",
                i + 1
            )));
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
        candidates += candidates_of(index, ev)?;
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
    let mut long_slices: Vec<LongSlice> = longest.heap.into_iter().map(|r| r.0.1).collect();
    long_slices.sort_unstable();
    Ok(BenchReport {
        events: events.len(),
        block,
        budget,
        modes,
        comparisons,
        batch_ns,
        matches,
        candidates,
        long_slices,
        over_threshold: longest.over,
        unkept_max_ns: longest.unkept_max_ns,
    })
}

/// One long slice and its replays, from [`replay`].
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The slice as the timed pass saw it.
    pub slice: LongSlice,
    /// Wall time of each replay, nanoseconds, in the order they ran.
    pub replays_ns: Vec<u64>,
}

impl Replayed {
    /// The least time this work took: the minimum over the timed pass and
    /// every replay, all of them runs of the same work.
    pub fn min_ns(&self) -> u64 {
        self.replays_ns
            .iter()
            .copied()
            .fold(self.slice.ns, u64::min)
    }

    /// The median of the replays (the upper one of an even count), or the
    /// timed pass's time when there were none.
    pub fn median_ns(&self) -> u64 {
        if self.replays_ns.is_empty() {
            self.slice.ns
        } else {
            median(&self.replays_ns)
        }
    }
}

/// The median of CPU or wall nanoseconds (the upper one of an even count;
/// 0 for none).
pub(crate) fn median(v: &[u64]) -> u64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Runs each of `run`'s long slices again `replays` times, with `run`'s
/// budget (taking both from the report, so they cannot mismatch), and times
/// it the way [`run`] did (wall time, stepped by the same code: from just
/// before the `search_next` call, or before `search_iter` for slice 0, to
/// just after it).
///
/// A slice's time is the search's own work plus whatever the machine did
/// meanwhile (interrupts, preemption, a hypervisor's exits), and the second
/// part only adds. The work is deterministic, so the least time over
/// several runs of the same slice estimates the first part. To keep those
/// runs like the original, each replay first repeats what ran before the
/// slice in [`run`]: the previous event in all three modes, this event's
/// modes that came before `next`, and `next`'s earlier slices, so caches
/// and branch predictors hold what they held the first time. The replays go
/// round-robin over all slices, `replays` rounds, so one slice's replays
/// are spread over the whole phase rather than back to back, and a stall
/// of the machine that lasts a while hits few of them.
///
/// Each replay checks that it did the same work: the slice is reached
/// (the search has not finished before it) and spends the recorded
/// reductions; otherwise an [`Error::Event`] (the search would not be
/// deterministic, a bug).
pub fn replay(
    index: &Index,
    events: &[Event],
    run: &BenchReport,
    replays: usize,
) -> Result<Vec<Replayed>> {
    let budget = run.budget;
    let mut out: Vec<Replayed> = run
        .long_slices
        .iter()
        .map(|&slice| Replayed {
            slice,
            replays_ns: Vec::with_capacity(replays),
        })
        .collect();
    for _ in 0..replays {
        for r in &mut out {
            let ns = replay_one(index, events, budget, &r.slice)?;
            r.replays_ns.push(ns);
        }
    }
    Ok(out)
}

fn replay_one(index: &Index, events: &[Event], budget: u64, s: &LongSlice) -> Result<u64> {
    let ev = events.get(s.event).ok_or_else(|| {
        Error::Event(format!("replay: event {} of {}", s.event + 1, events.len()))
    })?;
    // What `run` did before this slice: every search of the previous
    // event, then this event's up to the sliced pass, whose earlier slices
    // run as they did there.
    if let Some(prev) = s.event.checked_sub(1) {
        for pass in passes(prev) {
            match pass {
                Pass::Timed(m) => drop(search_in(index, &events[prev], m, budget)?),
                Pass::Sliced => drop(each_slice(
                    index,
                    &events[prev],
                    budget,
                    wall_clock(),
                    |_| ControlFlow::Continue(()),
                )?),
            }
        }
    }
    let mut found = None;
    let mut last = 0;
    for pass in passes(s.event) {
        match pass {
            Pass::Timed(m) => drop(search_in(index, ev, m, budget)?),
            Pass::Sliced => drop(each_slice(index, ev, budget, wall_clock(), |x| {
                last = x.no;
                if x.no < s.slice {
                    return ControlFlow::Continue(());
                }
                found = Some(x);
                ControlFlow::Break(())
            })?),
        }
    }
    let Some(x) = found else {
        return Err(Error::Event(format!(
            "replay of event {}: the search finished at slice {last}, before slice {}",
            s.event + 1,
            s.slice
        )));
    };
    if x.reductions != s.reductions {
        return Err(Error::Event(format!(
            "replay of event {} slice {}: {} reductions, the timed pass spent {}",
            s.event + 1,
            s.slice,
            x.reductions,
            s.reductions
        )));
    }
    Ok(x.ns)
}

/// CPU time of the `next` mode's slices, from [`slice_cpu`].
#[derive(Debug, Clone)]
pub struct SliceCpu {
    /// CPU time of the calling thread per slice (one `search_next` call;
    /// slice 0 also counts `search_iter`, as in [`run`]), nanoseconds.
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
    let mut slices = latency_histogram();
    let mut max_ns = 0;
    for ev in events {
        each_slice(index, ev, budget, &thread_cpu, |s| {
            max_ns = max_ns.max(s.ns);
            let _ = slices.record(s.ns.max(1));
            ControlFlow::Continue(())
        })?;
    }
    Ok(SliceCpu { slices, max_ns })
}

/// Everything the reference benchmark measures: [`run`], [`slice_cpu`],
/// [`control_loop`] and [`replay`] together.
#[derive(Debug, Clone)]
pub struct Measured {
    /// The three modes, per event and per slice.
    pub run: BenchReport,
    /// The `next` mode's slices on the thread's CPU clock.
    pub cpu: SliceCpu,
    /// [`control_loop`] against the CPU pass's slices.
    pub control: Histogram<u64>,
    /// The options it ran with.
    pub opts: Options,
    /// How many times each long slice was replayed.
    pub replays: usize,
    /// The long slices, replayed.
    pub replayed: Vec<Replayed>,
}

/// Runs the benchmark, the CPU-clock pass, the control loop and the
/// replays.
pub fn measure_all(
    index: &Index,
    events: &[Event],
    opts: Options,
    replays: usize,
) -> Result<Measured> {
    let run = run(index, events, opts)?;
    let cpu = slice_cpu(index, events, opts.budget, || {
        clock::thread_cpu().as_nanos() as u64
    })?;
    let control = control_loop(&cpu.slices);
    let replayed = replay(index, events, &run, replays)?;
    Ok(Measured {
        run,
        cpu,
        control,
        opts,
        replays,
        replayed,
    })
}

/// The machine's own stalls: a loop of fixed work as long as the median
/// slice, run as many times as there were slices. Its tail (interrupts,
/// hypervisor exits, preemption) is what any code of that length sees
/// here, so the slices' tail is read against it.
pub fn control_loop(slices: &Histogram<u64>) -> Histogram<u64> {
    let target = Duration::from_nanos(slices.value_at_quantile(0.5).max(1));
    // Calibrate the work per loop on the thread's CPU clock.
    let spin = |n: u64| {
        let mut x = 1u64;
        for i in 0..n {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
        }
        x
    };
    let probe = 100_000;
    let t = clock::thread_cpu();
    std::hint::black_box(spin(probe));
    let per = (clock::thread_cpu() - t).as_nanos().max(1) as f64 / probe as f64;
    let n = ((target.as_nanos() as f64 / per) as u64).max(1);
    let mut h = latency_histogram();
    for _ in 0..slices.len() {
        let t = Instant::now();
        std::hint::black_box(spin(n));
        record(&mut h, t.elapsed());
    }
    h
}

/// The reference workload of `perfkit bench`'s betree part, generated in
/// process: 5,000 expressions over 128 boolean parameters, 1,000 events.
pub struct Reference {
    /// The expressions, indexed.
    pub index: Index,
    /// The events.
    pub events: Vec<Event>,
    /// How long building the index took.
    pub build: Duration,
}

impl Reference {
    /// Generates the workload and times the index build.
    pub fn build() -> Result<Reference> {
        let params = 128;
        let exprs = reference::random_expressions(params, 5000, 1);
        let schema = Schema::boolean_params(params);
        let t = Instant::now();
        let mut index = Index::new(schema.clone());
        for (i, e) in exprs.iter().enumerate() {
            index.insert(i as u64 + 1, e)?;
        }
        let build = t.elapsed();
        let events = reference::random_events(params, 1000, 2)
            .iter()
            .map(|v| Event::from_bools(&schema, v))
            .collect::<Result<Vec<_>>>()?;
        Ok(Reference {
            index,
            events,
            build,
        })
    }
}

/// The betree part of `perfkit bench`: the [`Reference`] workload built
/// and measured with [`Options::quick`], its sections added to `rep` named
/// `betree: ...`. The error says which of the two steps failed.
pub fn default_workload(rep: &mut perfkit_report::Report) -> std::result::Result<(), crate::Error> {
    use crate::error::StepContext;
    let w = Reference::build().during("building the reference workload")?;
    let m = measure_all(&w.index, &w.events, Options::quick(), REPLAYS)
        .during("measuring the reference workload")?;
    report::benchmark(rep, &w.index, &m, w.build, "betree: ");
    Ok(())
}

fn compare(mode: &ModeStats, base: &ModeStats) -> ModeDiff {
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
    ModeDiff {
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

#[cfg(test)]
mod tests;
