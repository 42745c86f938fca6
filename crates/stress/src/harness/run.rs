//! The run itself: the workers started on the chosen runtime, the process
//! sampled once per interval until the end, and the reckoning.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam::queue::ArrayQueue;
use crossbeam::utils::CachePadded;

use super::config::{Config, Runtime, validate};
use super::outcome::{Outcome, Sample, Totals, growth};
use super::workers::{
    Block, ConsumerCounts, ProducerCounts, Shared, consumer_task, consumer_thread, producer_task,
    producer_thread,
};
use crate::error::{Error, Result};
use crate::latency;
use crate::ledger::{self, Ledger};
use crate::pool::{ContextCounts, ContextPool};
use perfkit_measure::{clock, memory};

/// Runs the stress test described by `config`, calling `observe` with each
/// sample as it is taken (for a live status line), and returns what was
/// measured. Lost and corrupt blocks are counted in the outcome, not
/// returned as errors; see [`Outcome::passed`].
pub fn run(config: &Config, observe: &mut dyn FnMut(&Sample)) -> Result<Outcome> {
    validate(config)?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let chan_size = if config.chanpool_size == 0 {
        cores * 4
    } else {
        config.chanpool_size
    };
    let pool = ContextPool::new(config.pool, config.params, chan_size)?;
    let shards = (cores * 2).max(2);
    let shared = Arc::new(Shared {
        config: config.clone(),
        pool,
        stop: AtomicBool::new(false),
        measuring: AtomicBool::new(config.warmup.is_zero()),
        seq: AtomicU64::new(0),
        tasks: AtomicU64::new(0),
        produced: CachePadded::new(ProducerCounts::default()),
        consumed: CachePadded::new(ConsumerCounts::default()),
        recycle: ArrayQueue::new(config.channel_capacity + config.producers + config.consumers),
        ledger: Ledger::new(ledger::SLOTS),
        compress: latency::Shared::new(shards),
        decompress: latency::Shared::new(shards),
        end_to_end: latency::Shared::new(shards),
        first_corrupt: Mutex::new(None),
        error: Mutex::new(None),
    });
    let (tx, rx) = async_channel::bounded::<Block>(config.channel_capacity);

    let sampled = match config.runtime {
        Runtime::Tokio => on_tokio(config, &shared, tx, rx, cores, observe)?,
        Runtime::Threads => on_threads(config, &shared, tx, rx, observe)?,
    };
    if let Some(e) = shared
        .error
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        return Err(e);
    }
    Ok(outcome(config, &shared, sampled))
}

/// Runs the producers and consumers as tasks of a multi-threaded tokio
/// runtime and samples until they are done.
fn on_tokio(
    config: &Config,
    shared: &Arc<Shared>,
    tx: async_channel::Sender<Block>,
    rx: async_channel::Receiver<Block>,
    cores: usize,
    observe: &mut dyn FnMut(&Sample),
) -> Result<Sampled> {
    let workers = if config.worker_threads == 0 {
        cores
    } else {
        config.worker_threads
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("stress-worker")
        .enable_time()
        .build()?;
    let mut handles = Vec::new();
    for i in 0..config.producers {
        handles.push(rt.spawn(producer_task(shared.clone(), tx.clone(), i)));
    }
    for i in 0..config.consumers {
        handles.push(rt.spawn(consumer_task(shared.clone(), rx.clone(), i)));
    }
    drop((tx, rx));
    let sampled = sample_until_done(shared, observe);
    let joined = rt.block_on(async {
        let mut panicked = false;
        for h in handles {
            panicked |= h.await.is_err();
        }
        panicked
    });
    drop(rt);
    if joined {
        return Err(Error::WorkerPanicked("tokio"));
    }
    Ok(sampled)
}

/// Runs the producers and consumers as OS threads and samples until they
/// are done.
fn on_threads(
    config: &Config,
    shared: &Shared,
    tx: async_channel::Sender<Block>,
    rx: async_channel::Receiver<Block>,
    observe: &mut dyn FnMut(&Sample),
) -> Result<Sampled> {
    std::thread::scope(|s| -> Result<Sampled> {
        let mut handles = Vec::new();
        let spawned = (|| -> std::io::Result<()> {
            for i in 0..config.producers {
                let (shared, tx) = (&*shared, tx.clone());
                handles.push(
                    std::thread::Builder::new()
                        .name(format!("producer-{i}"))
                        .stack_size(256 << 10)
                        .spawn_scoped(s, move || producer_thread(shared, tx, i))?,
                );
            }
            for i in 0..config.consumers {
                let (shared, rx) = (&*shared, rx.clone());
                handles.push(
                    std::thread::Builder::new()
                        .name(format!("consumer-{i}"))
                        .stack_size(256 << 10)
                        .spawn_scoped(s, move || consumer_thread(shared, rx, i))?,
                );
            }
            Ok(())
        })();
        drop((tx, rx));
        let sampled = match spawned {
            Ok(()) => Ok(sample_until_done(shared, observe)),
            Err(e) => {
                // Let the threads that did start finish, or the scope
                // would wait for them forever.
                shared.stop.store(true, Ordering::Release);
                Err(Error::Spawn(e))
            }
        };
        let mut panicked = false;
        for h in handles {
            panicked |= h.join().is_err();
        }
        if panicked {
            return Err(Error::WorkerPanicked("thread"));
        }
        sampled
    })
}

/// What the finished run measured, from the workers' counts, the ledger
/// and the samples.
fn outcome(config: &Config, shared: &Shared, sampled: Sampled) -> Outcome {
    let produced = shared.produced.produced.load(Ordering::Acquire);
    let verified = shared.consumed.verified.load(Ordering::Acquire);
    let corrupt = shared.consumed.corrupt.load(Ordering::Acquire);
    // Every worker has finished, so every delivery is in the ledger.
    let reckoning = shared.ledger.reckon(produced);
    debug_assert_eq!(
        verified + corrupt + reckoning.lost,
        produced + reckoning.duplicated,
        "every delivery is one first sighting or one duplicate"
    );
    let totals = Totals {
        produced,
        verified,
        corrupt,
        lost: reckoning.lost,
        duplicated: reckoning.duplicated,
        bytes: sampled.bytes,
        frame_bytes: sampled.frame_bytes,
        blocks: sampled.blocks,
    };
    let growth = growth(&sampled.samples, config.warmup, config.soak);
    let first_corrupt = shared
        .first_corrupt
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Outcome {
        pool: config.pool,
        runtime: config.runtime,
        measured: sampled.measured,
        cpu: sampled.cpu,
        totals,
        peak_rss_bytes: sampled
            .samples
            .iter()
            .map(|s| s.rss_bytes)
            .max()
            .unwrap_or(0),
        peak_threads: sampled
            .samples
            .iter()
            .map(|s| s.os_threads)
            .max()
            .unwrap_or(0),
        samples: sampled.samples,
        compress: shared.compress.merged(),
        decompress: shared.decompress.merged(),
        end_to_end: shared.end_to_end.merged(),
        contexts: sampled.contexts,
        contexts_end: shared.pool.counts(),
        growth,
        soak: config.soak,
        first_corrupt,
        first_lost: reckoning.first_lost,
        first_duplicated: reckoning.first_duplicated,
    }
}

struct Sampled {
    samples: Vec<Sample>,
    measured: Duration,
    cpu: Duration,
    bytes: u64,
    frame_bytes: u64,
    blocks: u64,
    contexts: ContextCounts,
}

#[derive(Clone, Copy)]
struct Snapshot {
    at: Instant,
    cpu: Duration,
    bytes: u64,
    frame_bytes: u64,
    blocks: u64,
}

impl Snapshot {
    fn take(shared: &Shared) -> Snapshot {
        Snapshot {
            at: Instant::now(),
            cpu: clock::process_cpu(),
            bytes: shared.consumed.bytes.load(Ordering::Relaxed),
            frame_bytes: shared.consumed.frame_bytes.load(Ordering::Relaxed),
            blocks: shared.consumed.verified.load(Ordering::Relaxed),
        }
    }
}

/// Samples on the caller's thread until the run's time is up (or a worker
/// failed), then tells producers to stop.
fn sample_until_done(shared: &Shared, observe: &mut dyn FnMut(&Sample)) -> Sampled {
    let cfg = &shared.config;
    let start = Instant::now();
    let end = start + cfg.duration;
    let warm_end = start + cfg.warmup;
    let mut window_start = Snapshot::take(shared);
    let mut prev = window_start;
    let mut samples = Vec::new();
    let mut next = start + cfg.sample_every;
    loop {
        let now = Instant::now();
        let warming = !shared.measuring.load(Ordering::Relaxed);
        // While warming up, also wake when the warm-up ends: the measured
        // window (and the histograms) start there rather than at the next
        // sample, up to a period later. With short rounds a late sample
        // used to leave a window of nothing.
        let due = next.min(end);
        let wake = if warming { due.min(warm_end) } else { due };
        if wake > now {
            std::thread::sleep(wake - now);
        }
        if warming && Instant::now() >= warm_end {
            shared.measuring.store(true, Ordering::Relaxed);
            window_start = Snapshot::take(shared);
        }
        if Instant::now() < due {
            continue; // woken for the end of the warm-up only
        }
        let snap = Snapshot::take(shared);
        let dt = (snap.at - prev.at).as_secs_f64().max(1e-9);
        let dcpu = (snap.cpu - prev.cpu).as_secs_f64().max(1e-9);
        let dbytes = snap.bytes.saturating_sub(prev.bytes) as f64;
        let st = memory::status();
        let counts = shared.pool.counts();
        let sample = Sample {
            at: snap.at - start,
            blocks: snap.blocks - prev.blocks,
            mb_per_s: dbytes / 1e6 / dt,
            mb_per_cpu_s: dbytes / 1e6 / dcpu,
            ratio: dbytes / (snap.frame_bytes.saturating_sub(prev.frame_bytes)).max(1) as f64,
            os_threads: st.threads,
            tasks: shared.tasks.load(Ordering::Relaxed),
            rss_bytes: st.rss_bytes,
            contexts_alive: counts.alive(),
            contexts_created: counts.created(),
        };
        observe(&sample);
        samples.push(sample);
        shared.pool.tick();
        prev = snap;
        next += cfg.sample_every;
        if snap.at >= end || shared.stop.load(Ordering::Acquire) {
            break;
        }
    }
    let contexts = shared.pool.counts();
    shared.stop.store(true, Ordering::Release);
    Sampled {
        samples,
        measured: prev.at - window_start.at,
        cpu: prev.cpu.saturating_sub(window_start.cpu),
        bytes: prev.bytes - window_start.bytes,
        frame_bytes: prev.frame_bytes - window_start.frame_bytes,
        blocks: prev.blocks - window_start.blocks,
        contexts,
    }
}
