//! The flags of `perfkit stress` and their conversion into a [`Task`]:
//! clap's types end here.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use perfkit::units::parse_duration;
use stress::{Config, Fault, FaultKind, Plan, PoolKind, Runtime, SoakLimits, Workload};
use zstdkit::Recipe;

use super::Task;
use crate::flags::ReportArgs;
use perfkit_bench::stress::Settings;

/// The shortest slice `--compare` picks by itself: each round starts a
/// fresh runtime and pool and spends a fifth of its slice warming up, so
/// much shorter slices would measure mostly start-up.
const MIN_SLICE: Duration = Duration::from_secs(2);

/// How many rounds the strategies run in (1 without --compare). DESIGN
/// asks for comparisons to be interleaved, so --compare alone gives at
/// least two, up to four while each slice stays at least [`MIN_SLICE`];
/// --soak alone gives one, since a slope needs one continuous run.
fn rounds(args: &StressArgs) -> u32 {
    match (args.compare, args.rounds) {
        (false, _) => 1,
        // clap keeps --rounds >= 1.
        (true, Some(r)) => r,
        (true, None) if args.soak => 1,
        (true, None) => {
            let fit = args.duration.as_nanos() / MIN_SLICE.as_nanos();
            fit.clamp(2, 4) as u32
        }
    }
}

/// Arguments of `perfkit stress`. The defaults are the original
/// experiment's (the Go proof of concept's): 100 producers and 100
/// consumers, a 2 KiB block of UUID text every 10 ms per producer, for
/// 30 s, at zstd level 3 (`balanced`). Block sizes are exact.
#[derive(Debug, Clone, clap::Args)]
pub struct StressArgs {
    /// Compression recipe (fast, balanced, binary, text, structured_data,
    /// maximum). The default, balanced, is zstd level 3 as in the proof of
    /// concept; the throughput targets are stated at fast.
    #[arg(long, default_value = "balanced", value_parser = parse_recipe)]
    pub recipe: Recipe,
    /// Write (and check) zstd content checksums in every frame. Off by
    /// default: every block is compared byte for byte with its original.
    #[arg(long)]
    pub checksum: bool,
    /// Context pool strategy: fresh, pool, chanpool or thread-local.
    #[arg(long, default_value = "pool", value_parser = parse_pool)]
    pub pool: PoolKind,
    /// Producer tasks (or threads), 1..=100000 (1..=4096 with `--runtime
    /// threads`).
    #[arg(long, default_value_t = 100, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_TASKS))]
    pub producers: usize,
    /// Consumer tasks (or threads), as `--producers`.
    #[arg(long, default_value_t = 100, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_TASKS))]
    pub consumers: usize,
    /// Pause after each block per producer; 0 saturates.
    #[arg(long, default_value = "10ms", value_parser = parse_duration)]
    pub interval: Duration,
    /// Smallest block (bytes; K/M suffixes allowed; at most 1G).
    #[arg(long, default_value = "2048", value_parser = parse_block_size)]
    pub min_size: u64,
    /// Largest block (inclusive; at most 1G).
    #[arg(long, default_value = "2048", value_parser = parse_block_size)]
    pub max_size: u64,
    /// How long producers run (per strategy with --compare).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Where producers and consumers run: tokio (multi-thread runtime) or threads.
    #[arg(long, default_value = "tokio", value_parser = parse_runtime)]
    pub runtime: Runtime,
    /// Slice blocks out of FILE (`-` for stdin) instead of generating UUID text.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Each producer compresses one block and re-sends it forever (the
    /// original experiment's behaviour; measures decompression only).
    #[arg(long)]
    pub replay: bool,
    /// Run every pool strategy for --duration and compare them, interleaved.
    #[arg(long)]
    pub compare: bool,
    /// With --compare: split each strategy's --duration into this many
    /// slices run round-robin, so a change in machine load affects every
    /// strategy alike [default: 4, fewer so a slice lasts at least 2 s, but
    /// at least 2; 1 under --soak, which needs one continuous run].
    #[arg(long, requires = "compare", value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: Option<u32>,
    /// Judge the slopes of RSS and contexts alive after warm-up; fail on
    /// growth, and refuse a run too short to give 10 samples after warm-up.
    #[arg(long)]
    pub soak: bool,
    /// Growth limit for --soak: RSS MiB per minute.
    #[arg(long, default_value_t = 1.0)]
    pub soak_rss_mib_per_min: f64,
    /// Growth limit for --soak: contexts alive per minute.
    #[arg(long, default_value_t = 1.0)]
    pub soak_contexts_per_min: f64,
    /// Excluded from totals, latencies and slopes [default: a fifth of
    /// --duration (of each round), at most 30 s].
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,
    /// Sampling period of the series.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub sample_every: Duration,
    /// Blocks the producer→consumer channel holds (1..=1048576).
    #[arg(long, default_value_t = 1000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1 << 20))]
    pub channel: usize,
    /// Contexts of each kind in chanpool [default: 4 per core; at most 65536].
    // 0 stands for the per-core default; showing it too would contradict
    // the default the text states.
    #[arg(long, default_value_t = 0, hide_default_value = true, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1 << 16))]
    pub chanpool_size: usize,
    /// tokio worker threads [default: one per core; at most 1024].
    #[arg(long, default_value_t = 0, hide_default_value = true, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1024))]
    pub workers: usize,
    /// Test hook: inject a fault, KIND@BLOCK with KIND corrupt-frame,
    /// corrupt-payload, drop, duplicate or leak-context (from BLOCK on)
    /// (repeatable), to prove the run fails.
    #[arg(long, hide = true, value_parser = parse_fault)]
    pub fault: Vec<Fault>,
    #[command(flatten)]
    pub report: ReportArgs,
}

fn parse_fault(s: &str) -> Result<Fault, String> {
    let (kind, block) = s
        .split_once('@')
        .ok_or_else(|| format!("'{s}' is not KIND@BLOCK"))?;
    let kind = match kind {
        "corrupt-frame" => FaultKind::CorruptFrame,
        "corrupt-payload" => FaultKind::CorruptPayload,
        "drop" => FaultKind::Drop,
        "duplicate" => FaultKind::Duplicate,
        "leak-context" => FaultKind::LeakContext,
        other => {
            return Err(format!(
                "unknown fault '{other}' (corrupt-frame, corrupt-payload, drop, duplicate, leak-context)"
            ));
        }
    };
    let block = block
        .parse()
        .map_err(|_| format!("'{block}' is not a block number"))?;
    Ok(Fault { kind, block })
}

/// The most producers or consumers: tasks are cheap, but each holds
/// blocks in flight, and past this the run measures the scheduler.
const MAX_TASKS: u64 = 100_000;

/// The most OS threads `--runtime threads` starts per side: each has its
/// own stack, and spawning tens of thousands fails (or exhausts memory).
const MAX_THREADS: usize = 4096;

/// The largest block: every producer holds one, so a size near the
/// address space aborted on its first allocation.
const MAX_BLOCK: u64 = 1 << 30;

fn parse_block_size(s: &str) -> Result<u64, String> {
    let n = perfkit::units::parse_size(s)?;
    if n > MAX_BLOCK {
        return Err(format!("{s} is more than 1G, the largest block"));
    }
    Ok(n)
}

fn parse_recipe(s: &str) -> Result<Recipe, String> {
    s.parse().map_err(|e: zstdkit::Error| e.to_string())
}

fn parse_pool(s: &str) -> Result<PoolKind, String> {
    s.parse().map_err(|e: stress::Error| e.to_string())
}

fn parse_runtime(s: &str) -> Result<Runtime, String> {
    s.parse().map_err(|e: stress::Error| e.to_string())
}

impl StressArgs {
    /// The task these flags ask for: the workload read (stdin or a file),
    /// the rounds and warm-up worked out, every limit checked.
    pub fn task(&self) -> Result<Task> {
        let rounds = rounds(self);
        anyhow::ensure!(
            !(self.soak && rounds > 1),
            "--soak needs one continuous run per strategy: drop --rounds"
        );
        let config = config(self, rounds)?;
        Ok(Task {
            settings: Settings {
                plan: Plan {
                    strategies: if self.compare {
                        PoolKind::ALL.to_vec()
                    } else {
                        vec![self.pool]
                    },
                    config,
                    rounds,
                },
                recipe: self.recipe,
                checksum: self.checksum,
                content: match &self.input {
                    Some(p) => format!("slices of {}", p.display()),
                    None => "UUID text".into(),
                },
            },
            report: self.report.options(),
        })
    }
}

fn config(args: &StressArgs, rounds: u32) -> Result<Config> {
    let min = usize::try_from(args.min_size).context("--min-size is too large")?;
    let max = usize::try_from(args.max_size).context("--max-size is too large")?;
    anyhow::ensure!(
        min <= max,
        "--min-size ({min}) is more than --max-size ({max})"
    );
    if args.runtime == Runtime::Threads {
        for (flag, n) in [
            ("--producers", args.producers),
            ("--consumers", args.consumers),
        ] {
            anyhow::ensure!(
                n <= MAX_THREADS,
                "{flag} {n} is more than {MAX_THREADS}, the most threads --runtime threads starts"
            );
        }
    }
    let workload = match &args.input {
        None => Workload::uuids(min, max),
        Some(p) if p.as_os_str() == "-" => {
            let mut data = Vec::new();
            std::io::stdin()
                .read_to_end(&mut data)
                .context("reading stdin")?;
            anyhow::ensure!(
                !data.is_empty(),
                "stdin is empty; blocks need bytes to slice"
            );
            Workload::file(data, min, max)
        }
        Some(p) => Workload::from_path(p, min, max)?,
    };
    let warmup = args
        .warmup
        .unwrap_or_else(|| (args.duration / rounds / 5).min(Duration::from_secs(30)));
    Ok(Config {
        params: args.recipe.params().checksum(args.checksum),
        pool: args.pool,
        producers: args.producers,
        consumers: args.consumers,
        interval: args.interval,
        workload,
        replay: args.replay,
        duration: args.duration,
        runtime: args.runtime,
        worker_threads: args.workers,
        channel_capacity: args.channel,
        chanpool_size: args.chanpool_size,
        sample_every: args.sample_every,
        warmup,
        soak: args.soak.then_some(SoakLimits {
            rss_mib_per_min: args.soak_rss_mib_per_min,
            contexts_per_min: args.soak_contexts_per_min,
        }),
        faults: args.fault.clone(),
        seed: 0x5eed,
    })
}

#[cfg(test)]
mod tests;
