//! Sequence number → message stores for resend requests.
//!
//! Three implementations of [`MessageStore`] are kept so they can be
//! measured side by side: std `HashMap` (SipHash), `hashbrown` (foldhash)
//! and [`RingStore`], a ring indexed by `seq - base`. FIX sequence numbers
//! are dense and increasing, so the ring needs no hashing and no probing:
//! it is the default.
//!
//! Every store keeps the messages whose sequence numbers lie within
//! `window` of the highest one stored: `(top - window, top]`. Gaps in the
//! numbering do not grow a store (a jump evicts whatever falls out of the
//! window, at a cost bounded by the window), and a message older than the
//! window is not retained. Buffers are recycled, so steady-state inserts do
//! not allocate.
//!
//! The session's memory store keeps its window of sent messages on a
//! [`RingStore`] when the settings bound it (fixsession's
//! `MemoryStore::window`):
//!
//! ```
//! use fixcore::resend::{MessageStore, RingStore};
//!
//! // The last 1024 messages sent, by MsgSeqNum, for ResendRequests.
//! let mut sent = RingStore::new(1, 1024);
//! for seq in 1..=3000 {
//!     sent.insert(seq, format!("message {seq}").as_bytes())?;
//! }
//! assert_eq!(sent.get(3000), Some(&b"message 3000"[..]));
//! // Out of the window: a resend would gap-fill over it.
//! assert_eq!(sent.get(1000), None);
//! assert_eq!(sent.len(), 1024);
//! # Ok::<(), fixcore::Error>(())
//! ```

use crate::{Error, Result};
use std::collections::HashMap;

/// A bounded store of the most recent messages by sequence number.
pub trait MessageStore {
    /// Short name for reports.
    fn name(&self) -> &'static str;
    /// Stores a copy of `msg` under `seq` and evicts every message that
    /// falls out of the window below the highest number stored. A `seq`
    /// already older than the window is accepted but not retained.
    fn insert(&mut self, seq: u64, msg: &[u8]) -> Result<()>;
    /// The message stored under `seq`, if still retained.
    fn get(&self, seq: u64) -> Option<&[u8]>;
    /// Messages currently retained.
    fn len(&self) -> usize;
    /// Whether nothing is retained.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Which store to build (for benchmarks and configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// `std::collections::HashMap` with its default (SipHash) hasher.
    StdHashMap,
    /// `hashbrown::HashMap` with its default (foldhash) hasher.
    Hashbrown,
    /// [`RingStore`]: direct index by `seq - base`.
    Ring,
}

impl StoreKind {
    /// All kinds, baseline first.
    pub const ALL: [StoreKind; 3] = [StoreKind::StdHashMap, StoreKind::Hashbrown, StoreKind::Ring];

    /// Builds a store retaining `window` messages, sequence numbers from `base`.
    pub fn build(self, base: u64, window: usize) -> Box<dyn MessageStore + Send> {
        match self {
            StoreKind::StdHashMap => Box::new(StdHashStore::new(window)),
            StoreKind::Hashbrown => Box::new(HashbrownStore::new(window)),
            StoreKind::Ring => Box::new(RingStore::new(base, window)),
        }
    }
}

/// Marks an empty ring slot. `insert` refuses this number, and `get`
/// checks for it, so it can never be found.
const EMPTY: u64 = u64::MAX;

#[derive(Debug, Clone, Default)]
struct Slot {
    /// [`EMPTY`] when empty.
    seq: u64,
    data: Vec<u8>,
}

/// Ring of `2^k` slots indexed by `(seq - base) & mask`. A slot remembers its
/// sequence number so a lookup of an evicted or never-stored number misses.
///
/// Invariant: every occupied slot holds a number in `(top - cap, top]`, so
/// at most one number per slot residue is live and `get` needs no window
/// check.
#[derive(Debug, Clone)]
pub struct RingStore {
    base: u64,
    mask: u64,
    slots: Box<[Slot]>,
    len: usize,
    /// Highest number stored.
    top: Option<u64>,
}

impl RingStore {
    /// Retains at least `window` messages (rounded up to a power of two);
    /// `base` is the first sequence number (usually 1).
    pub fn new(base: u64, window: usize) -> RingStore {
        let cap = window.max(1).next_power_of_two();
        RingStore {
            base,
            mask: cap as u64 - 1,
            slots: (0..cap)
                .map(|_| Slot {
                    seq: EMPTY,
                    data: Vec::new(),
                })
                .collect(),
            len: 0,
            top: None,
        }
    }

    fn slot_mut(&mut self, seq: u64) -> &mut Slot {
        &mut self.slots[((seq - self.base) & self.mask) as usize]
    }

    /// Slots in the ring.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

impl MessageStore for RingStore {
    fn name(&self) -> &'static str {
        "ring"
    }

    fn insert(&mut self, seq: u64, msg: &[u8]) -> Result<()> {
        if seq < self.base || seq == EMPTY {
            return Err(Error::BadValue {
                tag: 34,
                pos: 0,
                expected: "MsgSeqNum at or above the store's base, below 2^64-1",
            });
        }
        let cap = self.mask + 1;
        match self.top {
            Some(top) if seq > top => {
                // The slots of (top, seq) hold numbers at least `cap` below
                // them, now out of the window: empty them. A jump of `cap`
                // or more visits each slot but `seq`'s once. `seq`'s own
                // slot is overwritten below, so the next number (every
                // message sent) visits none here.
                for s in seq - (seq - top).min(cap) + 1..seq {
                    let slot = self.slot_mut(s);
                    if slot.seq != EMPTY {
                        slot.seq = EMPTY;
                        self.len -= 1;
                    }
                }
                self.top = Some(seq);
            }
            // Older than the window: its slot belongs to a newer number.
            Some(top) if top - seq >= cap => return Ok(()),
            Some(_) => {}
            None => self.top = Some(seq),
        }
        let slot = self.slot_mut(seq);
        let fresh = slot.seq == EMPTY;
        slot.seq = seq;
        slot.data.clear();
        slot.data.extend_from_slice(msg);
        self.len += usize::from(fresh);
        Ok(())
    }

    #[inline]
    fn get(&self, seq: u64) -> Option<&[u8]> {
        let slot = &self.slots[(seq.wrapping_sub(self.base) & self.mask) as usize];
        (seq != EMPTY && slot.seq == seq).then_some(slot.data.as_slice())
    }

    fn len(&self) -> usize {
        self.len
    }
}

macro_rules! hash_store {
    ($name:ident, $map:ty, $label:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Default)]
        pub struct $name {
            map: $map,
            window: usize,
            free: Vec<Vec<u8>>,
            /// Highest number stored.
            top: Option<u64>,
        }

        impl $name {
            /// Retains the last `window` messages.
            pub fn new(window: usize) -> Self {
                let mut map = <$map>::default();
                map.reserve(window + 1);
                $name {
                    map,
                    window: window.max(1),
                    free: Vec::new(),
                    top: None,
                }
            }
        }

        impl MessageStore for $name {
            fn name(&self) -> &'static str {
                $label
            }

            fn insert(&mut self, seq: u64, msg: &[u8]) -> Result<()> {
                let w = self.window as u64;
                match self.top {
                    Some(top) if seq > top => {
                        if seq - top >= w {
                            // Everything stored falls out of the window.
                            self.free.extend(self.map.drain().map(|(_, b)| b));
                        } else {
                            // The old window is (top - w, top]; the numbers
                            // leaving it are those up to seq - w (fewer than
                            // w lookups, one per step in the steady state).
                            let lo = (top + 1).saturating_sub(w);
                            if let Some(hi) = seq.checked_sub(w) {
                                for s in lo..=hi {
                                    if let Some(b) = self.map.remove(&s) {
                                        self.free.push(b);
                                    }
                                }
                            }
                        }
                        self.top = Some(seq);
                    }
                    // Older than the window: not retained.
                    Some(top) if top - seq >= w => return Ok(()),
                    Some(_) => {}
                    None => self.top = Some(seq),
                }
                let mut buf = self.free.pop().unwrap_or_default();
                buf.clear();
                buf.extend_from_slice(msg);
                if let Some(prev) = self.map.insert(seq, buf) {
                    self.free.push(prev);
                }
                Ok(())
            }

            #[inline]
            fn get(&self, seq: u64) -> Option<&[u8]> {
                self.map.get(&seq).map(Vec::as_slice)
            }

            fn len(&self) -> usize {
                self.map.len()
            }
        }
    };
}

hash_store!(
    StdHashStore,
    HashMap<u64, Vec<u8>>,
    "std-hashmap",
    "Baseline: `std::collections::HashMap` with SipHash."
);
hash_store!(
    HashbrownStore,
    hashbrown::HashMap<u64, Vec<u8>>,
    "hashbrown",
    "Baseline: `hashbrown::HashMap` with its default hasher."
);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Oracle: a BTreeMap holding everything, filtered to the window.
        #[test]
        fn stores_agree_with_a_model(n in 1u64..600, window in 1usize..100, probes in proptest::collection::vec(0u64..700, 50)) {
            for kind in StoreKind::ALL {
                let mut s = kind.build(1, window);
                let mut model = std::collections::BTreeMap::new();
                for seq in 1..=n {
                    let m = format!("msg-{seq}").into_bytes();
                    s.insert(seq, &m).unwrap();
                    model.insert(seq, m);
                }
                // The ring rounds the window up to a power of two.
                let kept = if kind == StoreKind::Ring { window.next_power_of_two() } else { window } as u64;
                for &p in &probes {
                    let want = (p >= 1 && p <= n && p + kept > n).then(|| model[&p].as_slice());
                    prop_assert_eq!(s.get(p), want, "{} seq {}", s.name(), p);
                }
                prop_assert_eq!(s.len() as u64, n.min(kept));
            }
        }
    }

    proptest! {
        /// Oracle: a BTreeMap of every insert (last write wins); a number
        /// is retained iff it is within the window of the highest one. The
        /// numbering has gaps (up to 3 windows) and steps backwards.
        #[test]
        fn stores_with_gaps_stay_within_the_window(
            window in 1usize..40,
            steps in proptest::collection::vec((0u64..120, any::<bool>()), 1..300),
            probes in proptest::collection::vec(0u64..20_000, 40),
        ) {
            for kind in StoreKind::ALL {
                let mut s = kind.build(1, window);
                let kept = if kind == StoreKind::Ring { window.next_power_of_two() } else { window } as u64;
                let mut model = std::collections::BTreeMap::new();
                let mut seq = 1u64;
                let mut top = 0u64;
                for (i, &(d, back)) in steps.iter().enumerate() {
                    seq = if back { seq.saturating_sub(d).max(1) } else { seq + d };
                    let m = format!("msg-{i}").into_bytes();
                    s.insert(seq, &m).unwrap();
                    model.insert(seq, m);
                    top = top.max(seq);
                    prop_assert!(s.len() as u64 <= kept, "{} holds {} > {kept}", s.name(), s.len());
                }
                let live = |p: u64| p + kept > top;
                for p in probes.iter().copied().chain(model.keys().copied()) {
                    let want = model.get(&p).filter(|_| live(p)).map(Vec::as_slice);
                    prop_assert_eq!(s.get(p), want, "{} seq {} top {}", s.name(), p, top);
                }
                prop_assert_eq!(s.len(), model.keys().filter(|&&p| live(p)).count());
                prop_assert_eq!(s.get(u64::MAX), None);
            }
        }
    }

    #[test]
    fn empty_slots_are_never_found() {
        for kind in StoreKind::ALL {
            let mut s = kind.build(1, 8);
            assert_eq!(s.get(u64::MAX), None, "{}", s.name());
            s.insert(1, b"a").unwrap();
            assert_eq!(s.get(u64::MAX), None, "{}", s.name());
            assert_eq!(s.get(0), None, "{}", s.name());
        }
        assert!(RingStore::new(1, 8).insert(u64::MAX, b"x").is_err());
    }

    #[test]
    fn a_jump_empties_the_store_and_old_numbers_are_not_kept() {
        for kind in StoreKind::ALL {
            let mut s = kind.build(1, 4);
            for seq in 1..=4 {
                s.insert(seq, b"x").unwrap();
            }
            s.insert(1_000_000, b"y").unwrap();
            assert_eq!(s.len(), 1, "{}", s.name());
            assert_eq!(s.get(4), None, "{}", s.name());
            s.insert(3, b"old").unwrap();
            assert_eq!(s.get(3), None, "{}", s.name());
            assert_eq!(s.get(1_000_000), Some(&b"y"[..]), "{}", s.name());
        }
    }

    #[test]
    fn ring_rejects_seq_below_base() {
        let mut r = RingStore::new(100, 8);
        assert!(r.insert(99, b"x").is_err());
        assert!(r.insert(100, b"x").is_ok());
        assert_eq!(r.get(100), Some(&b"x"[..]));
        assert_eq!(r.get(108), None);
        assert_eq!(r.get(0), None);
    }
}
