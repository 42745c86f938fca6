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
    let out = perfkit()
        .current_dir(d)
        .args(["unzip", "-q", "a.zip", "-d", "dest"])
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
