//! The flags of `perfkit report` and their conversion into a [`Task`].

use std::path::PathBuf;
use std::time::Duration;

use perfkit::units::parse_duration;

use super::{Merge, Task};
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

impl ReportCmdArgs {
    /// The task these flags ask for.
    pub fn task(self) -> Task {
        match self.command {
            ReportCommand::Merge(m) => Task::Merge(Merge {
                files: m.files,
                interval: m.interval,
                intervals: m.intervals,
                report: m.report.options(),
            }),
        }
    }
}
