//! `perfkit compress bench`: the flags, then [`perfkit_bench::zstd`]
//! measures and [`super::emit`] renders.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::flags::ReportArgs;
use anyhow::Result;
use perfkit::units::parse_duration;
use perfkit_bench::zstd::Settings;
use zstdkit::Recipe;

/// Arguments of `perfkit compress bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompressBenchArgs {
    /// Inputs; default: the built-in corpus (one file of each kind).
    pub files: Vec<PathBuf>,
    /// Recipes to measure (comma separated); default: all.
    #[arg(long, value_delimiter = ',', value_parser = parse_recipe)]
    pub recipes: Vec<Recipe>,
    /// Inline budget per call for the verdict column and the per-call policy.
    #[arg(long, default_value = "100us", value_parser = parse_duration)]
    pub budget: Duration,
    /// Measuring time per recipe × input (all four modes together).
    #[arg(long, default_value = "200ms", value_parser = parse_duration)]
    pub time: Duration,
    /// At most this many measured iterations per case.
    #[arg(long, default_value_t = 2000)]
    pub iterations: u64,
    /// Warm-up iterations per case, excluded from the histograms.
    #[arg(long, default_value_t = 2)]
    pub warmup: u64,
    /// How long each policy of the heartbeat experiment runs (0 to skip it).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub heartbeat: Duration,
    /// Also add the 64 MiB mixed file to the built-in inputs.
    #[arg(long)]
    pub large: bool,
    /// Compare with the `zstd` CLI on every input: single-threaded and -T2
    /// compression and decompression, interleaved, medians of --runs.
    #[arg(long)]
    pub vs_zstd: bool,
    /// Runs per side for --vs-zstd (at least 1: the report is their median).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: u64,
    #[command(flatten)]
    pub report: ReportArgs,
}

impl CompressBenchArgs {
    /// The measurement's plain options.
    pub fn settings(&self) -> Settings {
        Settings {
            files: self.files.clone(),
            recipes: self.recipes.clone(),
            budget: self.budget,
            time: self.time,
            iterations: self.iterations,
            warmup: self.warmup,
            heartbeat: self.heartbeat,
            large: self.large,
            vs_zstd: self.vs_zstd,
            runs: self.runs,
        }
    }
}

fn parse_recipe(s: &str) -> Result<Recipe, String> {
    s.parse().map_err(|e: zstdkit::Error| e.to_string())
}

/// Measures what the flags ask for, with a progress bar on a terminal.
pub fn measure(args: &CompressBenchArgs) -> Result<perfkit::report::Report> {
    let bar = super::progress(None, args.report.json);
    perfkit_bench::zstd::measure(&args.settings(), &bar)
}

/// Runs the benchmark and renders it.
pub fn run(args: CompressBenchArgs) -> Result<ExitCode> {
    let report = measure(&args)?;
    super::emit(&report, &args.report)
}
