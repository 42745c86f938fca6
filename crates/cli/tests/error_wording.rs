//! Issue 34.7: an error names what the user named, never a temporary, and
//! says which flag changes the outcome.

mod interop;

use interop::{ok, perfkit};

#[test]
fn an_output_that_cannot_be_created_is_named_not_its_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in"), b"data").unwrap();
    // A regular file where the output's directory should be: the
    // temporary sibling cannot be created (as root too, unlike a
    // read-only directory).
    std::fs::write(d.join("plain"), b"").unwrap();
    let out = perfkit()
        .current_dir(d)
        .args(["compress", "in", "-o", "plain/a.zst"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("plain/a.zst"), "{err}");
    assert!(
        !err.contains(".perfkit-") && !err.contains(".partial"),
        "{err}"
    );
    for report in ["--hlog", "--plot"] {
        let out = perfkit()
            .current_dir(d)
            .args([
                "bench",
                "--only",
                "zstd",
                "--zstd-input",
                "in",
                "--zstd-time",
                "1ms",
                "--heartbeat",
                "0",
            ])
            .args([report, "plain/run"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("plain/run") && !err.contains(".partial"),
            "{err}"
        );
    }
}

#[test]
fn extracting_over_a_file_names_the_flag_that_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.txt"), b"new").unwrap();
    ok(perfkit()
        .current_dir(d)
        .args(["zip", "-q", "a.zip", "a.txt"]));
    std::fs::create_dir(d.join("dest")).unwrap();
    std::fs::write(d.join("dest/a.txt"), b"mine").unwrap();
    // With the archive on stdin there is no one to ask (elsewhere
    // unzip asks, as Info-ZIP does: info_zip_habits.rs).
    let out = perfkit()
        .current_dir(d)
        .args(["unzip", "-q", "-", "-d", "dest"])
        .stdin(std::fs::File::open(d.join("a.zip")).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a.txt: already exists"), "{err}");
    assert!(err.contains("use -o to overwrite"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(d.join("dest/a.txt")).unwrap(), b"mine");
    ok(perfkit()
        .current_dir(d)
        .args(["unzip", "-q", "-o", "a.zip", "-d", "dest"]));
    assert_eq!(std::fs::read(d.join("dest/a.txt")).unwrap(), b"new");
}

/// Issue 65: what zip and unzip say when the file system says no is the
/// OS's words with the path named, never Rust's error-kind text
/// ("entity not found"): an archive in a folder that is not there, an
/// extraction folder that cannot be made (Info-ZIP: `checkdir: cannot
/// create extraction directory: /proc/foo`), and a write to a full
/// stdout, blamed on the write rather than on reading the archive.
#[test]
fn zip_and_unzip_failures_say_the_os_words_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.txt"), b"hello\n").unwrap();
    ok(perfkit()
        .current_dir(d)
        .args(["zip", "-q", "a.zip", "a.txt"]));
    let cases: &[(&[&str], &str)] = &[
        (
            &["zip", "-q", "nodir/x.zip", "a.txt"],
            "writing nodir/x.zip: No such file or directory",
        ),
        (
            &["unzip", "-q", "a.zip", "-d", "/proc/foo"],
            "cannot create extraction directory /proc/foo: No such file or directory",
        ),
    ];
    for (args, says) in cases {
        let out = perfkit().current_dir(d).args(*args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("entity not found"), "{args:?}: {err}");
        assert!(!err.contains("(os error"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    // -B cannot back up a.txt when a.txt~ (taken over under -o) is a
    // folder: the file is kept, said in the OS's words, and the run fails
    // (the file on disk is not the archive's).
    std::fs::create_dir_all(d.join("a.txt~/in")).unwrap();
    let out = perfkit()
        .current_dir(d)
        .args(["unzip", "-q", "-B", "-o", "a.zip"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end(),
        "perfkit: a.txt: cannot back it up (-B): Is a directory; kept"
    );
    assert_eq!(out.status.code(), Some(1));
    // Every line a listing, -t or -sf writes is a write to stdout, and
    // its failure is named so, however short the output.
    let full_stdout: &[&[&str]] = &[
        &["unzip", "-p", "a.zip"],
        &["unzip", "-c", "a.zip"],
        &["unzip", "-t", "a.zip"],
        &["unzip", "-l", "a.zip"],
        &["unzip", "-v", "a.zip"],
        &["unzip", "-Z", "a.zip"],
        &["unzip", "-z", "a.zip"],
        &["zip", "-sf", "a.zip"],
        &["zip", "-sf", "a.zip", "a.txt"],
        &["zip", "-sf", "a.zip", "-d", "a.txt"],
    ];
    for args in full_stdout {
        let out = perfkit()
            .current_dir(d)
            .args(*args)
            .stdout(
                std::fs::File::options()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.trim_end(),
            "perfkit: writing to standard output: No space left on device",
            "{args:?}"
        );
    }
}

/// Issue 65: a message that reaches the user is a sentence naming what
/// failed: a full disk under `fix`, `betree`, `stress` and `report` says
/// standard output was being written (it was the OS's words alone), and a
/// missing or unreadable file is named with the OS's words, never Rust's
/// error-kind text ("entity not found") or a value's Debug form.
#[test]
fn every_failed_write_or_read_names_what_and_says_it_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (cmd, n) in [("gen-exprs", "20"), ("gen-events", "5")] {
        ok(perfkit()
            .current_dir(d)
            .args(["betree", cmd, "--params", "8", "--count", n, "-o", cmd]));
    }
    std::fs::write(d.join("msgs.txt"), "garbage line\n").unwrap();
    ok(perfkit()
        .current_dir(d)
        .args(["compress", "-q", "-k", "msgs.txt"]));
    let log = d.join("run.hlog");
    ok(perfkit()
        .current_dir(d)
        .args(["stress", "--duration", "100ms", "--producers", "2"])
        .args(["--consumers", "2", "--hlog"])
        .arg(&log));
    let full: &[&[&str]] = &[
        &["fix", "check", "msgs.txt"],
        &["fix", "check", "msgs.txt", "--json"],
        &["betree", "gen-exprs", "--params", "8", "--count", "20"],
        &[
            "betree",
            "search",
            "--exprs",
            "gen-exprs",
            "--events",
            "gen-events",
        ],
        &["betree", "diff", "gen-exprs", "gen-exprs"],
        &[
            "stress",
            "--duration",
            "100ms",
            "--producers",
            "2",
            "--consumers",
            "2",
        ],
        &["report", "merge", "run.hlog"],
        &["report", "merge", "run.hlog", "--json"],
        &["decompress", "--list", "msgs.txt.zst"],
    ];
    let missing: &[&[&str]] = &[
        &["fix", "check", "nothere/msgs.txt"],
        &[
            "fix",
            "check",
            "msgs.txt",
            "--dictionary",
            "nothere/FIX44.xml",
        ],
        &["fix", "load", "nothere/load.cfg", "--rate", "10"],
        &[
            "betree",
            "search",
            "--exprs",
            "nothere/e",
            "--events",
            "gen-events",
        ],
        &["betree", "diff", "nothere/a", "gen-exprs"],
        &[
            "betree",
            "gen-exprs",
            "--params",
            "8",
            "--count",
            "2",
            "-o",
            "nothere/x",
        ],
        &["stress", "--duration", "100ms", "--input", "nothere/in"],
        &["stress", "--duration", "100ms", "--hlog", "nothere/x.hlog"],
        &["report", "merge", "nothere/a.hlog"],
    ];
    let cases = full
        .iter()
        .map(|a| (*a, Some("/dev/full"), "writing", "No space left on device"))
        .chain(
            missing
                .iter()
                .map(|a| (*a, None, "nothere/", "No such file or directory")),
        );
    for (args, stdout, names, os_words) in cases {
        let mut cmd = perfkit();
        cmd.current_dir(d).args(args);
        if let Some(path) = stdout {
            cmd.stdout(std::fs::File::create(path).unwrap());
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let what = args.join(" ");
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        let last = err.lines().last().unwrap_or("");
        assert!(last.starts_with("perfkit: "), "{what}: {err}");
        assert!(last.contains(os_words), "{what}: {err}");
        if stdout.is_some() {
            assert!(last.contains("standard output"), "{what}: {err}");
        } else {
            assert!(last.contains(names), "{what}: {err}");
        }
        for rust in ["entity not found", "kind:", "Os {", "Custom {", "\"nothere"] {
            assert!(!err.contains(rust), "{what}: {err}");
        }
    }
}
