//! Temporary files that must not outlive the process, even when a signal
//! ends it.
//!
//! Every [`crate::Output`] is first written to a hidden temporary sibling
//! that is renamed into place on success and deleted when dropped. A
//! signal that ends the process (Ctrl-C, `kill`, a closed terminal) runs
//! no destructor, so each live temporary is also listed here, and the
//! program's signal handler deletes them with [`delete_all`] before it
//! exits. The list lives beside [`crate::Output`], which fills it; the
//! signal thread that empties it is [`crate::cleanup`]'s.

use std::path::PathBuf;
use std::sync::MutexGuard;

use crate::listed::{Entry, Listed};

/// The temporaries alive now.
static LIVE: Listed<PathBuf> = Listed::new();

/// A temporary file listed for deletion on a fatal signal; dropping it
/// takes the file off the list (the file itself is the owner's to delete
/// or rename).
#[derive(Debug)]
pub struct Registration {
    _entry: Entry<PathBuf>,
}

/// Lists `path` for deletion should a signal end the process before the
/// returned registration is dropped. Call it before the file is created:
/// the first call starts [`crate::cleanup`]'s signal thread (when
/// `install` has run), and a signal before that ends the process at once.
/// Should the thread fail to start, which [`crate::Output::create`]
/// reports, a signal ends the process without deleting the file.
pub fn register(path: PathBuf) -> Registration {
    let _ = crate::cleanup::start();
    Registration {
        _entry: LIVE.add(path),
    }
}

/// How many temporaries are listed now (for tests).
pub fn live_count() -> usize {
    LIVE.hold().len()
}

/// The list held locked: nothing is listed or unlisted while it lives.
#[derive(Debug)]
pub struct Held {
    _list: MutexGuard<'static, Vec<(u64, PathBuf)>>,
}

/// Deletes every listed temporary, for a process about to exit on a
/// signal, and keeps the list locked for as long as the returned guard
/// lives: held until exit, no temporary is listed (or renamed into place
/// by a commit and then unlisted) in between.
pub fn delete_all() -> Held {
    Held {
        _list: LIVE.act_on_all(|path| {
            let _ = std::fs::remove_file(path);
        }),
    }
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
        let still: Vec<PathBuf> = LIVE.hold().iter().map(|(_, p)| p.clone()).collect();
        assert!(still.contains(&PathBuf::from("/nonexistent/b")));
        assert!(!still.contains(&PathBuf::from("/nonexistent/a")));
        drop(b);
        assert_eq!(live_count(), before);
    }
}
