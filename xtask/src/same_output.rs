//! `cargo xtask same-output REV`: does every command of the work tree's
//! `perfkit` print and write what REV's did, byte for byte?
//!
//! A restructuring moves code and must change no user-visible behaviour.
//! This task builds REV (a git worktree and target directory of its own
//! under `target/same-output/`, shared with `bench-compare` through
//! [`crate::worktree`]) and the work tree, both with the dev profile: the
//! profiles differ in speed, not in what a command prints (`--release`
//! builds both with the release profile instead). It lays out the same
//! deterministic inputs for every command (a small tree of text and binary
//! files with fixed times, a zip, a `.zst`, FIX messages, BE-Tree
//! expressions and events, HdrHistogram logs), runs each command through
//! both binaries in turn in the same folder, and compares stdout, stderr,
//! the exit status and every file left in the folder (contents and mode).
//!
//! `--work REV2` compares with REV2's build (a worktree beside REV's)
//! instead of the work tree's, for a shared checkout whose work tree is
//! mid-edit, or to check a range of commits.
//!
//! Only what is inherently variable is masked, per command (see
//! [`Mask`]); the folder's own path is the same for both binaries, so paths
//! need no mask. Each command prints `same` or the first difference; the
//! task fails if any differs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::worktree::{self, Profile};

mod cases;
mod inputs;

use cases::cases;
use inputs::{copy_tree, make_inputs, set_times};

const USAGE: &str = "usage: cargo xtask same-output REV [--work REV2] [--release] [--only WORD]";

/// What the task was asked.
#[derive(Debug)]
struct Request {
    rev: String,
    profile: Profile,
    /// A revision to compare with instead of the work tree.
    work: Option<String>,
    /// Only the commands whose name holds this.
    only: Option<String>,
}

fn parse(args: &[String]) -> Result<Request> {
    let mut rev = None;
    let mut profile = Profile::Dev;
    let mut only = None;
    let mut work = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--release" => profile = Profile::Release,
            "--only" => only = Some(it.next().context(USAGE)?.clone()),
            "--work" => work = Some(it.next().context(USAGE)?.clone()),
            s if s.starts_with('-') => bail!("unknown option {s}\n{USAGE}"),
            s if rev.is_none() => rev = Some(s.to_owned()),
            s => bail!("unexpected argument {s}\n{USAGE}"),
        }
    }
    Ok(Request {
        rev: rev.context(USAGE)?,
        profile,
        work,
        only,
    })
}

/// What is inherently variable in a command's output, replaced by a
/// placeholder in both sides before they are compared.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mask {
    /// Rates: a number and a unit per second (`0.7 MB/s`, `12 msg/s`),
    /// which measure the machine.
    Rates,
    /// Durations: a number and a time unit (`1.2 s`, `350ms`, `4 µs`).
    Durations,
    /// Every number of a JSON document (or of each line of JSON lines), for
    /// reports of measurements: keys, strings and the shape still compare.
    JsonNumbers,
}

/// One command line of a case; `stdin` names a file of the folder to feed
/// it (else stdin is empty).
#[derive(Clone, Debug)]
struct Step {
    args: Vec<String>,
    stdin: Option<&'static str>,
}

/// A named sequence of steps run in one fresh copy of the inputs.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    steps: Vec<Step>,
    masks: &'static [Mask],
}

/// What a file system entry left in the folder is.
#[derive(Clone, PartialEq, Eq, Debug)]
enum Entry {
    File { mode: u32, sha256: String, len: u64 },
    Dir { mode: u32 },
    Link(String),
}

/// What one binary did in one case.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
struct Outcome {
    /// Per step: stdout, stderr, exit status as text.
    steps: Vec<(Vec<u8>, Vec<u8>, String)>,
    /// Every entry under the folder afterwards, by relative path.
    files: BTreeMap<String, Entry>,
}

/// Runs the task from the workspace root.
pub fn same_output(args: &[String]) -> Result<()> {
    let req = parse(args)?;
    let root = std::env::current_dir()?;
    let out = root.join("target/same-output");
    std::fs::create_dir_all(&out)?;

    let base = revision_binary(&out, &req.rev, req.profile)?;
    let work = match &req.work {
        Some(rev) => revision_binary(&out, rev, req.profile)?,
        None => {
            let built = worktree::build(&root, None, req.profile)?;
            let work = out.join(format!("work-{}/perfkit", tag(req.profile)));
            worktree::copy(&built, &work)?;
            work
        }
    };

    let tmp = tempfile::Builder::new().prefix("same-output").tempdir()?;
    let inputs = tmp.path().join("inputs");
    make_inputs(&inputs, &work, &root)?;
    let folder = tmp.path().join("run");
    let tmp_text = tmp.path().to_string_lossy().into_owned();

    let mut differing = Vec::new();
    let mut ran = 0;
    for case in cases() {
        if req.only.as_ref().is_some_and(|o| !case.name.contains(o)) {
            continue;
        }
        ran += 1;
        let a = mask_outcome(run_case(&base, &case, &inputs, &folder)?, &case, &tmp_text);
        let b = mask_outcome(run_case(&work, &case, &inputs, &folder)?, &case, &tmp_text);
        match first_difference(&a, &b) {
            None => println!("same     {}", case.name),
            Some(d) => {
                println!("DIFFERS  {}: {d}", case.name);
                differing.push(case.name);
            }
        }
    }
    println!(
        "\n{} of {ran} command(s) differ between {} (base) and {}",
        differing.len(),
        req.rev,
        req.work.as_deref().unwrap_or("the work tree")
    );
    if !differing.is_empty() {
        bail!("{} command(s) differ", differing.len());
    }
    Ok(())
}

/// The profile's name in the folders binaries are kept in.
fn tag(profile: Profile) -> &'static str {
    match profile {
        Profile::Dev => "dev",
        Profile::Release => "release",
    }
}

/// `rev`'s perfkit, built in its worktree under `out` unless kept there
/// from an earlier run. Every revision builds into `out/target`: cargo
/// keeps two worktrees' artifacts apart (their paths differ; checked:
/// 1d2f33b's and 122b3d0's dev builds left two perfkit artifacts there and
/// two different binaries), and they share the dependencies' builds.
fn revision_binary(out: &Path, rev: &str, profile: Profile) -> Result<PathBuf> {
    let sha = worktree::resolve(rev)?;
    // Each binary is named perfkit in a folder of its own: clap names the
    // program in usage lines and errors after argv[0]'s file name.
    let bin = out.join(format!(
        "base-{}-{}/perfkit",
        worktree::short(&sha),
        tag(profile)
    ));
    if bin.is_file() {
        eprintln!("xtask: reusing {} (delete it to rebuild)", bin.display());
    } else {
        let tree = worktree::checkout(out, &sha)?;
        let built = worktree::build(&tree, Some(&out.join("target")), profile)?;
        worktree::copy(&built, &bin)?;
    }
    Ok(bin)
}

/// Runs every step of `case` with `bin` in a fresh copy of `inputs` at
/// `folder` (the same path for both binaries).
fn run_case(bin: &Path, case: &Case, inputs: &Path, folder: &Path) -> Result<Outcome> {
    if folder.exists() {
        std::fs::remove_dir_all(folder)?;
    }
    copy_tree(inputs, folder)?;
    set_times(folder)?;
    let mut outcome = Outcome::default();
    for step in &case.steps {
        // timeout(1) bounds a command that hangs: its status then says so.
        let mut cmd = Command::new("timeout");
        cmd.arg("120")
            .arg(bin)
            .args(&step.args)
            .current_dir(folder)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", folder)
            .env("TZ", "UTC")
            .env("LC_ALL", "C");
        cmd.stdin(match step.stdin {
            Some(f) => Stdio::from(std::fs::File::open(folder.join(f))?),
            None => Stdio::null(),
        });
        let out = cmd
            .output()
            .with_context(|| format!("running {} {}", bin.display(), step.args.join(" ")))?;
        outcome
            .steps
            .push((out.stdout, out.stderr, out.status.to_string()));
    }
    outcome.files = snapshot(folder)?;
    Ok(outcome)
}

/// Every entry under `dir`, by path relative to it.
fn snapshot(dir: &Path) -> Result<BTreeMap<String, Entry>> {
    use std::os::unix::fs::PermissionsExt;
    let mut all = BTreeMap::new();
    let mut todo: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            let rel = p.strip_prefix(dir)?.to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(&p)?;
            let mode = meta.permissions().mode() & 0o7777;
            let entry = if meta.file_type().is_symlink() {
                Entry::Link(std::fs::read_link(&p)?.to_string_lossy().into_owned())
            } else if meta.is_dir() {
                todo.push(p.clone());
                Entry::Dir { mode }
            } else {
                let bytes = std::fs::read(&p)?;
                Entry::File {
                    mode,
                    sha256: Sha256::digest(&bytes)
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect(),
                    len: bytes.len() as u64,
                }
            };
            all.insert(rel, entry);
        }
    }
    Ok(all)
}

/// The outcome with the case's masks applied to its stdout and stderr, and
/// the temporary folder's path replaced by `$TMP` (a command that prints
/// an input's absolute path).
fn mask_outcome(mut o: Outcome, case: &Case, tmp: &str) -> Outcome {
    for (stdout, stderr, _) in &mut o.steps {
        for stream in [stdout, stderr] {
            *stream = mask(stream, case.masks, tmp);
        }
    }
    o
}

/// `bytes` with `tmp` replaced by `$TMP` and each mask applied.
fn mask(bytes: &[u8], masks: &[Mask], tmp: &str) -> Vec<u8> {
    let mut s = String::from_utf8_lossy(bytes).into_owned();
    if !tmp.is_empty() {
        s = s.replace(tmp, "$TMP");
    }
    for m in masks {
        s = match m {
            Mask::Rates => mask_quantities(&s, true),
            Mask::Durations => mask_quantities(&s, false),
            Mask::JsonNumbers => mask_json_numbers(&s),
        };
    }
    s.into_bytes()
}

/// Time units a duration may be written in.
const TIME_UNITS: [&str; 8] = ["ns", "µs", "us", "ms", "s", "sec", "min", "h"];

/// `s` with every number followed by a rate (`rates`: a unit ending in
/// `/s`) or a time unit replaced by `<rate>` or `<duration>`. The number
/// must start a word and the unit end one, so `4 files`, `2 sets` and
/// `v1.2s` stay as they are.
fn mask_quantities(s: &str, rates: bool) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let starts_number = b[i].is_ascii_digit() && (i == 0 || !is_word(b[i - 1]));
        if starts_number {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                j += 1;
            }
            let mut k = j;
            if k < b.len() && b[k] == b' ' {
                k += 1;
            }
            let unit_end = unit_at(&s[k..], rates).map(|n| k + n);
            if let Some(end) = unit_end {
                out.push_str(if rates { "<rate>" } else { "<duration>" });
                i = end;
                continue;
            }
            out.push_str(&s[i..j]);
            i = j;
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(ch);
        i += ch.len_utf8().max(1);
    }
    out
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c >= 0x80
}

/// The length of the unit `rest` starts with, if it is one: a rate
/// (letters or `%` then `/s`) or a time unit, ending its word.
fn unit_at(rest: &str, rates: bool) -> Option<usize> {
    let word_len = rest
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == 'µ' || c == '/'))
        .map_or(rest.len(), |(n, _)| n);
    let word = &rest[..word_len];
    let ok = if rates {
        word.len() > 2 && word.ends_with("/s")
    } else {
        TIME_UNITS.contains(&word)
    };
    ok.then_some(word_len)
}

/// `s` as a JSON document, or as JSON lines, with every number 0; text
/// that is not JSON is left as it is.
fn mask_json_numbers(s: &str) -> String {
    fn zero(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Number(n) => *n = 0.into(),
            serde_json::Value::Array(a) => a.iter_mut().for_each(zero),
            serde_json::Value::Object(o) => o.values_mut().for_each(zero),
            _ => {}
        }
    }
    let one = |t: &str| -> Option<String> {
        let mut v: serde_json::Value = serde_json::from_str(t).ok()?;
        zero(&mut v);
        Some(v.to_string())
    };
    if let Some(doc) = one(s) {
        return doc + "\n";
    }
    s.lines()
        .map(|l| one(l).unwrap_or_else(|| l.to_owned()) + "\n")
        .collect()
}

/// Where two texts first differ: `line N: base «..» work «..»`.
fn first_line_difference(what: &str, a: &[u8], b: &[u8]) -> Option<String> {
    if a == b {
        return None;
    }
    let a = String::from_utf8_lossy(a);
    let b = String::from_utf8_lossy(b);
    let (mut la, mut lb) = (a.split_inclusive('\n'), b.split_inclusive('\n'));
    let mut n = 0;
    loop {
        n += 1;
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                // A long line is shown from a little before where it
                // first differs.
                let from = match (x, y) {
                    (Some(x), Some(y)) => x
                        .chars()
                        .zip(y.chars())
                        .take_while(|(p, q)| p == q)
                        .count()
                        .saturating_sub(40),
                    _ => 0,
                };
                let show = |l: Option<&str>| {
                    l.map_or("(ends)".to_owned(), |l| {
                        let cut: String = l.chars().skip(from).take(200).collect();
                        let dots = if from > 0 { "…" } else { "" };
                        format!("{dots}{cut:?}")
                    })
                };
                return Some(format!(
                    "{what} line {n}:\n           base {}\n           work {}",
                    show(x),
                    show(y)
                ));
            }
        }
    }
}

/// The first difference between two outcomes of one case, in the order
/// stdout, stderr, exit status of each step, then the files left.
fn first_difference(a: &Outcome, b: &Outcome) -> Option<String> {
    let many = a.steps.len() > 1;
    for (i, (sa, sb)) in a.steps.iter().zip(&b.steps).enumerate() {
        let step = if many {
            format!("step {}: ", i + 1)
        } else {
            String::new()
        };
        if let Some(d) = first_line_difference(&format!("{step}stdout"), &sa.0, &sb.0)
            .or_else(|| first_line_difference(&format!("{step}stderr"), &sa.1, &sb.1))
        {
            return Some(d);
        }
        if sa.2 != sb.2 {
            return Some(format!("{step}exit status: base {}, work {}", sa.2, sb.2));
        }
    }
    let paths: std::collections::BTreeSet<&String> = a.files.keys().chain(b.files.keys()).collect();
    for p in paths {
        match (a.files.get(p), b.files.get(p)) {
            (Some(x), Some(y)) if x == y => {}
            (Some(_), None) => return Some(format!("file {p}: left by base only")),
            (None, Some(_)) => return Some(format!("file {p}: left by work only")),
            (x, y) => return Some(format!("file {p}: base {x:?}, work {y:?}")),
        }
    }
    None
}

#[cfg(test)]
mod tests;
