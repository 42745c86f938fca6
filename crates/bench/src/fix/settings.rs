//! How much `perfkit fix bench` measures ([`Settings`]): the counts, the
//! rounds and their least length, as the interleaving it asks
//! [`perfkit_measure`] for.

use std::time::Duration;

use perfkit_measure::Rounds;

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Measured operations per variant (summed over runs).
    pub iterations: usize,
    /// Unmeasured operations per variant before the first run.
    pub warmup: usize,
    /// Interleaved rounds.
    pub runs: usize,
    /// Operations per clock read for the batched timings.
    pub batch: usize,
    /// Round trips per transport (summed over its rounds: `runs`, at
    /// least [`super::TRANSPORT_ROUNDS`]).
    pub transport_iterations: usize,
    /// Core for the measuring thread in the pinned variants.
    pub pin: Option<usize>,
    /// Least wall time of a batched variant's share of each round
    /// ([`Rounds::min_round`]): a fast operation runs more than its share
    /// of `iterations` rather than be timed over a few microseconds.
    pub min_round: Duration,
}

/// The default [`Settings::min_round`]. With 20,000 operations in 3
/// rounds, the quick suite timed a 2 ns store lookup for 13 µs a round,
/// and processes of one binary read its std HashMap baseline at 17 to
/// 57 ns; with rounds of at least 20 ms, at 14.0 to 14.4 ns in seven of
/// eight (see the commit).
pub const MIN_ROUND: Duration = Duration::from_millis(20);

impl Default for Settings {
    fn default() -> Self {
        Settings {
            iterations: 100_000,
            warmup: 10_000,
            runs: 5,
            batch: 100,
            transport_iterations: 20_000,
            pin: None,
            min_round: MIN_ROUND,
        }
    }
}

impl Settings {
    /// Measured operations per variant in each run: `iterations` spread
    /// over `runs`, rounded up, as every comparison spreads them.
    pub fn per_run(&self) -> usize {
        self.iterations.div_ceil(self.runs.max(1))
    }

    /// The interleaving these settings ask for.
    pub fn rounds(&self) -> Rounds {
        Rounds {
            warmup: self.warmup,
            runs: self.runs,
            per_run: self.per_run(),
            batch: self.batch,
            min_round: self.min_round,
        }
    }

    /// The timing method, in words, for reports.
    pub fn timing(&self) -> String {
        // The report says how long a round was, since the calls a row
        // made are no longer iterations / runs whenever it is paced.
        let paced = if self.min_round.is_zero() {
            String::new()
        } else {
            format!(
                ", each variant's share of a round at least {} ms (the parse rows: their share \
                 of the iterations)",
                self.min_round.as_secs_f64() * 1e3
            )
        };
        format!(
            "batched std::time::Instant: {} calls per clock read{paced}, the mean per call \
             (rounded to 0.1 ns) recorded with a count of {}; loopback round trips timed one by \
             one",
            self.batch, self.batch
        )
    }
}
