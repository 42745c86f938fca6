//! The flags of `perfkit bench` and their conversion into a [`Job`]:
//! clap's types end here.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::error::ErrorKind;
use perfkit::units::parse_duration;
use perfkit_bench::zstd::Settings as ZstdSettings;
use zstdkit::Recipe;

use super::{Job, Part};
use crate::flags::ReportArgs;

/// Arguments of `perfkit bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Run only these parts (comma-separated), named as the report's
    /// section prefixes; all of them by default.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PART,...")]
    only: Vec<PartArg>,
    /// With the zip part: also write one archive per zip row, made after
    /// the timed ones, to DIR/s<section>-r<row>.zip (indexes of the zip
    /// part's sections and rows, from 0), to check them with other tools.
    #[arg(long, value_name = "DIR")]
    keep: Option<std::path::PathBuf>,
    #[command(flatten)]
    zstd: ZstdPartArgs,
    #[command(flatten)]
    report: ReportArgs,
}

/// The zstd part's own settings (what `compress bench` took); each
/// defaults to the main job's short run.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "The zstd part")]
pub struct ZstdPartArgs {
    /// Measure these files instead of the built-in corpus (repeat the flag
    /// for more).
    #[arg(long = "zstd-input", value_name = "FILE")]
    inputs: Vec<PathBuf>,
    /// Recipes to measure (comma separated); default: all.
    #[arg(long, value_delimiter = ',', value_parser = parse_recipe, value_name = "RECIPE,...")]
    recipes: Vec<Recipe>,
    /// Inline budget per call for the placement column and the per-call
    /// policy (default 100us).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    budget: Option<Duration>,
    /// Measuring time per recipe and input, all modes together (default
    /// 40ms).
    #[arg(long = "zstd-time", value_parser = parse_duration, value_name = "DURATION")]
    time: Option<Duration>,
    /// At most this many measured iterations per case (default 500).
    #[arg(long = "zstd-iterations", value_name = "N")]
    iterations: Option<u64>,
    /// Warm-up iterations per case, left out of the histograms (default 1).
    #[arg(long = "zstd-warmup", value_name = "N")]
    warmup: Option<u64>,
    /// How long each policy of the heartbeat experiment runs; 0 skips it
    /// (default 400ms).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    heartbeat: Option<Duration>,
    /// Also measure the 64 MiB mixed file.
    #[arg(long)]
    large: bool,
    /// Compare with the zstd CLI on every input: single-threaded and -T2,
    /// both directions, interleaved, medians of --zstd-runs.
    #[arg(long)]
    vs_zstd: bool,
    /// Runs per side for --vs-zstd (at least 1; default 1).
    #[arg(long = "zstd-runs", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    runs: Option<u64>,
}

fn parse_recipe(s: &str) -> Result<Recipe, String> {
    s.parse().map_err(|e: zstdkit::Error| e.to_string())
}

impl ZstdPartArgs {
    /// The zstd part's settings: the short run, with what was given.
    fn settings(&self) -> ZstdSettings {
        let quick = ZstdSettings::quick();
        ZstdSettings {
            files: self.inputs.clone(),
            recipes: self.recipes.clone(),
            budget: self.budget.unwrap_or(quick.budget),
            time: self.time.unwrap_or(quick.time),
            iterations: self.iterations.unwrap_or(quick.iterations),
            warmup: self.warmup.unwrap_or(quick.warmup),
            heartbeat: self.heartbeat.unwrap_or(quick.heartbeat),
            large: self.large,
            vs_zstd: self.vs_zstd,
            runs: self.runs.unwrap_or(quick.runs),
        }
    }

    /// Whether any flag of the part was given.
    fn given(&self) -> bool {
        !self.inputs.is_empty()
            || !self.recipes.is_empty()
            || self.budget.is_some()
            || self.time.is_some()
            || self.iterations.is_some()
            || self.warmup.is_some()
            || self.heartbeat.is_some()
            || self.large
            || self.vs_zstd
            || self.runs.is_some()
    }
}

/// A part of the main job: one component's benchmark, or the commands run
/// as processes. The name is the prefix of the part's report sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PartArg {
    /// zstdkit: recipes, the inline budget, the heartbeat experiment.
    Zstd,
    /// BE-Tree: std, iterator and cooperative search.
    Betree,
    /// fixcore: scan, parse, build, store, deferred, affinity, transport.
    Fix,
    /// zipstream writers against the zip crate and s-zip.
    Zip,
    /// The codec stress harness, every pool strategy.
    Stress,
    /// The user-facing commands as child processes, beside the library.
    Commands,
}

impl From<PartArg> for Part {
    fn from(p: PartArg) -> Part {
        match p {
            PartArg::Zstd => Part::Zstd,
            PartArg::Betree => Part::Betree,
            PartArg::Fix => Part::Fix,
            PartArg::Zip => Part::Zip,
            PartArg::Stress => Part::Stress,
            PartArg::Commands => Part::Commands,
        }
    }
}

impl BenchArgs {
    /// The job these flags ask for; the zstd part's flags without that
    /// part in `--only` are a usage error (the `Err` is the exit code,
    /// the error printed as clap prints its own).
    pub fn job(&self) -> Result<Job, ExitCode> {
        let only: Vec<Part> = self.only.iter().map(|&p| p.into()).collect();
        // A part's flags without the part would be silently ignored.
        let refuse = |what: &str| {
            let err = clap::Error::raw(ErrorKind::ArgumentConflict, format!("{what}\n"));
            let _ = err.print();
            Err(ExitCode::from(2))
        };
        if self.zstd.given() && !Part::Zstd.wanted(&only) {
            return refuse("the zstd part's flags need the zstd part (--only zstd,...)");
        }
        if self.keep.is_some() && !Part::Zip.wanted(&only) {
            return refuse("--keep needs the zip part (--only zip,...)");
        }
        Ok(Job {
            only,
            zstd: self.zstd.settings(),
            keep: self.keep.clone(),
            report: self.report.options(),
        })
    }
}
