//! Fuzz seeds and deterministic mutations of them, so `cargo test` runs a
//! fuzz target's body over what the fuzzer starts from and near it.

use std::path::Path;

/// Every file in `dir` (a fuzz project's `seeds/TARGET`), failing when
/// fewer than `at_least` are there: a target tested over no seeds proves
/// nothing.
pub fn seeds(dir: &Path, at_least: usize) -> Vec<Vec<u8>> {
    let seeds: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("seeds in {}: {e}", dir.display()))
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        seeds.len() >= at_least,
        "seeds missing in {}",
        dir.display()
    );
    seeds
}

/// Hands `f` the seed, then `count` variants of it: its lines drawn
/// again at random (so dropped, repeated and swapped), half of them with
/// one byte changed. The same seed gives the same variants every run.
pub fn line_mutations(seed: &[u8], count: usize, mut f: impl FnMut(&[u8])) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    f(seed);
    let lines: Vec<&[u8]> = seed.split(|&b| b == b'\n').collect();
    let mut out: Vec<u8> = Vec::new();
    for _ in 0..count {
        out.clear();
        for _ in 0..lines.len() {
            out.extend_from_slice(lines[(next() as usize) % lines.len()]);
            out.push(b'\n');
        }
        if !out.is_empty() && next() % 2 == 0 {
            let at = (next() as usize) % out.len();
            out[at] = next() as u8;
        }
        f(&out);
    }
}
