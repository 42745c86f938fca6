//! `--json` validates against the documented schema, `--hlog` reads back
//! (with this crate's HdrHistogram and an independent Python one), and
//! `--plot` is an SVG with one line per histogram.

mod interop;

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use interop::{have, ok, perfkit};
use serde_json::Value;

fn quick_bench(dir: &std::path::Path, extra: &[&str]) -> Vec<u8> {
    ok(perfkit()
        .current_dir(dir)
        .args([
            "compress",
            "bench",
            "--recipes",
            "fast,balanced",
            "--time",
            "5ms",
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

    let schema: Value = serde_json::from_str(perfkit::report::SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");

    // Every histogram row in the JSON is one tagged interval in the log, with
    // the same count and maximum.
    let mut expected: Vec<(String, u64, u64)> = Vec::new();
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
    for ((tag, n, max), (name, en, emax)) in got.iter().zip(&expected) {
        let sanitised: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_./:".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        assert_eq!(&sanitised, tag);
        assert_eq!((n, max), (en, emax), "{name}");
    }

    // The plot parses as SVG and has a line and a legend entry per histogram.
    let svg = std::fs::read_to_string(d.join("run.svg")).unwrap();
    let tree = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    assert_eq!(tree.root_element().tag_name().name(), "svg");
    let lines = tree
        .descendants()
        .filter(|n| n.tag_name().name() == "polyline")
        .count();
    assert!(
        lines >= expected.len(),
        "{lines} polylines for {} series",
        expected.len()
    );
    let texts: Vec<&str> = tree.descendants().filter_map(|n| n.text()).collect();
    for (name, _, _) in &expected {
        assert!(
            texts.iter().any(|t| t.contains(name.as_str())),
            "legend names {name}"
        );
    }
}

#[test]
fn an_independent_hdrhistogram_reads_the_log() {
    if !have("python3", "python3") {
        return;
    }
    let probe = std::process::Command::new("python3")
        .args(["-c", "import hdrh"])
        .status()
        .unwrap();
    if !probe.success() {
        assert!(
            std::env::var_os("PERFKIT_INTEROP").is_none(),
            "python module hdrh missing: pip install hdrhistogram"
        );
        eprintln!("SKIPPED: python module hdrh missing (pip install hdrhistogram)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let stdout = quick_bench(dir.path(), &["--json", "--hlog", "run.hlog"]);
    let doc: Value = serde_json::from_slice(&stdout).unwrap();
    let total: u64 = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["rows"].as_array().unwrap())
        .filter_map(|r| r["latency"]["count"].as_u64())
        .sum();
    let script = r#"
import sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**9, 3))
n = total = 0
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    n += 1
    total += h.get_total_count()
print(n, total)
"#;
    let out = ok(std::process::Command::new("python3")
        .args(["-c", script])
        .arg(dir.path().join("run.hlog")))
    .stdout;
    let out = String::from_utf8(out).unwrap();
    let fields: Vec<u64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
    assert_eq!(fields[1], total, "python hdrh total count {out}");
    assert!(fields[0] >= 12);
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
