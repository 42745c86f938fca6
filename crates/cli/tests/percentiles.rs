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
fn check(what: &str, doc: &Value, hlog: &Path) -> usize {
    let tags = read_hlog(hlog);
    let mut checked = 0;
    for section in doc["sections"].as_array().unwrap() {
        for row in section["rows"].as_array().unwrap() {
            if row["latency"].is_null() {
                continue;
            }
            let tag = row["hlog_tag"]
                .as_str()
                .unwrap_or_else(|| panic!("{what}: {row}"));
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
}
