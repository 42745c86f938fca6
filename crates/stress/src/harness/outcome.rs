//! What a run measured: the per-interval samples, the totals, the growth
//! fitted over a soak, and whether it passed.

use std::time::Duration;

use hdrhistogram::Histogram;

use super::config::{MIN_SOAK_SAMPLES, Runtime, SoakLimits};
use crate::pool::{ContextCounts, PoolKind};
use crate::trend;

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
    /// The limits growth was to be judged by ([`Config::soak`](super::config::Config::soak)): with
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

/// Fits RSS and contexts alive against minutes, over the samples after
/// warm-up.
pub(super) fn growth(
    samples: &[Sample],
    warmup: Duration,
    limits: Option<SoakLimits>,
) -> Option<Growth> {
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
