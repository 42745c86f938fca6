//! `cargo xtask bench-compare REV`: is the work tree's `perfkit bench`
//! worse than REV's, by more than the bench's own noise?
//!
//! A headline's change means nothing without the spread of the same binary
//! run against itself on the same machine at the same time (on a shared
//! two-core machine an unchanged binary reads several per cent "worse" on
//! some headlines). So each round runs four binaries in a rotating order:
//! REV's build, the work tree's build, and a byte-identical copy of each at
//! another path (the A/A controls). For every summary headline it prints
//! REV's median, the work tree's median, the change, and both binaries'
//! spreads beside it (the work tree over its copy, REV over its copy); a
//! headline is called worse only when it lost more than [`RULE`] and more
//! than either spread. REV's own spread counts as much as the work tree's:
//! in two comparisons four hours apart, REV's median moved 26 % on one row
//! (10.6 to 13.4) and 23 % on another (8.0 to 9.8) while the work tree's
//! A/A read under 2 %, and the rows were called worse.
//!
//! REV is built in a git worktree under `target/bench-compare/`, with
//! REV's own release profile, into a target directory of its own there:
//! never the work tree's, where cargo would take REV's artifacts for the
//! work tree's (it names a workspace crate's artifacts by its path inside
//! the workspace, the same in both trees, and a file older than the
//! artifact reads as unchanged). Every run's JSON is kept in
//! `target/bench-compare/runs/` for a second look.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::worktree::{self, Profile, copy};

/// The regression rule the issues hold every headline to: at most this
/// fraction worse than the base.
const RULE: f64 = 0.03;

/// What the task was asked.
struct Request {
    rev: String,
    pairs: usize,
    only: Option<String>,
}

const USAGE: &str =
    "usage: cargo xtask bench-compare REV [--runs N] [--only PART,...] (N >= 1, default 5)";

/// The request `args` make; `None` when they ask for the usage (`-h`,
/// `--help`), wherever it stands.
fn parse(args: &[String]) -> Result<Option<Request>> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        return Ok(None);
    }
    let mut rev = None;
    let mut pairs = 5;
    let mut only = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => {
                let v = it.next().context(USAGE)?;
                pairs =
                    v.parse().ok().filter(|&n| n >= 1).with_context(|| {
                        format!("--runs {v}: not a count of at least 1\n{USAGE}")
                    })?;
            }
            "--only" => only = Some(it.next().context(USAGE)?.clone()),
            s if s.starts_with('-') => bail!("unknown option {s}\n{USAGE}"),
            s if rev.is_none() => rev = Some(s.to_owned()),
            s => bail!("unexpected argument {s}\n{USAGE}"),
        }
    }
    Ok(Some(Request {
        rev: rev.context(USAGE)?,
        pairs,
        only,
    }))
}

/// The four binaries of one comparison, in the order of the table's columns.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Role {
    /// REV's build.
    Base,
    /// The work tree's build.
    Work,
    /// A copy of the work tree's build: the A/A control.
    Copy,
    /// A copy of REV's build: REV's own A/A control.
    BaseCopy,
}

impl Role {
    const ALL: [Role; 4] = [Role::Base, Role::Work, Role::Copy, Role::BaseCopy];

    fn tag(self) -> &'static str {
        match self {
            Role::Base => "base",
            Role::Work => "work",
            Role::Copy => "copy",
            Role::BaseCopy => "base-copy",
        }
    }
}

/// Runs the task from the workspace root.
pub fn bench_compare(args: &[String]) -> Result<()> {
    let Some(req) = parse(args)? else {
        println!("{USAGE}");
        return Ok(());
    };
    let root = std::env::current_dir()?;
    let out = root.join("target/bench-compare");
    std::fs::create_dir_all(out.join("runs"))?;

    let sha = worktree::resolve(&req.rev)?;
    let short = worktree::short(&sha);
    let base = out.join(format!("perfkit-{short}"));
    if base.is_file() {
        eprintln!("xtask: reusing {} (delete it to rebuild)", base.display());
    } else {
        let tree = worktree::checkout(&out, &sha)?;
        let built = worktree::build(&tree, Some(&out.join("target")), Profile::Release)?;
        copy(&built, &base)?;
    }
    // The work tree builds as `cargo build --release` would, so the task
    // reuses (and leaves) the ordinary release build.
    let built = worktree::build(&root, None, Profile::Release)?;
    let work = out.join("perfkit-work");
    let copy_path = out.join("perfkit-work-copy");
    copy(&built, &work)?;
    copy(&built, &copy_path)?;
    let base_copy = out.join(format!("perfkit-{short}-copy"));
    copy(&base, &base_copy)?;

    let bins: BTreeMap<Role, PathBuf> = [
        (Role::Base, base),
        (Role::Work, work),
        (Role::Copy, copy_path),
        (Role::BaseCopy, base_copy),
    ]
    .into();
    let peers = perfkit_peers::install_dir();
    let peers = if peers.is_absolute() {
        peers
    } else {
        root.join(peers)
    };

    let mut samples: BTreeMap<Role, Vec<BTreeMap<String, f64>>> = BTreeMap::new();
    for round in 0..req.pairs {
        // The order turns each round, so no role always runs first (after
        // an idle machine) or last.
        for k in 0..Role::ALL.len() {
            let role = Role::ALL[(round + k) % Role::ALL.len()];
            let json = out
                .join("runs")
                .join(format!("{short}-{}-{round}.json", role.tag()));
            eprintln!(
                "xtask: round {}/{}: {} ({})",
                round + 1,
                req.pairs,
                role.tag(),
                bins[&role].display()
            );
            let lines = run_bench(&bins[&role], req.only.as_deref(), &peers, &json)?;
            samples.entry(role).or_default().push(lines);
        }
    }
    print!("{}", table(&req.rev, &samples));
    Ok(())
}

/// One `perfkit bench --json` run; its JSON is kept at `json`. Returns the
/// summary's speedups by headline. A run that fails (the stress part exits
/// 1 when it loses a block) stops the comparison: its numbers would not be
/// the same work as the others'.
fn run_bench(
    bin: &Path,
    only: Option<&str>,
    peers: &Path,
    json: &Path,
) -> Result<BTreeMap<String, f64>> {
    let mut cmd = Command::new(bin);
    cmd.args(["bench", "--json"]);
    if let Some(parts) = only {
        cmd.args(["--only", parts]);
    }
    cmd.env(perfkit_peers::DIR_ENV, peers)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    let out = cmd
        .output()
        .with_context(|| format!("starting {}", bin.display()))?;
    std::fs::write(json, &out.stdout)?;
    if !out.status.success() {
        bail!(
            "{} bench failed ({}); its output is in {}",
            bin.display(),
            out.status,
            json.display()
        );
    }
    headlines(&out.stdout).with_context(|| format!("reading {}", json.display()))
}

/// What the bench's summary says in the subject of a headline that is the
/// lowest ratio over a group's workloads (`crates/bench/src/summary.rs`).
const WORST_OF: &str = "the worst of its workloads";

/// How the bench's summary starts the subject of a fix micro-benchmark's
/// headline: `fixcore SECTION: ROW`, the section's best row against its
/// first (`crates/bench/src/summary.rs`).
const FIX_SECTION: &str = "fixcore ";

/// The summary of one `perfkit bench --json` document: each headline's
/// speedup, keyed by [`headline_key`].
fn headlines(doc: &[u8]) -> Result<BTreeMap<String, f64>> {
    let v: serde_json::Value = serde_json::from_slice(doc)?;
    let summary = v["summary"]
        .as_array()
        .context("the document has no summary array")?;
    let mut map = BTreeMap::new();
    for h in summary {
        let subject = h["subject"].as_str().context("a headline has no subject")?;
        let peer = h["peer"].as_str().context("a headline has no peer")?;
        let basis = h["basis"].as_str().unwrap_or("");
        let speedup = h["speedup"].as_f64().unwrap_or(f64::NAN);
        map.insert(headline_key(subject, peer, basis), speedup);
    }
    Ok(map)
}

/// A headline's name across runs: `subject vs peer (basis)`, the words,
/// not the line, which carries the figure. A worst-of-its-workloads
/// headline names its worst workload in the peer and after the basis's
/// first `;`, and which workload is the worst can change from run to run
/// when two are close (the packages' docs in one run, the gzip files in
/// the next), which split one headline into rows that no run had twice,
/// so its A/A read nothing. Its key is the subject and the measurement
/// alone: the headline is the lowest ratio, whichever workload gives it.
///
/// For the same reason a fix section's headline is keyed by its section,
/// not by the row that was best in that run: the spaced deferred rows (250
/// and 1,000 ns apart) and the transports (tokio, io_uring) take turns by
/// less than their noise. And any headline's basis is cut at its first `;`
/// or `(`, where the bench adds what it held equal and figures of the run
/// (a geometric mean, the worst row's name), which are no part of its name.
fn headline_key(subject: &str, peer: &str, basis: &str) -> String {
    let measurement = basis.split([';', '(']).next().unwrap_or(basis).trim();
    if subject.contains(WORST_OF) {
        format!("{subject} ({measurement})")
    } else if subject.starts_with(FIX_SECTION)
        && let Some((section, _row)) = subject.rsplit_once(": ")
    {
        format!("{section}: the best row vs {peer} ({measurement})")
    } else {
        format!("{subject} vs {peer} ({measurement})")
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite() && *x > 0.0);
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Each headline's medians for the three roles, from their runs.
fn medians(
    samples: &BTreeMap<Role, Vec<BTreeMap<String, f64>>>,
) -> BTreeMap<String, [Option<f64>; 4]> {
    let mut names: Vec<&String> = samples.values().flatten().flat_map(|m| m.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let of = |role: Role| {
                median(
                    samples
                        .get(&role)
                        .into_iter()
                        .flatten()
                        .filter_map(|m| m.get(name).copied())
                        .collect(),
                )
            };
            (name.clone(), Role::ALL.map(of))
        })
        .collect()
}

/// The change from `a` to `b` as a signed fraction (speedups: above 0 is
/// better).
fn change(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(b? / a? - 1.0)
}

/// What a headline's row concludes from its change and the two binaries'
/// spreads (the work tree's A/A, REV's B/B): a change counts only past
/// [`RULE`] and past both.
fn verdict(change: Option<f64>, aa: Option<f64>, bb: Option<f64>) -> &'static str {
    let spread = [aa, bb]
        .into_iter()
        .flatten()
        .fold(0.0_f64, |m, s| m.max(s.abs()));
    match change {
        None => "not in both",
        Some(c) if c < -RULE && -c > spread => "WORSE",
        Some(c) if c < -RULE => "worse, inside A/A",
        Some(c) if c > RULE && c > spread => "better",
        _ => "same",
    }
}

/// The comparison as text: one line per headline, then the rule.
fn table(rev: &str, samples: &BTreeMap<Role, Vec<BTreeMap<String, f64>>>) -> String {
    let runs = samples.get(&Role::Work).map_or(0, Vec::len);
    let pct = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{:+.1}%", x * 100.0));
    let num = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{x:.3}"));
    let mut s = format!(
        "== bench-compare: {rev} (base) against the work tree, medians of {runs} runs each ==\n\
         speedup over the peer per headline (above 1: perfkit faster); change = work / base - 1;\n\
         A/A = work / a copy of work - 1, B/B = base / a copy of base - 1: each binary's spread\n\
         in the same rounds\n\n"
    );
    let mut worse = 0;
    for (name, [base, work, copy, base_copy]) in medians(samples) {
        let c = change(base, work);
        let aa = change(copy, work);
        let bb = change(base_copy, base);
        let v = verdict(c, aa, bb);
        worse += usize::from(v == "WORSE");
        s += &format!(
            "{v:<18} {:>8} {:>8} {:>8} {:>8} {:>8}  {name}\n",
            num(base),
            num(work),
            pct(c),
            pct(aa),
            pct(bb)
        );
    }
    s += &format!(
        "{:<18} {:>8} {:>8} {:>8} {:>8} {:>8}\n\n{worse} headline(s) more than {:.0}% worse and outside both spreads\n",
        "(columns)",
        "base",
        "work",
        "change",
        "A/A",
        "B/B",
        RULE * 100.0
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    #[test]
    fn headlines_are_keyed_by_their_words_not_their_figures() {
        let doc = br#"{"summary":[{"line":"perfkit x is 2.00x faster than y (wall)","subject":"x","peer":"y","speedup":2.0,"basis":"wall"}]}"#;
        let h = headlines(doc).unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(h["x vs y (wall)"], 2.0);
        assert!(headlines(br#"{"sections":[]}"#).is_err());
    }

    /// Two runs whose worst workload differs still give one headline, and
    /// the figures of ordinary headlines with other peers stay apart.
    #[test]
    fn a_worst_of_headline_is_one_row_whichever_workload_is_worst() {
        let run = |peer: &str, workload: &str, v: f64| {
            let doc = format!(
                r#"{{"summary":[{{"subject":"decompress beside zstd -d, the worst of its workloads (CPU)","peer":"{peer}","speedup":{v},"basis":"median CPU time; the lowest of 4 workloads: decompress, {workload}; held equal: the same frame"}},{{"subject":"zip","peer":"{peer}","speedup":{v},"basis":"wall"}}]}}"#
            );
            headlines(doc.as_bytes()).unwrap()
        };
        let a = run("zstd -d, packages' docs", "packages' docs", 0.89);
        let b = run("zstd -d, gzip files", "gzip files", 0.88);
        let worst = "decompress beside zstd -d, the worst of its workloads (CPU) (median CPU time)";
        assert_eq!((a[worst], b[worst]), (0.89, 0.88));
        assert_eq!(a["zip vs zstd -d, packages' docs (wall)"], 0.89);
        assert!(!b.contains_key("zip vs zstd -d, packages' docs (wall)"));
    }

    /// A fix section's headline names the row that was best in its run;
    /// two runs whose best rows differ give one headline, and a basis's
    /// figures after its measurement are no part of the name.
    #[test]
    fn a_fix_section_is_one_row_whichever_row_is_best() {
        let subject =
            |row: &str| format!("fixcore deferred hot path (211 B NewOrderSingle): {row}");
        let peer = "inline parse+validate+store";
        let a = headline_key(
            &subject("deferred: SPSC ring submit, 250 ns apart"),
            peer,
            "median time per call",
        );
        let b = headline_key(
            &subject("deferred: SPSC ring submit, 1000 ns apart"),
            peer,
            "median time per call",
        );
        assert_eq!(a, b);
        let t = |row: &str| {
            headline_key(
                &format!("fixcore transport: echo (round trip): {row}"),
                "blocking",
                "median time per call",
            )
        };
        assert_eq!(t("tokio"), t("io_uring+defer_taskrun"));
        assert_ne!(t("tokio"), a);
        let w = |g: &str| {
            headline_key(
                "zipstream sync writer",
                "s-zip",
                &format!(
                    "median CPU per archive, the worst of 4 rows (100 KB; geometric mean {g}x); held equal: size"
                ),
            )
        };
        assert_eq!(w("0.742"), w("0.813"));
        assert_eq!(
            w("0.742"),
            "zipstream sync writer vs s-zip (median CPU per archive, the worst of 4 rows)"
        );
    }

    #[test]
    fn a_loss_counts_only_past_the_rule_and_the_same_binarys_spread() {
        assert_eq!(verdict(Some(-0.05), Some(0.01), Some(0.02)), "WORSE");
        assert_eq!(verdict(Some(-0.05), Some(-0.08), None), "worse, inside A/A");
        // REV's own spread counts as much as the work tree's.
        assert_eq!(
            verdict(Some(-0.17), Some(-0.02), Some(0.26)),
            "worse, inside A/A"
        );
        assert_eq!(verdict(Some(-0.02), Some(0.0), Some(0.0)), "same");
        assert_eq!(verdict(Some(0.10), Some(0.02), Some(-0.01)), "better");
        assert_eq!(verdict(Some(0.10), Some(0.12), None), "same");
        assert_eq!(verdict(Some(0.10), None, Some(-0.12)), "same");
        assert_eq!(verdict(None, Some(0.0), Some(0.0)), "not in both");
    }

    #[test]
    fn medians_take_every_run_and_ignore_unmeasured_ones() {
        let mut samples = BTreeMap::new();
        samples.insert(
            Role::Base,
            vec![
                run_of(&[("h", 1.0)]),
                run_of(&[("h", 3.0)]),
                run_of(&[("h", 2.0)]),
            ],
        );
        samples.insert(
            Role::Work,
            vec![
                run_of(&[("h", 2.0), ("new", 1.0)]),
                run_of(&[("h", f64::NAN)]),
            ],
        );
        samples.insert(Role::BaseCopy, vec![run_of(&[("h", 2.5)])]);
        let m = medians(&samples);
        assert_eq!(m["h"], [Some(2.0), Some(2.0), None, Some(2.5)]);
        assert_eq!(m["new"], [None, Some(1.0), None, None]);
        let t = table("r", &samples);
        assert!(t.contains("not in both"), "{t}");
        assert!(t.contains("0 headline(s) more than 3% worse"), "{t}");
        // B/B: base (2.0) over its copy (2.5), the base's spread.
        assert!(t.contains("-20.0%"), "{t}");
    }

    #[test]
    fn arguments_need_a_revision_and_counts_of_at_least_one() {
        let a = |v: &[&str]| parse(&v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        let r = a(&["HEAD~1", "--runs", "3", "--only", "zip,zstd"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.rev.as_str(), r.pairs, r.only.as_deref()),
            ("HEAD~1", 3, Some("zip,zstd"))
        );
        assert!(a(&[]).is_err());
        assert!(a(&["x", "--runs", "0"]).is_err());
        assert!(a(&["x", "--frobnicate"]).is_err());
        assert!(a(&["x", "y"]).is_err());
        // Help wins over anything else, even a bad count.
        assert!(a(&["--help"]).unwrap().is_none());
        assert!(a(&["x", "--runs", "0", "-h"]).unwrap().is_none());
    }
}
