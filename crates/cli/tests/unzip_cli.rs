//! `perfkit unzip` through the binary: Info-ZIP's habits (member patterns,
//! `-x`, `-n`, `-o`, `-j`, `-q`, `-p member`) checked against Info-ZIP
//! `unzip` itself, one limit policy for every reading mode, names printed
//! with control characters made visible, one clear line per error. Archives
//! come from Python's `zipfile` or Info-ZIP `zip`, not from perfkit.

use perfkit_testkit::interop;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

fn have_python() -> bool {
    interop::have("python3", "--version", "apt-get install python3")
}

fn have_unzip() -> bool {
    interop::have("unzip", "-v", "apt-get install unzip")
}

/// Runs `cmd` with `stdin` fed to it.
fn run(cmd: &mut Command, stdin: Option<&[u8]>) -> Output {
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(data) = stdin {
        let mut w = child.stdin.take().unwrap();
        let data = data.to_vec();
        // A command that fails early closes stdin: ignore the broken pipe.
        std::thread::spawn(move || {
            let _ = w.write_all(&data);
        });
    }
    child.wait_with_output().unwrap()
}

/// Writes a ZIP with Python's zipfile: `entries` are (name, data) pairs,
/// deflated.
fn py_zip(path: &Path, entries: &[(&str, Vec<u8>)]) {
    let dir = path.parent().unwrap();
    let mut script = String::from(
        "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n",
    );
    for (i, (name, data)) in entries.iter().enumerate() {
        let f = dir.join(format!(".py-entry-{i}"));
        std::fs::write(&f, data).unwrap();
        // The name as code points: no quoting rules to get wrong.
        let points: Vec<String> = name.chars().map(|c| (c as u32).to_string()).collect();
        script.push_str(&format!(
            "z.writestr(''.join(map(chr, [{}])), open({:?}, 'rb').read())\n",
            points.join(","),
            f.to_str().unwrap()
        ));
    }
    script.push_str("z.close()\n");
    let out = Command::new("python3")
        .arg("-c")
        .arg(&script)
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for i in 0..entries.len() {
        std::fs::remove_file(dir.join(format!(".py-entry-{i}"))).unwrap();
    }
}

/// Relative path and contents of every file and directory under `root`.
fn tree(root: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut v = Vec::new();
    if !root.exists() {
        return v;
    }
    fn walk(base: &Path, d: &Path, v: &mut Vec<(String, Option<Vec<u8>>)>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                v.push((rel, None));
                walk(base, &p, v);
            } else {
                v.push((rel, Some(std::fs::read(&p).unwrap())));
            }
        }
    }
    walk(root, root, &mut v);
    v.sort();
    v
}

/// The sample Info-ZIP's own habits are checked on.
fn sample(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("a/b")).unwrap();
    std::fs::write(src.join("a/b/x.txt"), b"x\n").unwrap();
    std::fs::write(src.join("a/y.txt"), b"y\n").unwrap();
    std::fs::write(src.join("a/y.log"), b"log\n").unwrap();
    std::fs::write(src.join("top.txt"), b"top\n").unwrap();
    std::fs::write(src.join("UP.TXT"), b"UP\n").unwrap();
    let zip = dir.join("t.zip");
    let out = Command::new("zip")
        .current_dir(&src)
        .args(["-qr", zip.to_str().unwrap(), "a", "top.txt", "UP.TXT"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    zip
}

#[test]
fn info_zip_habits_match_info_zip() {
    if !have_unzip() || !interop::have("zip", "-v", "apt-get install zip") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let zip = sample(d.path());
    // (options, which Info-ZIP takes before the archive; members, -x and
    // -d, which it takes after). perfkit takes options anywhere.
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &[]),
        (&[], &["*.txt"]),
        (&[], &["a/*", "-x", "*/x.txt"]),
        (&[], &["-x", "*.log", "*.TXT"]),
        (&[], &["a/[xy]*"]),
        (&[], &["a/[!x]*"]),
        (&[], &["?op.txt", "UP.TXT"]),
        (&["-j"], &[]),
        (&["-j"], &["a/*"]),
        (&["-q"], &[]),
        (&["-qq", "-o"], &[]),
    ];
    for (k, (pre, post)) in cases.iter().enumerate() {
        let case = (pre, post);
        let theirs = d.path().join(format!("iz{k}"));
        let ours = d.path().join(format!("pk{k}"));
        let out = run(
            Command::new("unzip")
                .args(*pre)
                .arg(&zip)
                .args(*post)
                .arg("-d")
                .arg(&theirs),
            None,
        );
        assert!(out.status.success(), "unzip {case:?}: {out:?}");
        let out = run(
            perfkit()
                .arg("unzip")
                .arg(&zip)
                .args(*post)
                .args(*pre)
                .arg("-d")
                .arg(&ours),
            None,
        );
        assert!(out.status.success(), "perfkit unzip {case:?}: {out:?}");
        assert_eq!(tree(&ours), tree(&theirs), "{case:?}");
        // The same from stdin (Info-ZIP cannot read stdin: its tree again).
        let piped = d.path().join(format!("pipe{k}"));
        let out = run(
            perfkit()
                .args(["unzip"])
                .args(*pre)
                .arg("-")
                .args(*post)
                .arg("-d")
                .arg(&piped),
            Some(&std::fs::read(&zip).unwrap()),
        );
        assert!(out.status.success(), "perfkit unzip - {case:?}: {out:?}");
        assert_eq!(tree(&piped), tree(&theirs), "stdin {case:?}");
    }

    // -p member: the members' bytes, in archive order.
    for case in [&["top.txt", "a/b/*"][..], &["*.txt", "-x", "top.txt"]] {
        let theirs = run(Command::new("unzip").arg("-p").arg(&zip).args(case), None);
        let ours = run(perfkit().args(["unzip", "-p"]).arg(&zip).args(case), None);
        assert!(ours.status.success(), "{ours:?}");
        assert_eq!(ours.stdout, theirs.stdout, "-p {case:?}");
        let piped = run(
            perfkit().args(["unzip", "-p", "-"]).args(case),
            Some(&std::fs::read(&zip).unwrap()),
        );
        assert_eq!(piped.stdout, theirs.stdout, "-p - {case:?}");
    }

    // -n: existing files stay as they are, the rest is written; -o replaces.
    for (flag, kept) in [("-n", true), ("-o", false)] {
        let theirs = d.path().join(format!("iz{flag}"));
        let ours = d.path().join(format!("pk{flag}"));
        for dir in [&theirs, &ours] {
            std::fs::create_dir_all(dir.join("a")).unwrap();
            std::fs::write(dir.join("a/y.txt"), b"mine\n").unwrap();
        }
        assert!(
            run(
                Command::new("unzip")
                    .arg(flag)
                    .arg(&zip)
                    .arg("-d")
                    .arg(&theirs),
                None
            )
            .status
            .success()
        );
        let out = run(
            perfkit()
                .arg("unzip")
                .arg(flag)
                .arg(&zip)
                .arg("-d")
                .arg(&ours),
            None,
        );
        assert!(out.status.success(), "{flag}: {out:?}");
        assert_eq!(tree(&ours), tree(&theirs), "{flag}");
        assert_eq!(
            std::fs::read(ours.join("a/y.txt")).unwrap() == b"mine\n",
            kept
        );
    }

    // A pattern matching nothing: Info-ZIP says "filename not matched";
    // perfkit says so too, exits 1 and writes nothing.
    let none = d.path().join("none");
    let out = run(
        perfkit()
            .arg("unzip")
            .arg(&zip)
            .args(["top.txt", "nothere"])
            .arg("-d")
            .arg(&none),
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("filename not matched: nothere"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(tree(&none).is_empty(), "{:?}", tree(&none));
}

#[test]
fn quiet_flags_are_options_not_clap_advice() {
    let d = tempfile::tempdir().unwrap();
    let zip = d.path().join("a.zip");
    if !have_python() {
        return;
    }
    py_zip(&zip, &[("a.txt", b"a".to_vec())]);
    let out = run(perfkit().args(["unzip", "-q", "-t"]).arg(&zip), None);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        1,
        "{out:?}"
    );
    let out = run(perfkit().args(["unzip", "-qq", "-t"]).arg(&zip), None);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn control_characters_in_names_are_made_visible() {
    if !have_python() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let zip = d.path().join("spoof.zip");
    py_zip(
        &zip,
        &[
            ("evil\nfake.txt", b"1".to_vec()),
            ("esc\u{1b}[2Jx", b"2".to_vec()),
            ("cr\rover", b"3".to_vec()),
        ],
    );
    let bytes = std::fs::read(&zip).unwrap();
    for stdin in [false, true] {
        let out = if stdin {
            run(perfkit().args(["unzip", "-l", "-"]), Some(&bytes))
        } else {
            run(perfkit().args(["unzip", "-l"]).arg(&zip), None)
        };
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        for shown in ["evil^Jfake.txt", "esc^[[2Jx", "cr^Mover"] {
            assert!(text.contains(shown), "{shown} not in {text:?}");
        }
        assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
        // One line per entry, plus Info-ZIP's "Archive:" line, two header
        // lines and two of totals.
        assert_eq!(text.lines().count(), 3 + 5, "{text:?}");
    }
    // The oracle: Info-ZIP shows a newline as ^J too.
    if have_unzip() {
        let out = run(Command::new("unzip").arg("-l").arg(&zip), None);
        assert!(String::from_utf8_lossy(&out.stdout).contains("evil^Jfake.txt"));
    }
    // A name in an error message cannot spoof a second line either.
    let out = run(
        perfkit()
            .args(["unzip", "-p"])
            .arg(&zip)
            .arg("nope\nperfkit: ok"),
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("nope^Jperfkit: ok"), "{err}");
}

#[test]
fn max_size_bounds_every_reading_mode() {
    if !have_python() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let zip = d.path().join("bomb.zip");
    // 8 MiB of zeros: a few KB deflated. A 1 MiB limit must stop every mode
    // with at most 1 MiB (plus one read buffer) written.
    py_zip(&zip, &[("zeros", vec![0u8; 8 << 20])]);
    let bytes = std::fs::read(&zip).unwrap();
    for mode in [&["-p"][..], &["-t"], &[]] {
        for stdin in [false, true] {
            let dest = d.path().join(format!("out{}{}", mode.len(), stdin));
            let mut cmd = perfkit();
            cmd.arg("unzip")
                .args(mode)
                .args(["--max-size", "1MiB", "-d"])
                .arg(&dest);
            let out = if stdin {
                run(cmd.arg("-"), Some(&bytes))
            } else {
                run(cmd.arg(&zip), None)
            };
            assert_eq!(
                out.status.code(),
                Some(1),
                "{mode:?} stdin={stdin}: {out:?}"
            );
            assert!(
                out.stdout.len() <= (1 << 20) + (64 << 10),
                "{mode:?}: {} bytes out",
                out.stdout.len()
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("total uncompressed size"), "{mode:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(tree(&dest).is_empty(), "{mode:?}: {:?}", tree(&dest));
        }
    }
    // Without the limit, -p gives every byte.
    let out = run(perfkit().args(["unzip", "-p"]).arg(&zip), None);
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), 8 << 20);
}

#[test]
fn errors_name_the_entry_once() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("s.txt");
    std::fs::write(&src, b"secret").unwrap();
    let zip = d.path().join("enc.zip");
    let out = run(
        perfkit()
            .args(["zip", "--encrypt", "aes256", "--password-env", "PW"])
            .env("PW", "right")
            .arg(&zip)
            .arg(&src),
        None,
    );
    assert!(out.status.success(), "{out:?}");
    for mode in [&["-t"][..], &["-p"], &["-d", "x"]] {
        let out = run(
            perfkit()
                .current_dir(d.path())
                .args(["unzip", "--password-env", "PW"])
                .env("PW", "wrong")
                .args(mode)
                .arg(&zip),
            None,
        );
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.matches("wrong password").count(), 1, "{err}");
        assert_eq!(err.matches("entry").count(), 1, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(
        !d.path().join("x").exists(),
        "a failed extract left its directory"
    );
}

#[test]
fn a_directory_in_the_way_of_a_file_is_named_once() {
    assert!(have_python(), "python3 is needed (apt-get install python3)");
    let d = tempfile::tempdir().unwrap();
    let zip = d.path().join("a.zip");
    // One entry the buffer holds whole, one written through a temporary.
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    py_zip(&zip, &[("small.txt", b"s".to_vec()), ("big.bin", big)]);
    for (i, name) in ["small.txt", "big.bin"].into_iter().enumerate() {
        let dest = d.path().join(format!("to{i}"));
        std::fs::create_dir_all(dest.join(name)).unwrap();
        std::fs::write(dest.join(name).join("keep"), b"k").unwrap();
        let out = run(
            perfkit()
                .args(["unzip", "-o", "-q", "-d"])
                .arg(&dest)
                .arg(&zip)
                .arg(name),
            None,
        );
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(err.matches(name).count(), 1, "{err}");
        assert!(!err.contains("os error"), "{err}");
        assert_eq!(err.matches("Is a directory").count(), 1, "{err}");
        // The directory and what it held are untouched; no temporary.
        let left: Vec<_> = std::fs::read_dir(&dest)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, [name], "{err}");
        assert_eq!(std::fs::read(dest.join(name).join("keep")).unwrap(), b"k");
    }
}

#[test]
fn a_file_in_the_way_of_a_directory_is_kept_even_with_overwrite() {
    assert!(have_python(), "python3 is needed (apt-get install python3)");
    let d = tempfile::tempdir().unwrap();
    let zip = d.path().join("a.zip");
    py_zip(&zip, &[("sub/b.txt", b"b".to_vec())]);
    for (i, flags) in [&["-q"][..], &["-q", "-o"]].into_iter().enumerate() {
        let dest = d.path().join(format!("to{i}"));
        std::fs::create_dir(&dest).unwrap();
        std::fs::write(dest.join("sub"), b"mine").unwrap();
        let out = run(
            perfkit()
                .arg("unzip")
                .args(flags)
                .arg("-d")
                .arg(&dest)
                .arg(&zip),
            None,
        );
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("sub: exists and is not a directory"), "{err}");
        assert!(!err.contains("allow overwriting"), "{err}");
        assert_eq!(std::fs::read(dest.join("sub")).unwrap(), b"mine");
    }
}
