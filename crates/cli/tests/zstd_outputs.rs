//! What zstd's outputs are, beside zstd 1.5.4 itself: the output of
//! `FILE -> FILE.zst` and back carries the input's mode and modification
//! time (zstd's `UTIL_setFileStat`), so `make` and `rsync -t` see the
//! data as old as it is; `--no-progress` is taken; the same input gives
//! the same bytes on every run, however fast it is read; and `--range`
//! of a frame of 1 GiB needs memory for zstd's window, not the frame.

mod interop;

use interop::{have, perfkit};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

fn ok(cmd: &mut Command, dir: &Path) {
    let out = cmd.current_dir(dir).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (mode bits, modification time) of `path`.
fn stat(path: &Path) -> (u32, SystemTime) {
    let m = std::fs::metadata(path).unwrap();
    (m.permissions().mode() & 0o7777, m.modified().unwrap())
}

#[test]
fn outputs_keep_the_inputs_mode_and_time_as_zstds_do() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let then = SystemTime::UNIX_EPOCH + Duration::from_secs(981_173_106);
    for side in ["zstd", "perfkit"] {
        let d = dir.path().join(side);
        std::fs::create_dir(&d).unwrap();
        // Over a MiB, so the output's blocks are reserved ahead and
        // released (a truncation, which sets the time) before the stamp.
        std::fs::write(d.join("f"), perfkit_testkit::noise::noise(3 << 20, 3)).unwrap();
        let f = std::fs::File::options()
            .write(true)
            .open(d.join("f"))
            .unwrap();
        f.set_modified(then).unwrap();
        f.set_permissions(std::fs::Permissions::from_mode(0o640))
            .unwrap();
    }
    let (zd, pd) = (dir.path().join("zstd"), dir.path().join("perfkit"));
    ok(Command::new("zstd").args(["-q", "f"]), &zd);
    ok(
        perfkit().args(["compress", "-q", "--no-progress", "f"]),
        &pd,
    );
    assert_eq!(stat(&pd.join("f.zst")), stat(&zd.join("f.zst")));
    assert_eq!(stat(&pd.join("f.zst")), (0o640, then));
    for d in [&zd, &pd] {
        std::fs::remove_file(d.join("f")).unwrap();
    }
    ok(Command::new("zstd").args(["-q", "-d", "f.zst"]), &zd);
    ok(perfkit().args(["decompress", "-q", "f.zst"]), &pd);
    assert_eq!(stat(&pd.join("f")), stat(&zd.join("f")));
    assert_eq!(stat(&pd.join("f")), (0o640, then));
    // perfkit's block decoder drops its writer on another path.
    ok(
        perfkit().args(["decompress", "-qf", "--decoder=perfkit", "-T2", "f.zst"]),
        &pd,
    );
    assert_eq!(stat(&pd.join("f")), (0o640, then));
    // -o FILE too; stdout has no file to stamp.
    ok(
        Command::new("zstd").args(["-q", "-f", "f", "-o", "o.zst"]),
        &zd,
    );
    ok(
        perfkit().args(["compress", "-q", "-f", "f", "-o", "o.zst"]),
        &pd,
    );
    assert_eq!(stat(&pd.join("o.zst")).1, stat(&zd.join("o.zst")).1);
}

/// The same bytes every run: a frame's first call to zstd with all of
/// the input takes zstd's one-shot path, and whether the reader had got
/// to the end by then was timing (one run in ten differed at level 19).
#[test]
fn the_same_input_gives_the_same_frame_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let noise = perfkit_testkit::noise::noise(300_000, 7);
    let data: Vec<u8> = (0..300_000)
        .map(|i| {
            if (i / 50_000) % 3 == 0 {
                noise[i]
            } else {
                b"several frames, one order\n"[i % 26]
            }
        })
        .collect();
    std::fs::write(dir.path().join("x"), &data).unwrap();
    let frame = || {
        let out = perfkit()
            .args(["compress", "-19c", "x"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    let first = frame();
    for run in 1..30 {
        assert!(frame() == first, "run {run} wrote other bytes");
    }
}

/// `--range` streams the frame it reads from: a range of a seekable file
/// holding one 1 GiB frame decodes under a 256 MiB address-space limit
/// (prlimit), from the start and from the middle; it used to decode the
/// whole frame into memory and abort.
#[test]
fn a_range_of_a_one_gib_frame_decodes_in_little_memory() {
    use std::io::Write;
    if !perfkit_testkit::interop::have("prlimit", "--version", "apt-get install util-linux") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut zip = perfkit()
        .args([
            "compress",
            "-q",
            "-1",
            "--seekable",
            "--frame-size",
            "1G",
            "-o",
            "big.zst",
        ])
        .current_dir(d)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let line: Vec<u8> = (0..64 << 10)
        .map(|i| b"0123456789abcdef\n"[i % 17])
        .collect();
    let mut stdin = zip.stdin.take().unwrap();
    for _ in 0..(1 << 30) / line.len() {
        stdin.write_all(&line).unwrap();
    }
    drop(stdin);
    assert!(zip.wait().unwrap().success());
    for (range, offset) in [("0..100", 0usize), ("512M..513M", 512 << 20)] {
        let out = Command::new("prlimit")
            .arg("--as=268435456")
            .arg(env!("CARGO_BIN_EXE_perfkit"))
            .args(["decompress", "--range", range, "-c", "big.zst"])
            .current_dir(d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "--range {range}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let expect: Vec<u8> = (offset..offset + out.stdout.len())
            .map(|i| b"0123456789abcdef\n"[(i % (64 << 10)) % 17])
            .collect();
        assert!(out.stdout == expect, "--range {range}: other bytes");
        assert_eq!(out.stdout.len(), if offset == 0 { 100 } else { 1 << 20 });
    }
}

/// `--train` says what zstd says of its samples: fewer than five is an
/// error after zstd's three warning lines, and samples under eight times
/// the dictionary's size get its two-line warning (the same lines, word
/// for word; zstd's exit code for the error is 14, perfkit's 1).
#[test]
fn train_warns_of_thin_samples_as_zstd_does() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut names = Vec::new();
    for i in 0..20u64 {
        let name = format!("s{i}");
        std::fs::write(d.join(&name), perfkit_testkit::noise::noise(2000, i)).unwrap();
        names.push(name);
    }
    let lines = |o: &std::process::Output, n: usize| -> Vec<String> {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .take(n)
            .map(str::to_owned)
            .collect()
    };
    for (samples, warned, fails) in [(&names[..3], 3, true), (&names[..], 2, false)] {
        let theirs = Command::new("zstd")
            .arg("--train")
            .args(samples)
            .args(["-o", "theirs.dict"])
            .current_dir(d)
            .output()
            .unwrap();
        let ours = perfkit()
            .args(["compress", "--train"])
            .args(samples)
            .args(["-o", "ours.dict"])
            .current_dir(d)
            .output()
            .unwrap();
        assert_eq!(ours.status.success(), !fails);
        assert_eq!(theirs.status.success(), !fails);
        assert_eq!(
            lines(&ours, warned),
            lines(&theirs, warned),
            "{} samples",
            samples.len()
        );
        assert!(lines(&ours, 1)[0].starts_with("!  Warning"));
    }
}

/// Every file under `dir`, by path, with its contents (a `.zst` decoded,
/// as each tool's frames for the same data may differ).
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let e = e.unwrap();
        if !e.file_type().is_file() {
            continue;
        }
        let name = e.path().strip_prefix(dir).unwrap().display().to_string();
        let bytes = std::fs::read(e.path()).unwrap();
        let bytes = if name.ends_with(".zst") {
            zstdkit::decompress(&bytes).unwrap()
        } else {
            bytes
        };
        out.push((name, bytes));
    }
    out
}

/// Issue 63.2: two inputs bound for one output, on every path that names
/// outputs, beside zstd 1.5. Without -f the second is refused as zstd
/// refuses it (exit 1, "already exists; not overwritten") and the first
/// input, its output kept, is removed by --rm; with -f zstd's warning is
/// printed and the second overwrites the first's output, but where zstd
/// then has removed the first input too (its data in no file any more),
/// perfkit keeps it. Everything else left on disk is what zstd leaves.
/// perfkit used to remove `x/f` and overwrite its output, exit 0, with
/// no warning.
#[test]
fn two_inputs_for_one_output_lose_nothing() {
    if !have("zstd", "zstd") {
        return;
    }
    struct Case {
        /// The files to make: (path, contents).
        files: &'static [(&'static str, &'static [u8])],
        /// The arguments after `zstd` / `perfkit compress`.
        args: &'static [&'static str],
        /// Whether both succeed.
        ok: bool,
        /// What perfkit keeps that zstd removes: inputs whose output the
        /// run overwrote.
        kept: &'static [&'static str],
    }
    let xy: &[(&str, &[u8])] = &[("x/f", b"xx\n"), ("y/f", b"yyyy\n")];
    let cases = [
        Case {
            files: xy,
            args: &["-f", "--rm", "--output-dir-flat", "out", "x/f", "y/f"],
            ok: true,
            kept: &["x/f"],
        },
        Case {
            files: xy,
            args: &["--rm", "--output-dir-flat", "out", "x/f", "y/f"],
            ok: false,
            kept: &[],
        },
        Case {
            files: xy,
            args: &["-q", "--rm", "--output-dir-flat", "out", "x/f", "y/f"],
            ok: false,
            kept: &[],
        },
        Case {
            files: xy,
            args: &["--output-dir-flat", "out", "x/f", "y/f"],
            ok: false,
            kept: &[],
        },
        Case {
            files: xy,
            args: &["-f", "--output-dir-flat", "out", "x/f", "y/f"],
            ok: true,
            kept: &[],
        },
        // -r: the two come from walking one folder.
        Case {
            files: &[("d/x/f", b"1\n"), ("d/y/f", b"22\n")],
            args: &["-r", "-f", "--rm", "--output-dir-flat", "out", "d"],
            ok: true,
            kept: &["d/x/f"],
        },
        // Decompressing: x/f.zst and y/f.zst both into out/f.
        Case {
            files: xy,
            args: &[
                "-d",
                "-f",
                "--rm",
                "--output-dir-flat",
                "out",
                "x/f.zst",
                "y/f.zst",
            ],
            ok: true,
            kept: &["x/f.zst"],
        },
        Case {
            files: xy,
            args: &[
                "-d",
                "--rm",
                "--output-dir-flat",
                "out",
                "x/f.zst",
                "y/f.zst",
            ],
            ok: false,
            kept: &[],
        },
    ];
    let warning = |o: &std::process::Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| l.starts_with("WARNING: Two files"))
            .map(str::to_owned)
            .collect()
    };
    for (n, case) in cases.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let mut left = Vec::new();
        let mut outs = Vec::new();
        for side in ["zstd", "perfkit"] {
            let d = dir.path().join(side);
            // zstd 1.5.4 makes no output folder.
            std::fs::create_dir_all(d.join("out")).unwrap();
            for (path, data) in case.files {
                let p = d.join(path);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, data).unwrap();
            }
            if case.args.contains(&"-d") {
                for f in ["x/f", "y/f"] {
                    ok(Command::new("zstd").args(["-q", "--rm", f]), &d);
                }
            }
            let mut cmd = if side == "zstd" {
                Command::new("zstd")
            } else {
                let mut c = perfkit();
                c.arg("compress");
                c
            };
            let out = cmd
                .args(case.args)
                .current_dir(&d)
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            left.push(tree(&d));
            outs.push(out);
        }
        let (theirs, ours) = (&outs[0], &outs[1]);
        let why = format!(
            "case {n} {:?}: zstd said {:?}, perfkit {:?}",
            case.args,
            String::from_utf8_lossy(&theirs.stderr),
            String::from_utf8_lossy(&ours.stderr)
        );
        assert_eq!(theirs.status.success(), case.ok, "{why}");
        assert_eq!(
            ours.status.code(),
            Some(if case.ok { 0 } else { 1 }),
            "{why}"
        );
        assert_eq!(warning(ours), warning(theirs), "{why}");
        if !case.ok {
            assert!(
                String::from_utf8_lossy(&ours.stderr).contains("already exists; not overwritten"),
                "{why}"
            );
        }
        // What zstd leaves, plus the inputs it lost.
        let mut expect = left[0].clone();
        for kept in case.kept {
            assert!(
                !expect.iter().any(|(p, _)| p == kept),
                "{why}: zstd kept {kept} too"
            );
            let data = case
                .files
                .iter()
                .find(|(p, _)| kept.trim_end_matches(".zst") == *p)
                .unwrap()
                .1;
            expect.push((kept.to_string(), data.to_vec()));
        }
        expect.sort();
        assert_eq!(left[1], expect, "{why}");
    }
}

/// Issue 63.2 on the paths zstd does not warn about: with `-f --rm`, no
/// input's data is lost when outputs meet. `a.zst` and `a.gz` both
/// decompress to `a` (the first input stays, its output replaced);
/// `compress f f.zst` would write f's frame over the input `f.zst`
/// (refused; `f.zst` is compressed and removed, `f` stays); a file given
/// by two paths (through a link to its folder) is removed once; mirrored
/// outputs of `x/a/f` and `./x/a/f` are one file. Each input's data is
/// checked to be in some file afterwards. perfkit used to remove `a.zst`
/// and the original `f.zst`.
#[test]
fn rm_loses_no_input_when_outputs_meet() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |args: &[&str]| {
        perfkit()
            .args(args)
            .current_dir(d)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let read = |p: &str| std::fs::read(d.join(p)).unwrap();
    let unzstd = |p: &str| zstdkit::decompress(&read(p)).unwrap();

    // a.zst and a.gz into a.
    std::fs::write(d.join("a"), b"from the zst\n").unwrap();
    ok(perfkit().args(["compress", "-q", "--rm", "a"]), d);
    std::fs::write(d.join("a"), b"from the gz\n").unwrap();
    ok(
        perfkit().args(["compress", "-q", "--rm", "--format=gzip", "a"]),
        d,
    );
    let out = run(&["decompress", "-f", "--rm", "a.zst", "a.gz"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read("a"), b"from the gz\n");
    assert_eq!(unzstd("a.zst"), b"from the zst\n", "a.zst was removed");
    assert!(!d.join("a.gz").exists());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("WARNING: Two files have the same output")
    );

    // An output that is another input.
    std::fs::write(d.join("f"), b"plain f\n").unwrap();
    std::fs::write(d.join("f.zst"), b"not a frame, f.zst's own data\n").unwrap();
    let out = run(&["compress", "-q", "-f", "--rm", "f", "f.zst"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("f: f.zst is also an input of this run; not overwritten"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read("f"), b"plain f\n");
    assert_eq!(unzstd("f.zst.zst"), b"not a frame, f.zst's own data\n");
    assert!(!d.join("f.zst").exists());

    // One file by two paths, and mirrored twice.
    std::fs::create_dir_all(d.join("x/a")).unwrap();
    std::os::unix::fs::symlink("x", d.join("l")).unwrap();
    std::fs::write(d.join("x/a/g"), b"g\n").unwrap();
    let out = run(&["compress", "-q", "-f", "--rm", "x/a/g", "l/a/g"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(unzstd("x/a/g.zst"), b"g\n");
    assert!(!d.join("x/a/g").exists());
    std::fs::write(d.join("x/a/h"), b"h\n").unwrap();
    let out = run(&[
        "compress",
        "-q",
        "-f",
        "--rm",
        "--output-dir-mirror",
        "m",
        "x/a/h",
        "./x/a/h",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(unzstd("m/x/a/h.zst"), b"h\n");
    assert!(!d.join("x/a/h").exists());
}
