//! What a run is asked to do: the runtime, the workload, the pool, the
//! faults to inject and the soak limits, and their validation.

use std::time::Duration;

use zstdkit::{Params, Recipe};

use crate::error::{Error, Result};
use crate::pool::PoolKind;
use crate::workload::Workload;

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

pub(super) fn validate(c: &Config) -> Result<()> {
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
