//! `perfkit report merge` against an independent HdrHistogram: Python's
//! `hdrh` package writes the input logs from known samples, and reads the
//! merged log back to compare every bucket with its own union of them.

mod interop;

use interop::{have, is_percentile, ok, perfkit};
use serde_json::Value;

/// Writes three logs of the same 5 one-second intervals under the three
/// timestamp conventions of the format (relative to StartTime, relative to
/// a BaseTime 100 s before StartTime, absolute), each log from its own seeded samples, tags
/// `orders` in all three and `fills` in the first; then prints, as JSON,
/// the union of every log per tag and per slot as Python computes it.
const WRITE: &str = r##"
import json, random, sys
from hdrh.histogram import HdrHistogram
out = sys.argv[1]
def hist():
    return HdrHistogram(1, 3600 * 10**9, 3)
union = {}
starts = [1795435200.0, 1795435205.25, 1795435290.5]
for n, start in enumerate(starts):
    rng = random.Random(n)
    lines = ["#[StartTime: %.3f (seconds since epoch), x]" % start]
    if n == 1:
        lines.append("#[BaseTime: %.3f (seconds since epoch)]" % (start - 100))
    lines.append('"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"')
    for k in range(5):
        for tag in (["orders", "fills"] if n == 0 else ["orders"]):
            h = hist()
            for _ in range(rng.randint(200, 2000)):
                v = int(rng.lognormvariate(11, 1.2)) + 1
                h.record_value(v)
                for key in ((tag, k), (tag, None)):
                    union.setdefault(key, hist()).record_value(v)
            # Stamps a few milliseconds off the second, as two machines'
            # clocks would be.
            t = k + 0.004 * n
            if n == 1:
                t += 100
            if n == 2:
                t += start
            lines.append("Tag=%s,%.3f,1.000,%.3f,%s" % (
                tag, t, h.get_max_value() / 1e6, h.encode().decode()))
    open("%s/%d.hlog" % (out, n), "w").write("\n".join(lines) + "\n")
def buckets(h):
    return [[v.value_iterated_to, v.count_at_value_iterated_to] for v in h.get_recorded_iterator()]
print(json.dumps({("%s/%s" % key): {"count": h.get_total_count(), "buckets": buckets(h)}
                  for key, h in union.items()}))
"##;

/// Reads a log and prints each interval's tag, start and buckets.
const READ: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**9, 3))
got = []
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    got.append({"tag": h.get_tag(), "start_ms": h.get_start_time_stamp(),
                "count": h.get_total_count(),
                "buckets": [[v.value_iterated_to, v.count_at_value_iterated_to]
                            for v in h.get_recorded_iterator()]})
print(json.dumps(got))
"#;

#[test]
fn merged_logs_match_an_independent_union_of_their_samples() {
    if !have("python3", "python3")
        || !perfkit_testkit::interop::have_python_module(
            "hdrh",
            "python3 -m pip install hdrhistogram",
        )
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = ok(std::process::Command::new("python3")
        .args(["-c", WRITE])
        .arg(d))
    .stdout;
    let union: Value = serde_json::from_slice(&out).unwrap();
    let merged = d.join("merged.hlog");
    let out = ok(perfkit()
        .args(["report", "merge", "--json", "--hlog"])
        .arg(&merged)
        .args([d.join("0.hlog"), d.join("1.hlog"), d.join("2.hlog")]));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = doc["sections"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "one row per tag: {rows:?}");
    for row in rows {
        let tag = row["name"].as_str().unwrap();
        let want = &union[format!("{tag}/None")];
        let l = &row["latency"];
        assert_eq!(l["count"], want["count"], "{tag}");
        let buckets = want["buckets"].as_array().unwrap();
        for (q, key) in [(50.0, "p50_ns"), (99.0, "p99_ns")] {
            let v = l[key].as_u64().unwrap();
            assert!(
                is_percentile(buckets, v, q),
                "{tag}: {key} {v} is not a p{q} of the union"
            );
        }
        let logs = if tag == "orders" { 3 } else { 1 };
        assert_eq!(row["logs"], logs, "{tag}");
        assert_eq!(row["intervals"], 5 * logs, "{tag}");
    }
    // The merged log, read by Python: 5 slots a second apart, each tag's
    // buckets exactly the union of that second's samples in every log.
    let out = ok(std::process::Command::new("python3")
        .args(["-c", READ])
        .arg(&merged))
    .stdout;
    let got: Vec<Value> = serde_json::from_slice(&out).unwrap();
    assert_eq!(got.len(), 10, "5 slots x 2 tags");
    let first = got
        .iter()
        .map(|i| i["start_ms"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    for interval in &got {
        let tag = interval["tag"].as_str().unwrap();
        let k = ((interval["start_ms"].as_f64().unwrap() - first) / 1000.0).round() as u64;
        let want = &union[format!("{tag}/{k}")];
        assert_eq!(interval["count"], want["count"], "{tag} slot {k}");
        assert_eq!(interval["buckets"], want["buckets"], "{tag} slot {k}");
    }
}

#[test]
fn bad_logs_are_one_line_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A log perfkit wrote itself, to cut short.
    let good = d.join("good.hlog");
    let out = ok(perfkit()
        .args([
            "fix",
            "bench",
            "--only",
            "parse",
            "--iterations",
            "2000",
            "--warmup",
            "100",
            "--runs",
            "1",
            "--hlog",
        ])
        .arg(&good));
    assert!(out.status.success());
    let text = std::fs::read(&good).unwrap();
    let cut = d.join("cut.hlog");
    std::fs::write(&cut, &text[..text.len() - 40]).unwrap();
    let garbage = d.join("garbage.hlog");
    std::fs::write(&garbage, b"\x00\x01not a log at all\n").unwrap();
    let bad_histogram = d.join("bad-histogram.hlog");
    std::fs::write(&bad_histogram, b"Tag=a,0.000,1.000,1.0,SElTVEZBQUFB\n").unwrap();
    for (path, what) in [
        (cut.clone(), "cut.hlog"),
        (garbage.clone(), "garbage.hlog"),
        (bad_histogram.clone(), "bad-histogram.hlog"),
        (d.join("missing.hlog"), "missing.hlog"),
    ] {
        let out = perfkit()
            .args(["report", "merge"])
            .arg(&good)
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.contains(what), "{what}: {err}");
        assert!(out.stdout.is_empty(), "{what}: no report after an error");
    }
    // The good log alone merges: its rows come back with their counts.
    let out = ok(perfkit().args(["report", "merge", "--json"]).arg(&good));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!doc["sections"][0]["rows"].as_array().unwrap().is_empty());
}
