//! Sequence number → message stores for resend requests.
//!
//! Three implementations of [`MessageStore`] are kept so they can be
//! measured side by side: std `HashMap` (SipHash), `hashbrown` (foldhash)
//! and [`RingStore`], a ring indexed by `seq - base`. FIX sequence numbers
//! are dense and increasing, so the ring needs no hashing and no probing:
//! it is the default. Every store keeps the last `window` messages and
//! recycles their buffers, so steady-state inserts do not allocate.

use crate::{Error, Result};
use std::collections::HashMap;

/// A bounded store of the most recent messages by sequence number.
pub trait MessageStore {
    /// Short name for reports.
    fn name(&self) -> &'static str;
    /// Stores a copy of `msg` under `seq`, evicting the oldest beyond the
    /// window.
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

#[derive(Debug, Clone, Default)]
struct Slot {
    /// `u64::MAX` when empty (sequence numbers start at 1).
    seq: u64,
    data: Vec<u8>,
}

/// Ring of `2^k` slots indexed by `(seq - base) & mask`. A slot remembers its
/// sequence number so a lookup of an evicted or never-stored number misses.
#[derive(Debug, Clone)]
pub struct RingStore {
    base: u64,
    mask: u64,
    slots: Box<[Slot]>,
    len: usize,
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
                    seq: u64::MAX,
                    data: Vec::new(),
                })
                .collect(),
            len: 0,
        }
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
        if seq < self.base || seq == u64::MAX {
            return Err(Error::BadValue {
                tag: 34,
                pos: 0,
                expected: "MsgSeqNum at or above the store's base",
            });
        }
        let slot = &mut self.slots[((seq - self.base) & self.mask) as usize];
        if slot.seq == u64::MAX {
            self.len += 1;
        }
        slot.seq = seq;
        slot.data.clear();
        slot.data.extend_from_slice(msg);
        Ok(())
    }

    #[inline]
    fn get(&self, seq: u64) -> Option<&[u8]> {
        let slot = &self.slots[(seq.wrapping_sub(self.base) & self.mask) as usize];
        (slot.seq == seq).then_some(slot.data.as_slice())
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
                }
            }
        }

        impl MessageStore for $name {
            fn name(&self) -> &'static str {
                $label
            }

            fn insert(&mut self, seq: u64, msg: &[u8]) -> Result<()> {
                if let Some(old) = seq
                    .checked_sub(self.window as u64)
                    .and_then(|s| self.map.remove(&s))
                {
                    self.free.push(old);
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
