//! `perfkit stress`: producers compress blocks, consumers decompress and
//! verify every one, under a chosen context-pool strategy; reports the
//! per-second series (throughput, MB per CPU-second, ratio, threads, tasks,
//! RSS, contexts), HDR latencies and totals, and fails when a block is lost
//! or corrupt or (with `--soak`) memory or contexts keep growing.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context, Result};
use perfkit_bench::stress::Settings;
use perfkit_report::{Report, ReportOptions};
use stress::Progress;

mod args;

pub use args::StressArgs;

/// What `perfkit stress` was asked to run, and how to render its report.
#[derive(Debug, Clone)]
pub struct Task {
    /// The runs, and what the report says about them.
    pub settings: Settings,
    /// How to render the report.
    pub report: ReportOptions,
}

impl Task {
    /// The short comparison `perfkit bench` runs ([`Settings::quick`]).
    pub fn quick(report: ReportOptions) -> Task {
        Task {
            settings: Settings::quick(),
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
/// render first and fail after (`perfkit_bench::stress`).
pub fn measure(task: &Task) -> Result<(Report, Vec<String>)> {
    let bar = status_line(task.report.json);
    let measured = perfkit_bench::stress::measure(
        &task.settings,
        task.report.json,
        &mut |p: Progress<'_>| {
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
        },
    )
    .context("stress run")?;
    bar.finish_and_clear();
    Ok(measured)
}
