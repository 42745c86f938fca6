//! The messages a session receives ahead of a gap in the numbers, kept
//! until the gap is filled, within a byte budget.

use std::collections::BTreeMap;

/// Most bytes of messages kept ahead of a gap: beyond it a peer sending
/// far-ahead numbers could grow the queue without bound.
const MAX_QUEUED_BYTES: usize = 64 << 20;

/// Messages received ahead of the expected number, by number, within
/// [`MAX_QUEUED_BYTES`].
#[derive(Debug, Default)]
pub(super) struct GapQueue {
    map: BTreeMap<u64, Vec<u8>>,
    bytes: usize,
}

impl GapQueue {
    /// Keeps `msg` under `seq`; false (not kept) when that would pass the
    /// byte budget.
    pub(super) fn insert(&mut self, seq: u64, msg: &[u8]) -> bool {
        let old = self.map.get(&seq).map_or(0, Vec::len);
        if self.bytes - old + msg.len() > MAX_QUEUED_BYTES {
            return false;
        }
        self.bytes = self.bytes - old + msg.len();
        self.map.insert(seq, msg.to_vec());
        true
    }

    /// The message numbered `expected`, dropping older ones (they can no
    /// longer be processed).
    #[inline]
    pub(super) fn take(&mut self, expected: u64) -> Option<Vec<u8>> {
        // Every message in sequence asks; the queue is almost always empty.
        if self.map.is_empty() {
            return None;
        }
        while let Some(entry) = self.map.first_entry() {
            if *entry.key() >= expected {
                break;
            }
            self.bytes -= entry.remove().len();
        }
        let msg = self.map.remove(&expected)?;
        self.bytes -= msg.len();
        Some(msg)
    }

    pub(super) fn clear(&mut self) {
        self.map.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gap_queue_keeps_to_its_byte_budget() {
        let mut q = GapQueue::default();
        let big = vec![b'x'; 40 << 20];
        assert!(q.insert(5, &big));
        assert!(!q.insert(6, &big), "80 MiB is past the 64 MiB budget");
        // Replacing a number counts the new size only.
        assert!(q.insert(5, &big[..10 << 20]));
        assert!(q.insert(6, &big));
        assert_eq!(q.bytes, 50 << 20);
        // Older numbers go when a later one is taken.
        assert_eq!(q.take(6).map(|m| m.len()), Some(40 << 20));
        assert_eq!(q.bytes, 0);
        assert!(q.map.is_empty());
        assert!(q.take(7).is_none());
    }
}
