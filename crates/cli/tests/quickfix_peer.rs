//! fix-bench's parse section beside QuickFIX (the `quickfix-parse` peer
//! that `cargo xtask peers` builds, and `cargo xtask ci` builds before the
//! tests), and the peer's own validation.

mod interop;
mod schema;

use interop::{fix_bench, framed};
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The peer, or `None` (and a skip notice) outside CI.
fn peer() -> Option<PathBuf> {
    interop::peer("quickfix-parse", " (needs g++ libquickfix-dev)")
}

/// Runs `quickfix-parse --check` on `messages`: exit code and one line per
/// message.
fn peer_check(exe: &std::path::Path, messages: &[Vec<u8>]) -> (Option<i32>, Vec<String>) {
    let mut input = Vec::new();
    for m in messages {
        input.extend_from_slice(format!("0 {}\n", m.len()).as_bytes());
        input.extend_from_slice(m);
        input.push(b'\n');
    }
    input.extend_from_slice(b"go\n");
    let mut child = Command::new(exe)
        .arg("--dict")
        .arg(exe.with_file_name("quickfix-FIX44.xml"))
        .arg("--check")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text.lines().map(str::to_owned).collect())
}

#[test]
fn peer_accepts_good_messages_and_rejects_bad_checksum_and_body_length() {
    let Some(exe) = peer() else { return };
    let good =
        framed("35=D|49=A|56=B|34=1|52=20260102-14:30:00.123|11=X|55=MSFT|54=1|38=100|40=1|");
    let mut bad_sum = good.clone();
    let n = bad_sum.len();
    // 10=xyz| -> one more than the right sum, mod 256.
    let sum: u32 = std::str::from_utf8(&good[n - 4..n - 1])
        .unwrap()
        .parse()
        .unwrap();
    bad_sum[n - 4..n - 1].copy_from_slice(format!("{:03}", (sum + 1) % 256).as_bytes());
    let bad_len = String::from_utf8(good.clone())
        .unwrap()
        .replacen("\x019=", "\x019=1", 1)
        .into_bytes();
    let (code, lines) = peer_check(&exe, &[good.clone(), bad_sum, bad_len, good]);
    assert_eq!(code, Some(1), "{lines:?}");
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(lines[0].starts_with("ok 0 0 "), "{lines:?}");
    assert!(
        lines[1].starts_with("invalid 0 1 ") && lines[1].contains("CheckSum"),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("invalid 0 2 ") && lines[2].contains("BodyLength"),
        "{lines:?}"
    );
    assert!(lines[3].starts_with("ok 0 3 "), "{lines:?}");
}

#[test]
fn peer_parses_the_bench_samples_with_their_groups() {
    let Some(exe) = peer() else { return };
    let samples = fixcore::sample::all();
    let msgs: Vec<Vec<u8>> = samples.iter().map(|(_, m)| m.clone()).collect();
    let (code, lines) = peer_check(&exe, &msgs);
    assert_eq!(code, Some(0), "{lines:?}");
    // One line per message: zip below stops at the shorter side.
    assert_eq!(lines.len(), samples.len(), "{lines:?}");
    for ((name, m), line) in samples.iter().zip(&lines) {
        // Every field of the message, counted here by its SOH bytes, is a
        // field QuickFIX kept (the group's entries included).
        let fields = m.iter().filter(|&&b| b == 1).count();
        assert!(
            line.contains(&format!(" fields={fields} ")),
            "{name}: {line}"
        );
        // The snapshot's 22-entry NoMDEntries group (fixcore::sample's
        // documented size) was nested by the dictionary, not flattened.
        let groups = if *name == "MarketDataSnapshot" {
            "groups=268x22"
        } else {
            "groups="
        };
        assert!(line.ends_with(groups), "{name}: {line}");
    }
}

#[test]
fn fix_bench_puts_quickfix_rows_beside_ours_with_ratios_of_their_medians() {
    if peer().is_none() {
        return;
    }
    let doc = schema::report(&interop::ok(&mut fix_bench(
        "parse",
        &["--iterations", "1000", "--warmup", "50"],
    )));
    let section = schema::section(&doc, "parse");
    let rows = section["rows"].as_array().unwrap();
    let p50 = |r: &Value| r["latency"]["p50_ns"].as_f64().unwrap();
    for (name, _) in fixcore::sample::all() {
        let ours = rows
            .iter()
            .find(|r| r["name"].as_str().unwrap().starts_with(name))
            .unwrap_or_else(|| panic!("no perfkit row for {name}: {rows:#?}"));
        let theirs = rows
            .iter()
            .find(|r| {
                r["name"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("QuickFIX {name}"))
            })
            .unwrap_or_else(|| panic!("no QuickFIX row for {name}: {rows:#?}"));
        // Both measured the same number of calls: 2 runs of 500.
        assert_eq!(ours["latency"]["count"], 1000, "{ours}");
        assert_eq!(theirs["latency"]["count"], 1000, "{theirs}");
        // Ours is recorded in tenths of a nanosecond: its median is the
        // `median_ns` column, which the latency's whole-nanosecond p50
        // rounds.
        let ours_median = ours["median_ns"].as_f64().unwrap();
        // The latency's p50 is the histogram's, to its 3 significant
        // digits.
        assert!(
            (ours_median - p50(ours)).abs() <= p50(ours) * 1e-3 + 1.0,
            "{ours}"
        );
        let want = p50(theirs) / ours_median.max(0.1);
        let got = theirs["quickfix_over_perfkit_x"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9, "{name}: {got} vs {want}");
    }
    let notes: Vec<&str> = section["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("both timed alike")),
        "{notes:?}"
    );
    assert!(
        !notes.iter().any(|n| n.contains("QuickFIX not measured")),
        "{notes:?}"
    );
}

#[test]
fn fix_bench_without_the_peer_names_the_command_that_builds_it() {
    let empty = tempfile::tempdir().unwrap();
    let notes = bench_without_quickfix_rows(empty.path());
    assert!(notes.contains("cargo xtask peers"), "{notes}");
}

#[test]
fn a_peer_that_cannot_start_is_a_note_with_its_reason_not_a_failure() {
    // Exits at once with a reason on stderr, as the real peer does without
    // its dictionary: perfkit's handling, checked without the real peer.
    let dir = tempfile::tempdir().unwrap();
    interop::fake_peer(
        dir.path(),
        "quickfix-parse",
        "echo 'cannot load quickfix-FIX44.xml' >&2; exit 1",
    );
    let notes = bench_without_quickfix_rows(dir.path());
    assert!(notes.contains("cannot load quickfix-FIX44.xml"), "{notes}");
}

#[test]
fn the_real_peer_without_its_dictionary_is_a_note_naming_it() {
    let Some(exe) = peer() else { return };
    // The peer alone, without the dictionary `cargo xtask peers` puts
    // beside it: it exits at once with the reason on stderr, which must
    // name the dictionary.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&exe, dir.path().join("quickfix-parse")).unwrap();
    let notes = bench_without_quickfix_rows(dir.path());
    assert!(notes.contains("quickfix-FIX44.xml"), "{notes}");
}

/// Runs fix-bench's parse section with the peer directory `dir` (within
/// 60 s, or the test fails) and returns its schema-checked parse section.
fn bench_with_peers(dir: &std::path::Path) -> Value {
    let doc = schema::report(&interop::ok_within(
        fix_bench("parse", &[]).env(perfkit_bench::peer::DIR_ENV, dir),
        60,
    ));
    schema::section(&doc, "parse").clone()
}

/// [`bench_with_peers`] where QuickFIX is not measured: checks the section
/// has our row for each built-in sample and no QuickFIX row, and a note
/// that says so; returns the notes.
fn bench_without_quickfix_rows(dir: &std::path::Path) -> String {
    let section = bench_with_peers(dir);
    let rows = section["rows"].as_array().unwrap();
    assert_eq!(rows.len(), fixcore::sample::all().len(), "{rows:#?}");
    assert!(
        rows.iter()
            .all(|r| !r["name"].as_str().unwrap().contains("QuickFIX")),
        "{rows:#?}"
    );
    let notes = section["notes"].to_string();
    assert!(notes.contains("QuickFIX not measured"), "{notes}");
    notes
}

/// Runs fix-bench's parse section with the peer directory `dir` and
/// checks it failed as a peer failure must: exit code 1, no report, one
/// line on stderr containing each of `wants`. A bench that does not end
/// within 60 s fails the test instead of hanging it.
fn bench_fails_with_peers(dir: &std::path::Path, wants: &[&str]) {
    let out = interop::output_within(
        fix_bench("parse", &[]).env(perfkit_bench::peer::DIR_ENV, dir),
        60,
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty(), "no report from a failed bench");
    assert_eq!(err.lines().count(), 1, "{err}");
    for want in wants {
        assert!(err.contains(want), "{want:?} in {err}");
    }
}

/// Greets like the real peer for the built-in samples (one set each).
fn ready() -> String {
    format!(
        "while read -r l; do [ \"$l\" = go ] && break; done; echo 'ready {}'",
        fixcore::sample::all().len()
    )
}

#[test]
fn a_peer_that_floods_garbage_mid_run_fails_in_one_line_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    // Ready, then at the first run an endless stream of batch lines with a
    // bad number, and stderr kept busy too: the old client returned the
    // parse error and then waited for a child blocked on a full pipe.
    interop::fake_peer(
        dir.path(),
        "quickfix-parse",
        &format!(
            "{}\nread -r l\nwhile :; do echo 's 0 x 10'; echo noise >&2; done",
            ready()
        ),
    );
    bench_fails_with_peers(dir.path(), &["quickfix-parse", "not a number"]);
}

#[test]
fn a_peer_that_dies_mid_run_fails_in_one_line_quoting_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    interop::fake_peer(
        dir.path(),
        "quickfix-parse",
        &format!(
            "{}\nread -r l\necho 's 0 5 10'\necho 'out of memory' >&2\nexit 3",
            ready()
        ),
    );
    bench_fails_with_peers(dir.path(), &["peer died", "out of memory"]);
}

/// The file modes `perfkit bench` runs beside `perfkit fix check`: what
/// `--build` writes, `--file` and `fix check` both find valid, message for
/// message, and a line spoilt in the file is invalid to both.
#[test]
fn built_messages_are_valid_to_quickfix_and_to_fix_check() {
    let Some(exe) = peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("built.fix");
    let built = Command::new(&exe)
        .args(["--build", "2000"])
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let mut text = String::from_utf8(built.stdout).unwrap();
    assert_eq!(text.lines().count(), 2000);
    // Every message type of the mix, and market data's group.
    for t in ["|35=D|", "|35=8|", "|35=F|", "|35=W|", "|35=0|", "|268=4|"] {
        assert!(text.contains(t), "no {t} in {}", &text[..400]);
    }
    let quickfix = |path: &std::path::Path| {
        let out = Command::new(&exe)
            .arg("--dict")
            .arg(exe.with_file_name("quickfix-FIX44.xml"))
            .arg("--file")
            .arg(path)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    let ours = |path: &std::path::Path| {
        let out = interop::perfkit()
            .args(["fix", "check"])
            .arg(path)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    // Writes `text`, then checks QuickFIX's whole output and exit code,
    // and fix check's exit code, summary and (when given) the line it names.
    let both = |text: &str, valid: u32, invalid: u32, line: Option<u32>| {
        std::fs::write(&file, text).unwrap();
        let code = Some(i32::from(invalid > 0));
        let summary = format!("{valid} valid, {invalid} invalid\n");
        assert_eq!(quickfix(&file), (code, summary.clone()));
        let (got, out) = ours(&file);
        assert_eq!(got, code, "{out}");
        if let Some(line) = line {
            assert!(out.contains(&format!(": line {line}: ")), "{out}");
        }
        assert!(out.ends_with(&format!(": {summary}")), "{out}");
    };
    both(&text, 2000, 0, None);
    // One BodyLength off by one, on the 7th line.
    let at = text.match_indices('\n').nth(5).unwrap().0 + 1;
    let nine = at + text[at..].find("|9=").unwrap() + 3;
    let digit = text.as_bytes()[nine];
    let other = if digit == b'9' {
        '1'
    } else {
        (digit + 1) as char
    };
    text.replace_range(nine..nine + 1, &other.to_string());
    both(&text, 1999, 1, Some(7));
    // A line over 1 MiB (past the peer's line buffer and fix check's
    // longest line), and a last message with no line break: the long one
    // is invalid to both, the last one valid to both.
    let last = text.lines().last().unwrap().to_owned();
    text.push_str(&"x".repeat(3 << 19));
    text.push('\n');
    text.push_str(&last);
    both(&text, 2000, 2, Some(2001));
}
