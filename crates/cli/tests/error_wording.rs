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
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    for args in [&["unzip", "-p", "a.zip"][..], &["unzip", "-c", "a.zip"]] {
        let out = perfkit()
            .current_dir(d)
            .args(args)
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
            "perfkit: writing to standard output: No space left on device (os error 28)",
            "{args:?}"
        );
    }
}
