//! One module per subcommand, plus the exit conventions they share.

pub mod bench;
pub mod betree;
pub mod compress;
pub mod compress_bench;
pub mod corpus;
pub mod fix;
pub mod stress;
pub mod zip;
pub mod zip_bench;

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

/// Exit code for a write to a closed pipe (128 + SIGPIPE, as a shell reports
/// a process killed by it): quiet, but not success.
pub const EXIT_BROKEN_PIPE: u8 = 141;

/// True when the error chain holds a broken pipe: the reader went away.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            || e.downcast_ref::<zipstream::Error>().is_some_and(
                |z| matches!(z, zipstream::Error::Io(io) if io.kind() == io::ErrorKind::BrokenPipe),
            )
            || e.downcast_ref::<zstdkit::Error>().is_some_and(
                |z| matches!(z, zstdkit::Error::Io(io) if io.kind() == io::ErrorKind::BrokenPipe),
            )
    })
}

/// Reports a failure in one line on stderr and picks the exit code.
pub fn fail(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return ExitCode::from(EXIT_BROKEN_PIPE);
    }
    let _ = writeln!(io::stderr(), "perfkit: {err:#}");
    ExitCode::FAILURE
}

/// Renders a report to stdout with the shared options.
pub fn emit(
    report: &perfkit::report::Report,
    args: &perfkit::report::ReportArgs,
) -> anyhow::Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    perfkit::report::emit(report, args, &mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// A progress bar or spinner on stderr, only when stderr is a terminal and
/// JSON was not asked for; hidden otherwise so pipelines and logs stay clean.
pub fn progress(len: Option<u64>, json: bool) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if json || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    match len {
        Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()).with_style(
            ProgressStyle::with_template(
                "{msg} {bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .expect("static template"),
        ),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(
            ProgressStyle::with_template("{spinner} {msg} {bytes} {bytes_per_sec}")
                .expect("static template"),
        ),
    }
}
