//! `perfkit report`: work on reports other runs wrote.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use perfkit_report::ReportOptions;

mod args;

pub use args::ReportCmdArgs;

/// What `perfkit report` was asked to do.
#[derive(Debug)]
pub enum Task {
    /// Add up interval logs into one report.
    Merge(Merge),
}

/// How to merge.
#[derive(Debug)]
pub struct Merge {
    /// The interval logs.
    pub files: Vec<PathBuf>,
    /// Width of a time slot; the shortest interval in the logs if none.
    pub interval: Option<Duration>,
    /// Also show every slot's histograms, not only each tag's total.
    pub intervals: bool,
    /// How to render (`--hlog` writes the merged slots as one log).
    pub report: ReportOptions,
}

/// Runs `perfkit report`.
pub fn run(task: Task) -> Result<ExitCode> {
    match task {
        Task::Merge(m) => merge(m),
    }
}

fn merge(a: Merge) -> Result<ExitCode> {
    let options = a.report;
    // Each slot's histograms are kept only when they are shown or written.
    let keep_slots = a.intervals || options.hlog.is_some();
    let merged = perfkit_report::merge::merge(&a.files, a.interval, keep_slots)?;
    // Read, but worth saying: one line each, before the report.
    for w in &merged.warnings {
        eprintln!("perfkit: {w}");
    }
    let report = merged.report(a.intervals);
    let mut files = super::report_files(&options)?;
    if let Some((path, mut out)) = files.take_hlog() {
        merged
            .write_hlog(out.file_mut())
            .map_err(anyhow::Error::from)
            .and_then(|()| Ok(out.commit()?))
            .with_context(|| format!("writing interval log {}", path.display()))?;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    perfkit_report::emit_to(&report, &options, &mut out, files)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
