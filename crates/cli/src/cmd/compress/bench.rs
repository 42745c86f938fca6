//! `perfkit compress -b#`: [`perfkit_bench::zstd::levels`] measures the
//! levels asked for, with a progress bar on a terminal, and
//! [`crate::cmd::emit`] renders it.

use std::process::ExitCode;

use anyhow::Result;
use perfkit_report::ReportOptions;

/// Runs zstd's benchmark mode (`-b#`) and renders it.
pub fn levels(
    levels: &perfkit_bench::zstd::levels::Levels,
    report: &ReportOptions,
) -> Result<ExitCode> {
    let bar = crate::cmd::progress(None, report.json);
    let measured = perfkit_bench::zstd::levels::measure(levels, &bar)?;
    crate::cmd::emit(&measured, report)
}
