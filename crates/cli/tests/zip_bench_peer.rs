//! `perfkit bench --only zip` (once `zip bench`) beside s-zip on its own default backend (the
//! `szip-peer` program `cargo xtask peers` builds, and `cargo xtask ci`
//! builds before the tests): its rows are there, the archives behind every
//! row read back in Python's `zipfile` with the same entries as our sync
//! writer's, and the derived columns agree with the numbers they come from.

mod interop;
mod schema;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use interop::{have, ok, per_round, perfkit, upper_median};
use serde_json::Value;

/// The peer, or `None` (and a skip notice) outside CI.
fn peer() -> Option<PathBuf> {
    interop::peer("szip-peer", "")
}

/// The zip part of `perfkit bench` (its quick settings) in JSON, with the
/// given peer directory; checked against the report schema.
fn quick_bench(peers: &Path, extra: &[&str]) -> Value {
    schema::report(&ok(&mut quick_bench_cmd(peers, extra)))
}

/// [`quick_bench`] that fails the test if the bench runs longer than
/// `secs`, instead of hanging it.
fn quick_bench_within(peers: &Path, secs: u64) -> Value {
    schema::report(&interop::ok_within(&mut quick_bench_cmd(peers, &[]), secs))
}

fn quick_bench_cmd(peers: &Path, extra: &[&str]) -> Command {
    let mut cmd = perfkit();
    cmd.env("PERFKIT_PEERS_DIR", peers)
        .args(["bench", "--only", "zip", "--json"])
        .args(extra);
    cmd
}

const OWN: [&str; 2] = [
    "s-zip 0.15.0 sync (miniz_oxide, own binary)",
    "s-zip 0.15.0 async (miniz_oxide, own binary)",
];

fn sections(doc: &Value) -> &Vec<Value> {
    let s = doc["sections"].as_array().unwrap();
    assert_eq!(s.len(), 2, "realistic and highly compressible");
    s
}

/// What Python's zipfile finds in each kept archive: size on disk, and per
/// entry its name, size, SHA-256 (None when encrypted, which zipfile
/// cannot read) and compressed size. Reading every entry checks its CRC-32.
const READ_BACK: &str = r#"
import hashlib, json, os, sys, zipfile
out = {}
for f in sorted(os.listdir(sys.argv[1])):
    p = os.path.join(sys.argv[1], f)
    with zipfile.ZipFile(p) as z:
        entries = []
        for i in z.infolist():
            digest = None if i.flag_bits & 1 else hashlib.sha256(z.read(i)).hexdigest()
            entries.append([i.filename, i.file_size, digest, i.compress_size])
    out[f] = {"size": os.path.getsize(p), "entries": entries}
json.dump(out, sys.stdout)
"#;

#[test]
fn own_backend_rows_write_valid_archives_and_their_columns_add_up() {
    let Some(exe) = peer() else { return };
    if !have("python3", "python3") {
        return;
    }
    let keep = tempfile::tempdir().unwrap();
    let doc = quick_bench(
        exe.parent().unwrap(),
        &["--keep", keep.path().to_str().unwrap()],
    );
    let read = ok(std::process::Command::new("python3")
        .args(["-c", READ_BACK])
        .arg(keep.path()));
    let files: HashMap<String, Value> = serde_json::from_slice(&read.stdout).unwrap();

    let mut own_rows = 0;
    for (si, sec) in sections(&doc).iter().enumerate() {
        let rows = sec["rows"].as_array().unwrap();
        let by_name: HashMap<&str, (usize, &Value)> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r["name"].as_str().unwrap(), (i, r)))
            .collect();
        for (ri, row) in rows.iter().enumerate() {
            let name = row["name"].as_str().unwrap();
            let (scenario, mode) = name.split_once(" · ").unwrap();
            let file = &files[&format!("s{si}-r{ri}.zip")];
            let entries = file["entries"].as_array().unwrap();
            let input: u64 = entries.iter().map(|e| e[1].as_u64().unwrap()).sum();
            let out_bytes = row["out_bytes"].as_u64().unwrap();
            // The kept archive is written after the timed ones; every writer
            // here is deterministic in size for the same input.
            assert_eq!(file["size"].as_u64().unwrap(), out_bytes, "{name}");
            let ratio = row["ratio"].as_f64().unwrap();
            let want = input as f64 / out_bytes as f64;
            assert!(
                (ratio - want).abs() <= want * 1e-9,
                "{name}: ratio {ratio}, want {want}"
            );

            // The ratio is the median of the rounds' own ratios (each
            // round ran every writer once), recomputed here from each
            // round's CPU; a row interpolated between two of a peer's
            // levels is paired the same way at both, not recomputed.
            let (_, sync) = by_name[format!("{scenario} · sync").as_str()];
            let cpu_vs_sync = row["cpu_vs_sync"].as_f64().unwrap();
            let (ours, theirs) = (
                per_round(row, "cpu_ns_rounds"),
                per_round(sync, "cpu_ns_rounds"),
            );
            assert_eq!(ours.len(), theirs.len(), "{name}");
            if row["size_held"] != "interpolated" {
                let want = upper_median(ours.iter().zip(&theirs).map(|(a, b)| a / b).collect());
                assert!(
                    (cpu_vs_sync - want).abs() <= want * 1e-9,
                    "{name}: cpu_vs_sync {cpu_vs_sync}, want {want}"
                );
                let cpu_ms = row["cpu_ms"].as_f64().unwrap();
                assert!(
                    (cpu_ms - upper_median(ours) / 1e6).abs() <= cpu_ms * 1e-9,
                    "{name}"
                );
            }
            // Equal work (issue 64): the sizes beside the ratio, and a row
            // whose compressed bytes are not the sync writer's within 1 %
            // says so, in its own text and in a note, and is never counted
            // as at equal size.
            let sync_out = sync["out_bytes"].as_u64().unwrap();
            let size_vs_sync = row["size_vs_sync"].as_f64().unwrap();
            let want = out_bytes as f64 / sync_out as f64;
            assert!((size_vs_sync - want).abs() <= want * 1e-9, "{name}");
            let (sync_i, _) = by_name[format!("{scenario} · sync").as_str()];
            let theirs = files[&format!("s{si}-r{sync_i}.zip")]["entries"]
                .as_array()
                .unwrap();
            let data =
                |entries: &[Value]| -> u64 { entries.iter().map(|e| e[3].as_u64().unwrap()).sum() };
            let (payload, sync_payload) = (data(entries), data(theirs));
            let data_vs_sync = row["data_vs_sync"].as_f64().unwrap();
            let want = payload as f64 / sync_payload as f64;
            assert!((data_vs_sync - want).abs() <= want * 1e-9, "{name}");
            let held = row["held_equal"].as_str().unwrap();
            assert!(
                held.contains(&format!("{out_bytes} bytes")),
                "{name}: {held}"
            );
            assert!(
                held.contains(&format!("compressed bytes {payload}")),
                "{name}: {held}"
            );
            let notes = sec["notes"].to_string();
            let listed = notes.contains(&format!("within 1 %: {name}:"));
            match row["size_held"].as_str().unwrap() {
                "within 1 %" => {
                    // AES-256's own bytes in the data aside (salt,
                    // verifier and MAC, 28 an entry).
                    let aes = if mode.contains("AES") {
                        28 * entries.len() as u64
                    } else {
                        0
                    };
                    let off = (payload - aes) as f64 / sync_payload as f64 - 1.0;
                    assert!(off.abs() <= 0.01, "{name}: {off}");
                    assert!(!held.contains("NOT equal") && !listed, "{name}: {held}");
                }
                "interpolated" => {
                    assert!(held.contains("interpolated") && listed, "{name}: {held}")
                }
                "not equal" => assert!(held.contains("NOT equal") && listed, "{name}: {held}"),
                other => panic!("{name}: size_held {other}"),
            }
            let cpu = row["cpu_mib_s"].as_f64().unwrap();
            let wall = row["wall_mib_s"].as_f64().unwrap();
            assert!(cpu > 0.0 && wall > 0.0, "{name}");

            // Same names and bytes as our sync writer's archive, both read by
            // zipfile; AES rows are encrypted, so only names and sizes.
            assert_eq!(entries.len(), theirs.len(), "{name}");
            for (a, b) in entries.iter().zip(theirs) {
                assert_eq!(a[0], b[0], "{name}");
                assert_eq!(a[1], b[1], "{name}");
                if !a[2].is_null() {
                    assert_eq!(a[2], b[2], "{name}: {} differs", a[0]);
                } else {
                    assert!(mode.contains("AES"), "{name}: unreadable entry {}", a[0]);
                }
            }
            if OWN.contains(&mode) {
                own_rows += 1;
                // Measured like the rest: at most the quick settings' 20
                // iterations, fewer when their 200 ms run out first.
                let count = row["latency"]["count"].as_u64().unwrap_or(0);
                assert!((1..=20).contains(&count), "{name}: {count} samples");
            }
        }
        let notes = sec["notes"].as_array().unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n.as_str().unwrap().contains("same round-robin")),
            "{notes:?}"
        );
    }
    // Both writers, for each of the three quick scenarios, in both sections.
    assert_eq!(own_rows, 2 * 3 * 2);
    assert_eq!(files.len(), 2 * 3 * 9, "one archive per row");
}

#[test]
fn without_the_peer_its_rows_are_left_out_with_a_note() {
    let empty = tempfile::tempdir().unwrap();
    let doc = quick_bench(empty.path(), &[]);
    for sec in sections(&doc) {
        for row in sec["rows"].as_array().unwrap() {
            let name = row["name"].as_str().unwrap();
            assert!(!OWN.iter().any(|m| name.ends_with(m)), "{name}");
        }
        let notes = sec["notes"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| {
                let n = n.as_str().unwrap();
                n.contains("not measured") && n.contains("cargo xtask peers")
            }),
            "{notes:?}"
        );
    }
}

#[test]
fn a_program_that_is_not_the_peer_is_a_note_with_its_reason_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    interop::fake_peer(dir.path(), "szip-peer", "echo nonsense");
    let doc = quick_bench(dir.path(), &[]);
    for sec in sections(&doc) {
        for row in sec["rows"].as_array().unwrap() {
            let name = row["name"].as_str().unwrap();
            assert!(!OWN.iter().any(|m| name.ends_with(m)), "{name}");
        }
        let notes = sec["notes"].to_string();
        assert!(notes.contains("not measured"), "{notes}");
        assert!(notes.contains("not an szip-peer"), "{notes}");
        assert!(notes.contains("nonsense"), "{notes}");
    }
}

#[test]
fn a_peer_that_dies_after_it_started_fails_the_bench_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    // Greets like the real one, then exits before reading a scenario that
    // is larger than a pipe's buffer: perfkit's write meets a closed pipe.
    interop::fake_peer(dir.path(), "szip-peer", "echo 'hello szip-peer 1 fake'");
    // Within a bound, or the test fails: a regression into a hang (a write
    // blocked on the dead peer's pipe) must not hang the test.
    let out = interop::output_within(
        perfkit()
            .env("PERFKIT_PEERS_DIR", dir.path())
            .args(["bench", "--only", "zip", "--json"]),
        60,
    );
    let err = String::from_utf8(out.stderr).unwrap();
    // 1, not the quiet 141 of a closed stdout.
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty(), "no report from a failed bench");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("szip-peer"), "{err}");
}

#[test]
fn a_program_that_never_greets_is_a_note_within_the_timeout_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    // Neither greets nor exits, nor reads its stdin.
    interop::fake_peer(dir.path(), "szip-peer", "exec sleep 600");
    // Within the bound, or the test fails (the timeout is 10 s).
    let doc = quick_bench_within(dir.path(), 120);
    for sec in sections(&doc) {
        let notes = sec["notes"].to_string();
        assert!(notes.contains("not measured"), "{notes}");
        assert!(notes.contains("did not answer within 10 s"), "{notes}");
    }
}
