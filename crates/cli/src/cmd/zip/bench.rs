//! `perfkit zip bench`: [`perfkit_bench::zip`] measures what the settings
//! ask for and [`crate::cmd::emit`] renders it.

use std::process::ExitCode;

use anyhow::Result;
use perfkit::report::ReportOptions;
use perfkit_bench::zip::Settings;

/// Runs the benchmark and renders it.
pub fn run(settings: &Settings, report: &ReportOptions) -> Result<ExitCode> {
    let measured = perfkit_bench::zip::measure(settings)?;
    crate::cmd::emit(&measured, report)
}
