//! `perfkit stress`: producers compress blocks, consumers decompress and
//! verify every one, under a chosen context-pool strategy; reports the
//! per-second series (throughput, MB per CPU-second, ratio, threads, tasks,
//! RSS, contexts), HDR latencies and totals, and fails when a block is lost
//! or corrupt or (with `--soak`) memory or contexts keep growing.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::flags::ReportArgs;
use anyhow::{Context, Result};
use perfkit::report::{Report, Row, RunInfo, Section, Value};
use perfkit::units::parse_duration;
use stress::{Config, Fault, FaultKind, Outcome, PoolKind, Runtime, Sample, SoakLimits, Workload};
use zstdkit::Recipe;

/// At most this many rows of the per-second series in the text table (the
/// JSON document always has them all).
const TABLE_ROWS: usize = 30;

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
    #[arg(long, default_value_t = 0, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1 << 16))]
    pub chanpool_size: usize,
    /// tokio worker threads [default: one per core; at most 1024].
    #[arg(long, default_value_t = 0, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1024))]
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

/// Runs the stress test(s), renders the report, and fails (after the
/// report is out) when anything was lost, corrupt or growing.
pub fn run(args: StressArgs) -> Result<ExitCode> {
    let (report, failures) = measure(&args)?;
    super::emit(&report, &args.report)?;
    if failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        anyhow::bail!("stress failed: {}", failures.join("; "))
    }
}

fn config(args: &StressArgs) -> Result<Config> {
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
    let rounds = rounds(args);
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

/// A one-line live status on stderr, only when it is a terminal and JSON
/// was not asked for.
fn status_line(json: bool) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        .with_style(ProgressStyle::with_template("{spinner} {msg}").expect("static template"))
}

/// Runs what the args ask for; returns the report and the failures (one
/// line each, prefixed by the strategy), so callers can render first and
/// fail after.
pub fn measure(args: &StressArgs) -> Result<(Report, Vec<String>)> {
    let base = config(args)?;
    let kinds: Vec<PoolKind> = if args.compare {
        PoolKind::ALL.to_vec()
    } else {
        vec![args.pool]
    };
    let rounds = rounds(args);
    anyhow::ensure!(
        !(args.soak && rounds > 1),
        "--soak needs one continuous run per strategy: drop --rounds"
    );
    let slice = base.duration / rounds;
    anyhow::ensure!(
        base.warmup < slice,
        "each of the {rounds} rounds ({slice:?}) must be longer than the warm-up ({:?})",
        base.warmup
    );
    let bar = status_line(args.report.json);
    let mut outcomes: Vec<Outcome> = Vec::new();
    for round in 0..rounds {
        for (i, &kind) in kinds.iter().enumerate() {
            let cfg = Config {
                pool: kind,
                duration: slice,
                ..base.clone()
            };
            let duration = cfg.duration.as_secs_f64();
            let out = stress::run(&cfg, &mut |s: &Sample| {
                bar.set_message(format!(
                    "{kind} round {}/{rounds} {:>5.1}/{duration:.0}s  {:>7.1} MB/s  {:>6.1} MB/CPU-s  ratio {:.2}  RSS {:.1} MiB  threads {}  tasks {}  contexts {}",
                    round + 1,
                    s.at.as_secs_f64(),
                    s.mb_per_s,
                    s.mb_per_cpu_s,
                    s.ratio,
                    s.rss_bytes as f64 / (1 << 20) as f64,
                    s.os_threads,
                    s.tasks,
                    s.contexts_alive,
                ));
                bar.tick();
            })
            .with_context(|| format!("stress run with pool {kind}"))?;
            match outcomes.get_mut(i) {
                Some(o) => o.absorb(out),
                None => outcomes.push(out),
            }
        }
    }
    bar.finish_and_clear();
    let failures = outcomes
        .iter()
        .flat_map(|o| {
            o.failures()
                .into_iter()
                .map(move |f| format!("{}: {f}", o.pool))
        })
        .collect();
    Ok((render(args, &base, &outcomes), failures))
}

fn mib(bytes: u64) -> Value {
    Value::num(bytes as f64 / (1 << 20) as f64, 1)
}

/// Builds the report: totals (one row per strategy, with ratios to the
/// best under --compare), latencies, and each run's series.
pub fn render(args: &StressArgs, cfg: &Config, outcomes: &[Outcome]) -> Report {
    let mut report = Report::new("stress");
    let best_cpu = outcomes
        .iter()
        .map(Outcome::mb_per_cpu_s)
        .fold(0.0, f64::max);
    let best_wall = outcomes.iter().map(Outcome::mb_per_s).fold(0.0, f64::max);
    let interval = if cfg.interval.is_zero() {
        "saturating".to_owned()
    } else {
        format!("every {:?} per producer", cfg.interval)
    };
    let content = match &args.input {
        Some(p) => format!("slices of {}", p.display()),
        None => "UUID text".into(),
    };
    let mut totals = Section::new(format!(
        "totals: recipe {}{}, {} producers / {} consumers on {}, {interval}, {}..={} byte blocks of {content}{}",
        args.recipe,
        if args.checksum {
            ""
        } else {
            " (no frame checksum)"
        },
        cfg.producers,
        cfg.consumers,
        cfg.runtime.name(),
        cfg.workload.min_size,
        cfg.workload.max_size,
        if cfg.replay { ", replayed" } else { "" },
    ));
    for o in outcomes {
        let t = o.totals;
        let mut row = Row::new(o.pool.name())
            .col("throughput_mb_s", Value::num(o.mb_per_s(), 1))
            .col("mb_per_cpu_s", Value::num(o.mb_per_cpu_s(), 1))
            .col("ratio", Value::num(o.ratio(), 3))
            .col("produced", t.produced)
            .col("verified", t.verified)
            .col("lost", t.lost)
            .col("duplicated", t.duplicated)
            .col("corrupt", t.corrupt)
            .col("peak_rss_mib", mib(o.peak_rss_bytes))
            .col("peak_threads", o.peak_threads)
            .col("contexts_created", o.contexts.created())
            .col("contexts_alive", o.contexts.alive());
        if let Some(g) = o.growth {
            row = row
                .col("rss_slope_mib_per_min", Value::num(g.rss_mib_per_min, 2))
                .col("contexts_slope_per_min", Value::num(g.contexts_per_min, 2));
        }
        if outcomes.len() > 1 {
            row = row
                .col("vs_best_cpu", Value::num(o.mb_per_cpu_s() / best_cpu, 3))
                .col("vs_best_wall", Value::num(o.mb_per_s() / best_wall, 3));
        }
        row = row.col("verdict", if o.passed() { "pass" } else { "FAIL" });
        totals.row(row.elapsed(o.measured));
    }
    totals.note(format!(
        "MB = 10^6 uncompressed bytes verified after a {:?} warm-up; MB per CPU-second counts user+system time of the whole process (CLOCK_PROCESS_CPUTIME_ID); RSS and threads from /proc/self/status",
        cfg.warmup
    ));
    let rounds = rounds(args);
    if outcomes.len() > 1 {
        let order = if rounds > 1 {
            format!(
                "interleaves the strategies in this process: {rounds} rounds, each running every strategy for {:?} in turn",
                cfg.duration / rounds
            )
        } else {
            format!(
                "ran the strategies one after another in this process, {:?} each{}",
                cfg.duration,
                if cfg.soak.is_some() {
                    " (--soak needs one continuous run per strategy)"
                } else {
                    ""
                }
            )
        };
        totals.note(format!(
            "--compare {order}, warm-up excluded per round; vs_best_* = this strategy / the best (1.000 = best)"
        ));
    }
    if cfg.soak.is_some() {
        totals.note(format!(
            "--soak: fails when after warm-up RSS grows > {} MiB/min or contexts alive > {}/min (least-squares slope of the samples)",
            args.soak_rss_mib_per_min, args.soak_contexts_per_min
        ));
    }
    for o in outcomes {
        for f in o.failures() {
            totals.note(format!("FAIL {}: {f}", o.pool));
        }
    }
    report.sections.push(totals);

    let mut latency = Section::new("latency per block");
    for o in outcomes {
        let elapsed = o.measured;
        for (what, h) in [
            ("compress", &o.compress),
            ("decompress", &o.decompress),
            ("end-to-end", &o.end_to_end),
        ] {
            latency.row(
                Row::new(format!("{} {what}", o.pool))
                    .elapsed(elapsed)
                    .latency(h.clone()),
            );
        }
    }
    latency.note("end-to-end: from the start of producing a block (generation, compression, queueing) to its verification by a consumer");
    if cfg.replay {
        latency.note("--replay: each producer compresses once, so compress rows hold one sample per producer");
    }
    report.sections.push(latency);

    for o in outcomes {
        let step = if args.report.json {
            1
        } else {
            o.samples.len().div_ceil(TABLE_ROWS).max(1)
        };
        let mut series = Section::new(format!("series: {}", o.pool));
        for s in o.samples.iter().step_by(step) {
            series.row(
                Row::new(format!("{:.1}s", s.at.as_secs_f64()))
                    .col("throughput_mb_s", Value::num(s.mb_per_s, 1))
                    .col("mb_per_cpu_s", Value::num(s.mb_per_cpu_s, 1))
                    .col("ratio", Value::num(s.ratio, 3))
                    .col("os_threads", s.os_threads)
                    .col("tasks", s.tasks)
                    .col("rss_mib", mib(s.rss_bytes))
                    .col("contexts_alive", s.contexts_alive)
                    .col("contexts_created", s.contexts_created),
            );
        }
        if step > 1 {
            series.note(format!(
                "every {step}th of {} samples shown (--json has them all)",
                o.samples.len()
            ));
        }
        report.sections.push(series);
    }

    report.run = RunInfo {
        iterations: outcomes.iter().map(|o| o.totals.blocks).max().unwrap_or(0),
        warmup: outcomes
            .iter()
            .map(|o| o.totals.verified.saturating_sub(o.totals.blocks))
            .max()
            .unwrap_or(0),
        runs: rounds as u64,
        pinned: None,
        timing: format!(
            "Instant around each compress/decompress call; samples every {:?}; iterations = blocks verified after warm-up",
            cfg.sample_every
        ),
    };
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        stress: StressArgs,
    }

    fn rounds_of(argv: &[&str]) -> u32 {
        let cli = Cli::try_parse_from(std::iter::once("stress").chain(argv.iter().copied()))
            .expect("valid arguments");
        rounds(&cli.stress)
    }

    #[test]
    fn compare_interleaves_by_default() {
        // The default 30 s: four rounds of 7.5 s.
        assert_eq!(rounds_of(&["--compare"]), 4);
        // Fewer rounds rather than slices under 2 s, but never one.
        assert_eq!(rounds_of(&["--compare", "--duration", "6s"]), 3);
        assert_eq!(rounds_of(&["--compare", "--duration", "300ms"]), 2);
        assert_eq!(rounds_of(&["--compare", "--rounds", "7"]), 7);
        // A soak's slope needs one continuous run per strategy.
        assert_eq!(rounds_of(&["--compare", "--soak"]), 1);
        assert_eq!(rounds_of(&[]), 1);
        // --rounds means nothing without --compare, and 0 means nothing.
        let parse = |argv: &[&str]| {
            Cli::try_parse_from(std::iter::once("stress").chain(argv.iter().copied())).map(|_| ())
        };
        assert!(parse(&["--rounds", "2"]).is_err());
        assert!(parse(&["--compare", "--rounds", "0"]).is_err());
    }
}
