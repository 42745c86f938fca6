//! Temporary files that must not outlive the process, even when it is
//! interrupted.
//!
//! Every output is first written to a hidden temporary sibling
//! ([`crate::report::Output`]) that is renamed into place on success and
//! deleted when dropped. A signal that ends the process (Ctrl-C, `kill`, a
//! closed terminal) runs no destructor, so each live temporary is also
//! listed here, and [`install`] starts a thread that, on SIGINT, SIGTERM or
//! SIGHUP, deletes every listed file and exits with 128 + the signal's
//! number, the status a shell shows for a process the signal ended.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The temporaries alive now, each under the id its [`Registration`] holds.
static LIVE: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());
/// The next id [`register`] hands out.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A flag the first signal sets instead of ending the process: a
/// long-running command (a FIX acceptor) then winds down by itself, and
/// only a second signal ends it at once.
static GRACEFUL: std::sync::OnceLock<&'static AtomicBool> = std::sync::OnceLock::new();

/// Asks that the first SIGINT/SIGTERM/SIGHUP set `flag` rather than end
/// the process; the next one ends it as usual.
pub fn stop_gracefully(flag: &'static AtomicBool) {
    let _ = GRACEFUL.set(flag);
}

/// The signals after which no temporary may be left behind.
const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// A temporary file listed for deletion on a fatal signal; dropping it
/// takes the file off the list (the file itself is the owner's to delete
/// or rename).
#[derive(Debug)]
pub struct Registration {
    id: u64,
}

/// Lists `path` for deletion should a signal end the process before the
/// returned registration is dropped.
pub fn register(path: PathBuf) -> Registration {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    LIVE.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((id, path));
    Registration { id }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = live.iter().position(|(id, _)| *id == self.id) {
            live.swap_remove(i);
        }
    }
}

/// How many temporaries are listed now (for tests).
pub fn live_count() -> usize {
    LIVE.lock().unwrap_or_else(|p| p.into_inner()).len()
}

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
                    continue;
                }
                // Held until exit, so no temporary is listed (or renamed
                // into place by a commit and then unlisted) in between.
                let live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
                for (_, path) in live.iter() {
                    let _ = std::fs::remove_file(path);
                }
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_registration_leaves_the_list() {
        let before = live_count();
        let a = register(PathBuf::from("/nonexistent/a"));
        let b = register(PathBuf::from("/nonexistent/b"));
        assert_eq!(live_count(), before + 2);
        drop(a);
        assert_eq!(live_count(), before + 1);
        let still: Vec<PathBuf> = LIVE
            .lock()
            .unwrap()
            .iter()
            .map(|(_, p)| p.clone())
            .collect();
        assert!(still.contains(&PathBuf::from("/nonexistent/b")));
        assert!(!still.contains(&PathBuf::from("/nonexistent/a")));
        drop(b);
        assert_eq!(live_count(), before);
    }
}
