//! Inputs nobody here chose (issue 64), found on this machine at run time:
//! the zip rows beside Info-ZIP and the compress rows beside zstd (the
//! commands part), and `--vs-zstd`'s comparison, take them besides the
//! built-in corpus.

use std::path::Path;

/// Bytes of each input found on the machine; 4 MiB in a debug build (the
/// test suite's, which checks the rows, not their figures).
pub(crate) const FOUND_SIZE: usize = if cfg!(debug_assertions) {
    4 << 20
} else {
    16 << 20
};

/// Inputs shorter than this (a fourth of [`FOUND_SIZE`]) are left out,
/// with a note saying so.
pub(crate) const FOUND_AT_LEAST: usize = FOUND_SIZE / 4;

/// What is looked for: the first [`FOUND_SIZE`] bytes of the files under
/// the folders, in name order, one after the other as a tar holds them
/// (the docs are mostly gzip: already-compressed data), and only the names
/// that hold the given text.
pub(crate) const FOUND: [(&str, &[&str], &str); 3] = [
    ("packages' docs", &["/usr/share/doc"], ""),
    (
        "shared libraries",
        &["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"],
        ".so",
    ),
    ("C headers", &["/usr/include"], ""),
];

/// Already-compressed data found at run time: the gzip files under
/// /usr/share (manual pages, changelogs), which neither deflate nor zstd
/// shrinks again.
pub(crate) const ALREADY_COMPRESSED: (&str, &[&str], &str) = (
    "gzip files (already compressed)",
    &["/usr/share/man", "/usr/share"],
    ".gz",
);

/// The first `want` bytes of the regular files under `dirs` whose path
/// holds `holding`, walked in name order (links not followed).
pub(crate) fn found_bytes(dirs: &[&str], holding: &str, want: usize) -> Vec<u8> {
    fn walk(dir: &Path, holding: &str, want: usize, out: &mut Vec<u8>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<_> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        paths.sort();
        for p in paths {
            if out.len() >= want {
                return;
            }
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if meta.is_dir() {
                walk(&p, holding, want, out);
            } else if meta.is_file()
                && p.to_string_lossy().contains(holding)
                && let Ok(bytes) = std::fs::read(&p)
            {
                out.extend_from_slice(&bytes[..bytes.len().min(want - out.len())]);
            }
        }
    }
    let mut out = Vec::with_capacity(want);
    for d in dirs {
        walk(Path::new(d), holding, want, &mut out);
    }
    out
}
