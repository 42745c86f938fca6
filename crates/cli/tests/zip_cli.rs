//! `perfkit zip` / `perfkit unzip` through the binary: round trips (file,
//! stdout, stdin, parallel, AES, zstd), one-line errors, and no archive left
//! behind by a failed zip.

mod interop;

use std::path::Path;
use std::process::{Command, Stdio};

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

fn ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    fn walk(base: &Path, d: &Path, v: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if m.is_dir() {
                walk(base, &p, v);
            } else if m.file_type().is_symlink() {
                v.push((
                    rel,
                    std::fs::read_link(&p)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                        .into_bytes(),
                ));
            } else {
                v.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    walk(root, root, &mut v);
    v.sort();
    v
}

fn sample(dir: &Path) {
    std::fs::create_dir_all(dir.join("src/sub")).unwrap();
    let text: Vec<u8> = (0..300_000u32)
        .map(|i| b"perfkit zip cli test "[(i % 21) as usize])
        .collect();
    std::fs::write(dir.join("src/a.txt"), &text).unwrap();
    std::fs::write(
        dir.join("src/sub/b.bin"),
        (0..70_000u32)
            .map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes()[3])
            .collect::<Vec<_>>(),
    )
    .unwrap();
    std::fs::write(dir.join("src/empty"), b"").unwrap();
    std::os::unix::fs::symlink("a.txt", dir.join("src/link")).unwrap();
}

#[test]
fn round_trips_in_every_mode() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    sample(d);
    let want = tree(&d.join("src"));
    let cases: &[&[&str]] = &[
        &[],
        &["--jobs", "2"],
        &["--method", "store"],
        &["--method", "zstd", "--level", "3"],
        &["--encrypt", "aes256", "--password-env", "ZIPPW"],
        &[
            "--encrypt",
            "aes128",
            "--password-env",
            "ZIPPW",
            "--jobs",
            "2",
        ],
    ];
    for (i, extra) in cases.iter().enumerate() {
        let zip = d.join(format!("t{i}.zip"));
        ok(perfkit()
            .current_dir(d)
            .env("ZIPPW", "pw")
            .args(["zip"])
            .arg(&zip)
            .args(["-r", "-y", "src"])
            .args(*extra));
        let out = d.join(format!("x{i}"));
        ok(perfkit()
            .env("ZIPPW", "pw")
            .args(["unzip", "--password-env", "ZIPPW"])
            .arg(&zip)
            .arg("-d")
            .arg(&out));
        assert_eq!(tree(&out.join("src")), want, "case {extra:?}");
        let test = ok(perfkit()
            .env("ZIPPW", "pw")
            .args(["unzip", "-t", "--password-env", "ZIPPW"])
            .arg(&zip));
        assert!(String::from_utf8_lossy(&test).contains("No errors detected"));
    }
    // To stdout and back from stdin (streaming: the symlink arrives as a file).
    let bytes = ok(perfkit().current_dir(d).args(["zip", "-", "-r", "src"]));
    let mut child = perfkit()
        .args(["unzip", "-", "-d"])
        .arg(d.join("streamed"))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &bytes).unwrap();
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert_eq!(
        std::fs::read(d.join("streamed/src/a.txt")).unwrap(),
        std::fs::read(d.join("src/a.txt")).unwrap()
    );
    // Data from stdin as an entry named "-" (unknown size: streamed layout).
    let mut child = perfkit()
        .args(["zip", "-", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let data = std::fs::read(d.join("src/a.txt")).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &data));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(out.status.success());
    std::fs::write(d.join("stdin.zip"), &out.stdout).unwrap();
    let p = ok(perfkit().arg("unzip").arg("-p").arg(d.join("stdin.zip")));
    assert_eq!(p, std::fs::read(d.join("src/a.txt")).unwrap());
    // -p writes regular files' data only (not link targets).
    let p = ok(perfkit().arg("unzip").arg("-p").arg(d.join("t0.zip")));
    assert_eq!(p.len(), 300_000 + 70_000);
}

#[test]
fn failures_are_one_line_and_leave_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    sample(d);
    // Only a missing name: Info-ZIP's warning and its "Nothing to do!"
    // on stdout, exit 1 (Info-ZIP: 12).
    let out = perfkit()
        .current_dir(d)
        .args(["zip", "out.zip", "missing"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err, "");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "\tzip warning: name not matched: missing\n\nzip error: Nothing to do! (out.zip)\n"
    );
    assert_eq!(interop::listing(d), ["src"], "no archive or temporary left");
    // A corrupt archive: one line naming it, exit 1.
    std::fs::write(d.join("bad.zip"), b"PK\x03\x04 not really a zip").unwrap();
    let out = perfkit()
        .current_dir(d)
        .args(["unzip", "-t", "bad.zip"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("perfkit: reading bad.zip: "), "{err}");
    // Without --overwrite, asks as Info-ZIP asks; with no answer (end of
    // input) keeps the file and fails.
    ok(perfkit().current_dir(d).args(["zip", "a.zip", "src/a.txt"]));
    let out = perfkit()
        .current_dir(d)
        .args(["unzip", "a.zip", "-d", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("treating as \"[N]one\""));
    ok(perfkit()
        .current_dir(d)
        .args(["unzip", "a.zip", "-d", ".", "--overwrite"]));
}
