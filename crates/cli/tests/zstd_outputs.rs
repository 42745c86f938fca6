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
        std::fs::write(d.join("f"), perfkit_testkit::noise::noise(100_000, 3)).unwrap();
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
