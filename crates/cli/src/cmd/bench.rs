//! `perfkit bench`: the main job. Runs every component's benchmark on
//! built-in workloads with short settings and prints one report.

use std::process::ExitCode;
use std::time::Duration;

use ::stress as stress_lib;
use anyhow::Result;
use perfkit::report::{Report, ReportArgs};

use super::compress_bench::{self, CompressBenchArgs};
use super::stress::{self, StressArgs};

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
        keep: None,
        report: args.report.clone(),
    })?;
    absorb(&mut report, "zip", zip);
    let (stress, failures) = stress::measure(&short_stress(&args.report))?;
    absorb(&mut report, "stress", stress);
    super::emit(&report, &args.report)?;
    if !failures.is_empty() {
        anyhow::bail!("stress failed: {}", failures.join("; "));
    }
    Ok(ExitCode::SUCCESS)
}

/// Every pool strategy, saturating, interleaved: two rounds of 300 ms per
/// strategy, the first 100 ms of each a warm-up (400 ms measured per
/// strategy), about 2.5 s in all.
fn short_stress(report: &ReportArgs) -> StressArgs {
    StressArgs {
        recipe: zstdkit::Recipe::Fast,
        checksum: false,
        pool: stress_lib::PoolKind::Pool,
        producers: 100,
        consumers: 100,
        interval: Duration::ZERO,
        min_size: 2048,
        max_size: 2048,
        duration: Duration::from_millis(600),
        runtime: stress_lib::Runtime::Tokio,
        input: None,
        replay: false,
        compare: true,
        rounds: Some(2),
        soak: false,
        soak_rss_mib_per_min: 1.0,
        soak_contexts_per_min: 1.0,
        warmup: Some(Duration::from_millis(100)),
        sample_every: Duration::from_millis(100),
        channel: 1000,
        chanpool_size: 0,
        workers: 0,
        fault: Vec::new(),
        report: report.clone(),
    }
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
