//! Temporaries deleted when a signal ends the process.
//!
//! Every output is first written to a hidden temporary sibling
//! ([`crate::Output`]) that is renamed into place on success and
//! deleted when dropped, and listed in [`crate::temporaries`]
//! while it lives. A signal that ends the process (Ctrl-C, `kill`, a
//! closed terminal) runs no destructor, so [`install`] starts a thread
//! that, on SIGINT, SIGTERM or SIGHUP, deletes every listed file and exits
//! with 128 + the signal's number, the status a shell shows for a process
//! the signal ended.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// A flag the first signal sets instead of ending the process: a
/// long-running command (a FIX acceptor) then winds down by itself, and
/// only a second signal ends it at once.
static GRACEFUL: std::sync::OnceLock<&'static AtomicBool> = std::sync::OnceLock::new();

/// The signal that set the graceful flag (0: none yet).
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// Asks that the first SIGINT/SIGTERM/SIGHUP set `flag` rather than end
/// the process; the next one ends it as usual.
pub fn stop_gracefully(flag: &'static AtomicBool) {
    let _ = GRACEFUL.set(flag);
}

/// The signal that asked a graceful stop, if one did: the command exits
/// with 128 + its number once it has wound down, as one the signal
/// ended at once would.
pub fn stopped_by() -> Option<i32> {
    match STOPPED_BY.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// The exit code of a command that ran to its end: `code`, or 128 + the
/// signal that asked it to stop ([`stopped_by`]).
pub fn exit_code(code: std::process::ExitCode) -> std::process::ExitCode {
    match stopped_by() {
        Some(sig) => std::process::ExitCode::from((128 + sig) as u8),
        None => code,
    }
}

/// The signals after which no temporary may be left behind.
const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Starts the thread that deletes the listed temporaries on SIGINT,
/// SIGTERM or SIGHUP and then exits with 128 + the signal's number. Call
/// once, first thing in `main`.
///
/// signal-hook's handler only writes to a pipe; the deleting is done on
/// this ordinary thread, where taking a lock and calling `unlink` is safe.
pub fn install() -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new(SIGNALS)?;
    std::thread::Builder::new()
        .name("cleanup".into())
        .spawn(move || {
            for sig in signals.forever() {
                if let Some(flag) = GRACEFUL.get()
                    && !flag.swap(true, Ordering::SeqCst)
                {
                    STOPPED_BY.store(sig, Ordering::SeqCst);
                    continue;
                }
                // Held until exit, so no temporary is listed (or renamed
                // into place by a commit and then unlisted) in between.
                let _held = crate::temporaries::delete_all();
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}
