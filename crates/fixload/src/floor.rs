//! The generator's floor: what the same traffic cost a program that does
//! the generator's I/O and no FIX work, measured with a run's shape, so
//! that the generator's CPU per order reads as a ratio to it. This crate
//! holds what the floor measured and reports it (see
//! [`crate::Sweep::step`]); running the floor program, a peer like the
//! QuickFIX ones, is `perfkit_bench::fix::floor`'s.

use std::time::Duration;

use crate::Outcome;

/// What the floor program measured at one rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Floor {
    /// Orders due in the measured part (all sent).
    pub sent: u64,
    /// The floor's CPU (its sender and receiver process) over the measured
    /// part.
    pub cpu: Duration,
    /// Wall time of the measured part.
    pub measured: Duration,
    /// Times its sender woke and sent in the measured part.
    pub send_rounds: u64,
    /// Times its receiver woke with bytes to read in the measured part.
    pub receive_wakes: u64,
    /// Its coalescing window, the generator's.
    pub coalesce: Duration,
    /// The size of each order it wrote.
    pub order_size: u64,
    /// The size of each of the two answers to an order.
    pub report_size: u64,
}

impl Floor {
    /// The floor's CPU per order sent in the measured part.
    pub fn cpu_per_order(&self) -> Duration {
        self.cpu / u32::try_from(self.sent.max(1)).unwrap_or(u32::MAX)
    }

    /// The generator's CPU per order over the floor's: how many times the
    /// least the same I/O costs (NaN when the floor measured none).
    pub fn ratio(&self, generator: &Outcome) -> f64 {
        let floor = self.cpu_per_order().as_nanos() as f64;
        if floor == 0.0 {
            return f64::NAN;
        }
        generator.cpu_per_order().as_nanos() as f64 / floor
    }
}
