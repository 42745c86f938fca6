//! `perfkit stress`: producers compress blocks, consumers decompress and
//! verify every one, under a chosen context-pool strategy; reports the
//! per-second series (throughput, MB per CPU-second, ratio, threads, tasks,
//! RSS, contexts), HDR latencies and totals, and fails when a block is lost
//! or corrupt or (with `--soak`) memory or contexts keep growing.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context, Result};
use perfkit_report::{Report, ReportOptions, Row, RunInfo, Section, Value};
use stress::{Outcome, Plan, Progress};
use zstdkit::Recipe;

mod args;

pub use args::StressArgs;

/// At most this many rows of the per-second series in the text table (the
/// JSON document always has them all).
const TABLE_ROWS: usize = 30;

/// What `perfkit stress` was asked to run, and what its report states
/// about the run beyond the plan itself.
#[derive(Debug, Clone)]
pub struct Task {
    /// The strategies, rounds and the run each makes.
    pub plan: Plan,
    /// The recipe the blocks are compressed with, by name.
    pub recipe: Recipe,
    /// Whether frames carry zstd content checksums.
    pub checksum: bool,
    /// What the blocks are made of, for the report's title.
    pub content: String,
    /// How to render the report.
    pub report: ReportOptions,
}

impl Task {
    /// The short comparison `perfkit bench` runs ([`Plan::quick`]).
    pub fn quick(report: ReportOptions) -> Task {
        Task {
            plan: Plan::quick(),
            recipe: Recipe::Fast,
            checksum: false,
            content: "UUID text".into(),
            report,
        }
    }
}

/// Runs the stress test(s), renders the report, and fails (after the
/// report is out) when anything was lost, corrupt or growing.
pub fn run(task: Task) -> Result<ExitCode> {
    let (report, failures) = measure(&task)?;
    super::emit(&report, &task.report)?;
    if failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        anyhow::bail!("stress failed: {}", failures.join("; "))
    }
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

/// Runs the plan with a live status line; returns the report and the
/// failures (one line each, prefixed by the strategy), so callers can
/// render first and fail after.
pub fn measure(task: &Task) -> Result<(Report, Vec<String>)> {
    let bar = status_line(task.report.json);
    let outcomes = task
        .plan
        .run(&mut |p: Progress<'_>| {
            let s = p.sample;
            bar.set_message(format!(
                "{} round {}/{} {:>5.1}/{:.0}s  {:>7.1} MB/s  {:>6.1} MB/CPU-s  ratio {:.2}  RSS {:.1} MiB  threads {}  tasks {}  contexts {}",
                p.pool,
                p.round,
                p.rounds,
                s.at.as_secs_f64(),
                p.slice.as_secs_f64(),
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
        .context("stress run")?;
    bar.finish_and_clear();
    let failures = outcomes
        .iter()
        .flat_map(|o| {
            o.failures()
                .into_iter()
                .map(move |f| format!("{}: {f}", o.pool))
        })
        .collect();
    Ok((render(task, &outcomes), failures))
}

fn mib(bytes: u64) -> Value {
    Value::num(bytes as f64 / (1 << 20) as f64, 1)
}

/// Builds the report: totals (one row per strategy, with ratios to the
/// best under --compare), latencies, and each run's series.
pub fn render(task: &Task, outcomes: &[Outcome]) -> Report {
    let mut report = Report::new("stress");
    report.sections.push(totals(task, outcomes));
    report.sections.push(latency(task, outcomes));
    series(task, outcomes, &mut report);
    let (cfg, rounds) = (&task.plan.config, task.plan.rounds);
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
fn totals(task: &Task, outcomes: &[Outcome]) -> Section {
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
fn latency(task: &Task, outcomes: &[Outcome]) -> Section {
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
fn series(task: &Task, outcomes: &[Outcome], report: &mut Report) {
    for o in outcomes {
        let step = if task.report.json {
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
