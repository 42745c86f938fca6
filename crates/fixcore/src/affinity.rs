//! Thread pinning with `core_affinity`, so reports can say whether and where
//! threads ran.

use crate::{Error, Result};

/// Core ids this process may run on.
pub fn cores() -> Vec<usize> {
    core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect()
}

/// Cores online in the machine, whatever this thread's affinity mask (the
/// list from [`cores`] shrinks to one core once the caller is pinned).
pub fn online() -> usize {
    // SAFETY: sysconf has no preconditions and only reads system state.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// Pins the calling thread to `core`; returns the core on success.
///
/// The core is not checked against this thread's current mask: once pinned,
/// a thread's mask is that one core, yet it may be moved to another.
pub fn pin_current(core: usize) -> Result<usize> {
    // core_affinity indexes a fixed-size cpu_set_t and panics beyond it.
    if core >= libc::CPU_SETSIZE as usize {
        return Err(Error::Affinity {
            core,
            why: "beyond CPU_SETSIZE",
        });
    }
    if core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
        Ok(core)
    } else {
        Err(Error::Affinity {
            core,
            why: "the OS refused (no such core, or outside the allowed set)",
        })
    }
}

/// Whether and where a measured thread was pinned, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pinning {
    /// The core, or `None` when the thread was left to the scheduler.
    pub core: Option<usize>,
}

impl std::fmt::Display for Pinning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.core {
            Some(c) => write!(f, "pinned to core {c}"),
            None => f.write_str("not pinned"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_to_each_reported_core_and_reject_others() {
        let cs = cores();
        assert!(!cs.is_empty());
        let t = std::thread::spawn(move || {
            for &c in &cs {
                assert_eq!(pin_current(c).unwrap(), c);
            }
            assert!(pin_current(100_000).is_err());
        });
        t.join().unwrap();
        assert_eq!(Pinning { core: Some(1) }.to_string(), "pinned to core 1");
        assert!(online() >= cores().len());
    }
}
