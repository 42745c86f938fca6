//! The reference `zstd` CLI is the oracle: it must decode every frame
//! perfkit writes, and perfkit must decode every frame it writes, byte for
//! byte, for every recipe, on the corpus.

mod interop;

use interop::{corpus, have, ok, perfkit};
use std::process::Command;
use zstdkit::Recipe;

#[test]
fn every_recipe_both_directions_on_the_corpus() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path(), false);
    assert_eq!(files.len(), 15);
    for recipe in Recipe::ALL {
        for f in &files {
            let original = std::fs::read(f).unwrap();
            // perfkit → zstd
            let ours = ok(perfkit()
                .args(["compress", "-c", "--recipe", recipe.name()])
                .arg(f))
            .stdout;
            let back = ok(Command::new("zstd")
                .args(["-d", "-c", "-q"])
                .arg("-")
                .stdin_bytes(&ours))
            .stdout;
            assert!(
                back == original,
                "zstd decoded perfkit's {recipe} frame of {} wrongly",
                f.display()
            );
            // zstd → perfkit, same level and strategy
            let theirs = ok(Command::new("zstd")
                .args([
                    "-c",
                    "-q",
                    "--ultra",
                    &format!("-{}", recipe.level()),
                    &format!("--zstd=strategy={}", recipe.strategy().id()),
                ])
                .arg(f))
            .stdout;
            let back = ok(perfkit().args(["decompress", "-c"]).stdin_bytes(&theirs)).stdout;
            assert!(
                back == original,
                "perfkit decoded zstd's {recipe} frame of {} wrongly",
                f.display()
            );
        }
    }
}

#[test]
fn large_file_threads_long_mode_and_files_on_disk() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files = corpus(dir.path(), true);
    let big = files
        .iter()
        .find(|p| p.ends_with(perfkit_corpus::LARGE_NAME))
        .unwrap();
    let original = std::fs::read(big).unwrap();
    for flags in [
        &["--recipe", "fast"][..],
        &["--recipe", "balanced", "-T2"],
        &["--level", "3", "--long"],
        &["--level", "-5"],
        &["-5"],
    ] {
        let out = dir.path().join("big.zst");
        ok(perfkit()
            .arg("compress")
            .args(flags)
            .arg("-f")
            .arg(big)
            .arg("-o")
            .arg(&out));
        ok(Command::new("zstd")
            .args(["-t", "-q", "--long=27"])
            .arg(&out));
        let back = ok(Command::new("zstd")
            .args(["-d", "-c", "-q", "--long=27"])
            .arg(&out))
        .stdout;
        assert!(back == original, "flags {flags:?}");
    }
    // A multithreaded zstd frame, and one with a 2^28 window that needs --long=28 to decode.
    let t2 = dir.path().join("t2.zst");
    ok(Command::new("zstd")
        .args(["-q", "-f", "-T2", "-3"])
        .arg(big)
        .arg("-o")
        .arg(&t2));
    let back = dir.path().join("back");
    ok(perfkit()
        .args(["decompress", "-f"])
        .arg(&t2)
        .arg("-o")
        .arg(&back));
    assert!(std::fs::read(&back).unwrap() == original);
    let long = dir.path().join("long.zst");
    // Through stdin, so zstd cannot shrink the window to the known file size.
    let frame = ok(Command::new("zstd")
        .args(["-q", "-c", "-1", "--long=28"])
        .stdin(std::fs::File::open(big).unwrap()))
    .stdout;
    std::fs::write(&long, frame).unwrap();
    let refused = perfkit()
        .args(["decompress", "-c"])
        .arg(&long)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("exceeds the memory limit"));
    let back = ok(perfkit().args(["decompress", "-c", "--long=28"]).arg(&long)).stdout;
    assert!(back == original);
}

#[test]
fn dictionaries_are_interchangeable_with_zstd() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut samples = Vec::new();
    for i in 0..200 {
        let p = dir.path().join(format!("s{i}.json"));
        std::fs::write(
            &p,
            format!(
                r#"{{"id":{i},"user":"u{}","kind":"order","qty":{},"note":"sample record"}}"#,
                i % 9,
                i * 3 % 17
            ),
        )
        .unwrap();
        samples.push(p);
    }
    let dict = dir.path().join("dict");
    ok(perfkit()
        .args(["compress", "--train", "--maxdict", "4096"])
        .args(&samples)
        .arg("-o")
        .arg(&dict));
    let original = std::fs::read(&samples[5]).unwrap();
    let ours = ok(perfkit()
        .args(["compress", "-c", "-D"])
        .arg(&dict)
        .arg(&samples[5]))
    .stdout;
    let back = ok(Command::new("zstd")
        .args(["-d", "-c", "-q", "-D"])
        .arg(&dict)
        .arg("-")
        .stdin_bytes(&ours))
    .stdout;
    assert_eq!(back, original);
    let theirs = ok(Command::new("zstd")
        .args(["-c", "-q", "-D"])
        .arg(&dict)
        .arg(&samples[5]))
    .stdout;
    let back = ok(perfkit()
        .args(["decompress", "-c", "-D"])
        .arg(&dict)
        .stdin_bytes(&theirs))
    .stdout;
    assert_eq!(back, original);
}

/// A frame of 256 KiB of `a` (two RLE blocks) that declares its size and a
/// window of 2^`log` x (1 + `mantissa`/8) bytes.
fn wide_frame(log: u8, mantissa: u8) -> Vec<u8> {
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x80, ((log - 10) << 3) | mantissa];
    frame.extend_from_slice(&(256u32 << 10).to_le_bytes());
    frame.extend_from_slice(&[0x02, 0x00, 0x10, b'a', 0x03, 0x00, 0x10, b'a']);
    frame
}

/// The memory limit agrees with `zstd -d` frame by frame and limit by limit,
/// including limits that are not powers of two; whatever the decoding path.
#[test]
fn the_window_limit_agrees_with_zstd() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let want = vec![b'a'; 256 << 10];
    let w256 = dir.path().join("w256.zst");
    let w160 = dir.path().join("w160.zst");
    std::fs::write(&w256, wide_frame(28, 0)).unwrap();
    let w128 = dir.path().join("w128.zst");
    std::fs::write(&w160, wide_frame(27, 2)).unwrap();
    std::fs::write(&w128, wide_frame(27, 0)).unwrap();
    for (flags, file, accepted) in [
        (&[][..], &w256, false),
        (&[], &w160, false),
        (&["--long=28"], &w256, true),
        (&["--memory=256MiB"], &w256, true),
        (&["--memory=200MB"], &w256, false),
        (&["--memory=200MB"], &w160, true),
        (&["--memory=160MB"], &w160, true),
        (&["--memory=159MB"], &w160, false),
        (&["--memory=160MB", "--long=28"], &w256, false),
        (&["--long=28", "--memory=160MB"], &w256, false),
        (&[], &w128, true),
        (&["--long=26"], &w128, false),
        (&["-M", "64MiB"], &w128, false),
    ] {
        let theirs = Command::new("zstd")
            .args(["-d", "-c", "-q"])
            .args(flags)
            .arg(file)
            .output()
            .unwrap();
        let ours = perfkit()
            .args(["decompress", "-c"])
            .args(flags)
            .arg(file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&ours.stderr);
        let case = format!("{flags:?} {}: {err}", file.display());
        assert_eq!(theirs.status.success(), accepted, "zstd {case}");
        assert_eq!(ours.status.success(), accepted, "perfkit {case}");
        if accepted {
            assert!(theirs.stdout == want && ours.stdout == want, "{case}");
        } else {
            assert_eq!(ours.status.code(), Some(1), "{case}");
            assert!(err.contains("exceeds the memory limit"), "{case}");
            assert!(ours.stdout.is_empty());
        }
    }
    // The refusal says what would admit the frame, as zstd's does.
    let out = perfkit()
        .arg("decompress")
        .arg("-c")
        .arg(&w160)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "perfkit: {}: frame window of 167772160 bytes exceeds the memory limit of 134217728 bytes at byte 0; \
             allow it with --memory=160MiB or --long=28\n",
            w160.display()
        )
    );
    // The library's one-shot call follows the same limit as its stream.
    assert!(matches!(
        zstdkit::decompress(&wide_frame(28, 0)),
        Err(zstdkit::Error::WindowTooLarge {
            limit: 0x800_0000,
            ..
        })
    ));
}

#[test]
fn memory_limits_outside_what_zstd_decodes_are_usage_errors() {
    for (bad, flag) in [
        ("--memory=1000", "--memory"),
        ("--memory=3G", "--memory"),
        ("--memory=lots", "--memory"),
        // zstd's window logs run from 10 to 31.
        ("--long=9", "--long"),
        ("--long=40", "--long"),
    ] {
        let out = perfkit().args(["decompress", bad, "-"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("invalid value") && err.contains(flag),
            "{bad}: {err}"
        );
    }
}

/// Feeding stdin from a byte slice, on a thread so large inputs cannot
/// deadlock against a full stdout pipe.
trait StdinBytes {
    fn stdin_bytes(&mut self, data: &[u8]) -> &mut Self;
}

impl StdinBytes for Command {
    fn stdin_bytes(&mut self, data: &[u8]) -> &mut Self {
        let f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut &f, data).unwrap();
        std::io::Seek::rewind(&mut &f).unwrap();
        self.stdin(f)
    }
}

#[test]
fn training_on_too_little_says_what_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one");
    std::fs::write(&one, b"hello\n").unwrap();
    // zstd itself refuses this input too (it says "nb of samples too low").
    let theirs = Command::new("zstd")
        .args(["-q", "--train"])
        .arg(&one)
        .arg("-o")
        .arg(dir.path().join("theirs"))
        .output()
        .unwrap();
    assert!(!theirs.status.success());
    // Under -q as zstd's: its three warning lines are hidden, the error
    // stays one line.
    let out = perfkit()
        .args(["compress", "-q", "--train"])
        .arg(&one)
        .arg("-o")
        .arg(dir.path().join("ours"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("1 given, 6 bytes in all"), "{err}");
    assert!(!dir.path().join("ours").exists());
}
