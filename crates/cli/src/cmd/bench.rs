//! `perfkit bench`: the main job. Runs every component's benchmark on
//! built-in workloads with short settings and prints one report.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use perfkit::report::{Report, ReportArgs};

use super::compress_bench::{self, CompressBenchArgs};

/// Arguments of `perfkit bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[command(flatten)]
    report: ReportArgs,
}

/// Runs every component benchmark and renders them as one report whose
/// sections are prefixed by the component.
pub fn run(args: BenchArgs) -> Result<ExitCode> {
    let mut report = Report::new("bench");
    let compress = compress_bench::measure(&CompressBenchArgs {
        files: Vec::new(),
        recipes: Vec::new(),
        budget: zstdkit::DEFAULT_BUDGET,
        time: Duration::from_millis(40),
        iterations: 500,
        warmup: 1,
        heartbeat: Duration::from_millis(400),
        large: false,
        vs_zstd: false,
        runs: 1,
        report: args.report.clone(),
    })?;
    absorb(&mut report, "zstd", compress);
    super::betree::default_workload(&mut report)?;
    let mut fix = super::fix::measure(&super::fix::FixBenchArgs::quick(args.report.clone()))?;
    // The combined report states one timing method; fixcore's differs
    // (batched clock reads), so its first section says so.
    let timing = format!("timing: {}", fix.run.timing);
    if let Some(first) = fix.sections.first_mut() {
        first.notes.insert(0, timing);
    }
    absorb(&mut report, "fix", fix);
    let zip = super::zip_bench::measure(&super::zip_bench::ZipBenchArgs {
        time: Duration::from_millis(200),
        iterations: 20,
        warmup: 1,
        level: 6,
        jobs: 2,
        large: false,
        quick: true,
        report: args.report.clone(),
    })?;
    absorb(&mut report, "zip", zip);
    super::emit(&report, &args.report)
}

/// Moves a component's sections into the combined report.
fn absorb(into: &mut Report, component: &str, from: Report) {
    into.run.iterations = into.run.iterations.max(from.run.iterations);
    into.run.warmup = into.run.warmup.max(from.run.warmup);
    if into.run.pinned.is_none() {
        into.run.pinned = from.run.pinned;
    }
    for mut s in from.sections {
        s.name = format!("{component}: {}", s.name);
        into.sections.push(s);
    }
}
