//! zstd's level habits on a `compress` command line (`-19`, `--fast=N`,
//! `--ultra`, short-flag clusters such as `-19c`), rewritten into flags clap
//! reads: a rewrite of raw arguments before clap sees them, so it stands
//! apart from the flag structs.

use std::ffi::OsString;
use std::io::{self, Write};

/// The options of `compress`/`decompress` written with their value as the
/// next argument; [`zstd_level_flags`] leaves that argument alone.
const TAKES_VALUE: &[&str] = &[
    "--level",
    "-o",
    "--output",
    "-D",
    "--dict",
    "-T",
    "--threads",
    "-M",
    "--memory",
    "--maxdict",
    "--recipe",
    "--patch-from",
    "--output-dir-flat",
    "--output-dir-mirror",
];

/// Rewrites zstd's level habits in a `compress`/`decompress` command line
/// into `--level=N` before clap sees them, since clap cannot parse `-#`
/// flags: `-1`..`-19` (and `-20`..`-22` after `--ultra`, else reduced to 19
/// with zstd's warning), `--fast` (level -1) and `--fast=N` (level -N).
/// `--ultra` itself is consumed. Anything after `--` is left alone.
pub fn zstd_level_flags(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let args: Vec<OsString> = args.into_iter().collect();
    let is_compress = matches!(args.get(1).and_then(|a| a.to_str()), Some("compress"));
    if !is_compress {
        return args;
    }
    let ultra = args.iter().any(|a| a == "--ultra");
    // The token after an option that takes a value is that value, never a
    // level flag: `-l -5` is level -5, as clap reads it.
    crate::cmd::rewrite_options(args, TAKES_VALUE, |s, out| {
        if s == "--ultra" {
        } else if s == "--fast" {
            out.push("--level=-1".into());
        } else if let Some(n) = s
            .strip_prefix("--fast=")
            .filter(|n| n.parse::<u32>().is_ok_and(|n| n > 0))
        {
            // --fast=0 (rejected by zstd too) stays as is, so clap refuses it.
            out.push(format!("--level=-{n}").into());
        } else if let Some(n) = s
            .strip_prefix('-')
            .filter(|n| !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit()))
        {
            out.push(level_flag(n, ultra));
        } else if let Some(flags) = short_cluster(s) {
            expand_cluster(flags, ultra, out);
        } else {
            out.push(s.into());
        }
    })
}

/// `--level=N` for zstd's `-N` (`digits`), reduced to 19 with zstd's
/// warning past it without `--ultra`.
fn level_flag(digits: &str, ultra: bool) -> OsString {
    let level: i32 = digits.parse().unwrap_or(0);
    let level = if level > 19 && !ultra {
        let _ = writeln!(
            io::stderr(),
            "Warning : compression level higher than max, reduced to 19"
        );
        19
    } else {
        level
    };
    format!("--level={level}").into()
}

/// Single-letter flags `compress` takes in a cluster, as zstd's parser
/// reads them one character at a time.
const CLUSTER_FLAGS: &str = "cdfkqvtrlzCH";

/// Flags that read a number written straight after them in a cluster
/// (`-T2`, `-b1`, `-e19`, `-i1`).
const CLUSTER_NUMBERS: &str = "Tbei";

/// Flags whose value is the next argument (`-o FILE`, `-D DICT`).
const CLUSTER_NEXT: &str = "oD";

/// The characters of `s` after its dash when `s` is a cluster of zstd's
/// short flags that clap would not read as zstd does: a level with other
/// flags (`-19c`, `-c19`), several flags (`-fc`), or a flag repeated
/// (`-qq`). Anything holding another character is left for clap.
fn short_cluster(s: &str) -> Option<&str> {
    let flags = s.strip_prefix('-').filter(|f| !f.starts_with('-'))?;
    let known = |c: char| {
        c.is_ascii_digit()
            || CLUSTER_FLAGS.contains(c)
            || CLUSTER_NUMBERS.contains(c)
            || CLUSTER_NEXT.contains(c)
    };
    (flags.chars().count() >= 2 && flags.chars().all(known)).then_some(flags)
}

/// Expands zstd's short-flag cluster `flags` into one argument per flag,
/// as zstd 1.5.4's parser reads it: digits are a level (`-19c` is level
/// 19 and `-c`), a number right after `T`, `b`, `e` or `i` is that flag's
/// value, and `o` or `D` take the next argument, the rest of the cluster
/// being read as flags still.
fn expand_cluster(flags: &str, ultra: bool, out: &mut Vec<OsString>) {
    let b = flags.as_bytes();
    let mut i = 0;
    let mut next = Vec::new();
    while i < b.len() {
        let c = b[i] as char;
        let digits_from = |j: usize| {
            let end = (j..b.len())
                .find(|&k| !b[k].is_ascii_digit())
                .unwrap_or(b.len());
            (&flags[j..end], end)
        };
        if c.is_ascii_digit() {
            let (n, end) = digits_from(i);
            out.push(level_flag(n, ultra));
            i = end;
        } else if CLUSTER_NUMBERS.contains(c) {
            let (n, end) = digits_from(i + 1);
            out.push(format!("-{c}{n}").into());
            i = end;
        } else if CLUSTER_NEXT.contains(c) {
            // The value is the next argument: the flag goes last.
            next.push(format!("-{c}"));
            i += 1;
        } else {
            out.push(format!("-{c}").into());
            i += 1;
        }
    }
    out.extend(next.into_iter().map(OsString::from));
}
