//! `perfkit bench`: the main job. Runs every component's benchmark on
//! built-in workloads with short settings and prints one report.

use std::process::ExitCode;

use anyhow::{Context, Result};
use perfkit_bench::summary::{absorb, summarise};
use perfkit_bench::zstd::Settings;
use perfkit_report::{Report, ReportOptions};

mod args;

pub use args::BenchArgs;

/// What `perfkit bench` was asked to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// The parts to run; all of them when empty.
    pub only: Vec<Part>,
    /// What the zstd part measures.
    pub zstd: Settings,
    /// Where the zip part keeps one archive per row, if anywhere.
    pub keep: Option<std::path::PathBuf>,
    /// How to render the report.
    pub report: ReportOptions,
}

/// A part of the main job: one component's benchmark, or the commands run
/// as processes. The name is the prefix of the part's report sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
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

impl Part {
    pub(crate) fn wanted(self, only: &[Part]) -> bool {
        only.is_empty() || only.contains(&self)
    }
}

/// Runs the component benchmarks `--only` asks for (all by default) and
/// renders them as one report whose sections are prefixed by the component,
/// closed by a summary of the headline comparisons measured in this run.
pub fn run(job: Job) -> Result<ExitCode> {
    let only = &job.only;
    // Forked first, while this process is small: the commands part's
    // children start from it (see perfkit_measure::child).
    let mut spawner = if Part::Commands.wanted(only) {
        Some(perfkit_measure::child::Spawner::fork()?)
    } else {
        None
    };
    let perfkit = super::launcher::Perfkit::this()?;
    let mut report = Report::new("bench");
    let mut failures = Vec::new();
    if Part::Zstd.wanted(only) {
        let zstd = perfkit_bench::zstd::measure(
            &job.zstd,
            &super::progress(None, job.report.json),
            &perfkit,
        )?;
        absorb(&mut report, "zstd", zstd);
    }
    if Part::Betree.wanted(only) {
        perfkit_bench::betree::default_workload(&mut report)?;
    }
    if Part::Fix.wanted(only) {
        fix(&mut report, &job.report, &perfkit)?;
    }
    if Part::Zip.wanted(only) {
        let settings = perfkit_bench::zip::Settings {
            keep: job.keep.clone().map(|dir| perfkit_bench::zip::Keep {
                dir,
                write: |path, bytes| {
                    use std::io::Write;
                    landing::write_atomically(path, |f| Ok(f.write_all(bytes)?))
                },
            }),
            ..perfkit_bench::zip::Settings::quick()
        };
        let zip = perfkit_bench::zip::measure(&settings)?;
        absorb(&mut report, "zip", zip);
    }
    if Part::Stress.wanted(only) {
        let bar = super::status_line(job.report.json);
        let settings = perfkit_bench::stress::Settings::quick();
        let (stress, failed) =
            perfkit_bench::stress::measure(&settings, job.report.json, &mut |p| {
                bar.set_message(p.to_string());
                bar.tick();
            })
            .context("stress run")?;
        bar.finish_and_clear();
        absorb(&mut report, "stress", stress);
        failures = failed;
    }
    if let Some(spawner) = spawner.as_mut() {
        let commands =
            perfkit_bench::commands::measure(betree::stream::SEARCH_BATCH, &perfkit, spawner)?;
        absorb(&mut report, "commands", commands);
    }
    report.summary = summarise(&report);
    super::emit(&report, &job.report)?;
    if !failures.is_empty() {
        anyhow::bail!("stress failed: {}", failures.join("; "));
    }
    Ok(ExitCode::SUCCESS)
}

/// fixcore's part: the quick suite, under `FIXCORE_SCAN`'s cap as `fix
/// bench` runs it, each part's name shown on a terminal unless JSON.
fn fix(
    report: &mut Report,
    options: &ReportOptions,
    perfkit: &super::launcher::Perfkit,
) -> Result<()> {
    fixcore::scan::ScanPath::cap_from_env()?;
    let progress = super::progress(None, options.json);
    let measured = perfkit_bench::fix::suite::measure(
        &perfkit_bench::fix::suite::Suite::quick(),
        &|part| progress.set_message(part.to_owned()),
        perfkit,
    );
    progress.finish_and_clear();
    let mut fix = measured?;
    // The combined report states one timing method; fixcore's differs
    // (batched clock reads), so its first section says so.
    let timing = format!("timing: {}", fix.run.timing);
    if let Some(first) = fix.sections.first_mut() {
        first.notes.insert(0, timing);
    }
    absorb(report, "fix", fix);
    Ok(())
}
