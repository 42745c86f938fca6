//! `--json` validates against the documented schema, `--hlog` reads back
//! (with this crate's HdrHistogram and an independent Python one), and
//! `--plot` is an SVG with one line per histogram.

mod interop;
mod schema;

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use interop::{have, ok, perfkit};
use serde_json::Value;

/// [`quick_bench`]'s `--budget`, in microseconds.
const BUDGET_US: f64 = 100.0;
/// [`quick_bench`]'s `--heartbeat`, in seconds.
const HEARTBEAT_S: f64 = 0.05;

fn quick_bench(dir: &std::path::Path, extra: &[&str]) -> Vec<u8> {
    ok(perfkit()
        .current_dir(dir)
        .args([
            "bench",
            "--only",
            "zstd",
            "--recipes",
            "fast,balanced",
            "--zstd-time",
            "5ms",
            "--budget",
            "100us",
            "--heartbeat",
            "50ms",
        ])
        .args(extra))
    .stdout
}

#[test]
fn json_matches_the_schema_and_the_hlog_and_plot_agree_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stdout = quick_bench(d, &["--json", "--hlog", "run.hlog", "--plot", "run.svg"]);
    let doc: Value = serde_json::from_slice(&stdout).expect("stdout is exactly one JSON document");

    schema::assert_valid(&doc);
    let validator = schema::validator();
    // The schema has teeth: a word where a number belongs is refused.
    let mut bad = doc.clone();
    bad["sections"][0]["rows"][0]["ratio"] = "-".into();
    assert!(!validator.is_valid(&bad));
    bad["sections"][0]["rows"][0]["ratio"] = Value::Null;
    bad["sections"][0]["rows"][0]["Throughput"] = 1.into();
    assert!(!validator.is_valid(&bad), "column names are snake_case");
    compress_bench_columns(&doc);

    // Every histogram row in the JSON is one tagged interval in the log, with
    // the same count and maximum.
    let mut expected: Vec<(String, u64, u64)> = Vec::new();
    let mut tags = Vec::new();
    for s in doc["sections"].as_array().unwrap() {
        for r in s["rows"].as_array().unwrap() {
            if let Some(l) = r["latency"].as_object() {
                let name = format!(
                    "{}/{}",
                    s["name"].as_str().unwrap(),
                    r["name"].as_str().unwrap()
                );
                expected.push((
                    name,
                    l["count"].as_u64().unwrap(),
                    l["max_ns"].as_u64().unwrap(),
                ));
                tags.push(r["hlog_tag"].as_str().expect("hlog_tag").to_owned());
            }
        }
    }
    assert!(
        expected.len() >= 8 + 4,
        "8 recipe rows per input and 4 heartbeat rows"
    );
    let log = std::fs::read(d.join("run.hlog")).unwrap();
    let mut got = Vec::new();
    let mut de = Deserializer::new();
    for entry in IntervalLogIterator::new(&log) {
        if let LogEntry::Interval(iv) = entry.expect("log parses") {
            let bytes = base64_decode(iv.encoded_histogram());
            let h: hdrhistogram::Histogram<u64> = de.deserialize(&mut &bytes[..]).unwrap();
            got.push((iv.tag().unwrap().as_str().to_owned(), h.len(), h.max()));
        }
    }
    assert_eq!(got.len(), expected.len());
    // Each interval's tag is short and readable, and the JSON's hlog_tag
    // maps it to its row.
    for (((tag, n, max), (name, en, emax)), json_tag) in got.iter().zip(&expected).zip(&tags) {
        assert_eq!(tag, json_tag, "{name}");
        assert!(
            tag.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
                && tag.len() <= 65,
            "{tag}"
        );
        assert_eq!((n, max), (en, emax), "{name}");
    }
    let unique: std::collections::HashSet<&String> = tags.iter().collect();
    assert_eq!(unique.len(), tags.len(), "tags are unique: {tags:?}");

    // The plot parses as SVG and draws every histogram as a line.
    let svg = std::fs::read_to_string(d.join("run.svg")).unwrap();
    // An empty histogram has nothing to draw; under 100 samples a row is
    // drawn as points, not a line.
    let drawn: Vec<_> = expected.into_iter().filter(|(_, n, _)| *n >= 100).collect();
    plot_has_a_line_per_histogram(&svg, &drawn);
}

/// The columns the zstd part of `perfkit bench` promises, with their types and ranges:
/// the schema is shared by every subcommand, so what is particular to this
/// one is checked here.
fn compress_bench_columns(doc: &Value) {
    assert_eq!(doc["command"], "bench");
    let sections = doc["sections"].as_array().unwrap();
    let inputs: Vec<&Value> = sections
        .iter()
        .filter(|s| s["name"].as_str().unwrap().ends_with(" bytes)"))
        .collect();
    assert_eq!(inputs.len(), 5, "one section per built-in input");
    let number = |r: &Value, c: &str| {
        r[c].as_f64()
            .unwrap_or_else(|| panic!("{c} is a number in {r}"))
    };
    // The section's input size, from its name "... (N bytes)".
    let input_bytes = |s: &Value| -> u64 {
        let name = s["name"].as_str().unwrap();
        let open = name.rfind('(').unwrap();
        name[open + 1..name.len() - " bytes)".len()]
            .parse()
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    // (input bytes, row name, predicted_us) of every row, for the check
    // across inputs below.
    let mut predictions: Vec<(u64, String, f64)> = Vec::new();
    for s in inputs {
        let rows = s["rows"].as_array().unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
        let mut want = Vec::new();
        for recipe in ["fast", "balanced"] {
            for mode in ["reused", "fresh", "stream 128K+flush", "decompress"] {
                want.push(format!("{recipe} {mode}"));
            }
        }
        assert_eq!(names, want, "{}", s["name"]);
        // The three compressing rows of a recipe are one operation on one
        // input: one prediction.
        for recipe in ["fast", "balanced"] {
            let of = |mode: &str| {
                let row = rows
                    .iter()
                    .find(|r| r["name"] == format!("{recipe} {mode}"))
                    .unwrap();
                number(row, "predicted_us")
            };
            assert_eq!(of("reused"), of("fresh"), "{}", s["name"]);
            assert_eq!(of("reused"), of("stream 128K+flush"), "{}", s["name"]);
        }
        for r in rows {
            assert!(number(r, "throughput_mb_s") > 0.0, "{r}");
            assert!(number(r, "vs_reused") > 0.0, "{r}");
            // The model's prediction for the call: some time for any
            // input, and the placement is the budget rule applied to it
            // (inline when the prediction is within --budget).
            let predicted = number(r, "predicted_us");
            assert!(predicted > 0.0, "{r}");
            let inline = predicted <= BUDGET_US;
            assert_eq!(r["placement"] == "inline", inline, "{r}");
            predictions.push((
                input_bytes(s),
                r["name"].as_str().unwrap().to_owned(),
                predicted,
            ));
            if r["name"].as_str().unwrap().ends_with("decompress") {
                assert!(r["ratio"].is_null(), "no ratio for decompression: {r}");
            } else {
                assert!(number(r, "ratio") > 0.5, "{r}");
            }
            assert!(
                ["inline", "offload"].contains(&r["verdict"].as_str().unwrap()),
                "{r}"
            );
            assert!(
                ["yes", "no"].contains(&r["fits_p99"].as_str().unwrap()),
                "{r}"
            );
            // placement is verdict's new name; model_ok says whether the
            // measured p99 agrees with it, independently derived here.
            assert_eq!(r["placement"], r["verdict"], "{r}");
            let agrees = (r["verdict"] == "inline") == (r["fits_p99"] == "yes");
            let ok = r["model_ok"].as_str().unwrap();
            assert_eq!(ok == "yes", agrees, "{r}");
            assert!(r["latency"]["count"].as_u64().unwrap() >= 3, "{r}");
            assert!(r["elapsed_ns"].as_u64().unwrap() > 0, "{r}");
        }
    }
    // A larger input is never predicted to take less time.
    predictions.sort_by(|a, b| (&a.1, a.0).cmp(&(&b.1, b.0)));
    for w in predictions.windows(2) {
        if w[0].1 == w[1].1 {
            assert!(w[0].2 <= w[1].2, "{w:?}");
        }
    }
    let heartbeat = sections
        .iter()
        .find(|s| s["name"].as_str().unwrap().starts_with("zstd: heartbeat"))
        .expect("a heartbeat section");
    let rows = heartbeat["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "idle (no workload)",
            "always inline",
            "always offload",
            "per-call budget"
        ]
    );
    for r in rows {
        let jobs = r["jobs"].as_u64().unwrap_or_else(|| panic!("jobs in {r}"));
        // The idle row runs no job; every policy completes some in 50 ms.
        assert_eq!(jobs == 0, r["name"] == "idle (no workload)", "{r}");
        // The rate is the count over the --heartbeat time.
        let want = jobs as f64 / HEARTBEAT_S;
        let got = number(r, "jobs_per_s");
        assert!((got - want).abs() <= 1e-9 * want.max(1.0), "{r}: {want}");
        let share = number(r, "inline_share");
        assert!((0.0..=1.0).contains(&share), "{r}");
        match r["name"].as_str().unwrap() {
            "always inline" => assert_eq!(share, 1.0, "{r}"),
            "always offload" | "idle (no workload)" => assert_eq!(share, 0.0, "{r}"),
            _ => {}
        }
    }
}

/// Every histogram is drawn as a polyline through its percentile spectrum
/// (many points, percentile rising left to right, latency never falling,
/// starting at the 0th percentile), in one panel per section titled with
/// the section's name, and each has a legend marker of its colour (3 px,
/// two points) and a legend label naming it. The latency axis is
/// logarithmic: its tick labels are whole decades with a unit (1 µs,
/// 10 µs, 100 µs, 1 ms...), ascending up the page.
fn plot_has_a_line_per_histogram(svg: &str, expected: &[(String, u64, u64)]) {
    let tree = roxmltree::Document::parse(svg).expect("well-formed SVG");
    assert_eq!(tree.root_element().tag_name().name(), "svg");
    let polylines = |width: &str| -> Vec<(String, Vec<(f64, f64)>)> {
        tree.descendants()
            .filter(|n| {
                n.tag_name().name() == "polyline" && n.attribute("stroke-width") == Some(width)
            })
            .map(|n| {
                let points = n
                    .attribute("points")
                    .unwrap()
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect();
                (n.attribute("stroke").unwrap().to_owned(), points)
            })
            .collect()
    };
    // Fewer than ten series per section here, so every line is solid: one
    // polyline each.
    let series = polylines("2");
    let markers = polylines("3");
    let n = expected.len();
    assert_eq!(series.len(), n, "a line per series");
    assert_eq!(markers.len(), n, "a legend marker per series");
    let texts: Vec<&str> = tree
        .descendants()
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    let mut panel_start = 0;
    for (i, (((colour, pts), (marker_colour, marker)), (name, count, _))) in
        series.iter().zip(&markers).zip(expected).enumerate()
    {
        let section = name.rsplit_once('/').unwrap().0;
        if i == 0 || expected[i - 1].0.rsplit_once('/').unwrap().0 != section {
            panel_start = i;
            assert!(texts.contains(&section), "a panel titled {section}");
        }
        assert_eq!(marker.len(), 2, "legend marker of {name}");
        assert_eq!(
            colour, marker_colour,
            "{name}: line and legend share a colour"
        );
        if i > panel_start {
            assert_ne!(
                &series[i - 1].0,
                colour,
                "{name}: neighbouring series in a panel differ in colour"
            );
        }
        let least = if *count >= 2 { 6 } else { 2 };
        assert!(
            pts.len() >= least,
            "{name} ({count} samples): {} points",
            pts.len()
        );
        // Every line in a panel starts at the same x: the 0th percentile.
        let first_x = series[panel_start].1[0].0;
        assert!((pts[0].0 - first_x).abs() < 1.0, "{name} starts at p0");
        for w in pts.windows(2) {
            // SVG y grows downwards: a higher latency is a smaller y.
            assert!(w[0].0 <= w[1].0 && w[0].1 >= w[1].1, "{name}: {w:?}");
        }
        // Legend names are whole, wrapped over as many lines as they take.
        assert!(
            texts.join(" ").contains(name.rsplit_once('/').unwrap().1),
            "legend names {name}"
        );
    }
    // The y tick labels: every decade between the lowest and highest,
    // each a 1, 10 or 100 of ns, µs, ms or s.
    let decade = |t: &str| -> Option<f64> {
        let (v, unit) = t.split_once(' ')?;
        let v: f64 = v.parse().ok()?;
        if ![1.0, 10.0, 100.0].contains(&v) {
            return None;
        }
        let scale = match unit {
            "ns" => 1.0,
            "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            _ => return None,
        };
        Some((v * scale).log10())
    };
    let ticks: Vec<(f64, f64)> = tree
        .descendants()
        .filter(|n| n.tag_name().name() == "text")
        .filter_map(|n| {
            let d = decade(n.text()?.trim())?;
            Some((d, n.attribute("y")?.parse().ok()?))
        })
        .collect();
    assert!(
        ticks.len() >= 3,
        "decade ticks on the latency axis: {ticks:?}"
    );
    // Within a panel the ticks run up the page one decade at a time; a new
    // panel starts lower on the page again.
    for w in ticks.windows(2) {
        let ((d0, y0), (d1, y1)) = (w[0], w[1]);
        if y1 < y0 {
            assert!(
                (d0 - d1 - 1.0).abs() < 1e-9 || (d1 - d0 - 1.0).abs() < 1e-9,
                "{ticks:?}"
            );
        }
    }
}

#[test]
fn an_independent_hdrhistogram_reads_the_log() {
    if !have("python3", "python3") {
        return;
    }
    if !perfkit_testkit::interop::have_python_module("hdrh", "python3 -m pip install hdrhistogram")
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let stdout = quick_bench(dir.path(), &["--json", "--hlog", "run.hlog"]);
    let doc: Value = serde_json::from_slice(&stdout).unwrap();
    let rows: Vec<&Value> = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["rows"].as_array().unwrap())
        .filter(|r| r["latency"].is_object())
        .collect();
    // Python reads each interval and reports, for the values perfkit printed
    // as p50 and p99, how many samples lie below and at-or-below them at
    // the histogram's own precision (its equivalent-value ranges).
    let script = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**9, 3))
queries = json.loads(sys.argv[2])
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    buckets = [(v.value_iterated_to, v.count_at_value_iterated_to)
               for v in h.get_recorded_iterator()]
    def ranks(value):
        lo, hi = h.get_lowest_equivalent_value(value), h.get_highest_equivalent_value(value)
        return [sum(c for b, c in buckets if b < lo), sum(c for b, c in buckets if b <= hi)]
    query = queries.pop(0) if queries else {}
    print(json.dumps({
        "tag": h.get_tag(),
        "count": h.get_total_count(),
        "ranks": {q: ranks(int(v)) for q, v in query.items()},
        "max_ns": h.get_max_value(),
        "min_ns": h.get_min_value(),
    }))
"#;
    let hlog = dir.path().join("run.hlog");
    let log = String::from_utf8(std::fs::read(&hlog).unwrap()).unwrap();
    let tags: Vec<&str> = log
        .lines()
        .filter_map(|l| l.strip_prefix("Tag=")?.split(',').next())
        .collect();
    assert_eq!(tags.len(), rows.len());
    let queries: Vec<Value> = rows
        .iter()
        .map(|r| serde_json::json!({ "50": r["latency"]["p50_ns"], "99": r["latency"]["p99_ns"] }))
        .collect();
    let out = ok(std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&hlog)
        .arg(Value::from(queries).to_string()))
    .stdout;
    let got: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), rows.len(), "python reads every interval");
    for ((py, r), tag) in got.iter().zip(&rows).zip(&tags) {
        let l = &r["latency"];
        let n = l["count"].as_u64().unwrap();
        let what = format!("{tag}: python {py} vs perfkit {l}");
        assert_eq!(py["tag"].as_str(), Some(*tag), "{what}");
        assert_eq!(py["count"].as_u64(), Some(n), "{what}");
        // HdrHistogram reports a bucket's highest equivalent value for both.
        assert_eq!(py["max_ns"], l["max_ns"], "{what}");
        assert_eq!(py["min_ns"], l["min_ns"], "{what}");
        for q in [50u64, 99] {
            // perfkit's pN is a true N-th percentile of what Python decoded:
            // the rank ceil(N% of n) (rounded, some implementations) falls
            // within the samples at its value.
            let below = py["ranks"][q.to_string()][0].as_u64().unwrap();
            let upto = py["ranks"][q.to_string()][1].as_u64().unwrap();
            let exact = q * n;
            let ranks = [exact / 100, exact.div_ceil(100)].map(|r| r.max(1));
            assert!(ranks.iter().any(|&r| below < r && r <= upto), "p{q} {what}");
        }
    }
    assert!(got.len() >= 12);
}

fn base64_decode(s: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes().filter(|&c| c != b'=') {
        acc = (acc << 6) | ALPHABET.iter().position(|&a| a == c).expect("base64") as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}
