//! `perfkit fix check` on inputs larger than its read size and on bad
//! input: messages and lines straddling reads, the line of every invalid
//! message (computed here, independently of the binary), and one-line
//! errors with a non-zero exit for truncated, over-long, binary, missing and
//! over-large inputs.

mod interop;

use interop::perfkit;
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

/// A message framed by the test helper (not fixcore), SOH separated.
fn msg(body: &str) -> Vec<u8> {
    interop::framed(body)
}

fn check(args: &[&str], input: &Path, stdin: bool) -> Output {
    let mut c = perfkit();
    c.args(["fix", "check"]).args(args);
    if stdin {
        c.arg("-").stdin(std::fs::File::open(input).unwrap());
    } else {
        c.arg(input).stdin(Stdio::null());
    }
    c.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A log of `n` messages (with a prefix on some lines, and a line of junk
/// now and then) well over the 256 KiB read size, every 997th message with
/// a wrong checksum; returns the input and the expected report lines
/// (`line N: why`, in order).
fn log_with_bad_lines(n: usize, pipe: bool) -> (Vec<u8>, Vec<String>) {
    let mut data = Vec::new();
    let mut expected = Vec::new();
    let mut line = 0;
    for i in 0..n {
        let mut m = msg(&format!(
            "35=D|49=BUYER|56=SELLER|34={i}|11=ORDER-{i}|55=SYM{}|54=1|38={}|",
            i % 50,
            100 + i
        ));
        if !pipe && i % 999 == 7 {
            // A line that holds no message is reported (999 is a multiple of 3,
            // so these messages are never prefixed).
            data.extend_from_slice(b"2026-11-23 08:00:00.000 session reset\n");
            line += 1;
            expected.push(format!("line {line}: garbage: 37 bytes"));
        }
        line += 1;
        if i % 997 == 5 {
            // Break the checksum: its last digit, before the final SOH.
            let k = m.len() - 2;
            m[k] = if m[k] == b'0' { b'1' } else { b'0' };
            expected.push(format!("line {line}: CheckSum(10)"));
        }
        if pipe {
            for b in &mut m {
                if *b == 1 {
                    *b = b'|';
                }
            }
        } else if i % 3 == 0 {
            // A log line's prefix (QuickFIX's file log writes a timestamp
            // and " : ") is part of the log's format, not a problem.
            data.extend_from_slice(b"20261123-08:00:00.000 : ");
        }
        data.extend_from_slice(&m);
        data.push(b'\n');
    }
    (data, expected)
}

#[test]
fn check_names_every_bad_line_across_reads_file_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    for pipe in [false, true] {
        let (data, expected) = log_with_bad_lines(20_000, pipe);
        assert!(data.len() > 4 * (256 << 10), "several reads");
        let path = dir.path().join("log.txt");
        std::fs::write(&path, &data).unwrap();
        for stdin in [false, true] {
            let bad = expected.iter().filter(|e| e.contains("CheckSum")).count();
            let out = check(&[], &path, stdin);
            let stdout = text(&out.stdout);
            assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
            let lines: Vec<&str> = stdout.lines().collect();
            let name = if stdin {
                "-".to_owned()
            } else {
                path.display().to_string()
            };
            assert_eq!(
                *lines.last().unwrap(),
                format!("{name}: {} valid, {} invalid", 20_000 - bad, expected.len())
            );
            assert_eq!(lines.len(), expected.len() + 1, "{stdout}");
            for (got, want) in lines.iter().zip(&expected) {
                // `line N: why` at a line start, `line N, offset O: why`
                // after a prefix.
                let (line, why) = want.split_once(": ").unwrap();
                let rest = got.strip_prefix(&format!("{name}: {line}")).unwrap_or("");
                assert!(
                    (rest.starts_with(": ") || rest.starts_with(", offset "))
                        && rest.contains(&format!(": {why}")),
                    "{got} vs {want}"
                );
            }
            // --json: one object per message, in order, errors with line.
            let out = check(&["--json"], &path, stdin);
            let docs: Vec<serde_json::Value> = text(&out.stdout)
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(docs.len(), 20_000 + expected.len() - bad);
            // Prefixed lines give their message and nothing else.
            let orders: Vec<&serde_json::Value> =
                docs.iter().filter(|d| d["11"].is_string()).collect();
            assert_eq!(orders.len(), 20_000 - bad);
            assert_eq!(orders[4]["11"], "ORDER-4");
            assert_eq!(orders[5]["11"], "ORDER-6", "message 5 is the bad one");
            let errors: Vec<&serde_json::Value> =
                docs.iter().filter(|d| d["error"].is_string()).collect();
            assert_eq!(errors.len(), expected.len());
            for (e, want) in errors.iter().zip(&expected) {
                assert!(
                    want.starts_with(&format!("line {}:", e["line"])),
                    "{e} vs {want}"
                );
            }
            assert_eq!(orders.last().unwrap()["38"], (100 + 19_999).to_string());
        }
    }
}

/// Runs `fix check` on `data` (as a file) and returns its exit code and
/// stdout+stderr, asserting it was not killed by a signal.
fn check_bytes(data: &[u8]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in");
    std::fs::write(&path, data).unwrap();
    let out = check(&[], &path, false);
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("killed: {:?} {}", out.status, text(&out.stderr)));
    (code, text(&out.stdout) + &text(&out.stderr))
}

#[test]
fn truncated_last_message_is_named() {
    let good = msg("35=0|");
    let mut data = good.repeat(3);
    data.extend_from_slice(&good[..good.len() - 9]);
    let (code, out) = check_bytes(&data);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "line 1, offset {}: truncated message",
            3 * good.len()
        )),
        "{out}"
    );
    assert!(out.contains("3 valid, 1 invalid"), "{out}");
}

#[test]
fn body_length_past_the_limit_names_the_field_and_line() {
    let good = msg("35=0|");
    let mut data = good.clone();
    data.push(b'\n');
    data.extend_from_slice(b"8=FIX.4.4\x019=99999999\x0135=0\x0110=000\x01\n");
    data.extend_from_slice(&good);
    let (code, out) = check_bytes(&data);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("line 2: BodyLength(9) at byte 10 says 99999999: the message would run past the 1048576-byte message limit"),
        "{out}"
    );
    assert!(out.contains("2 valid, 1 invalid"), "{out}");
}

#[test]
fn long_line_without_soh_is_one_error_in_bounded_memory() {
    let good = framed_pipe("35=0|");
    let mut data = Vec::with_capacity(100 << 20);
    data.extend_from_slice(&good);
    data.push(b'\n');
    data.resize(data.len() + (100 << 20), b'A');
    data.push(b'\n');
    data.extend_from_slice(&good);
    data.push(b'\n');
    let (code, out) = check_bytes(&data);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("line 2: line longer than 1048576 bytes"),
        "{out}"
    );
    assert!(out.contains("2 valid, 1 invalid"), "{out}");
}

fn framed_pipe(body: &str) -> Vec<u8> {
    msg(body)
        .into_iter()
        .map(|b| if b == 1 { b'|' } else { b })
        .collect()
}

#[test]
fn binary_garbage_is_a_clean_failure() {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let data: Vec<u8> = (0..3 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let (code, out) = check_bytes(&data);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("panicked"), "{out}");
}

#[test]
fn missing_input_is_one_line_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gone.txt");
    let out = check(&[], &path, false);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("gone.txt"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_file_larger_than_the_address_space_cap_does_not_abort() {
    // A sparse 512 MiB file (all zero bytes: no SOH, one over-long line)
    // under a 256 MiB address-space cap: reading it whole cannot work,
    // streaming it must.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.bin");
    let good = msg("35=0|");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&good).unwrap();
    f.set_len(512 << 20).unwrap();
    drop(f);
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 262144; exec \"$0\" fix check \"$1\"")
        .arg(env!("CARGO_BIN_EXE_perfkit"))
        .arg(&path)
        .output()
        .unwrap();
    let all = text(&out.stdout) + &text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{:?}: {all}", out.status);
    assert!(all.contains("1 valid, 1 invalid"), "{all}");
}

/// The `|` form: a line holding two messages is framed into both, a line
/// whose second message is bad names the line, a line with one bad
/// message is reported whole, by the parser's reason, and bytes before a
/// message are reported apart from it. (The command parses
/// each line whole first and looks for further messages only when that
/// fails, so this pins what the reordering must keep.)
#[test]
fn lines_holding_several_messages_are_framed() {
    let bar =
        |m: Vec<u8>| -> Vec<u8> { m.iter().map(|&b| if b == 1 { b'|' } else { b }).collect() };
    let good = bar(msg("35=0|"));
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 4..n - 1].copy_from_slice(b"999");
    let mut data = Vec::new();
    for line in [
        good.clone(),
        [good.clone(), good.clone()].concat(),
        [good.clone(), bad.clone()].concat(),
        bad.clone(),
        [b"junk|".to_vec(), good.clone()].concat(),
    ] {
        data.extend_from_slice(&line);
        data.push(b'\n');
    }
    let (code, out) = check_bytes(&data);
    assert_eq!(code, 1, "{out}");
    let problems: Vec<&str> = out.lines().filter(|l| l.contains(": line ")).collect();
    assert_eq!(problems.len(), 3, "{out}");
    assert!(
        problems[0].contains("line 3, offset") && problems[0].contains("CheckSum"),
        "{out}"
    );
    assert!(
        problems[1].contains("line 4:") && problems[1].contains("CheckSum"),
        "{out}"
    );
    // Bytes before a message on its line are not FIX and are named so,
    // as in the SOH form; the message after them counts.
    assert!(
        problems[2].contains("line 5: garbage: 5 bytes that are not a FIX message"),
        "{out}"
    );
    assert!(out.contains(": 5 valid, 3 invalid"), "{out}");
}
