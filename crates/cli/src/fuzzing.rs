//! Bodies of the fuzz targets in `fuzz/`, kept in the library so `cargo
//! test` runs them over the committed seeds and the fuzzer and the tests
//! exercise the same code.

use std::path::PathBuf;

use crate::report::merge::merge_from;

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
        let _ = crate::report::render_text(&report, false);
        let _ = crate::report::to_json(&report);
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
        let mut seeds = Vec::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            seeds.push(std::fs::read(e.unwrap().path()).unwrap());
        }
        assert!(seeds.len() >= 3, "seeds missing in {}", dir.display());
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for seed in &seeds {
            super::hlog_merge(seed);
            let lines: Vec<&[u8]> = seed.split(|&b| b == b'\n').collect();
            for _ in 0..300 {
                let mut out: Vec<u8> = Vec::new();
                for _ in 0..lines.len() {
                    let l = lines[(next() as usize) % lines.len()];
                    out.extend_from_slice(l);
                    out.push(b'\n');
                }
                if !out.is_empty() && next() % 2 == 0 {
                    let at = (next() as usize) % out.len();
                    out[at] = next() as u8;
                }
                super::hlog_merge(&out);
            }
        }
    }
}
