//! Interleaved rounds and the ratios between their sides: short runs are
//! noisy on a shared machine, so a command case of short runs runs more
//! rounds, and a ratio (the commands' and the zip writers') pairs the
//! sides round by round, each round's times kept for the JSON.

// The commands part uses all of it, the zip and fix parts a piece each:
// built without the commands part, the rest is unused, not wrong.
#![cfg_attr(not(feature = "commands"), allow(dead_code))]

use std::time::Duration;

use perfkit_measure::{Repeat, Repeating};

/// A case whose rounds are short runs more of them, until it has spent
/// this long or run [`MAX_ROUNDS`]. With 3 rounds whatever their length,
/// two runs of one binary (`cargo xtask bench-compare`, medians of 5
/// benches) differed by 8-17 % on the rows of 10-20 ms runs (`fix check`,
/// `decompress` against the library and against `zstd -d` on files found
/// here), whose single benches ranged over 28-72 %.
pub(crate) const CASE_TIME: Duration = Duration::from_secs(1);

/// The most interleaved rounds of a case.
pub(crate) const MAX_ROUNDS: usize = 21;

/// The interleaved rounds of one case: `while rounds.another() { one run of
/// each side }`. At least `least` rounds; then more while the case has
/// spent less than [`CASE_TIME`] and run fewer than [`MAX_ROUNDS`]. An
/// odd count, so a median is one round's. A debug build (the test
/// suite's) runs `least`.
pub(crate) fn case_rounds(least: usize) -> Repeating {
    let least = least as u64;
    Repeat {
        warmup: 0,
        rounds: if cfg!(debug_assertions) {
            least
        } else {
            MAX_ROUNDS as u64
        },
        min_rounds: least,
        time: CASE_TIME,
        odd: true,
    }
    .measured()
}

/// The median of `num[i] / den[i]` over the rounds of a case: each round's
/// sides ran one after the other, so a change of the machine's load
/// between rounds moves both sides of the ratio it enters, where a ratio
/// of two medians can take them from different rounds. Rounds where `den`
/// is zero are left out; none at all gives 0.
pub(crate) fn paired(num: &[Duration], den: &[Duration]) -> f64 {
    let secs = |v: &[Duration]| v.iter().map(Duration::as_secs_f64).collect::<Vec<_>>();
    paired_values(&secs(num), &secs(den))
}

/// [`paired`] of figures other than times (rates, nanoseconds as
/// numbers): the median of `num[i] / den[i]`, rounds whose `den` is zero
/// left out, 0 for none.
pub(crate) fn paired_values(num: &[f64], den: &[f64]) -> f64 {
    median_of(
        num.iter()
            .zip(den)
            .filter(|&(_, &d)| d != 0.0)
            .map(|(n, d)| n / d)
            .collect(),
    )
}

/// The order in which round `round` runs `sides` sides: every other round
/// in the opposite order, so that no side always follows the same one (a
/// side's cost can depend on what ran before it: the file it replaces, the
/// caches it finds) and each runs first and last alike. A rotation would
/// keep who follows whom.
pub(crate) fn alternating(sides: usize, round: usize) -> impl Iterator<Item = usize> {
    (0..sides).map(move |k| {
        if round.is_multiple_of(2) {
            k
        } else {
            sides - 1 - k
        }
    })
}

/// The (upper) median of some ratios; 0 for none.
pub(crate) fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_unstable_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Each round's time in nanoseconds, in order, for the JSON-only columns
/// a paired ratio is recomputed from (`wall_ns_rounds`, `cpu_ns_rounds`).
pub(crate) fn in_ns(rounds: &[Duration]) -> String {
    rounds
        .iter()
        .map(|d| d.as_nanos().to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    /// The ratio is the median of the rounds' ratios, not the ratio of
    /// the sides' medians (here 30 / 20 = 1.5), and rounds whose
    /// denominator is zero are left out.
    #[test]
    fn a_ratio_pairs_the_sides_round_by_round() {
        let r = paired(&ms(&[10, 40, 30, 7]), &ms(&[10, 20, 60, 0]));
        assert_eq!(r, 1.0);
        assert_eq!(paired(&ms(&[5]), &ms(&[0])), 0.0);
    }

    /// Figures other than times pair the same way.
    #[test]
    fn values_pair_round_by_round_too() {
        assert_eq!(
            paired_values(&[10.0, 40.0, 30.0, 7.0], &[10.0, 20.0, 60.0, 0.0]),
            1.0
        );
        assert_eq!(paired_values(&[5.0], &[0.0]), 0.0);
    }

    /// Even rounds go forward, odd ones backward: each side follows each
    /// of its neighbours, which a rotation (0123, 1230, ...) never does
    /// for 3 after 2.
    #[test]
    fn rounds_alternate_their_order() {
        let order = |r| alternating(4, r).collect::<Vec<_>>();
        assert_eq!(order(0), [0, 1, 2, 3]);
        assert_eq!(order(1), [3, 2, 1, 0]);
        assert_eq!(order(2), [0, 1, 2, 3]);
        assert_eq!(alternating(0, 1).count(), 0);
    }

    /// A debug build (the test suite's) runs a case's least count,
    /// however short its rounds; the rule past it is perfkit-measure's
    /// (`Repeat`, tested there).
    #[cfg(debug_assertions)]
    #[test]
    fn a_debug_build_runs_the_least_rounds() {
        let mut rounds = case_rounds(5);
        while rounds.another() {}
        assert_eq!(rounds.done(), 5);
    }
}
