//! Bad input through the binary: a non-zero exit, one clear line naming the
//! input, and no output file (not even a temporary one) left behind.

mod interop;

use interop::{listing, ok, perfkit};
use std::path::Path;

fn fails_cleanly(dir: &Path, input: &str, expect: &[&str]) {
    let before = listing(dir);
    let out = perfkit()
        .current_dir(dir)
        .args(["decompress", input])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{input}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.starts_with(&format!("perfkit: {input}: ")),
        "names the input: {err}"
    );
    assert!(expect.iter().any(|e| err.contains(e)), "{input}: {err}");
    assert!(out.stdout.is_empty());
    assert_eq!(listing(dir), before, "no file left behind for {input}");
}

#[test]
fn corrupt_truncated_and_foreign_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data: Vec<u8> = (0..300_000u32)
        .flat_map(|i| format!("{i} ").into_bytes())
        .collect();
    std::fs::write(d.join("plain"), &data).unwrap();
    ok(perfkit().current_dir(d).args(["compress", "plain"]));
    let frame = std::fs::read(d.join("plain.zst")).unwrap();
    std::fs::remove_file(d.join("plain.zst")).unwrap();

    std::fs::write(d.join("trunc.zst"), &frame[..frame.len() / 2]).unwrap();
    fails_cleanly(
        d,
        "trunc.zst",
        &["truncated zstd data: input ends inside a frame"],
    );

    let mut bad = frame.clone();
    let n = bad.len();
    bad[n / 2] ^= 0xff;
    bad[n / 2 + 1] ^= 0x55;
    std::fs::write(d.join("corrupt.zst"), &bad).unwrap();
    fails_cleanly(
        d,
        "corrupt.zst",
        &["corrupt zstd data near byte", "checksum mismatch in frame"],
    );

    std::fs::write(d.join("foreign.zst"), b"PK\x03\x04 definitely a zip file").unwrap();
    fails_cleanly(
        d,
        "foreign.zst",
        &["not zstd data: unknown frame header at byte 0"],
    );

    std::fs::write(d.join("empty.zst"), b"").unwrap();
    fails_cleanly(d, "empty.zst", &["truncated zstd data"]);

    fails_cleanly(d, "missing.zst", &["opening input"]);
}

#[test]
fn existing_outputs_are_not_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a"), b"new contents").unwrap();
    std::fs::write(d.join("a.zst"), b"precious").unwrap();
    let out = perfkit()
        .current_dir(d)
        .args(["compress", "a"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // zstd's question, answered by the end of input (stdin is empty).
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("a.zst already exists; overwrite (y/n) ? Not overwritten")
    );
    assert_eq!(std::fs::read(d.join("a.zst")).unwrap(), b"precious");
    ok(perfkit()
        .current_dir(d)
        .args(["compress", "-f", "--rm", "a"]));
    assert!(
        !d.join("a").exists(),
        "--rm removes the input after success"
    );
    ok(perfkit().current_dir(d).args(["decompress", "a.zst"]));
    assert_eq!(std::fs::read(d.join("a")).unwrap(), b"new contents");
}

#[test]
fn unknown_suffix_and_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.bz2"), b"whatever").unwrap();
    let out = perfkit()
        .current_dir(dir.path())
        .args(["decompress", "x.bz2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown suffix"));
    let out = perfkit()
        .args(["compress", "--recipe", "fastest"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "usage errors exit 2 like clap");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown recipe 'fastest'"));
}

#[test]
fn test_mode_checks_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("f"), vec![7u8; 100_000]).unwrap();
    ok(perfkit().current_dir(d).args(["compress", "f"]));
    ok(perfkit().current_dir(d).args(["compress", "-t", "f.zst"]));
    let mut frame = std::fs::read(d.join("f.zst")).unwrap();
    frame.truncate(frame.len() - 3);
    std::fs::write(d.join("f.zst"), frame).unwrap();
    let out = perfkit()
        .current_dir(d)
        .args(["compress", "-t", "f.zst"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_closed_pipe_is_a_quiet_non_zero_exit() {
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let big: Vec<u8> = (0..8_000_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    std::fs::write(dir.path().join("big"), &big).unwrap();
    let mut child = perfkit()
        .current_dir(dir.path())
        .args(["compress", "-c", "--recipe", "fast", "big"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take()); // the reader goes away, like `| head -c 16`
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(141));
    assert!(err.is_empty(), "quiet: {err}");
}

/// The write-behind thread meets the closed pipe, not the decoder: the
/// broken pipe must still come back as the quiet 141, from a file and from
/// stdin.
#[test]
fn decompressing_into_a_closed_pipe_is_a_quiet_141() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let big: Vec<u8> = (0..32_000_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 28) as u8)
        .collect();
    std::fs::write(dir.path().join("big"), &big).unwrap();
    ok(perfkit().current_dir(dir.path()).args(["compress", "big"]));
    let frame = std::fs::read(dir.path().join("big.zst")).unwrap();
    for from_stdin in [false, true] {
        let mut cmd = perfkit();
        cmd.current_dir(dir.path())
            .args(["decompress", "-c"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if from_stdin {
            cmd.arg("-").stdin(Stdio::piped());
        } else {
            cmd.arg("big.zst").stdin(Stdio::null());
        }
        let mut child = cmd.spawn().unwrap();
        let feeder = child.stdin.take().map(|mut w| {
            let frame = frame.clone();
            // Ends with an error once perfkit stops reading: expected.
            std::thread::spawn(move || {
                let _ = w.write_all(&frame);
            })
        });
        let mut first = [0u8; 16];
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut first)
            .unwrap();
        assert_eq!(first[..], big[..16]);
        drop(child.stdout.take());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        if let Some(f) = feeder {
            f.join().unwrap();
        }
        assert_eq!(status.code(), Some(141), "stdin: {from_stdin}: {err}");
        assert!(err.is_empty(), "quiet: {err}");
    }
}

/// Flag values no run can use are usage errors (exit 2, clap's message),
/// found before any work starts, never a panic later.
#[test]
fn out_of_range_flag_values_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("f"), b"some bytes to measure").unwrap();
    for (args, flag) in [
        (
            "bench --only zstd --recipes fast --zstd-time 1ms --heartbeat 0 --vs-zstd --zstd-runs 0",
            "--zstd-runs",
        ),
        (
            "compress --train --maxdict 18446744073709551615 f -o dict",
            "--maxdict",
        ),
        ("compress --train --maxdict 5G f -o dict", "--maxdict"),
    ] {
        let args: Vec<&str> = args.split_whitespace().collect();
        let out = perfkit().current_dir(d).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(flag) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
    assert_eq!(listing(d), ["f"], "nothing written");
}

/// Argument combinations that cannot work are usage errors like clap's own:
/// exit 2, `error: …` and the usage line, before anything is written.
#[test]
fn impossible_combinations_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a"), b"first").unwrap();
    std::fs::write(d.join("b"), b"second").unwrap();
    // (`-o out a b` concatenates, as zstd: zstd_options.rs.)
    for (args, says) in [
        ("compress --train -o dict", "--train needs sample files"),
        (
            "compress --frame-size 1M a",
            "the following required arguments were not provided",
        ),
    ] {
        let out = perfkit()
            .current_dir(d)
            .args(args.split_whitespace())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args}: {err}");
        assert!(err.starts_with(&format!("error: {says}")), "{args}: {err}");
        assert!(err.contains("Usage: perfkit "), "{args}: {err}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(listing(d), ["a", "b"], "nothing written");
}

/// Levels zstd cannot use were accepted silently (23, -1000000) and
/// compressed at some other level; now they are usage errors (exit 2) naming
/// the value. Level 0 is zstd's "default level", as in zstd's own `-0`.
#[test]
fn out_of_range_levels_are_usage_errors() {
    for level in ["23", "-1000000", "2147483647"] {
        let out = interop::perfkit()
            .args(["compress", "-c", "--level", level])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--level {level}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(level), "--level {level}: {err}");
    }
    let out = interop::perfkit()
        .args(["compress", "-c", "--level", "0"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(zstdkit::decompress(&out.stdout).unwrap(), b"");
}

/// zstd's level habits parse: `-19` was refused by clap ("use '-- -19'"),
/// `--fast=N` and `--ultra` were unknown. Each output decodes, and the
/// levels really differ: -19 packs compressible text smaller than --fast=5.
#[test]
fn zstd_level_flags_parse() {
    let text: Vec<u8> = (0..20000u32)
        .flat_map(|i| format!("line {} of {}\n", i % 977, i % 13).into_bytes())
        .collect();
    let run = |args: &[&str]| {
        use std::io::Write;
        let mut child = interop::perfkit()
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&text).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(zstdkit::decompress(&out.stdout).unwrap(), text, "{args:?}");
        (
            out.stdout.len(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (high, _) = run(&["compress", "-19", "-c"]);
    let (fast, _) = run(&["compress", "--fast=5", "-c"]);
    assert!(high < fast, "-19 gave {high} bytes, --fast=5 {fast}");
    let (_, warned) = run(&["compress", "-22", "-c"]);
    assert!(warned.contains("reduced to 19"), "{warned}");
    let (_, quiet) = run(&["compress", "--ultra", "-22", "-c"]);
    assert!(!quiet.contains("reduced"), "{quiet}");
    run(&["compress", "--fast", "-c"]);
    let bad = interop::perfkit()
        .args(["compress", "--fast=0", "-c"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// Issue 63.4: every file read whole (the patch's reference, a dictionary,
/// a training sample) is refused at once when it is a device, a FIFO or
/// larger than its limit, in one line naming the flag, the file and why,
/// with little memory: each run is under a 1 GiB address-space limit and
/// must end within seconds. `--patch-from=/dev/zero` used to read until
/// memory ran out, and a FIFO with no writer waited for ever.
#[test]
fn files_read_whole_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("x"), b"some bytes to code\n").unwrap();
    ok(perfkit().current_dir(d).args(["compress", "-q", "x"]));
    ok(std::process::Command::new("mkfifo").arg(d.join("fifo")));
    // Sparse: no disk and no time to make, only a size.
    let sparse = |name: &str, len: u64| {
        std::fs::File::create(d.join(name))
            .unwrap()
            .set_len(len)
            .unwrap();
    };
    sparse("huge", 3 << 30);
    sparse("dict40m", 40 << 20);
    let cases: &[(&str, &str, &str)] = &[
        (
            "compress -c --patch-from=/dev/zero x",
            "--patch-from /dev/zero",
            "is a character device, not a regular file",
        ),
        (
            "decompress -c --patch-from=/dev/zero x.zst",
            "--patch-from /dev/zero",
            "is a character device, not a regular file",
        ),
        (
            "compress -c --patch-from=fifo x",
            "--patch-from fifo",
            "is a FIFO, not a regular file",
        ),
        (
            "decompress -c --patch-from=fifo x.zst",
            "--patch-from fifo",
            "is a FIFO, not a regular file",
        ),
        (
            "compress -c --patch-from=huge x",
            "--patch-from huge",
            "is 3221225472 bytes, larger than 2147483648",
        ),
        (
            "decompress -c --patch-from=huge x.zst",
            "--patch-from huge",
            "is 3221225472 bytes, larger than 2147483648",
        ),
        (
            "compress -c -D /dev/zero x",
            "-D /dev/zero",
            "is a character device, not a regular file",
        ),
        (
            "decompress -c -D fifo x.zst",
            "-D fifo",
            "is a FIFO, not a regular file",
        ),
        (
            "compress -c -D dict40m x",
            "-D dict40m",
            "is 41943040 bytes, larger than 33554432",
        ),
        (
            "compress -c -D huge x",
            "-D huge",
            "is 3221225472 bytes, larger than 33554432",
        ),
        (
            "compress --train x x x x /dev/zero -o dict",
            "--train sample /dev/zero",
            "is a character device",
        ),
        (
            "compress --train x x x x fifo -o dict",
            "--train sample fifo",
            "is a FIFO",
        ),
    ];
    for (args, names, why) in cases {
        let mut cmd = std::process::Command::new("sh");
        cmd.current_dir(d)
            .arg("-c")
            .arg("ulimit -v 1048576; exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_perfkit"))
            .args(args.split_whitespace());
        let started = std::time::Instant::now();
        let out = interop::output_within(&mut cmd, 20);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args}: {err}");
        assert_eq!(err.lines().count(), 1, "{args}: one line: {err}");
        assert!(
            err.starts_with(&format!("perfkit: {names}: {why}")),
            "{args}: {err}"
        );
        assert!(
            started.elapsed().as_secs() < 10,
            "{args}: took {:?}",
            started.elapsed()
        );
        assert!(out.stdout.is_empty(), "{args}");
    }
    assert!(!d.join("dict").exists());
}
