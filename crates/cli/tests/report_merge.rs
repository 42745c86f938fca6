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
    let words = d.join("words.hlog");
    std::fs::write(&words, b"hello world\nfoo bar\n").unwrap();
    let short_cookie = d.join("short-cookie.hlog");
    std::fs::write(&short_cookie, b"Tag=a,0.000,1.000,1.0,AAAA\n").unwrap();
    for (path, what) in [
        (cut.clone(), "cut.hlog"),
        (garbage.clone(), "garbage.hlog"),
        (words.clone(), "words.hlog"),
        (bad_histogram.clone(), "bad-histogram.hlog"),
        (short_cookie.clone(), "short-cookie.hlog"),
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
        // Words, not a Rust value's Debug text (`ParseError { offset: 0 }`).
        assert!(
            !err.contains('{') && !err.contains("Error"),
            "{what}: {err}"
        );
        // One clean sentence (issue 65: a run of spaces sat inside the
        // garbage file's message), and no part of the encoding named as
        // a bare word after a colon ("cut short: cookie").
        assert!(!err.trim_end().contains("  "), "{what}: {err:?}");
        assert!(!err.trim_end().ends_with(": cookie"), "{what}: {err:?}");
    }
    // The good log alone merges: its rows come back with their counts.
    let out = ok(perfkit().args(["report", "merge", "--json"]).arg(&good));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!doc["sections"][0]["rows"].as_array().unwrap().is_empty());
}

// Hostile logs (issue 30): each is refused with one line naming the file
// and line, exit 1, nothing on stdout and no `--hlog` file, in bounded
// memory and time; or, where the log is valid, merged quickly.

/// A log's first lines: a StartTime and the column legend.
const HEADER: &str = "#[StartTime: 1795435200.000 (seconds since epoch), x]\n\
\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// The StartTime of [`HEADER`].
const START: f64 = 1_795_435_200.0;

/// The address space a hostile merge runs in: generous for a line-at-a-time
/// reader (the binary and its allocator need well under 200 MiB), far below
/// what any of the failures reached (3 to 4 GiB), so that such a failure
/// aborts at once here instead of taking the machine's memory.
const ADDRESS_SPACE: u64 = 1 << 30;

/// `perfkit report merge ARGS…` limited to [`ADDRESS_SPACE`] and given 60 s.
fn merge_limited(args: &[&std::ffi::OsStr]) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = perfkit();
    cmd.args(["report", "merge"]).args(args);
    // SAFETY: setrlimit is async-signal-safe and touches only the child
    // between fork and exec; the struct lives on this stack frame.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    interop::output_within(&mut cmd, 60)
}

/// Asserts `out` is a refusal: exit 1, one line on stderr naming `file`
/// and holding `needle`, nothing on stdout.
fn assert_refused(out: &std::process::Output, file: &str, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{file}: {err}");
    assert_eq!(err.lines().count(), 1, "{file}: {err}");
    assert!(err.starts_with("perfkit: "), "{file}: {err}");
    assert!(err.contains(file), "{file}: {err}");
    assert!(err.contains(needle), "{file}: want {needle:?} in {err}");
    assert!(out.stdout.is_empty(), "{file}: no report after an error");
}

/// A V2 histogram from its parts, for headers no honest writer makes.
fn v2(payload_len: u32, digits: u32, low: u64, high: u64, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(0x1c84_9313u32.to_be_bytes());
    b.extend(payload_len.to_be_bytes());
    b.extend(0u32.to_be_bytes());
    b.extend(digits.to_be_bytes());
    b.extend(low.to_be_bytes());
    b.extend(high.to_be_bytes());
    b.extend(1.0f64.to_bits().to_be_bytes());
    b.extend(payload);
    b
}

/// `inner` wrapped as a compressed V2 histogram, its zlib stream made
/// from `inner` followed by `extra` zero bytes.
fn compressed(inner: &[u8], extra: usize) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(inner).unwrap();
    let zeros = vec![0u8; 1 << 20];
    let mut left = extra;
    while left > 0 {
        let n = left.min(zeros.len());
        z.write_all(&zeros[..n]).unwrap();
        left -= n;
    }
    let deflated = z.finish().unwrap();
    let mut b = Vec::new();
    b.extend(0x1c84_9314u32.to_be_bytes());
    b.extend((deflated.len() as u32).to_be_bytes());
    b.extend(deflated);
    b
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// One interval line: `tag`, starting `start` s after the StartTime,
/// 1 s long, holding `histogram` (encoded bytes).
fn interval(tag: &str, start: f64, histogram: &[u8]) -> String {
    format!("Tag={tag},{start:.3},1.000,1.000,{}\n", base64(histogram))
}

/// A V2 histogram with one count of `count` at index `index` of the range
/// 1..2^20 at 3 digits.
fn one_count(index: u64, count: i64) -> Vec<u8> {
    let mut payload = Vec::new();
    if index > 0 {
        varint(&mut payload, -(index as i64));
    }
    varint(&mut payload, count);
    v2(payload.len() as u32, 3, 1, 1 << 20, &payload)
}

/// Appends `n` zigzag-encoded as LEB128-64b9B, HdrHistogram's V2 varint.
fn varint(out: &mut Vec<u8>, n: i64) {
    let mut v = ((n << 1) ^ (n >> 63)) as u64;
    for _ in 0..8 {
        if v < 0x80 {
            out.push(v as u8);
            return;
        }
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Failure 1: a 132-byte log whose histogram claims 0xFFFFFFFF payload
/// bytes allocated 4 GiB and aborted; plain or compressed, the claim is
/// now checked against the line and the declared range first.
#[test]
fn a_histogram_claiming_4_gib_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let plain = v2(u32::MAX, 3, 1, 3_600_000_000_000, &[2]);
    for (name, bytes, needle) in [
        ("plain.hlog", plain.clone(), "the line holds"),
        ("zlib.hlog", compressed(&plain, 0), "refusing to inflate"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("{HEADER}{}", interval("a", 0.0, &bytes))).unwrap();
        let out = merge_limited(&[path.as_os_str()]);
        assert_refused(&out, name, needle);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{name} line 3:")), "{err}");
    }
}

/// Failure 2: a zlib bomb inflating to 256 MiB, all of it claimed as
/// payload, reached GiBs and merged to an empty row with exit 0. A range
/// of 1 ns..1 h at 3 digits needs a few hundred KiB at most, so the claim
/// is refused before the stream is inflated.
#[test]
fn a_zlib_bomb_is_refused_at_its_declared_range() {
    let dir = tempfile::tempdir().unwrap();
    let bomb_len = 256u32 << 20;
    let header = v2(bomb_len, 3, 1, 3_600_000_000_000, &[]);
    let bomb = compressed(&header, bomb_len as usize);
    assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
    let path = dir.path().join("bomb.hlog");
    std::fs::write(&path, format!("{HEADER}{}", interval("a", 0.0, &bomb))).unwrap();
    let merged = dir.path().join("merged.hlog");
    let out = merge_limited(&[path.as_os_str(), "--hlog".as_ref(), merged.as_os_str()]);
    assert_refused(&out, "bomb.hlog", "refusing to inflate");
    assert!(!merged.exists(), "no merged log after an error");
}

/// Failure 3: 100k distinct tags took 3.3 GB (1M aborted); the 1,025th
/// tag is refused, at its line.
#[test]
fn too_many_tags_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let h = one_count(100, 1);
    let mut log = HEADER.to_string();
    for k in 0..100_000 {
        log.push_str(&interval(&format!("t{k}"), 0.0, &h));
    }
    let path = dir.path().join("tags.hlog");
    std::fs::write(&path, log).unwrap();
    let out = merge_limited(&[path.as_os_str()]);
    // Two header lines, then tag 1,025 on line 1,027.
    assert_refused(&out, "tags.hlog", "line 1027: more than 1024 distinct tags");
}

/// Failure 4: 2,000 intervals declaring 1..2^63 - 1 at 5 significant
/// digits (6 million counts each, never materialised now) took 46 s. They
/// are valid, so they merge, and quickly: 20 s is a bar only a return to
/// decoding the declared range could fail (this takes well under 1 s).
#[test]
fn a_huge_declared_range_merges_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let mut payload = Vec::new();
    varint(&mut payload, -1_000);
    varint(&mut payload, 3);
    let h = v2(payload.len() as u32, 5, 1, i64::MAX as u64, &payload);
    let mut log = HEADER.to_string();
    for k in 0..2_000 {
        log.push_str(&interval("wide", k as f64, &h));
    }
    let path = dir.path().join("wide.hlog");
    std::fs::write(&path, log).unwrap();
    let started = std::time::Instant::now();
    let out = merge_limited(&["--json".as_ref(), path.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &doc["sections"][0]["rows"][0];
    assert_eq!(row["latency"]["count"], 6_000);
    assert_eq!(row["latency"]["min_ns"], 1_000);
}

/// Failure 5: intervals stamped before their log's StartTime were folded
/// into the first slot without a word. They keep their own times now
/// (negative offsets; the merged log's StartTime moves back to hold them)
/// and stderr says so in one line.
#[test]
fn intervals_before_start_time_keep_their_times() {
    let dir = tempfile::tempdir().unwrap();
    let h = one_count(100, 1);
    let mut log = HEADER.to_string();
    // Absolute stamps: 10 s before StartTime, at it, and 1 s after.
    for t in [-10.0, 0.0, 1.0] {
        log.push_str(&interval("a", START + t, &h));
    }
    let path = dir.path().join("early.hlog");
    std::fs::write(&path, log).unwrap();
    let merged = dir.path().join("merged.hlog");
    let out = ok(perfkit()
        .args(["report", "merge", "--json", "--intervals", "--hlog"])
        .arg(&merged)
        .arg(&path));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("early.hlog: 1 interval(s) start before its StartTime"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sections: Vec<&str> = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        sections,
        [
            "merged",
            "interval at -10.000 s",
            "interval at 0.000 s",
            "interval at 1.000 s"
        ]
    );
    // The merged log starts 10 s earlier and holds three intervals at
    // 0, 10 and 11 s from there.
    let text = std::fs::read_to_string(&merged).unwrap();
    assert!(text.contains("#[StartTime: 1795435190.000"), "{text}");
    let starts: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("Tag=a,"))
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(starts, ["0.000", "10.000", "11.000"]);
}

/// Failure 6: counts past 2^64 - 1 saturated silently. Three intervals of
/// 2^63 - 1 samples each in one tag are an error naming the tag.
#[test]
fn a_count_overflow_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let h = one_count(100, i64::MAX);
    let mut log = HEADER.to_string();
    for k in 0..3 {
        log.push_str(&interval("a", k as f64, &h));
    }
    let path = dir.path().join("many.hlog");
    std::fs::write(&path, log).unwrap();
    let out = merge_limited(&[path.as_os_str()]);
    assert_refused(
        &out,
        "many.hlog",
        "line 5: tag a: its total passes 2^64 - 1 samples",
    );
}

/// Failure 7: `--intervals` kept any number of slots (60k took 2 GB); the
/// 10,001st is refused, and the `--hlog` file asked for is not left.
#[test]
fn too_many_slots_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let h = one_count(100, 1);
    let mut log = HEADER.to_string();
    for k in 0..60_000 {
        log.push_str(&interval("a", k as f64, &h));
    }
    let path = dir.path().join("long.hlog");
    std::fs::write(&path, log).unwrap();
    let merged = dir.path().join("merged.hlog");
    for args in [
        vec!["--intervals".as_ref(), path.as_os_str()],
        vec!["--hlog".as_ref(), merged.as_os_str(), path.as_os_str()],
    ] {
        let out = merge_limited(&args);
        assert_refused(&out, "long.hlog", "line 10003: more than 10000 time slots");
        assert!(!merged.exists(), "no merged log after an error");
    }
    // Without slots kept, the same log merges: its length costs nothing.
    let out = merge_limited(&["--json".as_ref(), path.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
