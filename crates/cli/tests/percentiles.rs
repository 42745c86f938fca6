//! Issue 34.6: every percentile a report prints is HdrHistogram's
//! reference one (Java's `getValueAtPercentile`): the value of the
//! ⌈q·n⌉-th smallest sample (at least the first), reported as the highest
//! value its bucket stands for. Checked by reading the `--hlog` the same
//! run wrote and recomputing each row's p50, p90, p99 and p99.9 here, with
//! exact integer ranks, for `stress`, `fix bench`, `fix load`
//! (the load generator) and `report merge` of their logs.

mod interop;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use interop::{ok, perfkit};
use perfkit_testkit::process::{Running, free_port};
use serde_json::Value;

/// The JSON keys of the summary percentiles, in thousandths.
const PERCENTILES: [(&str, u64); 4] = [
    ("p50_ns", 500),
    ("p90_ns", 900),
    ("p99_ns", 990),
    ("p999_ns", 999),
];

/// A tag's samples as (bucket value, count), the bucket value being the
/// highest value the bucket stands for, in increasing order.
type Counts = BTreeMap<u64, u64>;

/// Every tag of an interval log with its intervals added up.
fn read_hlog(path: &Path) -> BTreeMap<String, Counts> {
    let bytes = std::fs::read(path).unwrap();
    let mut tags: BTreeMap<String, Counts> = BTreeMap::new();
    let mut decoder = Deserializer::new();
    for entry in IntervalLogIterator::new(&bytes) {
        let LogEntry::Interval(i) = entry.unwrap() else {
            continue;
        };
        let tag = i
            .tag()
            .expect("perfkit tags every interval")
            .as_str()
            .to_owned();
        let raw = STANDARD.decode(i.encoded_histogram()).unwrap();
        let h: hdrhistogram::Histogram<u64> = decoder.deserialize(&mut raw.as_slice()).unwrap();
        let counts = tags.entry(tag).or_default();
        for v in h.iter_recorded() {
            *counts.entry(v.value_iterated_to()).or_default() += v.count_at_value();
        }
    }
    tags
}

/// The reference percentile: rank ⌈permille·n/1000⌉ (at least 1), the
/// bucket where the running count reaches it.
fn reference(counts: &Counts, permille: u64) -> u64 {
    let n: u64 = counts.values().sum();
    let rank = (permille * n).div_ceil(1000).max(1);
    let mut seen = 0;
    for (&value, &count) in counts {
        seen += count;
        if seen >= rank {
            return value;
        }
    }
    panic!("rank {rank} past {n} samples");
}

/// Checks every row of `doc` with a histogram against the log's tag its
/// `hlog_tag` names; returns how many rows it checked.
/// A row that is one interval of a series (`hlog_start_ns`) is checked
/// by count: a series' intervals add up to its tag; a row kept out of the
/// log (no `hlog_tag`) is skipped.
fn check(what: &str, doc: &Value, hlog: &Path) -> usize {
    let tags = read_hlog(hlog);
    let mut checked = 0;
    let mut series: BTreeMap<&str, u64> = BTreeMap::new();
    for section in doc["sections"].as_array().unwrap() {
        for row in section["rows"].as_array().unwrap() {
            if row["latency"].is_null() {
                continue;
            }
            let Some(tag) = row["hlog_tag"].as_str() else {
                continue;
            };
            if row.get("hlog_start_ns").is_some() {
                *series.entry(tag).or_default() += row["latency"]["count"].as_u64().unwrap();
                continue;
            }
            let counts = &tags[tag];
            let n: u64 = counts.values().sum();
            assert_eq!(row["latency"]["count"].as_u64(), Some(n), "{what} {tag}");
            if n == 0 {
                continue;
            }
            for (key, permille) in PERCENTILES {
                assert_eq!(
                    row["latency"][key].as_u64(),
                    Some(reference(counts, permille)),
                    "{what}: {tag} {key} ({} samples)",
                    n
                );
            }
            checked += 1;
        }
    }
    for (tag, n) in series {
        assert_eq!(
            n,
            tags[tag].values().sum::<u64>(),
            "{what}: the intervals of {tag}"
        );
    }
    assert!(checked > 0, "{what}: no rows with a histogram");
    checked
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A `perfkit fix acceptor` for LOAD1 on `port`, answering orders, once
/// it listens.
fn acceptor(dir: &Path, port: u16) -> Running {
    let cfg = dir.join("acceptor.cfg");
    std::fs::write(
        &cfg,
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}\
             [SESSION]\nSenderCompID=EXCH\nTargetCompID=LOAD1\n"
        ),
    )
    .unwrap();
    let child = perfkit()
        .args(["fix", "acceptor"])
        .arg(&cfg)
        .args(["--app", "exec"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let running = Running(child);
    let until = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "the acceptor never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    running
}

const COMMON: &str = "BeginString=FIX.4.4\nStartTime=00:00:00\nEndTime=00:00:00\nHeartBtInt=30\nResetOnLogon=Y\nUseDataDictionary=N\n";

#[test]
fn every_printed_percentile_is_the_reference_one_of_the_runs_own_log() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    let stress = d.join("stress.hlog");
    let out = ok(perfkit()
        .args(["stress", "--duration", "300ms", "--sample-every", "100ms"])
        .args(["--producers", "4", "--consumers", "4", "--json", "--hlog"])
        .arg(&stress));
    check("stress", &json(&out), &stress);

    let bench = d.join("fix-bench.hlog");
    let out = ok(&mut interop::fix_bench(
        "scan,parse",
        &["--hlog", bench.to_str().unwrap()],
    ));
    check("fix bench", &json(&out), &bench);

    let port = free_port();
    let _acceptor = acceptor(d, port);
    let ini = d.join("load.cfg");
    std::fs::write(
        &ini,
        format!(
            "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\n\
             SocketConnectPort={port}\n{COMMON}[SESSION]\nSenderCompID=LOAD1\nTargetCompID=EXCH\n"
        ),
    )
    .unwrap();
    let load = d.join("load.hlog");
    let out = ok(Command::new(env!("CARGO_BIN_EXE_perfkit"))
        .args(["fix", "load"])
        .arg(&ini)
        .args(["--rate", "2k", "--duration", "500ms", "--warmup", "100ms"])
        .args(["--json", "--hlog"])
        .arg(&load)
        .stdin(Stdio::null()));
    check("fix load", &json(&out), &load);

    let merged = d.join("merged.hlog");
    let out = ok(perfkit()
        .args(["report", "merge", "--json", "--hlog"])
        .arg(&merged)
        .arg(&stress)
        .arg(&load));
    let doc = json(&out);
    // The merge's rows are its inputs' tags added up: recomputed from
    // its own log, whose slots add up to the same totals.
    check("report merge", &doc, &merged);

    // With --intervals, each slot's row is that interval of its tag in the
    // merged log (no `_2` tag that no log holds), and each total the sum.
    let slotted = d.join("slotted.hlog");
    let out = ok(perfkit()
        .args(["report", "merge", "--intervals", "--json", "--hlog"])
        .arg(&slotted)
        .arg(&stress)
        .arg(&load));
    check("report merge --intervals", &json(&out), &slotted);
}

/// Reads an interval log (argv[1]) with Python's `hdrh` and prints, per
/// tag, its intervals' start stamps in log order and their sum.
const PER_TAG: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**9, 3))
tags = {}
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    t = tags.setdefault(h.get_tag(), {"starts": [], "sum": HdrHistogram(1, 3600 * 10**9, 3)})
    t["starts"].append(h.get_start_time_stamp())
    t["sum"].add(h)
print(json.dumps({tag: {
    "starts": t["starts"],
    "count": t["sum"].get_total_count(),
    "buckets": [[v.value_iterated_to, v.count_at_value_iterated_to]
                for v in t["sum"].get_recorded_iterator()],
} for tag, t in tags.items()}))
"#;

/// One run for [`python_reads_every_log_as_the_report_states_it`]: its
/// `--json` document and the log it wrote.
type Run = Box<dyn Fn(&Path) -> (Value, std::path::PathBuf)>;

/// How many samples a run measured, from its `--json` document.
type Measured = fn(&Value) -> u64;

/// Every row's samples: each row is a measurement of its own.
fn every_row(doc: &Value) -> u64 {
    rows(doc)
        .filter(|r| r["hlog_tag"].is_string())
        .map(|r| r["latency"]["count"].as_u64().unwrap())
        .sum()
}

/// The orders `fix load` answered in its measured part, over its runs.
fn answered(doc: &Value) -> u64 {
    rows(doc)
        .filter(|r| r["name"].as_str().unwrap().starts_with("corrected ("))
        .map(|r| r["answered"].as_u64().unwrap())
        .sum()
}

/// Issue 65: a reader of an interval log adds up each tag's intervals,
/// and may add up the tags. Python's HdrHistogram, reading each command's
/// `--hlog`, must find every tag's intervals in time order, each tag's sum
/// equal to the count and percentiles of the row whose `hlog_tag` it is,
/// and every sample once: the tags together hold what the run measured
/// (for `fix load`, the orders answered, whose corrected latency is the
/// one logged), not the same orders again under a total's or the sweep
/// table's tag.
#[test]
fn python_reads_every_log_as_the_report_states_it() {
    if !interop::have("python3", "python3")
        || !perfkit_testkit::interop::have_python_module(
            "hdrh",
            "python3 -m pip install hdrhistogram",
        )
    {
        return;
    }
    let cases: Vec<(&str, Run, Measured)> = vec![
        (
            "stress",
            Box::new(|d: &Path| {
                let log = d.join("stress.hlog");
                let out = ok(perfkit()
                    .args(["stress", "--duration", "300ms", "--sample-every", "100ms"])
                    .args(["--producers", "2", "--consumers", "2", "--json", "--hlog"])
                    .arg(&log));
                (json(&out), log)
            }),
            every_row,
        ),
        (
            "fix bench",
            Box::new(|d: &Path| {
                let log = d.join("bench.hlog");
                let out = ok(&mut interop::fix_bench(
                    "scan",
                    &["--hlog", log.to_str().unwrap()],
                ));
                (json(&out), log)
            }),
            every_row,
        ),
        (
            "fix load, a sweep with a rate twice",
            Box::new(|d: &Path| {
                let port = free_port();
                let _acceptor = acceptor(d, port);
                let ini = d.join("load.cfg");
                std::fs::write(
                    &ini,
                    format!(
                        "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\n\
                         SocketConnectPort={port}\n{COMMON}[SESSION]\nSenderCompID=LOAD1\n\
                         TargetCompID=EXCH\n"
                    ),
                )
                .unwrap();
                let log = d.join("load.hlog");
                let out = ok(Command::new(env!("CARGO_BIN_EXE_perfkit"))
                    .args(["fix", "load"])
                    .arg(&ini)
                    // A rate given twice is two runs, two series.
                    .args(["--rate", "1k,2k,1k", "--duration", "500ms"])
                    .args([
                        "--warmup",
                        "100ms",
                        "--interval",
                        "125ms",
                        "--json",
                        "--hlog",
                    ])
                    .arg(&log)
                    .stdin(Stdio::null()));
                (json(&out), log)
            }),
            answered,
        ),
    ];
    for (what, run, measured) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (doc, log) = run(dir.path());
        let out = ok(Command::new("python3").args(["-c", PER_TAG]).arg(&log));
        let python: BTreeMap<String, Value> = serde_json::from_slice(&out.stdout).unwrap();
        let mut claimed = std::collections::BTreeSet::new();
        for (tag, t) in &python {
            let starts: Vec<f64> = t["starts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_f64().unwrap())
                .collect();
            assert!(
                starts.windows(2).all(|w| w[0] <= w[1]),
                "{what}: {tag}'s intervals run backwards: {starts:?}"
            );
        }
        for row in rows(&doc) {
            let Some(tag) = row["hlog_tag"].as_str() else {
                continue;
            };
            if row.get("hlog_start_ns").is_some() {
                continue;
            }
            claimed.insert(tag.to_owned());
            let py = python
                .get(tag)
                .unwrap_or_else(|| panic!("{what}: Python found no {tag}"));
            let l = &row["latency"];
            assert_eq!(py["count"], l["count"], "{what}: {tag}");
            let buckets = py["buckets"].as_array().unwrap();
            if buckets.is_empty() {
                continue;
            }
            for (key, q) in [("p50_ns", 50.0), ("p90_ns", 90.0), ("p99_ns", 99.0)] {
                let v = l[key].as_u64().unwrap();
                assert!(
                    interop::is_percentile(buckets, v, q),
                    "{what}: {tag} {key} {v} is not a p{q} of Python's sum"
                );
            }
        }
        let tags: std::collections::BTreeSet<String> = python.keys().cloned().collect();
        assert_eq!(tags, claimed, "{what}: every tag in the log is a row's");
        let total: u64 = python.values().map(|t| t["count"].as_u64().unwrap()).sum();
        assert!(measured(&doc) > 0, "{what}: nothing measured");
        assert_eq!(
            total,
            measured(&doc),
            "{what}: the log's tags together count each sample once"
        );
    }
}

/// Every row of every section of `doc`.
fn rows(doc: &Value) -> impl Iterator<Item = &Value> {
    doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["rows"].as_array().unwrap())
}
