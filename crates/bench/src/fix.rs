//! The measurements behind `perfkit fix bench`, returned as data (HDR
//! histograms of nanoseconds per operation) for the binary to render:
//! fixcore's hot path here, fixcore's parser beside QuickFIX's in
//! [`quickfix`], whole session engines over loopback in [`session`], and
//! the whole command's parts into one report in [`suite`].
//!
//! Every comparison runs its variants interleaved in one process: each of
//! `runs` rounds measures a slice of the iterations of every variant in
//! turn, so drift on a shared machine hits all of them alike.
//!
//! Timing: operations far shorter than a clock read are timed in batches
//! with `Instant` (one read before and after `batch` calls); each batch adds
//! its mean per call to the histogram with a count of `batch`, so the
//! histogram's percentiles are percentiles of batch means. The batched
//! comparisons ([`scan()`], [`parse`], [`build`], [`store`], [`deferred()`],
//! [`affinity()`]) record those means in tenths of a nanosecond
//! ([`UNITS_PER_NS`]): whole nanoseconds made a 4 ns row jump by 12 % when
//! its mean crossed a half. Loopback round trips are timed one by one, in
//! nanoseconds.

pub mod failover;
pub mod floor;
mod pg;
pub mod quickfix;
pub mod session;
mod settings;
pub mod sink;
pub mod suite;
pub mod transport;

use crate::{Error, Result};
use fixcore::affinity::{self, PinError, Pinning};
use fixcore::build::MessageBuilder;
use fixcore::deferred::{self, DeferredProcessor};
use fixcore::parse::Parser;
use fixcore::resend::{MessageStore, StoreKind};
use fixcore::sample;
use fixcore::scan::{self, ScanPath};
use fixcore::version::BeginString;
use perfkit_measure::tsc::Tsc;
use perfkit_measure::{self, Comparison, Op, Rounds, Variant, latency_histogram};
use sink::ArrayQueueSink;
use std::hint::black_box;
use std::time::{Duration, Instant};
use transport::{EchoConfig, Transport};

pub use settings::{MIN_ROUND, Settings};

/// Histogram units per nanosecond in the batched comparisons: their
/// histograms count tenths of a nanosecond ([`in_ns`] converts one back).
pub const UNITS_PER_NS: u32 = 10;

/// `op` with its time scaled by [`UNITS_PER_NS`], so the interleaving
/// runner, which records each batch's mean in its histogram's unit, rounds
/// it to a tenth of a nanosecond instead of a whole one.
fn in_tenths(op: Op<'_>) -> Op<'_> {
    let mut op = op;
    Box::new(move |n| op(n).saturating_mul(UNITS_PER_NS))
}

/// A histogram of tenths of a nanosecond ([`UNITS_PER_NS`]) as one of
/// nanoseconds, each value rounded to the nearest, for the report's latency
/// columns (whose unit is the nanosecond).
pub fn in_ns(h: &hdrhistogram::Histogram<u64>) -> hdrhistogram::Histogram<u64> {
    let mut out = perfkit_measure::latency_histogram();
    let per = u64::from(UNITS_PER_NS);
    for v in h.iter_recorded() {
        let ns = ((v.value_iterated_to() + per / 2) / per).max(1);
        let _ = out.record_n(ns, v.count_at_value());
    }
    out
}

/// The median of a histogram of tenths of a nanosecond, in nanoseconds
/// with its tenth.
pub fn median_ns(h: &hdrhistogram::Histogram<u64>) -> f64 {
    h.value_at_quantile(0.5) as f64 / f64::from(UNITS_PER_NS)
}

/// Runs the variants interleaved per [`Settings`], their histograms in
/// tenths of a nanosecond ([`UNITS_PER_NS`]).
fn interleave(s: &Settings, title: String, ops: Vec<(String, Op<'_>)>) -> Comparison {
    let ops = ops.into_iter().map(|(n, op)| (n, in_tenths(op))).collect();
    perfkit_measure::interleave(&s.rounds(), title, ops)
}

/// Gaps between the end of one call of a spaced deferred row and the start
/// of the next. A busy FIX session's message rate is well under a million
/// per second (1000 ns); 250 ns is still more than the worker's own time
/// per message (a parse, a check and a store), so it keeps up and the ring
/// never fills, which back-to-back calls cannot have for long.
const SPACED_GAPS: [Duration; 2] = [Duration::from_nanos(250), Duration::from_micros(1)];

fn timed(n: usize, mut f: impl FnMut()) -> Duration {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed()
}

/// Where in a 4 KiB page each scanned message starts: a short scan costs
/// more when a load crosses a page (fixcore's `scan::positions`), and from
/// byte 64 none does for messages up to 3,968 bytes. Placed by the
/// allocator, one binary's VBMI2 row read 5.0 ns in one run, 11.5 in the next.
const SCAN_PAGE_OFFSET: usize = 64;

/// `msg` copied [`SCAN_PAGE_OFFSET`] bytes into a page: (buffer, start).
fn at_page_offset(msg: &[u8]) -> (Vec<u8>, usize) {
    let mut buf = vec![0u8; msg.len() + 2 * 4096];
    let start = (4096 - buf.as_ptr() as usize % 4096) % 4096 + SCAN_PAGE_OFFSET;
    buf[start..start + msg.len()].copy_from_slice(msg);
    (buf, start)
}

/// Scalar vs AVX2 vs AVX-512 vs VBMI2 structural scan of each sample.
pub fn scan(s: &Settings) -> Vec<Comparison> {
    sample::all()
        .into_iter()
        .map(|(name, msg)| {
            let ops = ScanPath::available()
                .into_iter()
                .map(|path| {
                    let (buf, start) = at_page_offset(&msg);
                    let len = msg.len();
                    let mut out = scan::Positions::for_messages_up_to(len);
                    let op: Op<'_> = Box::new(move |n| {
                        let msg = &buf[start..start + len];
                        timed(n, || {
                            let _ = scan::scan_with(path, black_box(msg), &mut out);
                            black_box(out.len());
                        })
                    });
                    (path.name().to_string(), op)
                })
                .collect();
            let mut c = interleave(s, format!("scan {name} ({} B)", msg.len()), ops);
            c.notes.push(format!(
                "default path on this CPU: {} (FIXCORE_SCAN caps it)",
                ScanPath::detect().name()
            ));
            c.notes.push(format!(
                "the message starts {SCAN_PAGE_OFFSET} bytes into a 4 KiB page, so no load \
                 crosses one (placed by the allocator, one binary's VBMI2 row moved 5-11.5 ns)"
            ));
            c
        })
        .collect()
}

/// The rows of the parse comparison, each a name and the messages it
/// parses in turn, every message checked valid: what [`parse_with`]
/// measures, for a caller to hand the same messages to another parser.
#[derive(Debug, Clone)]
pub struct ParseSets {
    names: Vec<String>,
    messages: Vec<Vec<Vec<u8>>>,
}

impl ParseSets {
    /// The row names, in row order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Each row's messages, in row order.
    pub fn messages(&self) -> &[Vec<Vec<u8>>] {
        &self.messages
    }
}

/// The parse rows: one per sample, or one row of all of `messages` when
/// given, which must all be valid (timing rejections would measure a
/// different, shorter path; callers report which one failed).
pub fn parse_sets(messages: Option<&[Vec<u8>]>) -> Result<ParseSets> {
    let (names, messages) = match messages {
        Some(ms) => {
            if ms.is_empty() {
                return Err(Error::Nothing("no messages to benchmark"));
            }
            let mut p = Parser::new();
            for m in ms {
                p.parse(m)?;
            }
            let avg = ms.iter().map(Vec::len).sum::<usize>() / ms.len();
            (
                vec![format!("input: {} messages, mean {avg} B", ms.len())],
                vec![ms.to_vec()],
            )
        }
        None => sample::all()
            .into_iter()
            .map(|(n, m)| (format!("{n} ({} B)", m.len()), vec![m]))
            .unzip(),
    };
    Ok(ParseSets { names, messages })
}

/// Full validated parse (scan, fields, BodyLength, CheckSum, tag table,
/// groups) of each sample, or of `messages` when given.
pub fn parse(s: &Settings, messages: Option<&[Vec<u8>]>) -> Result<Comparison> {
    let sets = parse_sets(messages)?;
    parse_with(s, &sets, |_| Ok(()))
}

/// The parse comparison of `sets`, one row per set, calling `after_run(k)`
/// (untimed) once run `k` of every row is done, e.g. to run another parser
/// on the same messages between fixcore's runs; its first error ends the
/// measurement.
pub fn parse_with<E>(
    s: &Settings,
    sets: &ParseSets,
    after_run: impl FnMut(usize) -> std::result::Result<(), E>,
) -> std::result::Result<Comparison, E> {
    let ops = sets
        .names
        .iter()
        .zip(&sets.messages)
        .map(|(name, owned)| {
            let mut p = Parser::new();
            let mut k = 0usize;
            let op: Op<'_> = Box::new(move |n| {
                timed(n, || {
                    // A compare, not `k % len`: a 64-bit division costs
                    // several ns, a measurable share of a parse.
                    let m = &owned[k];
                    k += 1;
                    if k == owned.len() {
                        k = 0;
                    }
                    if let Ok(msg) = p.parse(black_box(m)) {
                        black_box(msg.field_count());
                    }
                })
            });
            (name.clone(), in_tenths(op))
        })
        .collect();
    // Not paced by min_round: the peers beside these rows (run by the
    // binary, per round) make exactly per_run calls, and so do these.
    let rounds = Rounds {
        min_round: Duration::ZERO,
        ..s.rounds()
    };
    let mut c = perfkit_measure::interleave_with(
        &rounds,
        "parse (validated: 8/9/35 order, BodyLength, CheckSum, duplicates, groups)".into(),
        ops,
        after_run,
    )?;
    c.compare = false;
    // The peers (QuickFIX, NexusFIX) are the binary's business: it runs the
    // ones it can find beside these rows and says which it could not.
    c.notes
        .push("rows are different messages, not before/after".into());
    Ok(c)
}

/// Building each sample message with the reusable builder.
pub fn build(s: &Settings) -> Comparison {
    let mut ops: Vec<(String, Op<'_>)> = Vec::new();
    for (name, write) in [
        (
            "NewOrderSingle",
            sample::write_new_order_single as fn(&mut MessageBuilder, u64),
        ),
        ("ExecutionReport", sample::write_execution_report),
    ] {
        let mut b = MessageBuilder::new(BeginString::Fix44);
        let mut seq = 0u64;
        ops.push((
            name.to_string(),
            Box::new(move |n| {
                timed(n, || {
                    seq += 1;
                    write(&mut b, seq);
                    black_box(b.finish().map(<[u8]>::len).unwrap_or(0));
                })
            }),
        ));
    }
    let mut c = interleave(
        s,
        "build (header, body, BodyLength, CheckSum; no allocation)".into(),
        ops,
    );
    c.compare = false;
    c
}

/// std HashMap vs hashbrown vs ring: lookup and insert.
pub fn store(s: &Settings) -> Vec<Comparison> {
    const WINDOW: usize = 8192;
    let msg = sample::all().swap_remove(0).1;
    let lookups = StoreKind::ALL
        .into_iter()
        .map(|kind| {
            let mut st = kind.build(1, WINDOW);
            for seq in 1..=WINDOW as u64 {
                let _ = st.insert(seq, &msg);
            }
            let name = st.name().to_string();
            let mut k = 0u64;
            let op: Op<'_> = Box::new(move |n| {
                timed(n, || {
                    // A stride through the window, like scattered resends.
                    k = (k + 4099) % WINDOW as u64;
                    black_box(st.get(black_box(k + 1)).map(<[u8]>::len));
                })
            });
            (name, op)
        })
        .collect();
    let inserts = StoreKind::ALL
        .into_iter()
        .map(|kind| {
            let mut st: Box<dyn MessageStore + Send> = kind.build(1, WINDOW);
            let name = st.name().to_string();
            let mut seq = 0u64;
            let msg = msg.clone();
            let op: Op<'_> = Box::new(move |n| {
                timed(n, || {
                    seq += 1;
                    let _ = st.insert(seq, black_box(&msg));
                })
            });
            (name, op)
        })
        .collect();
    vec![
        interleave(s, format!("store lookup (window {WINDOW})"), lookups),
        interleave(
            s,
            format!("store insert ({} B message, window {WINDOW})", msg.len()),
            inserts,
        ),
    ]
}

/// Inline parse+validate+store vs the deferred hot path (SPSC ring, and
/// crossbeam ArrayQueue as a baseline). The producer (the measuring
/// thread, for the section) and the consumers are pinned to two different
/// cores when two are usable ([`affinity::pair`]), `--pin`'s core the
/// producer's; on a one-core mask they share it.
pub fn deferred(s: &Settings) -> Result<Comparison> {
    match affinity::pair(s.pin) {
        Some((producer, helper)) => {
            affinity::with_placement(Some(producer), || deferred_placed(s, Some(helper)))?
        }
        None => {
            let mut c = deferred_placed(s, None)?;
            c.notes.push(affinity::pair_note(None));
            Ok(c)
        }
    }
}

/// [`deferred`] with the calling thread as the producer, where it is, and
/// the consumers on `helper` (or the process's original mask).
fn deferred_placed(s: &Settings, helper: Option<usize>) -> Result<Comparison> {
    let msg = sample::all().swap_remove(0).1;
    let batch = s.batch.max(1);
    let mut ops: Vec<(String, Op<'_>)> = Vec::new();
    {
        let mut p = Parser::new();
        let mut st = StoreKind::Ring.build(1, 8192);
        let mut m = msg.clone();
        ops.push((
            "inline parse+validate+store".into(),
            Box::new(move |n| {
                timed(n, || {
                    let _ = deferred::process_inline(&mut p, st.as_mut(), black_box(&m));
                    black_box(&mut m);
                })
            }),
        ));
    }
    let producer = Pinning::current();
    let mut d = DeferredProcessor::spawn(batch.next_power_of_two() * 2, 512, 8192, helper)?;
    let worker = d.placement();
    let mut pin_notes: Vec<String> = d
        .pin_error()
        .map(|e| format!("SPSC worker: {e}; it ran unpinned"))
        .into_iter()
        .collect();
    let dropped = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let dropped2 = dropped.clone();
    let m2 = msg.clone();
    ops.push((
        "deferred: SPSC ring submit".into(),
        Box::new(move |n| {
            // Let the worker drain first so the timed pushes find room:
            // this measures the hot path, not the worker's throughput.
            // A dead worker would leave the ring full: the refused submits
            // below then count it, rather than a hang here.
            let _ = d.wait_drained();
            let t = Instant::now();
            for _ in 0..n {
                if !d.try_submit(black_box(&m2)) {
                    dropped2.set(dropped2.get() + 1);
                }
            }
            t.elapsed()
        }),
    ));
    // The same hot path with calls spaced apart, timed call by call: a live
    // engine submits one message per network read, and between two calls
    // the next slot's lines (read by the worker one lap ago, on its core)
    // come back for writing. Back-to-back batches cannot hide that transfer,
    // so both rows are reported.
    let tsc = Tsc::calibrate();
    let spaced_dropped = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let mut spaced_workers = Vec::new();
    if let Some(tsc) = tsc {
        for gap_time in SPACED_GAPS {
            let d2 = DeferredProcessor::spawn(batch.next_power_of_two() * 2, 512, 8192, helper)?;
            spaced_workers.push(format!("{} ns: {}", gap_time.as_nanos(), d2.placement()));
            if let Some(e) = d2.pin_error() {
                pin_notes.push(format!(
                    "{} ns row SPSC worker: {e}; it ran unpinned",
                    gap_time.as_nanos()
                ));
            }
            ops.push((
                format!(
                    "deferred: SPSC ring submit, {} ns apart",
                    gap_time.as_nanos()
                ),
                spaced_submits(
                    d2,
                    tsc,
                    tsc.ticks(gap_time),
                    msg.clone(),
                    spaced_dropped.clone(),
                ),
            ));
        }
    }
    // The baseline gets a consumer thread too, backing off like the worker,
    // so both hand-offs pay the same cross-core cache traffic.
    let (sink, queue) = ArrayQueueSink::new(batch * 2);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (consumer, consumer_placement, consumer_pin_error) =
        queue_consumer(queue.clone(), stop.clone(), helper)?;
    if let Some(e) = consumer_pin_error {
        pin_notes.push(format!("ArrayQueue consumer: {e}; it ran unpinned"));
    }
    let m3 = msg.clone();
    ops.push((
        "deferred: crossbeam ArrayQueue push".into(),
        Box::new(move |n| {
            while !queue.is_empty() {
                std::thread::yield_now();
            }
            let t = Instant::now();
            for _ in 0..n {
                black_box(sink.try_submit(black_box(&m3)));
            }
            t.elapsed()
        }),
    ));
    let mut c = interleave(
        s,
        format!("deferred hot path ({} B NewOrderSingle)", msg.len()),
        ops,
    );
    c.notes.push(
        "both queues have a consumer thread and are drained (untimed) before each batch, \
         so the timed pushes find room: this is the hot path, not the worker's throughput"
            .into(),
    );
    c.notes.push(format!(
        "both copy only the message's {} bytes (the ArrayQueue element's unused tail is left \
         uninitialised, not zeroed); ArrayQueue::push then moves its whole {}-byte element \
         into the slot, which is what a by-value queue costs",
        msg.len(),
        std::mem::size_of::<deferred::InlineMsg>()
    ));
    c.notes.push(format!(
        "SPSC submits refused (ring full): {}",
        dropped.get()
    ));
    if let Some(tsc) = tsc {
        explain_spaced(&mut c, &tsc, spaced_dropped.get());
    }
    let spaced_worker = if spaced_workers.is_empty() {
        String::new()
    } else {
        format!("; spaced-row SPSC workers {}", spaced_workers.join(", "))
    };
    c.notes.push(format!(
        "placement: producer (measuring thread) {producer}; SPSC worker {worker}{spaced_worker}; \
         ArrayQueue consumer {consumer_placement}"
    ));
    c.notes.extend(pin_notes);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    consumer
        .join()
        .map_err(|_| Error::Thread("ArrayQueue consumer panicked"))?;
    Ok(c)
}

/// The notes on the spaced rows: how many of their submits the ring
/// refused, and how they are timed beside the back-to-back rows.
fn explain_spaced(c: &mut Comparison, tsc: &Tsc, refused: u64) {
    c.notes.push(format!(
        "spaced-row SPSC submits refused (ring full): {}",
        refused
    ));
    c.notes.push(format!(
        "the spaced rows time each call on the TSC (lfence; rdtsc), starting each the \
         stated time after the previous one ended, and sum a batch's calls with {:.1} ns \
         of read overhead subtracted per call; like the other rows they record each \
         batch's mean per call. The back-to-back rows time batches with Instant: a burst \
         into an empty ring, where every slot line the worker read one lap earlier must \
         come back from its core, so that row is the burst throughput of the cross-core \
         hand-off, not the cost of one call",
        tsc.overhead().as_secs_f64() * 1e9
    ));
}

/// The ArrayQueue baseline's consumer thread, placed like the SPSC worker
/// (a refused pin runs unpinned) and backing off like it, so both
/// hand-offs pay the same cross-core cache traffic; it runs until `stop`.
/// Returns the thread, where it runs, and why it is unpinned if it is.
fn queue_consumer(
    queue: std::sync::Arc<crossbeam::queue::ArrayQueue<deferred::InlineMsg>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    helper: Option<usize>,
) -> Result<(std::thread::JoinHandle<()>, Pinning, Option<PinError>)> {
    let (placed_tx, placed) = std::sync::mpsc::sync_channel::<(Pinning, Option<PinError>)>(1);
    let consumer = std::thread::spawn(move || {
        let _ = placed_tx.send(affinity::place_current_or_unpin(helper));
        let mut idle = deferred::Idle::default();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            match queue.pop() {
                Some(x) => {
                    black_box(x.bytes().len());
                    idle.reset();
                }
                None => idle.wait(),
            }
        }
    });
    let Ok((placement, pin_error)) = placed.recv() else {
        let _ = consumer.join();
        return Err(Error::Thread("ArrayQueue consumer ended before starting"));
    };
    Ok((consumer, placement, pin_error))
}

/// The deferred hot path's submits spaced `gap` TSC ticks apart (from each
/// call's end), each call timed on the TSC; refused submits are counted in
/// `dropped`.
fn spaced_submits(
    mut d: DeferredProcessor,
    tsc: Tsc,
    gap: u64,
    msg: Vec<u8>,
    dropped: std::rc::Rc<std::cell::Cell<u64>>,
) -> Op<'static> {
    Box::new(move |n| {
        // A dead worker would leave the ring full: the refused
        // submits below then count it, rather than a hang here.
        let _ = d.wait_drained();
        let mut ticks = 0u64;
        let mut next = tsc.now().saturating_add(gap);
        for _ in 0..n {
            while tsc.now() < next {
                std::hint::spin_loop();
            }
            let a = tsc.now();
            let ok = d.try_submit(black_box(&msg));
            let b = tsc.now();
            if !ok {
                dropped.set(dropped.get() + 1);
            }
            // Saturating: the thread may be unpinned, and a counter
            // read on another core may be behind the first.
            ticks = ticks.saturating_add(b.saturating_sub(a));
            // Spaced from this call's end, not from a fixed
            // schedule: a late call must not be followed by ones
            // back to back while the schedule catches up.
            next = b.saturating_add(gap);
        }
        // One conversion for the batch, the read overhead
        // subtracted once per call from the sum: no per-call
        // rounding or clipping at zero.
        tsc.total_duration(n as u64, ticks)
    })
}

/// The validated parse on an unpinned thread vs a thread pinned to
/// `s.pin` (or the last usable core). The unpinned thread gets the
/// process's original affinity mask, not a pin inherited from the caller,
/// and each row is named after where its thread really ran.
pub fn affinity(s: &Settings) -> Result<Comparison> {
    let usable = affinity::usable();
    let core = s
        .pin
        .or_else(|| usable.iter().copied().max())
        .ok_or(Error::Nothing("no usable core reported"))?;
    let msg = sample::all().swap_remove(0).1;
    let runs = s.runs.max(1);
    let per_run = Settings {
        iterations: s.per_run(),
        runs: 1,
        ..*s
    };
    // Index 0: unpinned, 1: pinned. Kept by index, not by name, so the rows
    // stay apart even when both threads end up on one core.
    let mut out: [Option<Variant>; 2] = [None, None];
    for run in 0..runs {
        for (slot, pin) in [None, Some(core)].into_iter().enumerate() {
            let msg = msg.clone();
            let settings = Settings {
                warmup: if run == 0 { s.warmup } else { 0 },
                ..per_run
            };
            let v = std::thread::scope(|sc| {
                sc.spawn(|| -> Result<Comparison> {
                    let pinning = affinity::place_current(pin)?;
                    let mut p = Parser::new();
                    let op: Op<'_> = Box::new(move |n| {
                        timed(n, || {
                            if let Ok(m) = p.parse(black_box(&msg)) {
                                black_box(m.field_count());
                            }
                        })
                    });
                    Ok(interleave(
                        &settings,
                        String::new(),
                        vec![(pinning.to_string(), op)],
                    ))
                })
                .join()
                .map_err(|_| Error::Thread("affinity measurement panicked"))?
            })?;
            let v = v
                .variants
                .into_iter()
                .next()
                .ok_or(Error::Thread("no variant"))?;
            match &mut out[slot] {
                Some(o) => {
                    let _ = o.histogram.add(&v.histogram);
                    o.elapsed += v.elapsed;
                }
                None => out[slot] = Some(v),
            }
        }
    }
    let mut notes = vec![format!(
        "each run spawns one thread with the process's original affinity mask ({} cores \
         usable) and one pinned to core {core}, in turn; rows are named after where the \
         thread really ran",
        usable.len()
    )];
    if usable.len() <= 1 {
        notes
            .push("the process may only run on one core, so the unpinned row is pinned too".into());
    }
    Ok(Comparison {
        title: format!("affinity: validated parse, unpinned vs pinned to core {core}"),
        variants: out.into_iter().flatten().collect(),
        notes,
        compare: true,
        also_vs: None,
    })
}

/// The fewest interleaved rounds of the transport part, whatever
/// `--runs` says. Its ratios pair the transports round by round, and a
/// loopback round trip on a shared machine has spells (its first round
/// was 1.4-1.9x the rest): with 5 rounds of 400 round trips, two medians
/// of 5 runs of one binary differed by up to 6.2 % (9.0 % unpaired);
/// with 15 rounds of 134, by 1.2 % (0.9 % unpaired), 30 runs each.
pub const TRANSPORT_ROUNDS: usize = 15;

/// Unmeasured round trips on each round's new connection but the first's
/// (which warms up `--warmup`).
const ROUND_WARMUP: usize = 100;

/// NewOrderSingle → ExecutionReport echo over 127.0.0.1 with every
/// transport, interleaved by round (at least [`TRANSPORT_ROUNDS`]).
pub fn transport(s: &Settings) -> Result<Comparison> {
    let mut b = MessageBuilder::new(BeginString::Fix44);
    let request = sample::new_order_single(&mut b, 1);
    let reply = sample::execution_report(&mut b, 1);
    let runs = s.runs.max(TRANSPORT_ROUNDS);
    // Client and server on different cores of the process's original mask
    // (not of this thread's, which may be pinned already), `--pin`'s the
    // client's: left to the scheduler they shared a core in some runs and
    // not in others. On a one-core mask both run there.
    let placed = affinity::pair(s.pin);
    let (client_core, server_core) = placed.map_or((None, None), |(c, v)| (Some(c), Some(v)));
    // Where io_uring cannot be used at all, its rows are left out and a
    // note says why, rather than failing the whole benchmark.
    let mut notes = vec![
        "both ends use the transport under test; each request is framed and parsed by \
         the server and the reply by the client"
            .to_string(),
        format!(
            "{runs} interleaved rounds of {} round trips per transport, each on a new \
             connection after {ROUND_WARMUP} unmeasured (the first after {})",
            s.transport_iterations.div_ceil(runs),
            s.warmup.min(s.transport_iterations)
        ),
    ];
    if placed.is_none() {
        notes.push(affinity::pair_note(None));
    }
    let uring = transport::io_uring_available();
    if let Err(e) = &uring {
        notes.push(format!("{e}; its rows are left out"));
    }
    let transports: Vec<Transport> = Transport::ALL
        .into_iter()
        .filter(|t| !t.is_io_uring() || uring.is_ok())
        .collect();
    let mut variants: Vec<Variant> = transports
        .iter()
        .map(|t| Variant {
            name: t.name().into(),
            histogram: latency_histogram(),
            elapsed: Duration::ZERO,
            note: None,
            rounds: Vec::with_capacity(runs),
        })
        .collect();
    for run in 0..runs {
        for (t, v) in transports.iter().zip(&mut variants) {
            let cfg = EchoConfig {
                iterations: s.transport_iterations.div_ceil(runs),
                warmup: if run == 0 {
                    s.warmup.min(s.transport_iterations)
                } else {
                    ROUND_WARMUP
                },
                request: request.clone(),
                reply: reply.clone(),
                client_core,
                server_core,
            };
            let t0 = Instant::now();
            let r = transport::echo(*t, &cfg)?;
            v.elapsed += t0.elapsed();
            v.rounds.push(r.histogram.value_at_quantile(0.5));
            let _ = v.histogram.add(&r.histogram);
            v.note = Some(format!(
                "{}; client {}, server {}",
                r.note, r.client, r.server
            ));
        }
    }
    Ok(Comparison {
        title: format!(
            "transport: {} B NewOrderSingle -> {} B ExecutionReport echo on 127.0.0.1 (round trip)",
            request.len(),
            reply.len()
        ),
        variants,
        notes,
        compare: true,
        // Blocking is the baseline; the async question is io_uring vs tokio.
        also_vs: transports.iter().position(|&t| t == Transport::Tokio),
    })
}

#[cfg(test)]
mod tests;
