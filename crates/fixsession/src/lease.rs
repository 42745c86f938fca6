//! One engine per session among engines that share a store: a session's
//! lease, and the fencing token (its epoch) that every write of the
//! shared store carries.
//!
//! Engines that keep a session in one database (a primary and its
//! standby) must never serve it at once: both would give out the same
//! sequence numbers and overwrite each other's rows. So an engine serves
//! a session only while it holds the session's lease. A lease
//! ([`SessionLease`], implemented by the database crate) is taken, kept
//! by renewal and lost when another engine takes it over: after its
//! holder's connection to the database ended (it died) or its expiry
//! passed without a renewal (it hangs). Each taking raises the lease's
//! epoch.
//!
//! The engine's lease keeper and the session's store share one
//! [`Holding`]: the epoch held now, or none. The store writes only with
//! the epoch it read its numbers under, in the same statement as the
//! write, so a write from an engine whose lease was taken over fails
//! ([`StoreError::Fenced`]) rather than
//! land, however late it comes; and a driver asks the store where it
//! stands ([`SessionStore::standing`](crate::store::SessionStore::standing))
//! before it lets a connection take the session.
//!
//! ```
//! use fixsession::lease::{Holding, Standing, Vacancy};
//!
//! let holding = Holding::new();
//! assert_eq!(holding.epoch(), None);
//! let nothing_read = holding.taking();
//! assert_eq!(Standing::of(&holding, nothing_read), Standing::NotHeld(Vacancy::Unlooked));
//! holding.hold(7);
//! let read = holding.taking(); // the store reads its numbers now
//! assert_eq!(Standing::of(&holding, read), Standing::Held { current: true });
//! // Taken over, then taken back: the store's numbers are from epoch 7.
//! holding.hold(9);
//! assert_eq!(Standing::of(&holding, read), Standing::Held { current: false });
//! // Lost, and taken again under epoch 7 (a row set back by hand):
//! // another engine may have served the session meanwhile.
//! holding.lose(9);
//! assert_eq!(Standing::of(&holding, read), Standing::NotHeld(Vacancy::Busy));
//! holding.hold(7);
//! assert_eq!(Standing::of(&holding, read), Standing::Held { current: false });
//! ```
//!
//! Until the keeper first looks at a lease, its holding reads
//! [`Vacancy::Unlooked`]: a driver holds a Logon for the session until
//! the look, rather than refuse it for a lease it may take a moment
//! later. Each later look that does not take the lease says why
//! ([`Holding::vacant`]): another engine holds it, its record is
//! unusable, or its database is out of reach.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use crate::id::SessionId;
use crate::store::StoreError;

/// The epoch of a session's lease that this engine holds now, shared by
/// the lease keeper (which sets it) and the session's store (which
/// writes under it). Epochs start at 1; none held reads as `None`, and
/// then [`Holding::vacancy`] says why.
#[derive(Debug, Default)]
pub struct Holding {
    epoch: AtomicU64,
    /// How many times the lease was taken: a store's numbers read under
    /// one taking are stale under the next, even at the same epoch.
    takings: AtomicU64,
    /// A [`Vacancy`] as its `u8`: why the lease is not held, as the
    /// keeper's last look found (meaningless while `epoch` is held).
    vacancy: AtomicU8,
}

/// One taking of a lease: its epoch (0: none held) and which taking of
/// this engine's it was, so that a lease lost and taken again under the
/// same epoch (its record set back or deleted by hand) is told from the
/// taking before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Taking {
    epoch: u64,
    count: u64,
}

impl Taking {
    /// The epoch held at this taking, if any.
    pub fn epoch(self) -> Option<u64> {
        (self.epoch != 0).then_some(self.epoch)
    }
}

/// Why this engine does not hold a session's lease, as its keeper last
/// found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vacancy {
    /// Not looked at yet (the keeper's start-up wait): a Logon for the
    /// session waits for the first look instead of being refused.
    Unlooked,
    /// Another engine holds it (or took it first); also what a lease
    /// lost reads as until the keeper looks again.
    Busy,
    /// No engine can take it as its record stands (an epoch edited by
    /// hand to the largest there is, say); the keeper's line names the
    /// record and why.
    Unusable,
    /// The lease's database could not be asked (out of reach, or it
    /// refused the statement); the keeper's line says what it answered.
    Unreachable,
}

impl Vacancy {
    fn of(v: u8) -> Vacancy {
        match v {
            0 => Vacancy::Unlooked,
            1 => Vacancy::Busy,
            2 => Vacancy::Unusable,
            _ => Vacancy::Unreachable,
        }
    }

    fn code(self) -> u8 {
        match self {
            Vacancy::Unlooked => 0,
            Vacancy::Busy => 1,
            Vacancy::Unusable => 2,
            Vacancy::Unreachable => 3,
        }
    }
}

impl Holding {
    /// Nothing held yet, shared.
    pub fn new() -> Arc<Holding> {
        Arc::new(Holding::default())
    }

    /// The epoch held, if any.
    pub fn epoch(&self) -> Option<u64> {
        match self.epoch.load(Ordering::Acquire) {
            0 => None,
            e => Some(e),
        }
    }

    /// The lease is held under `epoch` (at least 1). Once lost, until
    /// the keeper looks again, it reads as [`Vacancy::Busy`].
    pub fn hold(&self, epoch: u64) {
        debug_assert!(epoch > 0, "epochs start at 1");
        self.vacancy.store(Vacancy::Busy.code(), Ordering::Release);
        // Counted before the epoch is set: a reader between the two sees
        // a taking that matches no other, which can only make a store
        // read its numbers again.
        self.takings.fetch_add(1, Ordering::AcqRel);
        self.epoch.store(epoch, Ordering::Release);
    }

    /// The taking held now, for a store to remember what it read its
    /// numbers under ([`Standing::of`]).
    pub fn taking(&self) -> Taking {
        let count = self.takings.load(Ordering::Acquire);
        Taking {
            epoch: self.epoch.load(Ordering::Acquire),
            count,
        }
    }

    /// The keeper looked and does not hold the lease, for `why`.
    pub fn vacant(&self, why: Vacancy) {
        self.vacancy.store(why.code(), Ordering::Release);
    }

    /// Why the lease is not held, as the keeper last found (meaningless
    /// while [`Holding::epoch`] is some).
    pub fn vacancy(&self) -> Vacancy {
        Vacancy::of(self.vacancy.load(Ordering::Acquire))
    }

    /// The lease held under `epoch` is lost; a later epoch held since
    /// stays held.
    pub fn lose(&self, epoch: u64) {
        let _ = self
            .epoch
            .compare_exchange(epoch, 0, Ordering::AcqRel, Ordering::Acquire);
    }
}

/// Where this engine stands with a session whose store may be shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// The store is this engine's alone (memory, files): no lease.
    Unshared,
    /// This engine holds the lease. `current`: the store's numbers were
    /// read under the epoch held; when false the store must be refreshed
    /// ([`SessionStore::refresh`](crate::store::SessionStore::refresh))
    /// before the session runs, as another engine may have served it
    /// since.
    Held {
        /// Whether the store was read under the epoch held.
        current: bool,
    },
    /// This engine does not hold it, for the reason given: the session
    /// must not run here (and a Logon for it waits while the reason is
    /// [`Vacancy::Unlooked`]).
    NotHeld(Vacancy),
}

impl Standing {
    /// Where a store whose numbers were read under `read` stands, given
    /// `holding`.
    pub fn of(holding: &Holding, read: Taking) -> Standing {
        match holding.epoch() {
            None => Standing::NotHeld(holding.vacancy()),
            Some(_) => Standing::Held {
                current: holding.taking() == read,
            },
        }
    }

    /// Whether the session may run here: its store is this engine's
    /// alone, or this engine holds its lease.
    pub fn serves(self) -> bool {
        !matches!(self, Standing::NotHeld(_))
    }
}

/// What one try at taking a lease found ([`SessionLease::acquire`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// Held now, under a new epoch (the holding says which).
    Taken,
    /// Another engine holds it, or took it first.
    Busy,
    /// No engine can take it as its record stands: the sentence says
    /// which record (table and session) and why, and what mends it. It
    /// stays so until an operator mends the record.
    Unusable(String),
}

/// A session's lease in a store engines share. The engine's keeper
/// calls [`acquire`](SessionLease::acquire) while it does not hold it
/// (a standby, waiting) and [`renew`](SessionLease::renew) while it does;
/// each updates [`SessionLease::holding`].
pub trait SessionLease: Send + std::fmt::Debug {
    /// The session.
    fn session(&self) -> &SessionId;
    /// The epoch held, shared with the session's store.
    fn holding(&self) -> &Arc<Holding>;
    /// How long the lease lasts without a renewal: a holder that hangs
    /// is taken over after this long.
    fn timeout(&self) -> Duration;
    /// Takes the lease if it is free: never taken, expired, or its
    /// holder gone. [`Acquired::Taken`] when held now, under a new epoch
    /// (at least 1, whatever epoch the record held before).
    fn acquire(&mut self) -> Result<Acquired, StoreError>;
    /// Extends the lease held; false when another engine has taken it
    /// over (the holding is cleared).
    fn renew(&mut self) -> Result<bool, StoreError>;
    /// Gives the lease up, so that a standby takes it at once (an engine
    /// stopping); the holding is cleared. Failing to is harmless: the
    /// lease then expires.
    fn release(&mut self);
}

/// The lease timeout for a session whose heartbeat interval is
/// `heart_bt_int` seconds: three intervals, at least 1 s and at most
/// 10 s (an engine whose heartbeats stop is taken over about when its
/// counterparty gives up on it, and never after more than 10 s).
pub fn default_timeout(heart_bt_int: u32) -> Duration {
    Duration::from_secs(u64::from(heart_bt_int).saturating_mul(3).clamp(1, 10))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losing_an_old_epoch_keeps_a_newer_one() {
        let h = Holding::new();
        h.hold(3);
        h.lose(2);
        assert_eq!(h.epoch(), Some(3));
        h.lose(3);
        assert_eq!(h.epoch(), None);
    }

    /// Unlooked until the keeper looks; a lost lease reads as another
    /// engine's until the next look says otherwise.
    #[test]
    fn a_holding_says_why_it_is_not_held() {
        let h = Holding::new();
        let none = h.taking();
        assert_eq!(none.epoch(), None);
        assert_eq!(Standing::of(&h, none), Standing::NotHeld(Vacancy::Unlooked));
        assert!(!Standing::of(&h, none).serves());
        h.vacant(Vacancy::Unusable);
        assert_eq!(Standing::of(&h, none), Standing::NotHeld(Vacancy::Unusable));
        h.hold(1);
        assert_eq!(h.taking().epoch(), Some(1));
        assert!(Standing::of(&h, none).serves());
        h.lose(1);
        assert_eq!(Standing::of(&h, none), Standing::NotHeld(Vacancy::Busy));
        h.vacant(Vacancy::Unreachable);
        assert_eq!(h.vacancy(), Vacancy::Unreachable);
        assert!(Standing::Unshared.serves());
    }

    #[test]
    fn the_default_timeout_is_three_heartbeats_within_one_to_ten_seconds() {
        assert_eq!(default_timeout(1), Duration::from_secs(3));
        assert_eq!(default_timeout(0), Duration::from_secs(1));
        assert_eq!(default_timeout(30), Duration::from_secs(10));
    }
}
