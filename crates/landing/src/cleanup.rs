//! Temporaries deleted when a signal ends the process.
//!
//! Every output is first written to a hidden temporary sibling
//! ([`crate::Output`]) that is renamed into place on success and
//! deleted when dropped, and listed in [`crate::temporaries`]
//! while it lives. A signal that ends the process (Ctrl-C, `kill`, a
//! closed terminal) runs no destructor, so once [`install`] has run, a
//! thread deletes every listed file on SIGINT, SIGTERM or SIGHUP and exits
//! with 128 + the signal's number, the status a shell shows for a process
//! the signal ended. It also releases the blocks reserved past the end of
//! a shared output ([`crate::reserve::release_all`]).
//!
//! That thread starts when it first has work: when a temporary is first
//! listed, or a command asks to [`stop_gracefully`]. Until then the
//! handlers [`install`] sets exit with the same status at once, as there is
//! nothing to delete. Starting it (its stack, its allocator arena, a
//! socket pair) cost every run about 80 µs of CPU, a twentieth of `perfkit
//! fix check`'s start-up, in commands that never write a file.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// A flag the first signal sets instead of ending the process: a
/// long-running command (a FIX acceptor) then winds down by itself, and
/// only a second signal ends it at once.
static GRACEFUL: std::sync::OnceLock<&'static AtomicBool> = std::sync::OnceLock::new();

/// The signal that set the graceful flag (0: none yet).
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// Asks that the first SIGINT/SIGTERM/SIGHUP set `flag` rather than end
/// the process; the next one ends it as usual.
///
/// Starts the signal thread if [`install`] has run and it has not started.
/// Should it fail to start (the system is out of threads), a signal ends
/// the process at once, with the same status, instead of setting `flag`.
pub fn stop_gracefully(flag: &'static AtomicBool) {
    let _ = GRACEFUL.set(flag);
    let _ = start();
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

/// Whether a signal ends the process at once, from the handler: until
/// the signal thread runs, there is nothing to delete and no flag to set.
static AT_ONCE: AtomicBool = AtomicBool::new(true);

/// The state of the signal thread.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Thread {
    /// [`install`] has not run: signals are the program's own business.
    NotWanted,
    /// [`install`] has run; the thread starts when first needed.
    Wanted,
    /// The thread runs.
    Running,
}

static THREAD: Mutex<Thread> = Mutex::new(Thread::NotWanted);

/// Makes SIGINT, SIGTERM and SIGHUP end the process with 128 + the
/// signal's number, deleting the listed temporaries first once there are
/// any. Call once, first thing in `main`.
///
/// Only handlers are set here: the thread that deletes the temporaries
/// starts when the first one is listed (see the module doc), so a command
/// that writes no file never pays for it.
pub fn install() -> std::io::Result<()> {
    for sig in SIGNALS {
        // Registered before the thread's own handler, so it runs first
        // (signal-hook runs a signal's actions in the order registered)
        // and ends the process while AT_ONCE holds.
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, &AT_ONCE)?;
    }
    let mut thread = THREAD.lock().unwrap_or_else(|p| p.into_inner());
    if *thread == Thread::NotWanted {
        *thread = Thread::Wanted;
    }
    Ok(())
}

/// Starts the signal thread if [`install`] has run and it is not running
/// yet: called before a temporary is listed, so no temporary exists
/// without a thread to delete it. Without [`install`] it does nothing (a
/// library user's signals stay the user's).
pub(crate) fn start() -> std::io::Result<()> {
    let mut thread = THREAD.lock().unwrap_or_else(|p| p.into_inner());
    if *thread != Thread::Wanted {
        return Ok(());
    }
    // signal-hook's handler only writes to a socket; the deleting is done
    // on this ordinary thread, where taking a lock and calling `unlink` is
    // safe. A signal that comes before AT_ONCE is cleared below still ends
    // the process at once: no temporary is listed before this returns.
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
                // Standard output's file, if blocks are reserved past its
                // end (`crate::reserve`): released as the drop would.
                let _released = crate::reserve::release_all();
                std::process::exit(128 + sig);
            }
        })?;
    AT_ONCE.store(false, Ordering::SeqCst);
    *thread = Thread::Running;
    Ok(())
}
