//! `perfkit zip`'s store-or-deflate decision beside Info-ZIP's zip 3.0:
//! on a table of inputs (an incompressible head before text among them),
//! written to a file and to a pipe, the archives are within 1 % of
//! Info-ZIP's size, and Info-ZIP's unzip reads every one of ours.

mod interop;

use interop::perfkit;
use std::path::Path;
use std::process::{Command, Stdio};

fn have_info_zip() -> bool {
    perfkit_testkit::interop::have("zip", "-v", "apt-get install zip")
        && perfkit_testkit::interop::have("unzip", "-v", "apt-get install unzip")
}

fn noise(len: usize, seed: u64) -> Vec<u8> {
    perfkit_testkit::noise::noise(len, seed)
}

/// Real text: this workspace's Rust sources, in name order, the first
/// `len` bytes from the `skip`th file on (a synthetic text would measure
/// the deflaters on a language nobody writes: zlib-rs, perfkit's, and
/// Info-ZIP's own deflate differ most on word salad).
fn text(len: usize, skip: usize) -> Vec<u8> {
    fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, files);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")),
        &mut files,
    );
    files.sort();
    let mut out = Vec::with_capacity(len);
    for f in files.iter().cycle().skip(skip) {
        if out.len() >= len {
            break;
        }
        out.extend_from_slice(&std::fs::read(f).unwrap());
    }
    out.truncate(len);
    out
}

/// Runs `cmd` in `dir`, its stdout through a pipe into `dir/out` when
/// `to` is given (a pipe, so the writer cannot seek), and fails the test
/// if it fails.
fn run(cmd: &mut Command, dir: &Path, to: Option<&str>) {
    cmd.current_dir(dir).stdin(Stdio::null());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(to) = to {
        std::fs::write(dir.join(to), &out.stdout).unwrap();
    }
}

#[test]
fn archives_are_as_small_as_info_zips_whatever_the_head_of_a_file() {
    if !have_info_zip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mixed_chunks: Vec<u8> = (0..16)
        .flat_map(|i| {
            if i % 2 == 0 {
                noise(64 << 10, i)
            } else {
                text(64 << 10, i as usize * 7)
            }
        })
        .collect();
    let cases: [(&str, Vec<u8>); 7] = [
        (
            "an incompressible head",
            [noise(100_000, 1), text(2 << 20, 0)].concat(),
        ),
        (
            "an incompressible tail",
            [text(1 << 20, 30), noise(200_000, 4)].concat(),
        ),
        ("noise", noise(300_000, 5)),
        ("small noise", noise(1000, 6)),
        ("text", text(1 << 20, 60)),
        ("small text", text(3000, 90)),
        ("alternating 64 KiB", mixed_chunks),
    ];
    for (what, bytes) in &cases {
        std::fs::write(d.join("input"), bytes).unwrap();
        for piped in [false, true] {
            for f in ["ours.zip", "theirs.zip"] {
                let _ = std::fs::remove_file(d.join(f));
            }
            let (target, to) = if piped {
                ("-", [Some("ours.zip"), Some("theirs.zip")])
            } else {
                ("", [None, None])
            };
            let name = |zip: &'static str| if piped { target } else { zip };
            run(
                perfkit().args(["zip", "-q", name("ours.zip"), "input"]),
                d,
                to[0],
            );
            run(
                Command::new("zip").args(["-q", name("theirs.zip"), "input"]),
                d,
                to[1],
            );
            let size = |f: &str| std::fs::metadata(d.join(f)).unwrap().len();
            let (ours, theirs) = (size("ours.zip"), size("theirs.zip"));
            let how = if piped { "to a pipe" } else { "to a file" };
            eprintln!("{what}, {how}: perfkit {ours} bytes, Info-ZIP {theirs}");
            assert!(
                ours * 100 <= theirs * 101,
                "{what}, {how}: our archive is {ours} bytes, Info-ZIP's {theirs}"
            );
            run(Command::new("unzip").args(["-tq", "ours.zip"]), d, None);
        }
    }
}
