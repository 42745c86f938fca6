//! One table of zstd's, gzip's and Info-ZIP's habits, each run through
//! the real tool (zstd 1.5.4, gzip, Info-ZIP Zip 3.0 and UnZip 6.00, as
//! `cargo xtask ci` installs them) and through perfkit, on identical
//! copies of the same inputs, comparing what the docs say is the same:
//! exit codes, output bytes (or what they decode to), listings, the files
//! left on disk. The differences that remain are listed in
//! `docs/compress.md` and `docs/zip.md`; the habits with more to them
//! have their own files (`zstd_options.rs`, `info_zip_habits.rs`...).

mod interop;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use interop::{have, perfkit};

/// What must agree between the two runs of a case.
#[derive(Debug, Clone, Copy)]
enum Same {
    /// The exit status.
    Exit,
    /// Standard output, byte for byte.
    Stdout,
    /// Standard output once zstd (or gzip, for a `.gz` case) decodes it.
    DecodedStdout,
    /// This file's bytes, as zstd or gzip (by its suffix) decode them.
    Decoded(&'static str),
    /// This file, byte for byte.
    File(&'static str),
    /// This archive's entry names (`unzip -Z1`, sorted) and each entry's
    /// data (`unzip -p`).
    Archive(&'static str),
    /// Every file under the working directory, by path and contents.
    Tree,
}

/// One habit: the real tool's command line and perfkit's, and what must
/// agree.
struct Case {
    theirs: &'static [&'static str],
    ours: &'static [&'static str],
    same: &'static [Same],
}

use Same::*;

const CASES: &[Case] = &[
    // zstd
    case(
        &["zstd", "-q", "a.txt"],
        &["compress", "-q", "a.txt"],
        &[Exit, Decoded("a.txt.zst"), Tree],
    ),
    case(
        &["zstd", "-q", "-d", "z.zst", "-o", "x"],
        &["decompress", "-q", "z.zst", "-o", "x"],
        &[Exit, File("x")],
    ),
    case(
        &["zstd", "-q", "-dc", "z.zst"],
        &["decompress", "-q", "-c", "z.zst"],
        &[Exit, Stdout],
    ),
    case(
        &["zstd", "-q", "-c", "a.txt"],
        &["compress", "-q", "-c", "a.txt"],
        &[Exit, DecodedStdout],
    ),
    case(
        &["zstd", "-q", "-19", "a.txt", "-o", "l.zst"],
        &["compress", "-q", "-19", "a.txt", "-o", "l.zst"],
        &[Exit, Decoded("l.zst")],
    ),
    case(
        &["zstd", "-q", "-r", "d"],
        &["compress", "-q", "-r", "d"],
        &[Exit, Tree],
    ),
    case(
        &["zstd", "-q", "--rm", "b.bin"],
        &["compress", "-q", "--rm", "b.bin"],
        &[Exit, Tree],
    ),
    case(
        &["zstd", "-t", "-q", "z.zst"],
        &["decompress", "-t", "-q", "z.zst"],
        &[Exit, Stdout],
    ),
    case(
        &["zstd", "-t", "-q", "bad.zst"],
        &["decompress", "-t", "-q", "bad.zst"],
        &[Exit],
    ),
    case(
        &["zstd", "-l", "z.zst"],
        &["compress", "-l", "z.zst"],
        &[Exit, Stdout],
    ),
    case(
        &["zstd", "-q", "missing"],
        &["compress", "-q", "missing"],
        &[Exit, Tree],
    ),
    case(
        &["zstd", "-q", "a.txt", "-o", "z.zst"],
        &["compress", "-q", "a.txt", "-o", "z.zst"],
        &[Exit, File("z.zst")],
    ),
    case(
        &["zstd", "-q", "-f", "a.txt", "b.bin", "-o", "ab.zst"],
        &["compress", "-q", "-f", "a.txt", "b.bin", "-o", "ab.zst"],
        &[Exit, Decoded("ab.zst")],
    ),
    case(
        &["zstd", "-q", "--format=gzip", "a.txt"],
        &["compress", "-q", "--format=gzip", "a.txt"],
        &[Exit, Decoded("a.txt.gz")],
    ),
    case(
        &["zstd", "-q", "-19c", "a.txt"],
        &["compress", "-q", "-19c", "a.txt"],
        &[Exit, DecodedStdout],
    ),
    // gzip
    case(
        &["gzip", "-dc", "g.gz"],
        &["decompress", "-c", "g.gz"],
        &[Exit, Stdout],
    ),
    case(
        &["gzip", "-dk", "g.gz"],
        &["decompress", "-q", "g.gz"],
        &[Exit, Tree],
    ),
    // zip
    case(
        &["zip", "-q", "-r", "n.zip", "d", "a.txt"],
        &["zip", "-q", "-r", "n.zip", "d", "a.txt"],
        &[Exit, Archive("n.zip")],
    ),
    case(
        &["zip", "-q", "-j", "n.zip", "d/x1", "a.txt"],
        &["zip", "-q", "-j", "n.zip", "d/x1", "a.txt"],
        &[Exit, Archive("n.zip")],
    ),
    case(
        &["zip", "-q", "-r", "n.zip", "d", "-x", "d/sub/*"],
        &["zip", "-q", "-r", "n.zip", "d", "-x", "d/sub/*"],
        &[Exit, Archive("n.zip")],
    ),
    case(
        &["zip", "-q", "-r", "n.zip", "d", "-i", "*.txt"],
        &["zip", "-q", "-r", "n.zip", "d", "-i", "*.txt"],
        &[Exit, Archive("n.zip")],
    ),
    case(
        &["zip", "-q", "-0", "n.zip", "a.txt"],
        &["zip", "-q", "-0", "n.zip", "a.txt"],
        &[Exit, Archive("n.zip")],
    ),
    case(
        &["zip", "-q", "k.zip", "-d", "a.txt"],
        &["zip", "-q", "k.zip", "-d", "a.txt"],
        &[Exit, File("k.zip")],
    ),
    case(
        &["zip", "-q", "-u", "k.zip", "a.txt", "b.bin"],
        &["zip", "-q", "-u", "k.zip", "a.txt", "b.bin"],
        &[Exit, Archive("k.zip")],
    ),
    case(
        &["zip", "-q", "-m", "n.zip", "b.bin"],
        &["zip", "-q", "-m", "n.zip", "b.bin"],
        &[Exit, Archive("n.zip"), Tree],
    ),
    case(
        &["zip", "-q", "k.zip", "-d", "nothing"],
        &["zip", "-q", "k.zip", "-d", "nothing"],
        &[File("k.zip")],
    ),
    // unzip
    case(
        &["unzip", "-l", "k.zip"],
        &["unzip", "-l", "k.zip"],
        &[Exit, Stdout],
    ),
    case(
        &["unzip", "-v", "k.zip"],
        &["unzip", "-v", "k.zip"],
        &[Exit, Stdout],
    ),
    case(
        &["unzip", "-t", "k.zip"],
        &["unzip", "-t", "k.zip"],
        &[Exit, Stdout],
    ),
    case(
        &["unzip", "-tq", "k.zip"],
        &["unzip", "-tq", "k.zip"],
        &[Exit, Stdout],
    ),
    case(
        &["unzip", "-p", "k.zip", "a.txt"],
        &["unzip", "-p", "k.zip", "a.txt"],
        &[Exit, Stdout],
    ),
    case(
        &["unzip", "-Z", "k.zip"],
        &["unzip", "-Z", "k.zip"],
        &[Exit, Stdout],
    ),
    case(
        &["unzip", "-Z1", "k.zip"],
        &["unzip", "-Z1", "k.zip"],
        &[Exit, Stdout],
    ),
    case(
        &["unzip", "-o", "k.zip", "-d", "out"],
        &["unzip", "-o", "k.zip", "-d", "out"],
        &[Exit, Stdout, Tree],
    ),
    case(
        &["unzip", "-q", "-j", "k.zip", "-d", "out"],
        &["unzip", "-q", "-j", "k.zip", "-d", "out"],
        &[Exit, Tree],
    ),
    case(
        &["unzip", "-q", "k.zip", "d/*", "-x", "d/sub/*", "-d", "out"],
        &["unzip", "-q", "k.zip", "d/*", "-x", "d/sub/*", "-d", "out"],
        &[Exit, Tree],
    ),
    case(
        &["unzip", "-qq", "-n", "k.zip"],
        &["unzip", "-qq", "-n", "k.zip"],
        &[Exit, Tree],
    ),
];

const fn case(
    theirs: &'static [&'static str],
    ours: &'static [&'static str],
    same: &'static [Same],
) -> Case {
    Case { theirs, ours, same }
}

/// The inputs every case starts from: text, bytes, a folder, a frame
/// zstd wrote and one cut short, a gzip member and an archive Info-ZIP
/// wrote.
fn inputs(dir: &Path) {
    let text: String = (0..20_000)
        .map(|i| format!("line {i} of the input\n"))
        .collect();
    std::fs::write(dir.join("a.txt"), &text).unwrap();
    std::fs::write(dir.join("b.bin"), perfkit_testkit::noise::noise(70_000, 4)).unwrap();
    std::fs::create_dir_all(dir.join("d/sub")).unwrap();
    std::fs::write(dir.join("d/x1"), "x\n").unwrap();
    std::fs::write(dir.join("d/y.txt"), "y\n".repeat(500)).unwrap();
    std::fs::write(dir.join("d/sub/z.txt"), &text[..5000]).unwrap();
    ok(Command::new("zstd")
        .current_dir(dir)
        .args(["-q", "a.txt", "-o", "z.zst"]));
    let z = std::fs::read(dir.join("z.zst")).unwrap();
    std::fs::write(dir.join("bad.zst"), &z[..z.len() / 2]).unwrap();
    let gz = ok(Command::new("gzip").current_dir(dir).args(["-c", "a.txt"]));
    std::fs::write(dir.join("g.gz"), gz.stdout).unwrap();
    ok(Command::new("zip")
        .current_dir(dir)
        .args(["-q", "-r", "k.zip", "d", "a.txt"]));
    // Every file at one time, so that `-u` and listings see the same.
    let when = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    for f in files(dir) {
        let file = std::fs::File::options()
            .write(true)
            .open(dir.join(&f))
            .unwrap();
        file.set_modified(when).unwrap();
    }
}

fn ok(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for e in std::fs::read_dir(dir.join(&rel)).unwrap() {
            let e = e.unwrap();
            let r = rel.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                stack.push(r);
            } else {
                out.push(r);
            }
        }
    }
    out.sort();
    out
}

/// What the tool of `file`'s suffix decodes it to.
fn decode(dir: &Path, file: &str) -> Vec<u8> {
    let tool = if file.ends_with(".gz") {
        "gzip"
    } else {
        "zstd"
    };
    let o = Command::new(tool)
        .current_dir(dir)
        .args(["-dc", file])
        .output()
        .unwrap();
    assert!(o.status.success(), "{tool} -dc {file}");
    o.stdout
}

/// An archive's names and each entry's data, as Info-ZIP's unzip reads it.
fn archive(dir: &Path, zip: &str) -> Vec<(String, Vec<u8>)> {
    let names = Command::new("unzip")
        .current_dir(dir)
        .args(["-Z1", zip])
        .output()
        .unwrap();
    assert!(names.status.success(), "unzip -Z1 {zip}");
    let mut names: Vec<String> = String::from_utf8_lossy(&names.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let data = Command::new("unzip")
                .current_dir(dir)
                .args(["-p", zip, &n])
                .output()
                .unwrap();
            (n, data.stdout)
        })
        .collect()
}

fn run(dir: &Path, mut cmd: Command) -> Output {
    cmd.current_dir(dir)
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn each_habit_matches_the_real_tool() {
    let info_zip =
        |tool: &str| perfkit_testkit::interop::have(tool, "-v", &format!("apt-get install {tool}"));
    if !have("zstd", "zstd") || !have("gzip", "gzip") || !info_zip("zip") || !info_zip("unzip") {
        return;
    }
    let top = tempfile::tempdir().unwrap();
    let base = top.path().join("base");
    std::fs::create_dir(&base).unwrap();
    inputs(&base);
    for (i, c) in CASES.iter().enumerate() {
        let what = format!(
            "case {i}: {} / perfkit {}",
            c.theirs.join(" "),
            c.ours.join(" ")
        );
        let (theirs, ours) = (
            top.path().join(format!("t{i}")),
            top.path().join(format!("o{i}")),
        );
        for d in [&theirs, &ours] {
            ok(Command::new("cp").arg("-a").arg(&base).arg(d));
        }
        let mut real = Command::new(c.theirs[0]);
        real.args(&c.theirs[1..]);
        let mut mine = perfkit();
        mine.args(c.ours);
        let (t, o) = (run(&theirs, real), run(&ours, mine));
        let said = format!(
            "{what}\n  theirs: {:?} {}\n  ours: {:?} {}",
            t.status,
            String::from_utf8_lossy(&t.stderr),
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        for s in c.same {
            match *s {
                Exit => assert_eq!(o.status.code(), t.status.code(), "exit: {said}"),
                Stdout => assert!(
                    o.stdout == t.stdout,
                    "stdout: {said}\n{}\n---\n{}",
                    String::from_utf8_lossy(&t.stdout),
                    String::from_utf8_lossy(&o.stdout)
                ),
                DecodedStdout => {
                    let dec = |out: &[u8]| {
                        let mut z = Command::new("zstd")
                            .args(["-dc"])
                            .stdin(Stdio::piped())
                            .stdout(Stdio::piped())
                            .spawn()
                            .unwrap();
                        std::io::Write::write_all(z.stdin.as_mut().unwrap(), out).unwrap();
                        drop(z.stdin.take());
                        z.wait_with_output().unwrap().stdout
                    };
                    assert!(dec(&o.stdout) == dec(&t.stdout), "decoded stdout: {said}");
                }
                Decoded(f) => assert!(decode(&ours, f) == decode(&theirs, f), "{f}: {said}"),
                File(f) => assert!(
                    std::fs::read(ours.join(f)).ok() == std::fs::read(theirs.join(f)).ok(),
                    "{f}: {said}"
                ),
                Archive(z) => assert!(archive(&ours, z) == archive(&theirs, z), "{z}: {said}"),
                Tree => {
                    // Compressed files differ by encoder (the library is
                    // newer than the CLI, deflate is zlib-rs's): new ones
                    // are compared by what they decode to.
                    let tree = |d: &Path| -> Vec<(PathBuf, Vec<u8>)> {
                        files(d)
                            .into_iter()
                            .map(|f| {
                                let name = f.to_string_lossy().into_owned();
                                let new = !base.join(&f).exists();
                                let bytes = if !new {
                                    std::fs::read(d.join(&f)).unwrap()
                                } else if name.ends_with(".zst") || name.ends_with(".gz") {
                                    decode(d, &name)
                                } else if name.ends_with(".zip") {
                                    format!("{:?}", archive(d, &name)).into_bytes()
                                } else {
                                    std::fs::read(d.join(&f)).unwrap()
                                };
                                (f, bytes)
                            })
                            .collect()
                    };
                    let (a, b) = (tree(&ours), tree(&theirs));
                    let names = |v: &[(PathBuf, Vec<u8>)]| {
                        v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>()
                    };
                    assert_eq!(names(&a), names(&b), "tree: {said}");
                    assert!(a == b, "tree contents: {said}");
                }
            }
        }
    }
}
