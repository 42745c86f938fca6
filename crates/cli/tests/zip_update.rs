//! `perfkit zip` never loses data: an existing archive is updated (entries
//! added or replaced, the rest kept), a file in the archive's place that is
//! not a ZIP is refused untouched, two files are never stored under one
//! name, and a password without `--encrypt` is a usage error. Contents and
//! names are checked with Info-ZIP `unzip`.

mod interop;

// Info-ZIP unzip has no --version (interop::have's probe); `-v` it has.
fn have_unzip() -> bool {
    perfkit_testkit::interop::have("unzip", "-v", "apt-get install unzip")
}

use std::path::Path;
use std::process::{Command, Output, Stdio};

use interop::{have, perfkit};

fn run(dir: &Path, args: &[&str]) -> Output {
    perfkit()
        .current_dir(dir)
        .arg("zip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ok(dir: &Path, args: &[&str]) {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "zip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The entry names as Info-ZIP lists them.
fn names(zip: &Path) -> Vec<String> {
    let out = Command::new("unzip").arg("-Z1").arg(zip).output().unwrap();
    assert!(out.status.success(), "unzip -Z1 {}", zip.display());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// One entry's data as Info-ZIP extracts it.
fn data(zip: &Path, name: &str) -> Vec<u8> {
    let out = Command::new("unzip")
        .arg("-p")
        .arg(zip)
        .arg(name)
        .output()
        .unwrap();
    assert!(out.status.success(), "unzip -p {} {name}", zip.display());
    out.stdout
}

#[test]
fn an_existing_archive_is_updated_in_place_order() {
    if !have_unzip() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(d.join("a.txt"), b"first a").unwrap();
    std::fs::write(d.join("b.bin"), &big).unwrap();
    std::fs::create_dir(d.join("dir")).unwrap();
    std::fs::write(d.join("dir/c"), b"c").unwrap();
    ok(d, &["t.zip", "a.txt", "b.bin", "-r", "dir"]);
    std::fs::write(d.join("a.txt"), b"second a, longer").unwrap();
    std::fs::write(d.join("new.txt"), b"new").unwrap();
    ok(d, &["t.zip", "a.txt", "new.txt"]);
    let z = d.join("t.zip");
    assert_eq!(
        names(&z),
        ["a.txt", "b.bin", "dir/", "dir/c", "new.txt"],
        "kept entries stay in place, a replaced one in its slot, new ones last, no duplicates"
    );
    assert_eq!(data(&z, "a.txt"), b"second a, longer");
    assert_eq!(data(&z, "b.bin"), big);
    assert_eq!(data(&z, "dir/c"), b"c");
    assert_eq!(data(&z, "new.txt"), b"new");
    // Through the parallel writer and with a store-method entry kept.
    ok(d, &["t.zip", "--jobs", "2", "--method", "store", "a.txt"]);
    assert_eq!(names(&z).len(), 5);
    assert_eq!(data(&z, "b.bin"), big);
    let t = Command::new("unzip").arg("-tq").arg(&z).output().unwrap();
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stdout));
}

#[test]
fn a_file_that_is_not_a_zip_is_refused_untouched() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("notes.txt"), b"precious notes\n").unwrap();
    std::fs::write(d.join("other.txt"), b"other").unwrap();
    // Arguments swapped: the archive named first is a text file.
    let out = run(d, &["notes.txt", "other.txt"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("notes.txt") && err.contains("not a ZIP"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(d.join("notes.txt")).unwrap(),
        b"precious notes\n"
    );
    let left: Vec<_> = std::fs::read_dir(d).unwrap().collect();
    assert_eq!(left.len(), 2, "no temporary file left behind");
}

#[test]
fn two_files_under_one_name_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::create_dir_all(d.join("x/w")).unwrap();
    std::fs::create_dir_all(d.join("w")).unwrap();
    std::fs::write(d.join("x/w/h1"), b"inner").unwrap();
    std::fs::write(d.join("w/h1"), b"outer").unwrap();
    let x = d.join("x");
    let out = run(&x, &["t.zip", "../w/h1", "w/h1"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "Info-ZIP: invalid command arguments"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot repeat names"), "{err}");
    assert!(!x.join("t.zip").exists());
    // The same file named twice is stored once, as Info-ZIP does.
    if have_unzip() {
        ok(&x, &["t.zip", "w/h1", "./w/h1"]);
        assert_eq!(names(&x.join("t.zip")), ["w/h1"]);
    }
}

#[test]
fn a_password_without_encrypt_is_a_usage_error() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("secret.txt"), b"secret").unwrap();
    let out = perfkit()
        .current_dir(d)
        .env("ZIPPW", "hunter2")
        .args(["zip", "s.zip", "secret.txt", "--password-env", "ZIPPW"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--encrypt"), "{err}");
    assert!(!d.join("s.zip").exists(), "no plain-text archive written");
}

/// An empty password, from any of the ways one arrives, is refused before
/// anything is written: an empty key protects nothing.
#[test]
fn an_empty_password_is_a_usage_error() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("secret.txt"), b"secret").unwrap();
    std::fs::write(d.join("empty-pw"), b"").unwrap();
    std::fs::write(d.join("blank-first-line"), b"\nhunter2\n").unwrap();
    let ways: &[&[&str]] = &[
        &["--password-env", "EMPTYPW"],
        &["--password-file", "empty-pw"],
        &["--password-file", "blank-first-line"],
    ];
    for way in ways {
        let out = perfkit()
            .current_dir(d)
            .env("EMPTYPW", "")
            .args(["zip", "s.zip", "secret.txt", "--encrypt", "aes256"])
            .args(*way)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{way:?}: {err}");
        assert_eq!(
            err.lines()
                .filter(|l| l.starts_with("error:"))
                .collect::<Vec<_>>(),
            [
                "error: --encrypt needs a non-empty password (the one given by --password-file, --password-env or the prompt is empty)"
            ],
            "{way:?}"
        );
        assert!(!d.join("s.zip").exists(), "{way:?}: no archive written");
    }
    // The prompt: Enter twice on a terminal (`script` gives the child one).
    if have("script", "util-linux") {
        let perfkit = env!("CARGO_BIN_EXE_perfkit");
        let mut child = Command::new("script")
            .current_dir(d)
            .args(["-qec"])
            .arg(format!(
                "{perfkit} zip s.zip secret.txt --encrypt aes256; echo exit=$?"
            ))
            .arg("/dev/null")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            // One Enter per prompt, a moment apart so each prompt reads its own.
            for _ in 0..2 {
                std::thread::sleep(std::time::Duration::from_millis(300));
                let _ = stdin.write_all(b"\r");
                let _ = stdin.flush();
            }
        }
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("non-empty password"), "{text}");
        assert!(text.contains("exit=2"), "{text}");
        assert!(!d.join("s.zip").exists(), "prompt: no archive written");
    }
}

#[test]
fn the_archive_never_stores_itself() {
    if !have_unzip() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("a"), b"a").unwrap();
    ok(d, &["t.zip", "a"]);
    ok(d, &["-r", "t.zip", "."]);
    assert_eq!(names(&d.join("t.zip")), ["a"]);
}

#[test]
fn an_exclude_glob_with_many_stars_is_fast() {
    if !have_unzip() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let name = "a".repeat(200);
    std::fs::write(d.join(&name), b"kept").unwrap();
    std::fs::write(d.join("aaaaaaab"), b"excluded").unwrap();
    // Exponential in the stars before: 12 s with five, never ending with 8.
    let out = interop::output_within(
        // -x takes the rest of the line, as Info-ZIP's: it goes last.
        perfkit().current_dir(d).args([
            "zip",
            "t.zip",
            &name,
            "aaaaaaab",
            "-x",
            "*a*a*a*a*a*a*a*b",
        ]),
        60,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(names(&d.join("t.zip")), [name]);
}

#[test]
fn absurd_jobs_are_clamped_not_aborted() {
    if !have_unzip() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("a"), vec![b'x'; 3 << 20]).unwrap();
    let out = run(d, &["t.zip", "--jobs", "20000", "a"]);
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("using"));
    assert_eq!(data(&d.join("t.zip"), "a"), vec![b'x'; 3 << 20]);
}

#[test]
fn fifos_are_skipped_with_a_note() {
    if !have_unzip() || !have("mkfifo", "coreutils") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::create_dir(d.join("dir")).unwrap();
    std::fs::write(d.join("dir/f"), b"f").unwrap();
    let made = Command::new("mkfifo")
        .arg(d.join("dir/pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    // Before, reading the FIFO blocked forever.
    let out = interop::output_within(
        perfkit()
            .current_dir(d)
            .args(["zip", "-r", "t.zip", "dir", "dir/pipe"]),
        60,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("skipping") && err.contains("FIFO"), "{err}");
    assert_eq!(names(&d.join("t.zip")), ["dir/", "dir/f"]);
}

#[test]
fn a_bare_archive_name_gets_zip_appended() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("a"), b"a").unwrap();
    ok(d, &["-q", "backup", "a"]);
    assert!(d.join("backup.zip").is_file());
    assert!(!d.join("backup").exists());
    if have_unzip() {
        assert_eq!(names(&d.join("backup.zip")), ["a"]);
    }
}

#[test]
fn s3_without_credentials_names_the_variables() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("f"), b"f").unwrap();
    let mut cmd = perfkit();
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_some_and(|k| k.starts_with("AWS_")) {
            cmd.env_remove(k);
        }
    }
    let out = interop::output_within(
        cmd.current_dir(d)
            .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
            .args(["zip", "s3://bucket/k.zip", "f"]),
        60,
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("AWS_ACCESS_KEY_ID") && err.contains("AWS_SECRET_ACCESS_KEY"),
        "{err}"
    );
}

/// `zip -m` keeps a file that changed after it was read: a line appended
/// to `log.txt` while a later input (stdin, `-`) is still being read is
/// neither lost nor deleted; the unchanged file beside it is moved.
/// (Info-ZIP 3.0 deletes the changed file, and its new line with it.)
#[test]
fn move_keeps_a_file_that_changed_after_it_was_read() {
    use std::io::Write;
    if !have_unzip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("log.txt"), "first line\n").unwrap();
    std::fs::write(d.join("still.txt"), "unchanged\n").unwrap();
    let mut zip = perfkit()
        .current_dir(d)
        .args(["zip", "-q", "-m", "m.zip", "log.txt", "still.txt", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = zip.stdin.take().unwrap();
    // The inputs are read in order: once zip has taken in most of 1 MiB
    // from stdin (a pipe holds 64 KiB), it is past log.txt.
    stdin.write_all(&vec![b'x'; 1 << 20]).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(d.join("log.txt"))
        .unwrap()
        .write_all(b"a line written while zip ran\n")
        .unwrap();
    drop(stdin);
    let out = zip.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        std::fs::read_to_string(d.join("log.txt")).unwrap(),
        "first line\na line written while zip ran\n",
        "the changed file is kept as it is now"
    );
    assert!(
        err.contains("kept log.txt") && err.lines().count() == 1,
        "one warning naming it: {err}"
    );
    assert!(!d.join("still.txt").exists(), "the unchanged file is moved");
    let held = Command::new("unzip")
        .args(["-p", "m.zip", "log.txt"])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(held.stdout, b"first line\n");
    assert_eq!(names(&d.join("m.zip")), ["log.txt", "still.txt", "-"]);
}

/// `zip -m` of a symlink, beside Info-ZIP's: followed (the default), the
/// entry holds what the link names and the link is removed, the file it
/// names kept; with `-y` the entry is the link and the link is removed.
/// Both runs leave the same files, and archives with the same entries.
#[test]
fn move_removes_a_link_it_stored_as_info_zip_does() {
    if !have_unzip() || !perfkit_testkit::interop::have("zip", "-v", "apt-get install zip") {
        return;
    }
    for flags in [&["-q", "-m"][..], &["-q", "-m", "-y"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let mut left = Vec::new();
        for who in ["info-zip", "perfkit"] {
            let d = dir.path().join(who);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("target.txt"), "data\n").unwrap();
            std::os::unix::fs::symlink("target.txt", d.join("link.txt")).unwrap();
            let mut c = if who == "perfkit" {
                let mut c = perfkit();
                c.arg("zip");
                c
            } else {
                Command::new("zip")
            };
            let out = c
                .current_dir(&d)
                .args(flags)
                .args(["m.zip", "link.txt"])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(
                out.status.success() && out.stderr.is_empty(),
                "{who} zip {flags:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let mut files: Vec<String> = std::fs::read_dir(&d)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            files.sort();
            let zip = d.join("m.zip");
            left.push((files, names(&zip), data(&zip, "link.txt")));
        }
        assert_eq!(left[0], left[1], "zip {flags:?}: Info-ZIP, then perfkit");
        assert_eq!(left[1].0, ["m.zip", "target.txt"], "zip {flags:?}");
    }
}
