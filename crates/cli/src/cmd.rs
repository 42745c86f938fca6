//! One module per subcommand, plus the exit conventions they share.

pub mod bench;
pub mod betree;
pub mod compress;
pub mod corpus;
pub mod fix;
pub mod launcher;
pub mod report;
pub mod stress;
pub mod zip;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Mutex;

use perfkit_report::ReportFiles;

/// The `--hlog`/`--plot` files of this run, opened by [`open_report_files`]
/// before the command measures anything and taken by [`emit`].
static REPORT_FILES: Mutex<Option<ReportFiles>> = Mutex::new(None);

/// Opens the `--hlog` and `--plot` files given (at whatever subcommand
/// depth), so an unwritable path fails in one line before a long run
/// rather than after it; [`emit`] takes them.
pub fn open_report_files(hlog: Option<&Path>, plot: Option<&Path>) -> anyhow::Result<()> {
    if hlog.is_none() && plot.is_none() {
        return Ok(());
    }
    let files = ReportFiles::open_paths(hlog, plot)?;
    *REPORT_FILES.lock().unwrap_or_else(|p| p.into_inner()) = Some(files);
    Ok(())
}

/// Deletes report files opened up front and never written (the command
/// failed): a static is not dropped at exit, so this does it.
pub fn discard_report_files() {
    drop(
        REPORT_FILES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take(),
    );
}

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
            || e.downcast_ref::<perfkit_report::EmitError>()
                .and_then(perfkit_report::EmitError::io_error)
                .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            // serde_json wraps a writer's io::Error and does not expose it
            // as its source.
            || e.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(io::ErrorKind::BrokenPipe))
    })
}

/// An error and its causes in one line, each text once
/// ([`perfkit_report::one_line`]).
pub fn one_line(err: &anyhow::Error) -> String {
    perfkit_report::one_line(err.as_ref())
}

/// `err` and its causes in one line, followed by the flag that changes
/// the outcome when there is one (see [`flag_hint`]).
pub fn explained(err: &(dyn std::error::Error + 'static)) -> String {
    let mut line = perfkit_report::one_line(err);
    if let Some(hint) = flag_hint(std::iter::successors(Some(err), |e| e.source())) {
        line.push_str("; ");
        line.push_str(hint);
    }
    line
}

/// Reports a failure in one line on stderr and picks the exit code.
pub fn fail(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return ExitCode::from(EXIT_BROKEN_PIPE);
    }
    let line = explained(err.as_ref());
    let _ = writeln!(io::stderr(), "perfkit: {line}");
    ExitCode::FAILURE
}

/// The flag that changes the outcome, for an error a library reports in
/// its own terms: zipstream knows overwriting was off, not that `unzip -o`
/// turns it on; fixsession that a store is damaged, not that
/// `--recover-store` starts on it.
fn flag_hint<'a>(
    mut chain: impl Iterator<Item = &'a (dyn std::error::Error + 'static)>,
) -> Option<&'static str> {
    chain.find_map(|cause| {
        if let Some(zipstream::Error::Exists { .. }) = cause.downcast_ref() {
            return Some("use -o to overwrite it, or -n to skip existing files");
        }
        let store = match cause.downcast_ref() {
            Some(fixengine::assembly::Error::Store(e)) => Some(e),
            _ => cause.downcast_ref::<fixsession::store::StoreError>(),
        };
        match store {
            Some(fixsession::store::StoreError::Corrupt { .. }) => {
                Some("--recover-store cuts the store at its last good record")
            }
            _ => None,
        }
    })
}

/// Renders a report to stdout as the shared output flags asked.
pub fn emit(
    report: &perfkit_report::Report,
    options: &perfkit_report::ReportOptions,
) -> anyhow::Result<ExitCode> {
    let files = report_files(options)?;
    let stdout = io::stdout();
    let mut out = stdout.lock();
    perfkit_report::emit_to(report, options, &mut out, files)?;
    Ok(ExitCode::SUCCESS)
}

/// The `--hlog`/`--plot` files `options` name: those opened before the
/// command ran, or opened now.
pub fn report_files(options: &perfkit_report::ReportOptions) -> anyhow::Result<ReportFiles> {
    let opened = REPORT_FILES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .filter(|f| f.matches(options));
    match opened {
        Some(f) => Ok(f),
        None => Ok(ReportFiles::open(options)?),
    }
}

/// The input size over which a byte-counting bar is drawn (compress,
/// decompress, zip): below it a run ends before a bar says anything, and
/// the help says so.
pub const PROGRESS_FROM: u64 = 16 << 20;

/// A progress bar or spinner on stderr, only when stderr is a terminal and
/// JSON was not asked for; hidden otherwise so pipelines and logs stay clean.
/// With a length, a bar of bytes; without one, a spinner beside the
/// caller's message and the time so far (its callers count no bytes: the
/// message says what is under way, in its own units).
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
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("static template"),
        ),
    }
}

/// A one-line live status on stderr (a spinner and a message), only when
/// it is a terminal and JSON was not asked for.
pub fn status_line(json: bool) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if json || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        .with_style(ProgressStyle::with_template("{spinner} {msg}").expect("static template"))
}

/// Rewrites a command line's option tokens one at a time, for the flag
/// habits of a peer program that clap cannot parse (`-19`, `-r9`). The
/// token after an option named in `takes_value` is that option's value and
/// stays as it is, as do tokens that are not UTF-8, `--` and everything
/// after it; `rewrite` pushes onto `out` what every other token becomes.
pub fn rewrite_options(
    args: Vec<OsString>,
    takes_value: &[&str],
    mut rewrite: impl FnMut(&str, &mut Vec<OsString>),
) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut rest = false;
    let mut value_next = false;
    for a in args {
        if rest || std::mem::take(&mut value_next) {
            out.push(a);
            continue;
        }
        let Some(s) = a.to_str() else {
            out.push(a);
            continue;
        };
        value_next = takes_value.contains(&s);
        if s == "--" {
            rest = true;
            out.push(a);
        } else {
            let before = out.len();
            rewrite(s, &mut out);
            // A cluster rewritten to end in an option that takes a value
            // (zstd's `-19fo FILE`) takes the next argument as it.
            value_next |= out.len() > before
                && out
                    .last()
                    .and_then(|l| l.to_str())
                    .is_some_and(|l| takes_value.contains(&l));
        }
    }
    out
}

#[cfg(test)]
mod tests;
