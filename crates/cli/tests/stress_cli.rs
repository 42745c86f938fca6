//! `perfkit stress`: its JSON validates against the report schema and says
//! every block was verified; an injected corrupt or dropped block makes the
//! command fail after printing its report.

mod interop;
mod schema;

use interop::{ok, perfkit};
use serde_json::Value;

const SHORT: [&str; 10] = [
    "stress",
    "--duration",
    "300ms",
    "--sample-every",
    "100ms",
    "--producers",
    "8",
    "--consumers",
    "8",
    "--json",
];

fn totals(doc: &Value) -> &Vec<Value> {
    doc["sections"][0]["rows"].as_array().unwrap()
}

#[test]
fn compare_json_matches_the_schema_and_verifies_every_block() {
    // No --rounds: --compare interleaves by default, here two rounds of
    // 150 ms per strategy (300 ms cannot make slices of 2 s).
    let out = ok(perfkit().args(SHORT).args(["--compare", "--interval", "0"]));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    schema::assert_valid(&doc);
    assert_eq!(doc["command"], "stress");
    assert_eq!(doc["run"]["runs"], 2);
    let notes = doc["sections"][0]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("--compare interleaves the strategies in this process: 2 rounds")),
        "{notes:?}"
    );
    // The proof of concept's zstd level 3 unless --recipe says otherwise.
    let heading = doc["sections"][0]["name"].as_str().unwrap();
    assert!(
        heading.starts_with("totals: recipe balanced (no frame checksum)"),
        "{heading}"
    );
    let rows = totals(&doc);
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["fresh", "pool", "chanpool", "thread-local"]);
    for r in rows {
        assert_eq!(r["verdict"], "pass");
        assert_eq!(r["lost"], 0);
        assert_eq!(r["duplicated"], 0);
        assert_eq!(r["corrupt"], 0);
        assert!(r["produced"].as_u64().unwrap() > 0);
        assert_eq!(r["produced"], r["verified"]);
        let v = r["vs_best_cpu"].as_f64().unwrap();
        assert!(v > 0.0 && v <= 1.0);
    }
    assert!(rows.iter().any(|r| r["vs_best_cpu"] == 1.0));
    // The series: one section per strategy, every sample in JSON.
    let series: Vec<&Value> = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with("series: "))
        .collect();
    assert_eq!(series.len(), 4);
    for s in series {
        // At least one 100 ms sample per 150 ms round, two rounds.
        assert!(s["rows"].as_array().unwrap().len() >= 2);
        assert!(s["rows"][0]["rss_mib"].as_f64().unwrap() > 0.0);
    }
    // Nothing but the document on stdout; no status line on a pipe.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn corrupt_and_lost_blocks_fail_the_command_after_the_report() {
    for (fault, column, word) in [
        ("corrupt-frame@3", "corrupt", "corrupt"),
        ("corrupt-payload@4", "corrupt", "corrupt"),
        ("drop@5", "lost", "lost"),
        ("duplicate@6", "duplicated", "more than once"),
    ] {
        let out = perfkit()
            .args(SHORT)
            .args(["--runtime", "threads", "--fault", fault])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{fault}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        schema::assert_valid(&doc);
        let row = &totals(&doc)[0];
        assert_eq!(row[column], 1, "{fault}");
        assert_eq!(row["verdict"], "FAIL");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(word), "{err}");
    }
}

#[test]
fn a_soak_too_short_to_judge_is_refused_before_running() {
    // 300 ms after a 60 ms warm-up at 100 ms: 2 samples, 10 needed. A soak
    // that cannot fit a slope must not pass by saying nothing.
    let out = perfkit().args(SHORT).arg("--soak").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "no report for a run that did not happen"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("soak too short to judge growth"), "{err}");
}

#[test]
fn a_soak_fails_on_a_context_leak() {
    // chanpool's contexts are a fixed set, so only the injected leak (one
    // context per block) can make them grow; RSS is left unjudged because
    // a one-second debug run still grows its heap.
    let out = perfkit()
        .args([
            "stress",
            "--soak",
            "--pool",
            "chanpool",
            "--duration",
            "1s",
            "--warmup",
            "200ms",
            "--sample-every",
            "50ms",
            "--producers",
            "2",
            "--consumers",
            "2",
            "--interval",
            "20ms",
            "--soak-rss-mib-per-min",
            "1e9",
            "--fault",
            "leak-context@0",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    schema::assert_valid(&doc);
    let row = &totals(&doc)[0];
    assert_eq!(row["verdict"], "FAIL");
    assert_eq!(row["lost"], 0);
    let slope = row["contexts_slope_per_min"].as_f64().unwrap();
    assert!(slope > 100.0, "{slope}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("growth after warm-up"), "{err}");
}

/// Issue 65: durations in the report are in its units ("66.7 ms"), not a
/// Duration's Debug text ("66.666666ms" for 200 ms over three rounds).
#[test]
fn durations_in_the_notes_are_in_the_reports_units() {
    let out = ok(perfkit().args([
        "stress",
        "--duration",
        "200ms",
        "--sample-every",
        "50ms",
        "--producers",
        "2",
        "--consumers",
        "2",
        "--compare",
        "--rounds",
        "3",
        "--json",
    ]));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = doc["sections"][0]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("3 rounds, each running every strategy for 66.7 ms in turn")),
        "{notes:?}"
    );
    let mut texts: Vec<&str> = notes.iter().map(|n| n.as_str().unwrap()).collect();
    texts.push(doc["run"]["timing"].as_str().unwrap());
    texts.push(doc["sections"][0]["name"].as_str().unwrap());
    for t in texts {
        let debug_like = t
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .any(|n| n.split_once('.').is_some_and(|(_, f)| f.len() > 3));
        assert!(!debug_like, "{t}");
    }
}
