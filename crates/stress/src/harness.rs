//! The run itself: producers make blocks, compress them and send them over
//! a bounded channel; consumers decompress each one and compare it with the
//! original. The caller's thread samples the process once per
//! [`Config::sample_every`] while the workers run on a tokio multi-thread
//! runtime or on plain OS threads.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam::queue::ArrayQueue;
use crossbeam::utils::CachePadded;
use hdrhistogram::Histogram;
use zstdkit::{Params, Recipe};

use crate::error::{Error, Result};
use crate::latency::{self, Recorder};
use crate::ledger::{self, Ledger};
use crate::pool::{ContextCounts, ContextPool, PoolKind};
use crate::probe;
use crate::trend;
use crate::workload::{BlockSource, Workload};

/// Where producers and consumers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Runtime {
    /// Tasks on a tokio multi-thread runtime with one worker per core.
    #[default]
    Tokio,
    /// One OS thread per producer and per consumer.
    Threads,
}

impl Runtime {
    /// The name the CLI uses.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Tokio => "tokio",
            Runtime::Threads => "threads",
        }
    }
}

impl std::str::FromStr for Runtime {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "tokio" => Ok(Runtime::Tokio),
            "threads" => Ok(Runtime::Threads),
            _ => Err(Error::Config(format!(
                "unknown runtime '{s}' (expected tokio or threads)"
            ))),
        }
    }
}

/// A deliberate fault, for proving that verification catches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The producer flips a byte in the middle of the compressed frame.
    CorruptFrame,
    /// The producer flips a byte of the original after compressing it, so
    /// the frame is valid but decodes to something else.
    CorruptPayload,
    /// The consumer discards the block without verifying it.
    Drop,
    /// The producer sends the block twice.
    Duplicate,
    /// From this block on, the consumer of every block also creates a
    /// decompression context and keeps it until the run ends, as a pool
    /// that never returns its contexts would: contexts alive (and RSS)
    /// grow, for a soak to catch.
    LeakContext,
}

/// A fault applied to the block with sequence number `block` (blocks are
/// numbered from 0 in production order across all producers), or from it
/// on for [`FaultKind::LeakContext`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// What happens.
    pub kind: FaultKind,
    /// To which block.
    pub block: u64,
}

/// The fewest samples after warm-up a soak judges growth from: a slope
/// fitted to fewer is mostly noise, and with none at all a soak would
/// pass without having judged anything.
pub const MIN_SOAK_SAMPLES: usize = 10;

/// Growth rates above which a soak run fails.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoakLimits {
    /// Resident memory growth, MiB per minute.
    pub rss_mib_per_min: f64,
    /// Growth of contexts alive, per minute.
    pub contexts_per_min: f64,
}

impl Default for SoakLimits {
    fn default() -> Self {
        SoakLimits {
            rss_mib_per_min: 1.0,
            contexts_per_min: 1.0,
        }
    }
}

/// Everything that shapes a run. [`Config::default`] is the original
/// experiment (the Go proof of concept's defaults): 100 producers, 100
/// consumers, a 2 KiB block of UUID text every 10 ms per producer, 30 s, at
/// zstd level 3 (the `balanced` recipe, the proof of concept's `-level 3`)
/// without frame checksums (every block is compared byte for byte with its
/// original, which the checksum would only repeat at ~6 % of the CPU).
/// Block sizes are exact: the proof of concept appends whole UUIDs, so its
/// 2048 becomes 2052 bytes; here 2048 is 2048.
#[derive(Debug, Clone)]
pub struct Config {
    /// Compression parameters.
    pub params: Params,
    /// Context pool strategy.
    pub pool: PoolKind,
    /// Producer count.
    pub producers: usize,
    /// Consumer count.
    pub consumers: usize,
    /// Pause after each block per producer; zero saturates.
    pub interval: Duration,
    /// Block contents and sizes.
    pub workload: Workload,
    /// Each producer compresses one block and re-sends it forever (the
    /// original experiment's behaviour, which measures decompression of a
    /// few fixed frames).
    pub replay: bool,
    /// How long producers run.
    pub duration: Duration,
    /// Where workers run.
    pub runtime: Runtime,
    /// tokio worker threads (0: one per core).
    pub worker_threads: usize,
    /// Blocks the producer→consumer channel holds.
    pub channel_capacity: usize,
    /// Contexts of each kind in `chanpool` (0: four per core, as the Go
    /// peer's GOMAXPROCS×4).
    pub chanpool_size: usize,
    /// Sampling period of the per-second series (and the `pool` ageing).
    pub sample_every: Duration,
    /// Excluded from latency histograms, totals and the soak slopes.
    pub warmup: Duration,
    /// Judge growth with these limits (`--soak`); `None` only reports it.
    /// A soak must leave room for [`MIN_SOAK_SAMPLES`] samples after
    /// warm-up, and fails when it took fewer.
    pub soak: Option<SoakLimits>,
    /// Injected faults (tests).
    pub faults: Vec<Fault>,
    /// Seed of the block generators (producer `i` uses `seed + i`).
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            params: Recipe::Balanced.params().checksum(false),
            pool: PoolKind::Pool,
            producers: 100,
            consumers: 100,
            interval: Duration::from_millis(10),
            workload: Workload::default(),
            replay: false,
            duration: Duration::from_secs(30),
            runtime: Runtime::Tokio,
            worker_threads: 0,
            channel_capacity: 1000,
            chanpool_size: 0,
            sample_every: Duration::from_secs(1),
            warmup: Duration::ZERO,
            soak: None,
            faults: Vec::new(),
            seed: 0x5eed,
        }
    }
}

/// One point of the per-interval series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Time since the start of the run, at the end of this interval.
    pub at: Duration,
    /// Blocks verified in this interval.
    pub blocks: u64,
    /// Uncompressed MB (10^6 bytes) verified per second.
    pub mb_per_s: f64,
    /// Uncompressed MB verified per CPU-second of the whole process.
    pub mb_per_cpu_s: f64,
    /// Uncompressed / compressed bytes of the blocks verified.
    pub ratio: f64,
    /// Live OS threads of the process.
    pub os_threads: u64,
    /// Live producer and consumer tasks (or threads).
    pub tasks: u64,
    /// Resident memory of the process, bytes.
    pub rss_bytes: u64,
    /// Codec contexts alive (both kinds).
    pub contexts_alive: u64,
    /// Codec contexts created so far (both kinds).
    pub contexts_created: u64,
}

/// Counts over the whole run (blocks) and the measured window (bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Blocks sent by producers.
    pub produced: u64,
    /// Blocks decoded and equal to their original.
    pub verified: u64,
    /// Blocks that failed to decode or decoded to different bytes.
    pub corrupt: u64,
    /// Blocks produced whose sequence number never reached a consumer.
    pub lost: u64,
    /// Deliveries of a sequence number already delivered (verified or
    /// corrupt alike), so `verified + corrupt = produced - lost + duplicated`.
    pub duplicated: u64,
    /// Uncompressed bytes verified in the measured window.
    pub bytes: u64,
    /// Compressed bytes of those blocks.
    pub frame_bytes: u64,
    /// Blocks verified in the measured window.
    pub blocks: u64,
}

/// The slopes of resident memory and contexts alive after warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Growth {
    /// Resident memory, MiB per minute.
    pub rss_mib_per_min: f64,
    /// Contexts alive, per minute.
    pub contexts_per_min: f64,
    /// Samples fitted.
    pub samples: usize,
    /// The limits the run was judged by (`--soak`), if any.
    pub limits: Option<SoakLimits>,
}

impl Growth {
    /// True when judged and either slope exceeds its limit.
    pub fn growing(&self) -> bool {
        self.limits.is_some_and(|l| {
            self.rss_mib_per_min > l.rss_mib_per_min || self.contexts_per_min > l.contexts_per_min
        })
    }
}

/// What a run measured and whether it passed.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The strategy.
    pub pool: PoolKind,
    /// The runtime.
    pub runtime: Runtime,
    /// Length of the measured window (after warm-up, until producers stop).
    pub measured: Duration,
    /// CPU time of the process in the measured window.
    pub cpu: Duration,
    /// Block and byte counts.
    pub totals: Totals,
    /// The per-interval series (warm-up included; each sample says when).
    pub samples: Vec<Sample>,
    /// Compression latency per block, ns.
    pub compress: Histogram<u64>,
    /// Decompression latency per block, ns.
    pub decompress: Histogram<u64>,
    /// From the start of producing a block to its verification, ns.
    pub end_to_end: Histogram<u64>,
    /// Context counts when producers stopped.
    pub contexts: ContextCounts,
    /// Context counts after every worker finished and the runtime shut
    /// down (thread-local contexts are gone by then).
    pub contexts_end: ContextCounts,
    /// Highest resident memory sampled, bytes.
    pub peak_rss_bytes: u64,
    /// Most OS threads sampled.
    pub peak_threads: u64,
    /// Slopes after warm-up (when there were at least 3 samples).
    pub growth: Option<Growth>,
    /// The limits growth was to be judged by ([`Config::soak`]): with
    /// them, a run that could not judge growth fails.
    pub soak: Option<SoakLimits>,
    /// The first corruption seen: block number and what was wrong.
    pub first_corrupt: Option<(u64, String)>,
    /// The smallest lost block number.
    pub first_lost: Option<u64>,
    /// The smallest block number delivered more than once.
    pub first_duplicated: Option<u64>,
}

impl Outcome {
    /// Uncompressed MB verified per wall-clock second, measured window.
    pub fn mb_per_s(&self) -> f64 {
        self.totals.bytes as f64 / 1e6 / self.measured.as_secs_f64().max(1e-9)
    }

    /// Uncompressed MB verified per CPU-second, measured window.
    pub fn mb_per_cpu_s(&self) -> f64 {
        self.totals.bytes as f64 / 1e6 / self.cpu.as_secs_f64().max(1e-9)
    }

    /// Compression ratio of the verified blocks.
    pub fn ratio(&self) -> f64 {
        self.totals.bytes as f64 / self.totals.frame_bytes.max(1) as f64
    }

    /// Why the run failed, one line each; empty when it passed.
    pub fn failures(&self) -> Vec<String> {
        let mut v = Vec::new();
        let which = |b: Option<u64>| {
            b.map(|b| format!(" (first: block {b})"))
                .unwrap_or_default()
        };
        if self.totals.lost > 0 {
            v.push(format!(
                "{} block(s) lost{}",
                self.totals.lost,
                which(self.first_lost)
            ));
        }
        if self.totals.duplicated > 0 {
            v.push(format!(
                "{} block(s) delivered more than once{}",
                self.totals.duplicated,
                which(self.first_duplicated)
            ));
        }
        if self.totals.corrupt > 0 {
            let first = self
                .first_corrupt
                .as_ref()
                .map(|(b, why)| format!(" (first: block {b}, {why})"))
                .unwrap_or_default();
            v.push(format!("{} block(s) corrupt{first}", self.totals.corrupt));
        }
        if self.soak.is_some() {
            match self.growth {
                Some(g) if g.samples >= MIN_SOAK_SAMPLES => {
                    if g.growing() {
                        v.push(format!(
                            "growth after warm-up: RSS {:+.2} MiB/min, contexts {:+.2}/min",
                            g.rss_mib_per_min, g.contexts_per_min
                        ));
                    }
                }
                g => v.push(format!(
                    "soak too short to judge growth: {} sample(s) after warm-up, {MIN_SOAK_SAMPLES} needed",
                    g.map_or_else(|| "fewer than 3".to_owned(), |g| g.samples.to_string())
                )),
            }
        }
        if self.totals.produced == 0 {
            v.push("no block was produced".into());
        }
        v
    }

    /// True when nothing was lost, duplicated or corrupt and no growth was
    /// judged.
    pub fn passed(&self) -> bool {
        self.failures().is_empty()
    }

    /// Folds a later run of the same strategy into this one, as when
    /// `--compare` interleaves strategies in rounds: counts, CPU time and
    /// histograms add up, the series continues after this one's last
    /// sample, context counts are the later run's. Growth is not
    /// meaningful across runs, so it is dropped, and a soak outcome then
    /// fails as unjudged: soak in one run.
    pub fn absorb(&mut self, later: Outcome) {
        self.measured += later.measured;
        self.cpu += later.cpu;
        let (a, b) = (&mut self.totals, later.totals);
        a.produced += b.produced;
        a.verified += b.verified;
        a.corrupt += b.corrupt;
        a.lost += b.lost;
        a.duplicated += b.duplicated;
        a.bytes += b.bytes;
        a.frame_bytes += b.frame_bytes;
        a.blocks += b.blocks;
        let offset = self.samples.last().map_or(Duration::ZERO, |s| s.at);
        self.samples
            .extend(later.samples.into_iter().map(|s| Sample {
                at: s.at + offset,
                ..s
            }));
        for (mine, theirs) in [
            (&mut self.compress, &later.compress),
            (&mut self.decompress, &later.decompress),
            (&mut self.end_to_end, &later.end_to_end),
        ] {
            mine.add(theirs).expect("histograms share bounds");
        }
        self.contexts = later.contexts;
        self.contexts_end = later.contexts_end;
        self.peak_rss_bytes = self.peak_rss_bytes.max(later.peak_rss_bytes);
        self.peak_threads = self.peak_threads.max(later.peak_threads);
        self.growth = None;
        if self.first_corrupt.is_none() {
            self.first_corrupt = later.first_corrupt;
        }
        self.first_lost = self.first_lost.or(later.first_lost);
        self.first_duplicated = self.first_duplicated.or(later.first_duplicated);
    }
}

/// A block in flight, recycled so the steady state allocates nothing.
#[derive(Debug)]
struct Block {
    seq: u64,
    born: Instant,
    original: Vec<u8>,
    frame: Vec<u8>,
}

impl Block {
    fn empty() -> Block {
        Block {
            seq: 0,
            born: Instant::now(),
            original: Vec::new(),
            frame: Vec::new(),
        }
    }
}

#[derive(Debug, Default)]
struct ProducerCounts {
    produced: AtomicU64,
}

#[derive(Debug, Default)]
struct ConsumerCounts {
    verified: AtomicU64,
    corrupt: AtomicU64,
    bytes: AtomicU64,
    frame_bytes: AtomicU64,
}

/// State every worker shares.
struct Shared {
    config: Config,
    pool: ContextPool,
    stop: AtomicBool,
    measuring: AtomicBool,
    seq: AtomicU64,
    tasks: AtomicU64,
    produced: CachePadded<ProducerCounts>,
    consumed: CachePadded<ConsumerCounts>,
    recycle: ArrayQueue<Block>,
    ledger: Ledger,
    compress: latency::Shared,
    decompress: latency::Shared,
    end_to_end: latency::Shared,
    first_corrupt: Mutex<Option<(u64, String)>>,
    error: Mutex<Option<Error>>,
}

impl Shared {
    fn fault(&self, seq: u64, kind: FaultKind) -> bool {
        self.config
            .faults
            .iter()
            .any(|f| f.block == seq && f.kind == kind)
    }

    fn fail(&self, e: Error) {
        self.error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
        self.stop.store(true, Ordering::Release);
    }

    /// Makes the next block of one producer (generation and compression).
    fn produce(
        &self,
        src: &mut BlockSource,
        fixed: &mut Option<(Vec<u8>, Vec<u8>)>,
        rec: &mut Recorder<'_>,
    ) -> Result<Block> {
        let mut b = self.recycle.pop().unwrap_or_else(Block::empty);
        b.born = Instant::now();
        match fixed {
            Some((orig, frame)) => {
                b.original.clone_from(orig);
                b.frame.clone_from(frame);
            }
            None => {
                src.fill(&mut b.original);
                let t = Instant::now();
                self.pool.compress(&b.original, &mut b.frame)?;
                if self.measuring.load(Ordering::Relaxed) {
                    rec.record(t.elapsed());
                }
                if self.config.replay {
                    *fixed = Some((b.original.clone(), b.frame.clone()));
                }
            }
        }
        b.seq = self.seq.fetch_add(1, Ordering::Relaxed);
        if !self.config.faults.is_empty() {
            if self.fault(b.seq, FaultKind::CorruptFrame) {
                let mid = b.frame.len() / 2;
                b.frame[mid] ^= 0x5a;
            }
            if self.fault(b.seq, FaultKind::CorruptPayload) {
                let mid = b.original.len() / 2;
                b.original[mid] ^= 0x01;
            }
        }
        self.produced.produced.fetch_add(1, Ordering::Relaxed);
        Ok(b)
    }

    /// A copy of `b` to send after it, when a fault says so.
    fn duplicate(&self, b: &Block) -> Option<Block> {
        (!self.config.faults.is_empty() && self.fault(b.seq, FaultKind::Duplicate)).then(|| Block {
            seq: b.seq,
            born: b.born,
            original: b.original.clone(),
            frame: b.frame.clone(),
        })
    }

    /// Decodes and verifies one block, then recycles it.
    fn consume(&self, b: Block, out: &mut Vec<u8>, dec: &mut Recorder<'_>, e2e: &mut Recorder<'_>) {
        if !self.config.faults.is_empty() && self.fault(b.seq, FaultKind::Drop) {
            let _ = self.recycle.push(b);
            return;
        }
        // Counted in the ledger whatever the verdict below: a duplicate is
        // still verified (or found corrupt), and fails the run on its own.
        self.ledger.mark(b.seq);
        if !self.config.faults.is_empty()
            && self
                .config
                .faults
                .iter()
                .any(|f| f.kind == FaultKind::LeakContext && b.seq >= f.block)
            && let Err(e) = self.pool.leak()
        {
            self.fail(e);
        }
        let t = Instant::now();
        let decoded = self.pool.decompress(&b.frame, out);
        let done = Instant::now();
        let measuring = self.measuring.load(Ordering::Relaxed);
        match decoded {
            Ok(_) if *out == b.original => {
                self.consumed.verified.fetch_add(1, Ordering::Relaxed);
                self.consumed
                    .bytes
                    .fetch_add(b.original.len() as u64, Ordering::Relaxed);
                self.consumed
                    .frame_bytes
                    .fetch_add(b.frame.len() as u64, Ordering::Relaxed);
                if measuring {
                    dec.record(done - t);
                    e2e.record(done - b.born);
                }
            }
            other => {
                self.consumed.corrupt.fetch_add(1, Ordering::Relaxed);
                let why = match other {
                    Err(e) => format!("decode error: {e}"),
                    Ok(n) => {
                        let at = out
                            .iter()
                            .zip(&b.original)
                            .position(|(a, b)| a != b)
                            .unwrap_or(n.min(b.original.len()));
                        format!(
                            "decoded {n} bytes, expected {}, first difference at byte {at}",
                            b.original.len()
                        )
                    }
                };
                let mut first = self.first_corrupt.lock().unwrap_or_else(|p| p.into_inner());
                if first.as_ref().is_none_or(|(s, _)| b.seq < *s) {
                    *first = Some((b.seq, why));
                }
            }
        }
        // A full queue means more blocks exist than can be in flight; let
        // the extra one go.
        let _ = self.recycle.push(b);
    }
}

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
        Runtime::Tokio => {
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
            let sampled = sample_until_done(&shared, observe);
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
            sampled
        }
        Runtime::Threads => std::thread::scope(|s| -> Result<Sampled> {
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
                Ok(()) => Ok(sample_until_done(&shared, observe)),
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
        })?,
    };

    if let Some(e) = shared
        .error
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        return Err(e);
    }
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
    Ok(Outcome {
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
    })
}

fn validate(c: &Config) -> Result<()> {
    c.workload.validate()?;
    let bad = |what: &str| Err(Error::Config(format!("{what} must be at least 1")));
    if c.producers == 0 {
        return bad("producers");
    }
    if c.consumers == 0 {
        return bad("consumers");
    }
    if c.channel_capacity == 0 {
        return bad("the channel capacity");
    }
    if c.sample_every.is_zero() {
        return Err(Error::Config("the sampling period must be positive".into()));
    }
    if c.warmup >= c.duration && !c.warmup.is_zero() {
        return Err(Error::Config(format!(
            "the warm-up ({:?}) must be shorter than the run ({:?})",
            c.warmup, c.duration
        )));
    }
    // Samples fall on a grid of `sample_every`; those after the warm-up
    // are the slope's points.
    let points = (c.duration.saturating_sub(c.warmup).as_nanos() / c.sample_every.as_nanos())
        .try_into()
        .unwrap_or(usize::MAX);
    if c.soak.is_some() && points < MIN_SOAK_SAMPLES {
        return Err(Error::Config(format!(
            "soak too short to judge growth: {:?} after a {:?} warm-up, sampled every {:?}, gives {points} sample(s); at least {MIN_SOAK_SAMPLES} are needed",
            c.duration, c.warmup, c.sample_every
        )));
    }
    Ok(())
}

/// Fits RSS and contexts alive against minutes, over the samples after
/// warm-up.
fn growth(samples: &[Sample], warmup: Duration, limits: Option<SoakLimits>) -> Option<Growth> {
    let after: Vec<&Sample> = samples.iter().filter(|s| s.at > warmup).collect();
    if after.len() < 3 {
        return None;
    }
    let minutes = |s: &Sample| s.at.as_secs_f64() / 60.0;
    let rss = trend::fit(
        after
            .iter()
            .map(|s| (minutes(s), s.rss_bytes as f64 / (1 << 20) as f64)),
    )?;
    let ctx = trend::fit(after.iter().map(|s| (minutes(s), s.contexts_alive as f64)))?;
    Some(Growth {
        rss_mib_per_min: rss.slope,
        contexts_per_min: ctx.slope,
        samples: after.len(),
        limits,
    })
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
            cpu: probe::cpu_time(),
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
        let st = probe::status();
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

/// Counts a worker as a live task for as long as it exists.
struct TaskGuard<'a>(&'a AtomicU64);

impl<'a> TaskGuard<'a> {
    fn enter(n: &'a AtomicU64) -> TaskGuard<'a> {
        n.fetch_add(1, Ordering::Relaxed);
        TaskGuard(n)
    }
}

impl Drop for TaskGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn producer_task(shared: Arc<Shared>, tx: async_channel::Sender<Block>, i: usize) {
    let shared = &*shared;
    let _task = TaskGuard::enter(&shared.tasks);
    let mut src = shared
        .config
        .workload
        .source(shared.config.seed.wrapping_add(i as u64));
    let mut rec = shared.compress.recorder(i);
    let mut fixed = None;
    let interval = shared.config.interval;
    while !shared.stop.load(Ordering::Acquire) {
        if !interval.is_zero() {
            tokio::time::sleep(interval).await;
            if shared.stop.load(Ordering::Acquire) {
                break;
            }
        }
        let block = match shared.produce(&mut src, &mut fixed, &mut rec) {
            Ok(b) => b,
            Err(e) => return shared.fail(e),
        };
        let again = shared.duplicate(&block);
        if tx.send(block).await.is_err() {
            break;
        }
        if let Some(b) = again
            && tx.send(b).await.is_err()
        {
            break;
        }
        // A send into a channel with room completes without yielding; give
        // the runtime its turn so consumers and the timer are not starved.
        tokio::task::consume_budget().await;
    }
}

async fn consumer_task(shared: Arc<Shared>, rx: async_channel::Receiver<Block>, i: usize) {
    let shared = &*shared;
    let _task = TaskGuard::enter(&shared.tasks);
    let mut out = Vec::new();
    let mut dec = shared.decompress.recorder(i);
    let mut e2e = shared.end_to_end.recorder(i);
    while let Ok(block) = rx.recv().await {
        shared.consume(block, &mut out, &mut dec, &mut e2e);
        tokio::task::consume_budget().await;
    }
}

fn producer_thread(shared: &Shared, tx: async_channel::Sender<Block>, i: usize) {
    let _task = TaskGuard::enter(&shared.tasks);
    let mut src = shared
        .config
        .workload
        .source(shared.config.seed.wrapping_add(i as u64));
    let mut rec = shared.compress.recorder(i);
    let mut fixed = None;
    let interval = shared.config.interval;
    while !shared.stop.load(Ordering::Acquire) {
        if !interval.is_zero() {
            std::thread::sleep(interval);
            if shared.stop.load(Ordering::Acquire) {
                break;
            }
        }
        let block = match shared.produce(&mut src, &mut fixed, &mut rec) {
            Ok(b) => b,
            Err(e) => return shared.fail(e),
        };
        let again = shared.duplicate(&block);
        if tx.send_blocking(block).is_err() {
            break;
        }
        if let Some(b) = again
            && tx.send_blocking(b).is_err()
        {
            break;
        }
    }
}

fn consumer_thread(shared: &Shared, rx: async_channel::Receiver<Block>, i: usize) {
    let _task = TaskGuard::enter(&shared.tasks);
    let mut out = Vec::new();
    let mut dec = shared.decompress.recorder(i);
    let mut e2e = shared.end_to_end.recorder(i);
    while let Ok(block) = rx.recv_blocking() {
        shared.consume(block, &mut out, &mut dec, &mut e2e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(rss_mib: impl Fn(f64) -> f64, ctx: impl Fn(f64) -> f64) -> Vec<Sample> {
        (1..=120)
            .map(|s| {
                let t = s as f64;
                Sample {
                    at: Duration::from_secs(s),
                    blocks: 0,
                    mb_per_s: 0.0,
                    mb_per_cpu_s: 0.0,
                    ratio: 0.0,
                    os_threads: 3,
                    tasks: 0,
                    rss_bytes: (rss_mib(t) * (1 << 20) as f64) as u64,
                    contexts_alive: ctx(t) as u64,
                    contexts_created: 0,
                }
            })
            .collect()
    }

    fn judged(growth: Option<Growth>, soak: Option<SoakLimits>) -> Outcome {
        let h = || Histogram::new(3).unwrap();
        Outcome {
            pool: PoolKind::Pool,
            runtime: Runtime::Tokio,
            measured: Duration::from_secs(1),
            cpu: Duration::from_secs(1),
            totals: Totals {
                produced: 10,
                verified: 10,
                ..Totals::default()
            },
            samples: Vec::new(),
            compress: h(),
            decompress: h(),
            end_to_end: h(),
            contexts: ContextCounts::default(),
            contexts_end: ContextCounts::default(),
            peak_rss_bytes: 0,
            peak_threads: 0,
            growth,
            soak,
            first_corrupt: None,
            first_lost: None,
            first_duplicated: None,
        }
    }

    #[test]
    fn a_soak_that_could_not_judge_growth_fails() {
        let limits = SoakLimits::default();
        let flat = |samples| Growth {
            rss_mib_per_min: 0.0,
            contexts_per_min: 0.0,
            samples,
            limits: Some(limits),
        };
        // A late sampler (or folded rounds) can leave a soak with too few
        // points, or none: that is a failure, not a silent pass.
        for (growth, why) in [
            (None, "fewer than 3 sample(s)"),
            (Some(flat(MIN_SOAK_SAMPLES - 1)), "9 sample(s)"),
        ] {
            let f = judged(growth, Some(limits)).failures();
            assert_eq!(f.len(), 1, "{f:?}");
            assert!(f[0].starts_with("soak too short to judge growth"), "{f:?}");
            assert!(f[0].contains(why), "{f:?}");
        }
        assert!(judged(Some(flat(MIN_SOAK_SAMPLES)), Some(limits)).passed());
        // Without a soak, nothing is judged, so nothing is missing.
        assert!(judged(None, None).passed());
    }

    #[test]
    fn defaults_are_the_proof_of_concepts() {
        // gostress: -producers 100 -consumers 100 -interval 10ms
        // -min_size 2048 -max_size 2048 -duration 30s -level 3.
        let c = Config::default();
        assert_eq!(c.params.compression_level(), 3);
        assert_eq!(c.params, Recipe::Balanced.params().checksum(false));
        assert_eq!((c.producers, c.consumers), (100, 100));
        assert_eq!(c.interval, Duration::from_millis(10));
        assert_eq!((c.workload.min_size, c.workload.max_size), (2048, 2048));
        assert_eq!(c.duration, Duration::from_secs(30));
        assert!(!c.replay);
    }

    #[test]
    fn growth_is_judged_after_warm_up_only() {
        let limits = Some(SoakLimits::default());
        // Flat after a 20 s warm-up ramp: not growing.
        let flat = series(
            |t| 30.0 + 10.0 * (t.min(20.0) / 20.0),
            |t| if t < 20.0 { t } else { 20.0 },
        );
        let g = growth(&flat, Duration::from_secs(20), limits).unwrap();
        assert!(
            g.rss_mib_per_min.abs() < 1e-6 && g.contexts_per_min.abs() < 1e-6,
            "{g:?}"
        );
        assert!(!g.growing());
        // 2 MiB per minute of RSS growth: one MiB every 30 s.
        let leak = series(|t| 30.0 + t / 30.0, |_| 8.0);
        let g = growth(&leak, Duration::from_secs(20), limits).unwrap();
        assert!((g.rss_mib_per_min - 2.0).abs() < 0.05, "{g:?}");
        assert!(g.growing());
        // A context every 10 s: 6 per minute.
        let ctx = series(|_| 30.0, |t| (t / 10.0).floor());
        let g = growth(&ctx, Duration::from_secs(20), limits).unwrap();
        assert!((g.contexts_per_min - 6.0).abs() < 0.3, "{g:?}");
        assert!(g.growing());
        // Reported but not judged without limits.
        assert!(
            !growth(&ctx, Duration::from_secs(20), None)
                .unwrap()
                .growing()
        );
    }
}
