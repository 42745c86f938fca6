//! Issue 13.13: flags users bring from zstd and Info-ZIP zip mean what
//! they mean there, checked against the real programs: `compress -l`
//! lists as `zstd -l` does (`-lv` as `zstd -lv`), `-v` is verbose, zip's
//! `-0`..`-9` are levels (`-0` stores), `-j` junks paths as Info-ZIP's
//! does, and an unknown flag gets no "use '-- -x'" advice.

mod interop;

use std::path::Path;
use std::process::Command;

use interop::{have, ok, perfkit};

fn stdout(out: std::process::Output) -> String {
    String::from_utf8(out.stdout).unwrap()
}

/// The lines of `zstd -lv` that say what a file holds, without the
/// version banner (which perfkit does not print).
fn facts(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("***"))
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[test]
fn list_agrees_with_zstd_list() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text: String = (0..100_000).map(|i| format!("{i}\n")).collect();
    std::fs::write(d.join("a"), &text).unwrap();
    ok(Command::new("zstd").current_dir(d).args(["-q", "a"]));
    let a = std::fs::read(d.join("a.zst")).unwrap();
    std::fs::write(d.join("two.zst"), [a.clone(), a.clone()].concat()).unwrap();
    // From a pipe: no content size in the header; and no checksum.
    let piped = ok(Command::new("sh")
        .current_dir(d)
        .args(["-c", "cat a | zstd -q --no-check -c"]))
    .stdout;
    std::fs::write(d.join("pipe.zst"), &piped).unwrap();
    // A skippable frame before a zstd frame.
    let mut skip = 0x184D_2A5Eu32.to_le_bytes().to_vec();
    skip.extend(5u32.to_le_bytes());
    skip.extend(b"hello");
    skip.extend(&a);
    std::fs::write(d.join("skip.zst"), skip).unwrap();
    let small = ok(Command::new("sh")
        .current_dir(d)
        .args(["-c", "printf 'hi\\n' | zstd -q -c"]))
    .stdout;
    std::fs::write(d.join("small.zst"), small).unwrap();

    let files = ["a.zst", "two.zst", "pipe.zst", "skip.zst", "small.zst"];
    // The table, all files at once (with its total line), byte for byte.
    let theirs = ok(Command::new("zstd").current_dir(d).arg("-l").args(files));
    let ours = ok(perfkit()
        .current_dir(d)
        .args(["compress", "-l"])
        .args(files));
    assert_eq!(facts(&stdout(ours)), facts(&stdout(theirs)));
    for f in ["a.zst", "two.zst", "pipe.zst", "skip.zst"] {
        let theirs = ok(Command::new("zstd").current_dir(d).args(["-lv", f]));
        let ours = ok(perfkit().current_dir(d).args(["compress", "-lv", f]));
        assert_eq!(facts(&stdout(ours)), facts(&stdout(theirs)), "{f}");
    }
    // --list is the long form; `decompress -l` lists too.
    let long = ok(perfkit()
        .current_dir(d)
        .args(["decompress", "--list", "a.zst"]));
    assert!(stdout(long).contains("XXH64  a.zst"));
    // Not zstd data: one line naming the file, exit 1; the rest listed.
    std::fs::write(d.join("bad.zst"), b"PK\x03\x04 not zstd").unwrap();
    let out = perfkit()
        .current_dir(d)
        .args(["compress", "-l", "bad.zst", "a.zst"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "perfkit: bad.zst: not zstd data: unknown frame header at byte 0\n"
    );
    assert!(stdout(out).contains("a.zst"));
}

#[test]
fn verbose_and_the_level_flag_follow_zstd() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a"), "x".repeat(10_000)).unwrap();
    let out = ok(perfkit().current_dir(d).args(["compress", "-v", "-c", "a"]));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("a"), "-v reports on stderr: {err}");
    assert!(!out.stdout.is_empty());
    // The level is --level (or -#); -l is --list, which wants files.
    ok(perfkit()
        .current_dir(d)
        .args(["compress", "-f", "--level", "5", "a"]));
    let out = perfkit()
        .current_dir(d)
        .args(["compress", "-l", "5", "a"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "-l 5 lists a file named 5");
}

/// (name, compression method) of each entry, read by Python's zipfile.
fn methods(archive: &Path) -> Vec<(String, u32)> {
    let out = ok(Command::new("python3").arg("-c").arg(
        "import sys, zipfile\nfor i in zipfile.ZipFile(sys.argv[1]).infolist(): print(i.filename, i.compress_type)",
    ).arg(archive));
    stdout(out)
        .lines()
        .map(|l| {
            let (n, m) = l.rsplit_once(' ').unwrap();
            (n.to_string(), m.parse().unwrap())
        })
        .collect()
}

#[test]
fn zip_levels_and_junk_paths_follow_info_zip() {
    if !have("python3", "python3") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("t/a")).unwrap();
    std::fs::create_dir_all(d.join("t/b")).unwrap();
    std::fs::write(d.join("t/a/x.txt"), "x".repeat(5000)).unwrap();
    std::fs::write(d.join("t/b/y.txt"), "y".repeat(5000)).unwrap();
    // -0 stores (method 0), -9 and -r9 deflate (method 8).
    ok(perfkit()
        .current_dir(d)
        .args(["zip", "-q", "-0", "s.zip", "t/a/x.txt"]));
    assert_eq!(methods(&d.join("s.zip")), vec![("t/a/x.txt".into(), 0)]);
    ok(perfkit()
        .current_dir(d)
        .args(["zip", "-q", "-9", "n.zip", "t/a/x.txt"]));
    assert_eq!(methods(&d.join("n.zip")), vec![("t/a/x.txt".into(), 8)]);
    ok(perfkit().current_dir(d).args(["zip", "-qr0", "r.zip", "t"]));
    assert!(methods(&d.join("r.zip")).iter().all(|(_, m)| *m == 0));
    // -j: the files under their names alone and no directories, as
    // Info-ZIP writes them.
    ok(perfkit()
        .current_dir(d)
        .args(["zip", "-q", "-rj", "j.zip", "t"]));
    let ours: Vec<String> = methods(&d.join("j.zip"))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    if have("zip", "zip") {
        ok(Command::new("zip")
            .current_dir(d)
            .args(["-q", "-rj", "peer.zip", "t"]));
        // Info-ZIP walks in directory order, perfkit in sorted order.
        let mut theirs: Vec<String> = methods(&d.join("peer.zip"))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        theirs.sort();
        assert_eq!(ours, theirs);
    }
    assert_eq!(ours, vec!["x.txt".to_string(), "y.txt".to_string()]);
    // Two files whose names collide once junked are refused (Info-ZIP:
    // "cannot repeat names in zip file").
    std::fs::write(d.join("t/b/x.txt"), "other").unwrap();
    let out = perfkit()
        .current_dir(d)
        .args(["zip", "-q", "-j", "dup.zip", "t/a/x.txt", "t/b/x.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!d.join("dup.zip").exists());
    // --jobs is long only now.
    ok(perfkit()
        .current_dir(d)
        .args(["zip", "-q", "--jobs", "2", "p.zip", "t/a/x.txt"]));
}

#[test]
fn unknown_flags_get_no_dash_dash_advice() {
    for args in [
        &["compress", "--bogus"][..],
        &["zip", "-Y", "a.zip", "b"],
        &["unzip", "-Y", "a.zip"],
    ] {
        let out = perfkit().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("unexpected argument"), "{args:?}: {err}");
        assert!(!err.contains("'-- "), "{args:?}: {err}");
    }
}
