//! The orders a session has in flight: for each ClOrdID, its intended and
//! actual send times, written by the sender before the order goes out and
//! taken once by the receiver when its first answer comes back.
//!
//! A ring indexed by ClOrdID: the window bounds the unanswered orders, so a
//! ring of twice the window never overwrites a live slot unless an order
//! goes unanswered for a whole ring's worth of later orders; such an order
//! is then dropped from the ring (and stays counted as unanswered).

use std::sync::atomic::{AtomicU64, Ordering};

/// A slot no order holds (or whose answer was taken).
const FREE: u64 = u64::MAX;

/// See the [module docs](self).
pub struct Slots {
    /// The ClOrdID each slot holds, or [`FREE`].
    id: Box<[AtomicU64]>,
    /// Nanoseconds from the run's start: when the order was due.
    intended: Box<[AtomicU64]>,
    /// Nanoseconds from the run's start: when it was written.
    actual: Box<[AtomicU64]>,
    mask: u64,
}

impl Slots {
    /// Room for `window` unanswered orders (and as many again answered
    /// late).
    pub fn new(window: u64) -> Slots {
        let n = (window.max(1) * 2).next_power_of_two();
        let ring = || (0..n).map(|_| AtomicU64::new(FREE)).collect();
        Slots {
            id: ring(),
            intended: ring(),
            actual: ring(),
            mask: n - 1,
        }
    }

    /// Records order `id`'s times; call before it is written.
    pub fn put(&self, id: u64, intended_ns: u64, actual_ns: u64) {
        let i = (id & self.mask) as usize;
        self.intended[i].store(intended_ns, Ordering::Relaxed);
        self.actual[i].store(actual_ns, Ordering::Relaxed);
        // Release: a receiver that sees the id sees the times.
        self.id[i].store(id, Ordering::Release);
    }

    /// Takes order `id`'s times (intended, actual) at its first answer;
    /// `None` for an id not in flight (answered already, or never sent).
    pub fn take(&self, id: u64) -> Option<(u64, u64)> {
        let i = (id & self.mask) as usize;
        self.id[i]
            .compare_exchange(id, FREE, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        Some((
            self.intended[i].load(Ordering::Relaxed),
            self.actual[i].load(Ordering::Relaxed),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_is_taken_once_and_only_by_its_own_id() {
        let s = Slots::new(4);
        s.put(3, 100, 150);
        assert_eq!(s.take(11), None, "same slot, other id");
        assert_eq!(s.take(3), Some((100, 150)));
        assert_eq!(s.take(3), None, "a second answer is not a first one");
        assert_eq!(s.take(7), None, "never sent");
    }

    #[test]
    fn a_full_ring_overwrites_only_the_oldest() {
        let s = Slots::new(2); // 4 slots
        for id in 1..=5 {
            s.put(id, id * 10, id * 10 + 1);
        }
        // 5 took 1's slot; 2..=5 are all there.
        assert_eq!(s.take(1), None);
        for id in 2..=5 {
            assert_eq!(s.take(id), Some((id * 10, id * 10 + 1)));
        }
    }
}
