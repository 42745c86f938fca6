//! `perfkit stress`'s report: the runs of a [`stress::Plan`] (producers
//! compress blocks, consumers decompress and verify every one, under each
//! context-pool strategy) as totals per strategy, HDR latencies per stage
//! and each run's per-second series (throughput, MB per CPU-second, ratio,
//! threads, tasks, RSS, contexts), and the failures to report: a block lost
//! or corrupt, or (with a soak) memory or contexts growing.
//!
//! ```no_run
//! use perfkit_bench::stress::{self, Settings};
//!
//! let settings = Settings::quick();
//! let (report, failures) = stress::measure(&settings, false, &mut |_| {})?;
//! assert!(failures.is_empty(), "{failures:?}");
//! assert_eq!(report.sections[0].rows.len(), settings.plan.strategies.len());
//! # Ok::<(), ::stress::Error>(())
//! ```

use perfkit_report::{Report, Row, RunInfo, Section, Value};
use stress::{Outcome, Plan, Progress};
use zstdkit::Recipe;

/// At most this many rows of the per-second series in the text table (the
/// JSON document always has them all).
pub const TABLE_ROWS: usize = 30;

/// What a stress run runs, and what its report states about the run
/// beyond the plan itself.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The strategies, rounds and the run each makes.
    pub plan: Plan,
    /// The recipe the blocks are compressed with, by name.
    pub recipe: Recipe,
    /// Whether frames carry zstd content checksums.
    pub checksum: bool,
    /// What the blocks are made of, for the report's title.
    pub content: String,
}

impl Settings {
    /// The short comparison `perfkit bench` runs ([`Plan::quick`]).
    pub fn quick() -> Settings {
        Settings {
            plan: Plan::quick(),
            recipe: Recipe::Fast,
            checksum: false,
            content: "UUID text".into(),
        }
    }
}

/// Runs the plan, telling `progress` of every sample; returns the report
/// ([`report`]) and the failures (one line each, prefixed by the
/// strategy), so a caller can render first and fail after.
pub fn measure(
    settings: &Settings,
    every_sample: bool,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<(Report, Vec<String>), stress::Error> {
    let outcomes = settings.plan.run(progress)?;
    let failures = outcomes
        .iter()
        .flat_map(|o| {
            o.failures()
                .into_iter()
                .map(move |f| format!("{}: {f}", o.pool))
        })
        .collect();
    Ok((report(settings, &outcomes, every_sample), failures))
}

fn mib(bytes: u64) -> Value {
    Value::num(bytes as f64 / (1 << 20) as f64, 1)
}

/// Builds the report of `outcomes`, the runs `settings` asked for: totals
/// (one row per strategy, with ratios to the best under --compare),
/// latencies, and each run's series (every sample with `every_sample`, at
/// most [`TABLE_ROWS`] of them otherwise).
pub fn report(settings: &Settings, outcomes: &[Outcome], every_sample: bool) -> Report {
    let mut report = Report::new("stress");
    report.sections.push(totals(settings, outcomes));
    report.sections.push(latency(settings, outcomes));
    series(outcomes, every_sample, &mut report);
    let (cfg, rounds) = (&settings.plan.config, settings.plan.rounds);
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
            "Instant around each compress/decompress call; samples every {}; iterations = blocks verified after warm-up",
            human(cfg.sample_every)
        ),
    };
    report
}

/// The totals: one row per strategy, with ratios to the best under
/// --compare, and the notes on how the run was made.
fn totals(task: &Settings, outcomes: &[Outcome]) -> Section {
    let cfg = &task.plan.config;
    let best_cpu = outcomes
        .iter()
        .map(Outcome::mb_per_cpu_s)
        .fold(0.0, f64::max);
    let best_wall = outcomes.iter().map(Outcome::mb_per_s).fold(0.0, f64::max);
    let interval = if cfg.interval.is_zero() {
        "saturating".to_owned()
    } else {
        format!("every {} per producer", human(cfg.interval))
    };
    let content = &task.content;
    let mut totals = Section::new(format!(
        "totals: recipe {}{}, {} producers / {} consumers on {}, {interval}, {}..={} byte blocks of {content}{}",
        task.recipe,
        if task.checksum {
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
        "MB = 10^6 uncompressed bytes verified after a {} warm-up; MB per CPU-second counts user+system time of the whole process (CLOCK_PROCESS_CPUTIME_ID); RSS and threads from /proc/self/status",
        human(cfg.warmup)
    ));
    let rounds = task.plan.rounds;
    if outcomes.len() > 1 {
        let order = if rounds > 1 {
            format!(
                "interleaves the strategies in this process: {rounds} rounds, each running every strategy for {} in turn",
                human(cfg.duration / rounds)
            )
        } else {
            format!(
                "ran the strategies one after another in this process, {} each{}",
                human(cfg.duration),
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
    if let Some(soak) = &cfg.soak {
        totals.note(format!(
            "--soak: fails when after warm-up RSS grows > {} MiB/min or contexts alive > {}/min (least-squares slope of the samples)",
            soak.rss_mib_per_min, soak.contexts_per_min
        ));
    }
    for o in outcomes {
        for f in o.failures() {
            totals.note(format!("FAIL {}: {f}", o.pool));
        }
    }
    totals
}

/// The latency of each stage per block, per strategy.
fn latency(task: &Settings, outcomes: &[Outcome]) -> Section {
    let cfg = &task.plan.config;
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
    latency
}

/// Each run's samples over time, one section per strategy (thinned for
/// the terminal, all of them in JSON).
fn series(outcomes: &[Outcome], every_sample: bool, report: &mut Report) {
    for o in outcomes {
        let step = if every_sample {
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
}

/// A duration in the report's units ("10.0 ms", "7.50 s"), not its Debug
/// text ("3.333333333s").
fn human(d: std::time::Duration) -> String {
    perfkit_report::format_ns(d.as_nanos() as f64)
}
