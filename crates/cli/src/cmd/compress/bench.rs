//! `perfkit compress bench`: [`perfkit_bench::zstd`] measures what the
//! settings ask for, with a progress bar on a terminal, and
//! [`crate::cmd::emit`] renders it.

use std::process::ExitCode;

use anyhow::Result;
use perfkit::report::ReportOptions;
use perfkit_bench::zstd::Settings;

/// Runs the benchmark and renders it.
pub fn run(settings: &Settings, report: &ReportOptions) -> Result<ExitCode> {
    let bar = crate::cmd::progress(None, report.json);
    let measured = perfkit_bench::zstd::measure(settings, &bar)?;
    crate::cmd::emit(&measured, report)
}

/// Runs zstd's benchmark mode (`-b#`) and renders it.
pub fn levels(
    levels: &perfkit_bench::zstd::levels::Levels,
    report: &ReportOptions,
) -> Result<ExitCode> {
    let bar = crate::cmd::progress(None, report.json);
    let measured = perfkit_bench::zstd::levels::measure(levels, &bar)?;
    crate::cmd::emit(&measured, report)
}
