//! Bodies of the fuzz targets in `fuzz/`, kept in the library so `cargo
//! test` runs them over the committed seeds and the fuzzer and the tests
//! exercise the same code.

use std::path::PathBuf;

use crate::merge::merge_from;

/// Merges `data` as one interval log, with and without slots kept, and
/// renders what it gives (report, JSON, merged interval log). Any bytes
/// must give a report or an error, never a panic, an abort or unbounded
/// memory (libFuzzer's RSS limit catches the last).
pub fn hlog_merge(data: &[u8]) {
    let paths = [PathBuf::from("fuzz.hlog")];
    for keep_slots in [false, true] {
        let Ok(merged) = merge_from(&paths, |_| Ok(data), None, keep_slots) else {
            continue;
        };
        let report = merged.report(keep_slots);
        let _ = crate::render_text(&report, false);
        let _ = crate::to_json(&report);
        if keep_slots {
            let _ = merged.write_hlog(&mut Vec::new());
        }
    }
}

#[cfg(test)]
mod tests {
    /// The merge fuzz body over its committed seeds and a few thousand
    /// deterministic mutations of them (lines dropped, repeated and
    /// swapped, bytes changed), so `cargo test` covers what the fuzzer
    /// starts from.
    #[test]
    fn hlog_merge_over_seeds_and_mutations() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/hlog_merge");
        for seed in perfkit_testkit::mutation::seeds(&dir, 3) {
            perfkit_testkit::mutation::line_mutations(&seed, 300, super::hlog_merge);
        }
    }
}
