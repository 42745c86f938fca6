//! `perfkit report`: work on reports other runs wrote.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use perfkit::units::parse_duration;

use crate::flags::ReportArgs;

/// `perfkit report …`.
#[derive(Debug, clap::Args)]
pub struct ReportCmdArgs {
    #[command(subcommand)]
    command: ReportCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ReportCommand {
    /// Add up HdrHistogram interval logs (`--hlog` files of runs on several
    /// machines, or of any HdrHistogram tool) into one report: each log
    /// aligned on its own start, intervals of one tag in one slot added.
    Merge(MergeArgs),
}

/// `perfkit report merge`.
#[derive(Debug, clap::Args)]
struct MergeArgs {
    /// The interval logs.
    #[arg(required = true, value_name = "HLOG")]
    files: Vec<PathBuf>,
    /// Width of a time slot (e.g. `1s`, `500ms`); default: the shortest
    /// interval in the logs.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    interval: Option<Duration>,
    /// Also print every slot's histograms, not only each tag's total.
    #[arg(long)]
    intervals: bool,
    /// `--hlog` writes the merged slots as one interval log.
    #[command(flatten)]
    report: ReportArgs,
}

/// Runs `perfkit report`.
pub fn run(args: ReportCmdArgs) -> Result<ExitCode> {
    match args.command {
        ReportCommand::Merge(a) => merge(a),
    }
}

fn merge(a: MergeArgs) -> Result<ExitCode> {
    let options = a.report.options();
    // Each slot's histograms are kept only when they are shown or written.
    let keep_slots = a.intervals || options.hlog.is_some();
    let merged = perfkit::report::merge::merge(&a.files, a.interval, keep_slots)?;
    // Read, but worth saying: one line each, before the report.
    for w in &merged.warnings {
        eprintln!("perfkit: {w}");
    }
    let report = merged.report(a.intervals);
    let mut files = super::report_files(&options)?;
    if let Some((path, mut out)) = files.take_hlog() {
        merged
            .write_hlog(out.file_mut())
            .and_then(|()| out.commit())
            .with_context(|| format!("writing interval log {}", path.display()))?;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    perfkit::report::emit_to(&report, &options, &mut out, files)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
