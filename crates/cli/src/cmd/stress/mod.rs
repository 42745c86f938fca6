//! `perfkit stress`: producers compress blocks, consumers decompress and
//! verify every one, under a chosen context-pool strategy; reports the
//! per-second series (throughput, MB per CPU-second, ratio, threads, tasks,
//! RSS, contexts), HDR latencies and totals, and fails when a block is lost
//! or corrupt or (with `--soak`) memory or contexts keep growing.

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

/// Runs the plan with a live status line ([`super::status_line`]); returns
/// the report and the failures (one line each, prefixed by the strategy),
/// so the report is rendered first and the run fails after.
fn measure(task: &Task) -> Result<(Report, Vec<String>)> {
    let bar = super::status_line(task.report.json);
    let measured =
        perfkit_bench::stress::measure(&task.settings, task.report.json, &mut |p: Progress<'_>| {
            bar.set_message(p.to_string());
            bar.tick();
        })
        .context("stress run")?;
    bar.finish_and_clear();
    Ok(measured)
}
