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
        .find(|p| p.ends_with(perfkit::corpus::LARGE_NAME))
        .unwrap();
    let original = std::fs::read(big).unwrap();
    for flags in [
        &["--recipe", "fast"][..],
        &["--recipe", "balanced", "-T2"],
        &["-l", "3", "--long"],
        &["-l", "-5"],
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
    assert!(String::from_utf8_lossy(&refused.stderr).contains("window exceeds the memory limit"));
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

/// A frame that needs a 2^28 window and declares its 256 KiB size: `zstd -d`
/// refuses it at its default limit and accepts it with `--long=28`; so must
/// we, whatever the decoding path.
#[test]
fn the_window_limit_agrees_with_zstd() {
    if !have("zstd", "zstd") {
        return;
    }
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x80, (28 - 10) << 3];
    frame.extend_from_slice(&(256u32 << 10).to_le_bytes());
    // Two RLE blocks of 128 KiB of b'a', the second one last.
    frame.extend_from_slice(&[0x02, 0x00, 0x10, b'a', 0x03, 0x00, 0x10, b'a']);
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("wide.zst");
    std::fs::write(&f, &frame).unwrap();

    let theirs = Command::new("zstd")
        .args(["-d", "-c", "-q"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(!theirs.status.success(), "zstd -d accepted a 2^28 window");
    let ours = perfkit()
        .args(["decompress", "-c"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(ours.status.code(), Some(1));
    let err = String::from_utf8_lossy(&ours.stderr);
    assert!(err.contains("window exceeds the memory limit"), "{err}");
    assert!(ours.stdout.is_empty());

    let want = vec![b'a'; 256 << 10];
    let theirs = ok(Command::new("zstd")
        .args(["-d", "-c", "-q", "--long=28"])
        .arg(&f))
    .stdout;
    assert!(theirs == want);
    let ours = ok(perfkit().args(["decompress", "-c", "--long=28"]).arg(&f)).stdout;
    assert!(ours == want);
    // The library's one-shot call follows the same limit as its stream.
    assert!(matches!(
        zstdkit::decompress(&frame),
        Err(zstdkit::Error::WindowTooLarge { limit: 27, .. })
    ));
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
