//! The flags of `perfkit bench` and their conversion into a [`Job`]:
//! clap's types end here.

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
    report: ReportArgs,
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
    /// The job these flags ask for.
    pub fn job(&self) -> Job {
        Job {
            only: self.only.iter().map(|&p| p.into()).collect(),
            keep: self.keep.clone(),
            report: self.report.options(),
        }
    }
}
