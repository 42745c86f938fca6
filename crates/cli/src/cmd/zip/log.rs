//! Info-ZIP's log file (`zip -lf FILE`, `-la`, `-li`) and its `-sd`
//! debugging lines: what a run did, in Info-ZIP's words.
//!
//! The log is one per run, written from wherever Info-ZIP writes to it
//! (the warnings of the walk, each entry's line, the end), so it is held
//! here for the run rather than passed through every function that warns.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};

/// How `-lf` was asked for.
#[derive(Debug, Clone)]
pub struct LogSettings {
    /// The log file.
    pub path: PathBuf,
    /// `-la`: append to it instead of replacing it.
    pub append: bool,
    /// `-li`: each entry's line too, not only warnings and errors.
    pub info: bool,
}

/// The open log of this run.
struct Log {
    file: fs::File,
    info: bool,
    /// Entries and bytes counted besides those the announcer added
    /// (`-d`'s deletions).
    counted: (u64, u64),
}

static LOG: Mutex<Option<Log>> = Mutex::new(None);

/// Opens the log and writes its head: the rule, the time, the command
/// line as given (Info-ZIP's `command line arguments:`).
pub(super) fn open(settings: &LogSettings) -> Result<()> {
    let mut o = fs::File::options();
    if settings.append {
        o.append(true).create(true);
    } else {
        o.write(true).create(true).truncate(true);
    }
    let shown = settings.path.display();
    let mut file = o.open(&settings.path).map_err(|e| {
        // The OS's words alone, without Rust's "(os error 2)".
        let text = e.to_string();
        let words = text.split(" (os error ").next().unwrap_or(&text);
        anyhow::anyhow!("cannot open the log file {shown} (-lf): {words}")
    })?;
    // The arguments after `perfkit zip`, as typed (before Info-ZIP's
    // two-letter options are rewritten).
    let args: Vec<String> = std::env::args_os()
        .skip(2)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let head = format!(
        "---------\nZip log opened {}\ncommand line arguments:\n {} \n\n",
        ctime_now(),
        args.join(" ")
    );
    file.write_all(head.as_bytes())
        .with_context(|| format!("writing the log file {shown} (-lf)"))?;
    *LOG.lock().unwrap_or_else(|p| p.into_inner()) = Some(Log {
        file,
        info: settings.info,
        counted: (0, 0),
    });
    Ok(())
}

/// Writes `line` to the log, if there is one; `info` lines only under
/// `-li`. A failed write is not the archive's failure: it is dropped.
fn write(line: &str, info: bool) {
    let mut log = LOG.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(l) = log.as_mut()
        && (!info || l.info)
    {
        let _ = writeln!(l.file, "{line}");
    }
}

/// A warning (`\tzip warning: ...`), logged always.
pub(super) fn warning(line: &str) {
    write(line, false);
}

/// An entry's line or a total, logged under `-li`.
pub(super) fn info(line: &str) {
    write(line, true);
}

/// The run failed with `line` (`zip error: ...`): logged after a blank
/// line, and the log closed without its `Done` line, as Info-ZIP's.
pub(super) fn failed(line: &str) {
    write(&format!("\n{line}"), false);
    LOG.lock().unwrap_or_else(|p| p.into_inner()).take();
}

/// Counts `entries` of `bytes` (uncompressed) in the log's total, as
/// Info-ZIP counts what `-d` deletes.
pub(super) fn count(entries: u64, bytes: u64) {
    if let Some(l) = LOG.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        l.counted.0 += entries;
        l.counted.1 += bytes;
    }
}

/// The end of a run that succeeded: the entries added (and counted) and
/// their bytes, and the time (Info-ZIP's `Total 2 entries (29K bytes)`,
/// `Done ...`).
pub(super) fn done(entries: u64, bytes: u64) {
    let (more, more_bytes) = LOG
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map_or((0, 0), |l| l.counted);
    let (entries, bytes) = (entries + more, bytes + more_bytes);
    write(
        &format!(
            "\nTotal {entries} entries ({} bytes)\nDone {}",
            super::announce::size_string(bytes),
            ctime_now()
        ),
        false,
    );
    LOG.lock().unwrap_or_else(|p| p.into_inner()).take();
}

/// Whether a log is open (so that a failure is worth writing to it).
pub(super) fn is_open() -> bool {
    LOG.lock().unwrap_or_else(|p| p.into_inner()).is_some()
}

/// `-sd`: Info-ZIP's debugging line for a step, on stdout (stderr when
/// the archive goes to stdout), `-q` or not.
pub(super) fn step(on: bool, archive: &Path, what: &str) {
    if on {
        super::println_info_zip(archive, &format!("sd: {what}"));
    }
}

/// The local time now as C's `ctime` writes it (`Sat Nov 28 06:51:54
/// 2026`), which Info-ZIP's log uses.
fn ctime_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as libc::time_t;
    let mut buf = [0u8; 64];
    // SAFETY: `tm` is a plain C struct that localtime_r fills; strftime
    // writes at most `buf.len()` bytes into `buf` and returns how many.
    let n = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&now, &mut tm).is_null() {
            return String::new();
        }
        libc::strftime(
            buf.as_mut_ptr().cast(),
            buf.len(),
            c"%a %b %e %H:%M:%S %Y".as_ptr(),
            &tm,
        )
    };
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Closes the log, if it is still open, writing nothing more.
pub(super) fn close() {
    LOG.lock().unwrap_or_else(|p| p.into_inner()).take();
}
