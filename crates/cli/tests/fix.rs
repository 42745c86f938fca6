//! `perfkit fix check` and `perfkit fix bench` (also run as `fix-bench`, its
//! older name) through the binary.

mod interop;
mod schema;

use interop::{fix_bench, ok, perfkit};
use serde_json::Value;
use std::io::Write;
use std::process::Stdio;

/// [`interop::framed`] (framed independently of fixcore) with its SOH
/// separators shown as `|`, as the pipe-separated logs `fix check` reads.
fn framed(body: &str) -> String {
    String::from_utf8(interop::framed(body))
        .unwrap()
        .replace('\x01', "|")
}

fn run_check(input: &[u8], extra: &[&str]) -> (Option<i32>, String, String) {
    let mut child = perfkit()
        .args(["fix", "check", "-"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that fails before it reads (a missing dictionary) may close
    // its stdin first; the broken pipe is then ours, not a finding.
    match child.stdin.take().unwrap().write_all(input) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.unwrap(),
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn check_counts_valid_and_names_each_invalid_line() {
    let good = framed("35=D|49=A|56=B|34=1|55=MSFT|54=1|38=100|");
    let bad_cs = good.replace(&good[good.len() - 4..], "999|");
    let bad_len = good.replacen("9=", "9=1", 1);
    let input = format!("{good}\n{bad_cs}\n\n{good}\r\n{bad_len}\n");
    let (code, out, _) = run_check(input.as_bytes(), &[]);
    assert_eq!(code, Some(1));
    assert!(
        out.lines()
            .last()
            .unwrap_or("")
            .starts_with("-: 2 valid, 2 invalid"),
        "{out}"
    );
    assert!(out.contains("line 2: CheckSum(10)"), "{out}");
    assert!(out.contains("line 5: BodyLength(9)"), "{out}");

    let (code, out, _) = run_check(format!("{good}\n{good}\n").as_bytes(), &[]);
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn check_raw_stream_reports_garbage_offsets() {
    let good = framed("35=0|").replace('|', "\x01");
    let input = format!("{good}GARBAGE{good}");
    let (code, out, _) = run_check(input.as_bytes(), &[]);
    assert_eq!(code, Some(1));
    assert!(out.contains("2 valid, 1 invalid"), "{out}");
    assert!(
        out.contains(&format!("offset {}: garbage", good.len())),
        "{out}"
    );
}

#[test]
fn check_json_prints_tag_objects_with_groups_as_arrays() {
    let md = framed("35=W|55=EUR/USD|268=2|269=0|270=1.1|269=1|270=1.2|");
    let (code, out, err) = run_check(format!("{md}\n").as_bytes(), &["--json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["35"], "W");
    assert_eq!(v["268"][1]["270"], "1.2");
    assert_eq!(v["268"].as_array().unwrap().len(), 2);
}

#[test]
fn fix_bench_json_matches_the_report_schema() {
    // Every part, the session and failover parts short: at their default
    // sizes they took 128 s of this debug build's 135 (session_bench.rs
    // checks their figures).
    let doc = schema::report(&ok(&mut fix_bench(
        "",
        &[
            "--iterations",
            "300",
            "--transport-iterations",
            "40",
            "--session-orders",
            "2000",
            "--session-latency-orders",
            "500",
            "--failover-kills",
            "3",
        ],
    )));
    let names: Vec<&str> = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for want in [
        "scan",
        "parse",
        "build",
        "store lookup",
        "deferred",
        "affinity",
        "transport",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(want)),
            "{want} in {names:?}"
        );
    }
    // The transports are compared with tokio as well as with blocking I/O.
    let transport = schema::section(&doc, "transport");
    let rows = transport["rows"].as_array().unwrap();
    let tokio = rows.iter().find(|r| r["name"] == "tokio").unwrap();
    assert_eq!(tokio["speedup_vs_tokio_x"], 1.0, "{tokio}");
    for r in rows {
        assert!(r["speedup_vs_tokio_x"].is_number(), "{r}");
    }
    // Each ratio is the median over the rounds of tokio's median in the
    // round over the row's, recomputed here from the rounds the JSON keeps
    // (at least 15, whatever `--runs` says).
    let rounds = |r: &Value| interop::per_round(r, "median_ns_rounds");
    for r in rows {
        let (theirs, ours) = (rounds(tokio), rounds(r));
        assert!(ours.len() >= 15 && ours.len() == theirs.len(), "{r}");
        let ratios = theirs.iter().zip(&ours).map(|(t, o)| t / o.max(1.0));
        let want = interop::upper_median(ratios.collect());
        let got = r["speedup_vs_tokio_x"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9, "{}: {got} vs {want}", r["name"]);
    }
    // So is every section's speedup_x over its first row, where it keeps
    // rounds (the batched rows' in tenths of a nanosecond).
    let mut paired_sections = 0;
    for section in doc["sections"].as_array().unwrap() {
        let rows = section["rows"].as_array().unwrap();
        // Sections of different inputs rather than alternatives have no
        // ratios.
        if !rows
            .iter()
            .all(|r| r.get("median_ns_rounds").is_some() && r.get("speedup_x").is_some())
        {
            continue;
        }
        paired_sections += 1;
        for r in rows {
            let (base, ours) = (rounds(&rows[0]), rounds(r));
            let ratios = base.iter().zip(&ours).map(|(b, o)| b / o.max(0.1));
            let want = interop::upper_median(ratios.collect());
            let got = r["speedup_x"].as_f64().unwrap();
            assert!(
                (got - want).abs() < 1e-9 * want,
                "{}, {}: {got} vs {want}",
                section["name"],
                r["name"]
            );
        }
    }
    // The scans, parse, build, store, deferred, affinity and transport.
    assert!(paired_sections >= 7, "{paired_sections}");
}

/// The keys of a JSON document, recursively, with their paths: the shape
/// of a report without its measured values.
fn shape(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push(format!("{path}/{k}"));
                shape(x, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                shape(x, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn fix_bench_and_its_old_name_fix_dash_bench_give_the_same_report() {
    let settings = [
        "--json",
        "--only",
        "scan,build",
        "--iterations",
        "200",
        "--warmup",
        "10",
        "--runs",
        "2",
        "--batch",
        "10",
    ];
    let new = schema::report(&ok(perfkit().args(["fix", "bench"]).args(settings)));
    let old = schema::report(&ok(perfkit().arg("fix-bench").args(settings)));
    assert_eq!(
        new["command"], "fix bench",
        "the report is named as the command"
    );
    let (mut a, mut b) = (Vec::new(), Vec::new());
    shape(&new, "", &mut a);
    shape(&old, "", &mut b);
    assert_eq!(a, b);
    // Both names are listed: `fix-bench`, the one users know, at the top
    // level (issue 48.7), and `bench` under `fix`.
    let top = String::from_utf8(ok(perfkit().arg("--help")).stdout).unwrap();
    assert!(
        top.lines()
            .any(|l| l.trim_start().starts_with("fix-bench ")),
        "{top}"
    );
    let fix = String::from_utf8(ok(perfkit().args(["fix", "--help"])).stdout).unwrap();
    assert!(
        fix.lines().any(|l| l.trim_start().starts_with("bench ")),
        "{fix}"
    );
}

#[test]
fn unknown_fixcore_scan_is_an_error_not_a_panic() {
    let out = perfkit()
        .args(["fix", "check", "-"])
        .env("FIXCORE_SCAN", "avx-512")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("FIXCORE_SCAN='avx-512' names no scan path"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// With `--pin`, threads spawned by the pinned measuring thread would
/// inherit its core: the unpinned affinity row and the queue consumers must
/// not, and the report must say where they ran.
#[test]
fn fix_bench_pin_keeps_helper_threads_off_the_measuring_core() {
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    let doc = schema::report(&ok(&mut fix_bench("affinity,deferred", &["--pin", "0"])));
    let pinned = doc["run"]["pinned"].as_str().unwrap();
    assert!(
        pinned.starts_with("core 0 (the measuring thread"),
        "{pinned}"
    );
    let aff = schema::section(&doc, "affinity");
    let rows: Vec<&str> = aff["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    let deferred = schema::section(&doc, "deferred");
    let notes = deferred["notes"].to_string();
    if usable > 1 {
        assert_eq!(rows, ["not pinned", "pinned to core 0"], "{aff}");
        assert!(
            notes.contains(
                "producer (measuring thread) pinned to core 0; SPSC worker pinned to core "
            ),
            "{notes}"
        );
        assert!(!notes.contains("worker pinned to core 0"), "{notes}");
        assert!(!notes.contains("consumer pinned to core 0"), "{notes}");
    } else {
        assert_eq!(rows.len(), 2, "{aff}");
        assert!(notes.contains("placement:"), "{notes}");
    }
}

/// Runs `cmd` with io_uring_setup(2) failing with ENOSYS, as on a kernel
/// without io_uring or with it disabled: a seccomp filter installed in the
/// child before exec.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn without_io_uring(cmd: &mut std::process::Command) {
    use libc::{
        BPF_ABS, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W, SECCOMP_RET_ALLOW,
        SECCOMP_RET_ERRNO, sock_filter,
    };
    use std::os::unix::process::CommandExt;
    let op = |code: u32, jt: u8, jf: u8, k: u32| sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    // Load the syscall number (offset 0 of seccomp_data); io_uring_setup
    // returns ENOSYS, everything else is allowed.
    let filter = [
        op(BPF_LD | BPF_W | BPF_ABS, 0, 0, 0),
        op(
            BPF_JMP | BPF_JEQ | BPF_K,
            0,
            1,
            libc::SYS_io_uring_setup as u32,
        ),
        op(
            BPF_RET | BPF_K,
            0,
            0,
            SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        ),
        op(BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW),
    ];
    // SAFETY: the closure only calls prctl (async-signal-safe) on memory it
    // owns, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &raw const prog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn fix_bench_without_io_uring_reports_it_and_measures_the_rest() {
    let mut cmd = fix_bench(
        "transport",
        &[
            "--iterations",
            "100",
            "--runs",
            "1",
            "--transport-iterations",
            "20",
        ],
    );
    without_io_uring(&mut cmd);
    let doc = schema::report(&ok(&mut cmd));
    let section = &doc["sections"][0];
    let rows: Vec<&str> = section["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["blocking", "tokio"], "{section}");
    let notes = section["notes"].to_string();
    assert!(
        notes.contains("io_uring unavailable: Function not implemented"),
        "{notes}"
    );
}

fn soh(s: &str) -> String {
    s.replace('|', "\x01")
}

#[test]
fn check_raw_stream_with_line_breaks_between_messages() {
    let a = soh(&framed("35=D|55=A|"));
    let b = soh(&framed("35=8|58=two\nlines|"));
    // Trailing newline; CRLF between messages; a value holding a newline.
    for input in [
        format!("{a}{a}\n"),
        format!("{a}\r\n{b}\r\n{a}\n\n"),
        format!("{b}{a}"),
    ] {
        let (code, out, _) = run_check(input.as_bytes(), &[]);
        assert_eq!(code, Some(0), "{input:?}: {out}");
        let n = input.matches("8=FIX").count();
        assert!(
            out.lines()
                .last()
                .unwrap_or("")
                .starts_with(&format!("-: {n} valid, 0 invalid")),
            "{out}"
        );
    }
}

#[test]
fn check_soh_log_names_lines() {
    let good = soh(&framed("35=D|55=A|"));
    let bad_cs = format!("{}999\x01", &good[..good.len() - 4]);
    // Line 2's text before its message is a log prefix (QuickFIX's file
    // log writes a timestamp and " : "), not a problem; line 4 holds no
    // message.
    let input = format!("{good}\n20261123-08:00:00.000 : {good}\n{bad_cs}\nNOISE\n{good}\n");
    let (code, out, _) = run_check(input.as_bytes(), &[]);
    assert_eq!(code, Some(1));
    assert!(
        out.lines()
            .last()
            .unwrap_or("")
            .starts_with("-: 3 valid, 2 invalid"),
        "{out}"
    );
    assert!(out.contains("-: line 3: CheckSum(10)"), "{out}");
    assert!(out.contains("-: line 4: garbage: 5 bytes"), "{out}");
    assert_eq!(out.lines().count(), 3, "{out}");
}

#[test]
fn check_pipe_line_with_two_messages_counts_both() {
    let a = framed("35=D|55=A|");
    let b = framed("35=D|55=B|");
    let input = format!("{a}{b}\n{a}\n");
    let (code, out, _) = run_check(input.as_bytes(), &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.lines()
            .last()
            .unwrap_or("")
            .starts_with("-: 3 valid, 0 invalid"),
        "{out}"
    );
    // A truncated second message on a line is reported with its place.
    let input = format!("{a}{}\n", &b[..20]);
    let (code, out, _) = run_check(input.as_bytes(), &[]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains(&format!("-: line 1, offset {}: ", a.len())),
        "{out}"
    );
}

#[test]
fn check_json_prints_every_message_invalid_ones_as_errors() {
    let good = framed("35=D|55=A|");
    let bad = good.replacen("9=", "9=1", 1);
    let input = format!("{good}\n{bad}\n{good}\n");
    let (code, out, err) = run_check(input.as_bytes(), &["--json"]);
    assert_eq!(code, Some(1));
    let docs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 3, "{out}");
    assert_eq!(docs[0]["55"], "A");
    assert_eq!(docs[1]["line"], 2);
    assert!(
        docs[1]["error"]
            .as_str()
            .unwrap()
            .starts_with("BodyLength(9)"),
        "{}",
        docs[1]
    );
    assert_eq!(docs[2]["55"], "A");
    assert!(err.contains("line 2: BodyLength(9)"), "{err}");
}

#[test]
fn fix_bench_input_reads_raw_streams_and_names_the_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("msgs.fix");
    let good = soh(&framed("35=D|55=A|"));
    let bench = |path: &std::path::Path| {
        let mut cmd = fix_bench(
            "parse",
            &[
                "--iterations",
                "50",
                "--warmup",
                "5",
                "--runs",
                "1",
                "--batch",
                "5",
            ],
        );
        cmd.arg("--input").arg(path);
        cmd
    };
    std::fs::write(&path, format!("{good}{good}\n")).unwrap();
    let doc = schema::report(&ok(&mut bench(&path)));
    let row = doc["sections"][0]["rows"][0]["name"].as_str().unwrap();
    assert!(row.starts_with("input: 2 messages"), "{row}");

    let bad = good.replacen("35=D", "35=X", 1);
    std::fs::write(&path, format!("{good}\n{bad}\n")).unwrap();
    let out = bench(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("msgs.fix: line 2: CheckSum(10)"), "{err}");
}

/// The calls each scan row and each parse row made, for `--iterations 7
/// --warmup 1 --runs 3 --batch 2` and the `--min-round` given.
fn scan_and_parse_counts(min_round: &str) -> (Vec<u64>, Vec<u64>) {
    let doc = schema::report(&ok(fix_bench(
        "scan,parse",
        &[
            "--iterations",
            "7",
            "--warmup",
            "1",
            "--runs",
            "3",
            "--batch",
            "2",
            "--min-round",
            min_round,
        ],
    )
    .env(perfkit_bench::peer::DIR_ENV, "/nonexistent")));
    let counts = |prefix: &str| -> Vec<u64> {
        schema::section(&doc, prefix)["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["latency"]["count"].as_u64().unwrap())
            .collect()
    };
    let (scan, parse) = (counts("scan"), counts("parse"));
    assert!(!scan.is_empty() && !parse.is_empty());
    (scan, parse)
}

/// Every part of fix-bench spreads `--iterations` over `--runs` by one
/// rule (ceil(iterations / runs) per run, perfkit_bench::fix's): the parse
/// section, which runs its runs one at a time beside QuickFIX's, measures as
/// many calls per row as the scan section (with `--min-round 0`, which
/// keeps the scan's rounds at their share).
#[test]
fn fix_bench_parse_spreads_iterations_over_runs_like_the_other_parts() {
    let (scan, parse) = scan_and_parse_counts("0");
    for c in scan.iter().chain(&parse) {
        assert_eq!(*c, 9, "scan {scan:?}, parse {parse:?}");
    }
}

/// `--min-round` paces the batched rows: a scan (tens of nanoseconds)
/// given 7 calls in 3 rounds runs whole batches enough to fill 5 ms a
/// round instead, while the parse rows, made beside the peers' exact
/// counts, keep their share; a round past 10 s is refused by name.
#[test]
fn fix_bench_min_round_raises_the_calls_of_fast_rows_but_not_the_parses() {
    let (scan, parse) = scan_and_parse_counts("5ms");
    // Even a debug build scans a message in well under 50 µs, so 5 ms
    // is over 100 calls a round.
    for c in &scan {
        assert!(*c >= 3 * 100 && c.is_multiple_of(2), "scan {scan:?}");
    }
    assert!(parse.iter().all(|&c| c == 9), "parse {parse:?}");
    let out = fix_bench("scan", &["--min-round", "11s"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--min-round"), "{err}");
}

/// A RawData(96) value holding SOH and '=' is one field whose length
/// RawDataLength(95) gives; a RawDataLength that lies is named, with its
/// position, as the reason the message is invalid.
#[test]
fn check_honours_length_prefixed_data_fields() {
    let good = soh(&framed("35=D|55=A|95=10|96=a|b=c|10=1|38=5|"));
    let (code, out, err) = run_check(format!("{good}{good}").as_bytes(), &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("-: 2 valid, 0 invalid"), "{out}");
    let (code, out, _) = run_check(good.as_bytes(), &["--json"]);
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["96"], "a\u{1}b=c\u{1}10=1");
    assert_eq!(v["38"], "5");

    // The same bytes with RawDataLength 4: the data would end at 'c'.
    let lie = soh(&framed("35=D|55=A|95=4|96=a|b=c|10=1|38=5|"));
    let (code, out, _) = run_check(lie.as_bytes(), &[]);
    assert_eq!(code, Some(1));
    assert!(out.contains("-: 0 valid, 1 invalid"), "{out}");
    assert!(
        out.contains("Length field 95 at byte 25 declares 4 bytes for data field 96"),
        "{out}"
    );
    // RawData without its RawDataLength.
    let lone = soh(&framed("35=D|96=ab|"));
    let (code, out, _) = run_check(lone.as_bytes(), &[]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("data field 96 at byte 20 does not follow its Length field 95"),
        "{out}"
    );
}

/// A FIX 4.4 dictionary in QuickFIX's XML format, written here: a
/// NewOrderSingle needing ClOrdID and Side (enum 1 or 2), and a
/// user-defined Length/Data pair 5001/5002 that no standard list knows.
const SMALL_DICTIONARY: &str = r#"<fix type="FIX" major="4" minor="4" servicepack="0">
  <header>
    <field name="BeginString" required="Y"/>
    <field name="BodyLength" required="Y"/>
    <field name="MsgType" required="Y"/>
    <field name="SenderCompID" required="Y"/>
    <field name="TargetCompID" required="Y"/>
    <field name="MsgSeqNum" required="Y"/>
  </header>
  <trailer>
    <field name="CheckSum" required="Y"/>
  </trailer>
  <messages>
    <message name="NewOrderSingle" msgtype="D" msgcat="app">
      <field name="ClOrdID" required="Y"/>
      <field name="Symbol" required="N"/>
      <field name="Side" required="Y"/>
      <field name="MyDataLen" required="N"/>
      <field name="MyData" required="N"/>
    </message>
  </messages>
  <components/>
  <fields>
    <field number="8" name="BeginString" type="STRING"/>
    <field number="9" name="BodyLength" type="LENGTH"/>
    <field number="10" name="CheckSum" type="STRING"/>
    <field number="11" name="ClOrdID" type="STRING"/>
    <field number="34" name="MsgSeqNum" type="SEQNUM"/>
    <field number="35" name="MsgType" type="STRING"/>
    <field number="49" name="SenderCompID" type="STRING"/>
    <field number="54" name="Side" type="CHAR">
      <value enum="1" description="BUY"/>
      <value enum="2" description="SELL"/>
    </field>
    <field number="55" name="Symbol" type="STRING"/>
    <field number="56" name="TargetCompID" type="STRING"/>
    <field number="5001" name="MyDataLen" type="LENGTH"/>
    <field number="5002" name="MyData" type="DATA"/>
  </fields>
</fix>
"#;

#[test]
fn check_with_a_dictionary_validates_and_reads_its_data_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let dict = dir.path().join("small.xml");
    std::fs::write(&dict, SMALL_DICTIONARY).unwrap();
    let dict = dict.to_str().unwrap();
    // SOH stream; the data value holds SOH and '=' (3 bytes: a SOH =).
    let good = interop::framed("35=D|49=A|56=B|34=1|11=X|55=MSFT|54=1|5001=3|5002=a\x01=|");
    let no_clordid = interop::framed("35=D|49=A|56=B|34=2|55=MSFT|54=1|");
    let bad_side = interop::framed("35=D|49=A|56=B|34=3|11=Y|55=MSFT|54=Z|");
    let input = [good.clone(), no_clordid, bad_side].concat();

    let (code, out, err) = run_check(&input, &["--dictionary", dict]);
    assert_eq!(code, Some(1), "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].contains("Required tag missing (tag 11, SessionRejectReason 1)"),
        "{out}"
    );
    assert!(
        lines[1].contains(
            "Value is incorrect (out of range) for this tag (tag 54, SessionRejectReason 5)"
        ),
        "{out}"
    );
    assert!(lines[2].ends_with("1 valid, 2 invalid"), "{out}");

    // Without the dictionary, 5002 is not known to be data: its SOH ends
    // the value and "=" alone is no field, so the first message fails.
    let (code, out, _) = run_check(&good, &[]);
    assert_eq!(code, Some(1), "{out}");
    let (code, out, _) = run_check(&good, &["--dictionary", dict]);
    assert_eq!(code, Some(0), "{out}");

    let (code, _, err) = run_check(&good, &["--dictionary", "/nonexistent/dict.xml"]);
    assert_eq!(code, Some(1));
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/dict.xml"), "{err}");
}

/// Issue 65: each kind of line `fix check` meets is named for what it is,
/// the same in the `|` form and as SOH-separated bytes (QuickFIX's own
/// logs; a user turns one into the other with `tr`). A line that holds no
/// message is not FIX at all, and says so, where it used to be parsed as
/// a message and called truncated; a log's prefix before a message is
/// skipped in both forms.
#[test]
fn each_kind_of_line_is_named_the_same_in_both_forms() {
    let good = framed("35=D|55=A|");
    let bad_cs = format!("{}999|", &good[..good.len() - 4]);
    let after = 2 * good.len() + 1;
    let cases: Vec<(&str, String, Vec<String>)> = vec![
        (
            "a line that is not FIX",
            format!("{good}\ngarbage line\n{good}\n"),
            vec!["-: line 2: garbage: 12 bytes that are not a FIX message, skipped".to_owned()],
        ),
        (
            "text alone, as a log's prefix without its message",
            format!("{good}\n20261123-08:00:00.000 : \n"),
            vec!["-: line 2: garbage: 23 bytes that are not a FIX message, skipped".to_owned()],
        ),
        (
            "a log's prefix before a message",
            format!("{good}\n20261123-08:00:00.000 : {good}\n"),
            vec![],
        ),
        (
            "bytes ending in a separator before a message",
            format!("{good}\njunk|{good}\n"),
            vec!["-: line 2: garbage: 5 bytes that are not a FIX message, skipped".to_owned()],
        ),
        (
            "a separator and an equals sign",
            format!("{good}\n=|\n"),
            vec!["-: line 2: garbage: 2 bytes that are not a FIX message, skipped".to_owned()],
        ),
        (
            "bytes after a whole message",
            format!("{good}\n{good}junk\n"),
            vec![format!(
                "-: line 2, offset {after}: garbage: 4 bytes that are not a FIX message, skipped"
            )],
        ),
        (
            "a message with a wrong CheckSum",
            format!("{good}\n{bad_cs}\n"),
            vec!["-: line 2: CheckSum(10) at byte ".to_owned()],
        ),
    ];
    for (what, pipes, expected) in &cases {
        for form in ["|", "SOH"] {
            let input = match form {
                "|" => pipes.clone(),
                _ => pipes.replace('|', "\x01"),
            };
            let (code, out, _) = run_check(input.as_bytes(), &[]);
            let problems: Vec<&str> = out.lines().filter(|l| l.contains(": line ")).collect();
            assert_eq!(problems.len(), expected.len(), "{what} ({form}): {out}");
            for (got, want) in problems.iter().zip(expected) {
                assert!(
                    got.starts_with(want),
                    "{what} ({form}): {got}\nwanted {want}"
                );
            }
            assert_eq!(
                code,
                Some(i32::from(!expected.is_empty())),
                "{what} ({form})"
            );
        }
    }
}

/// The keys of a JSON text in the order they are written, at every depth.
fn keys_in_order(json: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut chars = json.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => s.extend(chars.next()),
                '"' => break,
                c => s.push(c),
            }
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek() == Some(&':') {
            keys.push(s);
        }
    }
    keys
}

/// Issue 65: `--json` keeps the message's field order (it sorted the tags
/// as strings, "10" before "35" before "8"), groups and their entries
/// included: the keys read in order are the tags of the line as sent.
#[test]
fn check_json_keeps_the_field_order_of_the_message() {
    let line = framed(
        "35=D|49=A|56=B|34=7|11=x|55=EUR|54=1|38=100|40=1|453=2|448=P1|447=D|452=1|448=P2|447=D|452=3|",
    );
    let (code, out, err) = run_check(format!("{line}\n").as_bytes(), &["--json"]);
    assert_eq!(code, Some(0), "{err}");
    let sent: Vec<&str> = line
        .split('|')
        .filter(|f| !f.is_empty())
        .map(|f| f.split('=').next().unwrap())
        .collect();
    assert_eq!(keys_in_order(out.trim()), sent, "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["453"][1]["448"], "P2");
}
