//! `perfkit zip bench`: the flags, then [`perfkit_bench::zip`] measures and
//! [`super::emit`] renders.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::flags::ReportArgs;
use anyhow::Result;
use perfkit::report::Report;
use perfkit::units::parse_duration;
use perfkit_bench::zip::{Keep, Settings};

/// Arguments of `perfkit zip bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct ZipBenchArgs {
    /// Measuring time per scenario (all modes together).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub time: Duration,
    /// At most this many measured iterations per scenario.
    #[arg(long, default_value_t = 200)]
    pub iterations: u64,
    /// Warm-up iterations, excluded.
    #[arg(long, default_value_t = 1)]
    pub warmup: u64,
    /// Deflate level (0..=9).
    #[arg(short = 'l', long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(0..=9))]
    pub level: u32,
    /// Workers for the parallel mode (1..=256).
    #[arg(short = 'j', long, default_value_t = 2, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub jobs: usize,
    /// Add the 200 MiB single-file scenario.
    #[arg(long)]
    pub large: bool,
    /// Only the small scenarios (used by `perfkit bench`).
    #[arg(long)]
    pub quick: bool,
    /// Also write one archive per row, made after the timed ones, to
    /// DIR/s<section>-r<row>.zip (indexes of the report's sections and
    /// rows, from 0), so they can be checked with other tools.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
}

impl ZipBenchArgs {
    /// The measurement's plain options.
    pub fn settings(&self) -> Settings {
        Settings {
            time: self.time,
            iterations: self.iterations,
            warmup: self.warmup,
            level: self.level,
            jobs: self.jobs,
            large: self.large,
            quick: self.quick,
            keep: self.keep.clone().map(|dir| Keep {
                dir,
                write: |path, bytes| {
                    perfkit::report::write_atomically(path, |f| Ok(f.write_all(bytes)?))
                },
            }),
        }
    }
}

/// Measures what the flags ask for (also used by `perfkit bench`).
pub fn measure(args: &ZipBenchArgs) -> Result<Report> {
    perfkit_bench::zip::measure(&args.settings())
}

/// Runs `perfkit zip bench`.
pub fn run(args: ZipBenchArgs) -> Result<ExitCode> {
    let report = measure(&args)?;
    super::emit(&report, &args.report)
}
