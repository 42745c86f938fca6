//! Thread pinning, so reports can say whether and where threads ran.
//!
//! A thread inherits the affinity mask of the thread that spawned it, so once
//! a measuring thread is pinned, every helper it spawns (a worker, a
//! consumer, an "unpinned" comparison thread) would silently run on that one
//! core too. To avoid that, the first pin in the process remembers the mask
//! the process started with ([`remember_original`]); threads meant to be left
//! to the scheduler call [`unpin_current`] to get it back, and
//! [`Pinning::current`] reads a thread's real mask for reports instead of
//! trusting what was asked for.
//!
//! `perfkit fix load --pin` places its sender and receiver threads with it
//! (fixload), `perfkit bench` each side of its FIX pairings, and fixengine
//! its sessions' threads on a [`CoreSet`] (`PerfkitCpuAffinity`, `fix
//! acceptor --pin`). A thread that must run anyway asks for a core and
//! learns where it landed:
//!
//! ```
//! use fixcore::affinity;
//!
//! // The first core the process may use, and another for a second thread.
//! let first = affinity::usable().first().copied();
//! let (placed, refused) = affinity::place_current_or_unpin(first);
//! match refused {
//!     None => assert_eq!(placed.core, first),
//!     // A container may refuse: the thread runs unpinned, and says so.
//!     Some(why) => assert!(why.to_string().starts_with("cannot pin thread to core")),
//! }
//! let second = first.and_then(affinity::other_core);
//! let helper = std::thread::spawn(move || affinity::place_current_or_unpin(second).0);
//! println!("this thread {placed}, the helper {}", helper.join().unwrap());
//! ```
//!
//! A thread confined to a set of cores, written as Linux lists them
//! (`/proc/PID/status`'s `Cpus_allowed_list`, `taskset -c`): a core the
//! process may not use is refused before anything moves, naming it.
//!
//! ```
//! use fixcore::affinity::{self, CoreSet, PinError};
//!
//! let set: CoreSet = "0-3,6".parse()?;
//! assert_eq!(set.cores(), &[0, 1, 2, 3, 6]);
//! assert_eq!(set.to_string(), "0-3,6");
//! assert!("3-1".parse::<CoreSet>().is_err());
//!
//! // The first core this process may use, for a thread of its own.
//! let first = CoreSet::new(affinity::usable().into_iter().take(1))?;
//! std::thread::spawn(move || first.place_current()).join().unwrap()?;
//! // A core beyond the machine is refused, named.
//! let missing = CoreSet::new([1000])?;
//! assert!(matches!(missing.place_current(), Err(PinError::NotAllowed { core: 1000, .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// Why a thread could not be placed.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// A core id outside the machine, or pinning refused by the OS.
    #[error("cannot pin thread to core {core}: {why}")]
    Refused {
        /// Requested core.
        core: usize,
        /// Why.
        why: &'static str,
    },
    /// A [`CoreSet`] names a core outside the mask the process started
    /// with (its cgroup's cpuset, `taskset`, or a core that is not there).
    #[error("core {core} is not one this process may run on (it may use {allowed})")]
    NotAllowed {
        /// The first such core.
        core: usize,
        /// The cores it may use, as a list (`0-3`).
        allowed: CoreSet,
    },
    /// The OS refused to give the thread its original mask back.
    #[error("restoring the thread's original CPU affinity: {0}")]
    Restore(#[source] std::io::Error),
}

/// Result with [`PinError`].
pub type Result<T> = std::result::Result<T, PinError>;

/// Core ids the calling thread may run on (its current mask: a single core
/// once pinned).
pub fn cores() -> Vec<usize> {
    core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect()
}

/// Core ids of the mask the process started with (see
/// [`remember_original`]); the calling thread's mask when none is known.
pub fn usable() -> Vec<usize> {
    match sys::original() {
        Some(mask) => sys::ids(&mask),
        None => cores(),
    }
}

/// Cores online in the machine, whatever this thread's affinity mask (the
/// list from [`cores`] shrinks to one core once the caller is pinned).
pub fn online() -> usize {
    // SAFETY: sysconf has no preconditions and only reads system state.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// Remembers the calling thread's mask as the process's original one, if no
/// mask was remembered yet. [`pin_current`] calls it before its first pin;
/// call it earlier (e.g. first thing in `main`) when something else may
/// change affinity first.
pub fn remember_original() {
    sys::remember();
}

/// Pins the calling thread to `core`; returns the core on success.
///
/// The core is not checked against this thread's current mask: once pinned,
/// a thread's mask is that one core, yet it may be moved to another.
pub fn pin_current(core: usize) -> Result<usize> {
    // core_affinity indexes a fixed-size cpu_set_t and panics beyond it.
    if core >= libc::CPU_SETSIZE as usize {
        return Err(PinError::Refused {
            core,
            why: "beyond CPU_SETSIZE",
        });
    }
    remember_original();
    if core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
        Ok(core)
    } else {
        Err(PinError::Refused {
            core,
            why: "the OS refused (no such core, or outside the allowed set)",
        })
    }
}

/// Gives the calling thread the mask the process started with, undoing any
/// pinning it inherited. Does nothing when no mask was remembered (then
/// nothing was pinned through this module).
pub fn unpin_current() -> Result<()> {
    sys::restore()
}

/// Places the calling thread: pinned to `core` when given, else on the
/// process's original mask (undoing a pin inherited from the spawning
/// thread). Fails if the OS refuses; returns where the thread really runs.
pub fn place_current(core: Option<usize>) -> Result<Pinning> {
    match core {
        Some(c) => _ = pin_current(c)?,
        None => unpin_current()?,
    }
    Ok(Pinning::current())
}

/// [`place_current`] for threads that must run anyway: a refused pin leaves
/// the thread on the process's original mask and is returned beside where
/// it really runs, for the caller to report. (An unpin that fails is not
/// reported: the thread runs where it can, and its placement says where.)
pub fn place_current_or_unpin(core: Option<usize>) -> (Pinning, Option<PinError>) {
    let refused = match core {
        None => {
            let _ = unpin_current();
            None
        }
        Some(c) => pin_current(c).err().inspect(|_| {
            // The thread may still hold a pin inherited from its spawner.
            let _ = unpin_current();
        }),
    };
    (Pinning::current(), refused)
}

/// The next core after `core` (cyclically) in the process's original mask,
/// for a second thread that should not share `core`; `None` when `core` is
/// the only one.
pub fn other_core(core: usize) -> Option<usize> {
    let ids = usable();
    ids.iter()
        .copied()
        .find(|&c| c > core)
        .or_else(|| ids.iter().copied().find(|&c| c != core))
}

/// Two different cores of the process's original mask for the two sides of
/// a pairing (a producer and its worker, a client and its server, an
/// initiator and its acceptor): `first` (or the lowest usable core) and
/// the next one. `None` when the mask has one core: then both sides share
/// it. Left to the scheduler, two busy threads on a 2-core machine land on
/// one core in some runs and on two in others, and the readings are
/// bimodal.
pub fn pair(first: Option<usize>) -> Option<(usize, usize)> {
    let first = first.or_else(|| usable().first().copied())?;
    other_core(first).map(|second| (first, second))
}

/// A pairing's placement in words for a row's note: `"cores 0 and 1"`, or
/// that both sides share the process's one core.
pub fn pair_note(pair: Option<(usize, usize)>) -> String {
    match pair {
        Some((a, b)) => format!("the two sides pinned to cores {a} and {b}"),
        None => format!(
            "both sides on the process's one core ({})",
            usable()
                .first()
                .map_or_else(|| "unknown".to_owned(), |c| c.to_string())
        ),
    }
}

/// Runs `f` on the calling thread with its mask set to `core` (or to the
/// mask the process started with, for `None`), then gives the thread its
/// mask back. For starting child processes: a child starts with the mask
/// of the thread that forks it, so a child started from a pinned measuring
/// thread would otherwise run all its threads on that thread's core. A
/// refused placement is returned and `f` is not run.
pub fn with_placement<R>(core: Option<usize>, f: impl FnOnce() -> R) -> Result<R> {
    remember_original();
    let before = sys::current();
    place_current(core)?;
    let out = f();
    sys::set(before)?;
    Ok(out)
}

/// Whether and where a measured thread was pinned, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pinning {
    /// The core, or `None` when the thread was left to the scheduler.
    pub core: Option<usize>,
}

impl Pinning {
    /// The calling thread's placement as the OS sees it: pinned when its
    /// mask holds exactly one core. (A process started on one core reports
    /// every thread as pinned there, which is what happens.)
    pub fn current() -> Pinning {
        let ids = cores();
        Pinning {
            core: match ids.as_slice() {
                [only] => Some(*only),
                _ => None,
            },
        }
    }
}

impl std::fmt::Display for Pinning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.core {
            Some(c) => write!(f, "pinned to core {c}"),
            None => f.write_str("not pinned"),
        }
    }
}

/// A set of cores a thread may run on: a thread placed on it runs on any
/// of them and on no other (one core pins it). Written and read as Linux
/// lists cores (`2`, `2,3`, `0-3,6`); never empty, each core below
/// `CPU_SETSIZE` (1024).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CoreSet {
    /// Ascending, without repeats.
    ids: Vec<usize>,
}

/// Why a text or a list of numbers is not a [`CoreSet`]; the caller
/// names the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CoreSetError {
    /// Not a list of numbers and ranges, or an empty one.
    #[error("expected core numbers or ranges, such as 2,3 or 0-3")]
    Syntax,
    /// A range whose end is below its start (`3-1`).
    #[error("a range of cores runs upwards, such as 0-3")]
    Backwards,
    /// A core at or past `CPU_SETSIZE`, which no affinity mask holds.
    #[error("a core number is below 1024")]
    TooLarge,
}

impl CoreSetError {
    /// The reason in words, for an error type that keeps only static
    /// text (a settings file's bad value).
    pub fn reason(self) -> &'static str {
        match self {
            CoreSetError::Syntax => "expected core numbers or ranges, such as 2,3 or 0-3",
            CoreSetError::Backwards => "a range of cores runs upwards, such as 0-3",
            CoreSetError::TooLarge => "a core number is below 1024",
        }
    }
}

/// The most cores an affinity mask holds (glibc's `CPU_SETSIZE`).
const MAX_CORES: usize = libc::CPU_SETSIZE as usize;

impl CoreSet {
    /// The set of `cores` (in any order, repeats allowed); empty or a core
    /// of 1024 or more is an error.
    pub fn new(cores: impl IntoIterator<Item = usize>) -> std::result::Result<Self, CoreSetError> {
        let mut ids: Vec<usize> = cores.into_iter().collect();
        if ids.iter().any(|&c| c >= MAX_CORES) {
            return Err(CoreSetError::TooLarge);
        }
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Err(CoreSetError::Syntax);
        }
        Ok(CoreSet { ids })
    }

    /// The cores, ascending.
    pub fn cores(&self) -> &[usize] {
        &self.ids
    }

    /// Refuses, naming it, the first core outside the mask the process
    /// started with ([`usable`]): the kernel would silently drop it from a
    /// mask that holds an allowed core too, so it is checked here.
    pub fn check(&self) -> Result<()> {
        remember_original();
        let allowed = usable();
        match self.ids.iter().find(|c| !allowed.contains(c)) {
            None => Ok(()),
            Some(&core) => Err(PinError::NotAllowed {
                core,
                allowed: CoreSet { ids: allowed },
            }),
        }
    }

    /// Confines the calling thread to these cores ([`CoreSet::check`]ed
    /// first: on a refusal the thread's mask is as it was). Threads it
    /// spawns afterwards start on the same cores.
    pub fn place_current(&self) -> Result<()> {
        self.check()?;
        sys::set_ids(&self.ids)
    }

    /// Runs `f` on the calling thread confined to these cores, then gives
    /// the thread its mask back: every thread `f` spawns starts on these
    /// cores (and keeps them after `f` returns). A refused placement is
    /// returned and `f` is not run.
    pub fn run_placed<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        remember_original();
        let before = sys::current();
        self.place_current()?;
        let out = f();
        sys::set(before)?;
        Ok(out)
    }
}

impl std::str::FromStr for CoreSet {
    type Err = CoreSetError;

    /// `2`, `2,3`, `0-3,6` (spaces around an item allowed).
    fn from_str(text: &str) -> std::result::Result<Self, CoreSetError> {
        let number = |t: &str| -> std::result::Result<usize, CoreSetError> {
            let t = t.trim();
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(CoreSetError::Syntax);
            }
            // All digits: only a number too large to hold fails.
            t.parse::<usize>()
                .ok()
                .filter(|&c| c < MAX_CORES)
                .ok_or(CoreSetError::TooLarge)
        };
        let mut ids = Vec::new();
        for item in text.split(',') {
            match item.split_once('-') {
                None => ids.push(number(item)?),
                Some((a, b)) => {
                    // Both ends are below 1024, so the range is bounded.
                    let (a, b) = (number(a)?, number(b)?);
                    if b < a {
                        return Err(CoreSetError::Backwards);
                    }
                    ids.extend(a..=b);
                }
            }
        }
        CoreSet::new(ids)
    }
}

impl std::fmt::Display for CoreSet {
    /// Runs of consecutive cores as ranges: `0-3,6`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut rest = self.ids.as_slice();
        let mut first = true;
        while let [start, ..] = rest {
            let run = rest
                .iter()
                .enumerate()
                .take_while(|&(i, &c)| c == start + i)
                .count();
            if !first {
                f.write_str(",")?;
            }
            first = false;
            match run {
                1 => write!(f, "{start}")?,
                n => write!(f, "{start}-{}", start + n - 1)?,
            }
            rest = &rest[run..];
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
mod sys {
    use super::{PinError, Result};
    use std::sync::OnceLock;

    /// A thread affinity mask.
    #[derive(Clone, Copy)]
    pub struct Mask(libc::cpu_set_t);

    static ORIGINAL: OnceLock<Option<Mask>> = OnceLock::new();

    fn get() -> Option<Mask> {
        // SAFETY: cpu_set_t is a plain bit array; all zeroes is valid.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a live cpu_set_t and we pass its exact size; pid
        // 0 means the calling thread.
        let r =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        (r == 0).then_some(Mask(set))
    }

    pub fn remember() {
        ORIGINAL.get_or_init(get);
    }

    /// The calling thread's mask, to set back with [`set`].
    pub fn current() -> Option<Mask> {
        get()
    }

    /// Gives the calling thread `mask` (nothing for `None`).
    pub fn set(mask: Option<Mask>) -> Result<()> {
        let Some(Mask(set)) = mask else {
            return Ok(());
        };
        // SAFETY: `set` is a valid cpu_set_t read by sched_getaffinity and
        // we pass its exact size; pid 0 means the calling thread.
        let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if r == 0 {
            Ok(())
        } else {
            Err(PinError::Restore(std::io::Error::last_os_error()))
        }
    }

    pub fn original() -> Option<Mask> {
        ORIGINAL.get().copied().flatten()
    }

    pub fn restore() -> Result<()> {
        set(original())
    }

    pub fn ids(mask: &Mask) -> Vec<usize> {
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: CPU_ISSET only reads the set; `c < CPU_SETSIZE` keeps
            // its index inside the bit array.
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &mask.0) })
            .collect()
    }

    /// Gives the calling thread the mask of `ids` (each below
    /// `CPU_SETSIZE`, as a `CoreSet` holds them).
    pub fn set_ids(ids: &[usize]) -> Result<()> {
        // SAFETY: cpu_set_t is a plain bit array; all zeroes is valid.
        let mut mask: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in ids {
            // SAFETY: CPU_SET writes one bit; a CoreSet's cores are below
            // CPU_SETSIZE, inside the bit array.
            unsafe { libc::CPU_SET(c, &mut mask) };
        }
        set(Some(Mask(mask))).map_err(|_| PinError::Refused {
            core: ids.first().copied().unwrap_or(0),
            why: "the OS refused the set of cores",
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    //! Without sched_getaffinity there is no mask to restore; pinning still
    //! works through core_affinity.
    use super::Result;

    pub struct Mask;

    pub fn remember() {}

    pub fn original() -> Option<Mask> {
        None
    }

    pub fn restore() -> Result<()> {
        Ok(())
    }

    pub fn current() -> Option<Mask> {
        None
    }

    pub fn set(_: Option<Mask>) -> Result<()> {
        Ok(())
    }

    pub fn ids(_: &Mask) -> Vec<usize> {
        Vec::new()
    }

    /// One core pins through core_affinity; a set needs Linux's masks.
    pub fn set_ids(ids: &[usize]) -> Result<()> {
        match ids {
            [one] => super::pin_current(*one).map(|_| ()),
            _ => Err(super::PinError::Refused {
                core: ids.first().copied().unwrap_or(0),
                why: "a set of cores needs Linux",
            }),
        }
    }
}

#[cfg(test)]
mod tests;
