//! zstd 1.5.4's frame options beside perfkit's, each run through both
//! tools on the same input: `--no-content-size`, `--rsyncable`, `-B#`,
//! `--zstd=` and `-o` with several inputs. The bundled zstd library is
//! newer than the CLI's, so frames are compared by what they say (their
//! header, their window, what a change to the input does to them) and by
//! what they decode to, not byte for byte.

mod interop;

use interop::{have, perfkit};
use std::path::Path;
use std::process::{Command, Output};

fn run(cmd: &mut Command, dir: &Path) -> Output {
    cmd.current_dir(dir).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `args` through zstd and through `perfkit compress`, writing
/// `theirs` and `ours` in `dir`; both must succeed.
fn both(dir: &Path, args: &[&str], theirs: &str, ours: &str) {
    let z = run(Command::new("zstd").args(args).args(["-o", theirs]), dir);
    let p = run(perfkit().arg("compress").args(args).args(["-o", ours]), dir);
    assert!(z.status.success(), "zstd {args:?}: {}", stderr(&z));
    assert!(p.status.success(), "perfkit {args:?}: {}", stderr(&p));
}

/// `zstd`, or `perfkit compress` for any other `tool`.
fn tool_named(tool: &str) -> Command {
    if tool == "zstd" {
        Command::new("zstd")
    } else {
        let mut c = perfkit();
        c.arg("compress");
        c
    }
}

/// What zstd decodes `file` in `dir` to.
fn decoded(dir: &Path, file: &str) -> Vec<u8> {
    let o = run(Command::new("zstd").args(["-dc", file]), dir);
    assert!(o.status.success(), "zstd -dc {file}: {}", stderr(&o));
    o.stdout
}

/// `zstd -lv`'s lines about `file` that name `what`.
fn listed(dir: &Path, file: &str, what: &str) -> Vec<String> {
    let o = run(Command::new("zstd").args(["-lv", file]), dir);
    assert!(o.status.success(), "zstd -lv {file}: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains(what))
        .map(str::to_owned)
        .collect()
}

/// Base64-like text from a seed: compresses to about three quarters, so
/// jobs and windows matter, and no two runs of it repeat.
fn text(len: usize, seed: u64) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = seed | 1;
    (0..len)
        .map(|i| {
            if i % 77 == 76 {
                return b'\n';
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ALPHABET[(x >> 58) as usize]
        })
        .collect()
}

#[test]
fn no_content_size_leaves_the_size_out_as_zstd_does() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = text(300_000, 1);
    std::fs::write(d.join("in"), &input).unwrap();
    for (flags, sized) in [
        (&["-q", "-f", "in"][..], true),
        (&["-q", "-f", "--no-content-size", "in"], false),
        (
            &["-q", "-f", "--no-content-size", "--content-size", "in"],
            true,
        ),
        (&["-q", "-f", "-T2", "--no-content-size", "in"], false),
    ] {
        both(d, flags, "theirs", "ours");
        // The frame header's descriptor: its top two bits are the
        // content-size field's width (0 with no single segment: none).
        let header = |f: &str| std::fs::read(d.join(f)).unwrap()[4];
        assert_eq!(header("ours"), header("theirs"), "{flags:?}");
        let size_lines = listed(d, "ours", "Decompressed Size");
        assert_eq!(
            size_lines,
            listed(d, "theirs", "Decompressed Size"),
            "{flags:?}"
        );
        assert_eq!(!size_lines.is_empty(), sized, "{flags:?}: {size_lines:?}");
        assert_eq!(decoded(d, "ours"), input, "{flags:?}");
    }
}

/// `--rsyncable`'s promise, checked on both tools: one byte put before
/// the input changes only the output's start, so most of the two
/// outputs' ends agree; without it, nothing after the change agrees.
#[test]
fn rsyncable_outputs_survive_an_insertion_as_zstds_do() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = text(8 << 20, 2);
    std::fs::write(d.join("a"), &input).unwrap();
    std::fs::write(d.join("b"), [&b"X"[..], &input].concat()).unwrap();
    // The common end, the 4-byte checksum (of different inputs) left out.
    let shared = |x: &str, y: &str| {
        let (x, y) = (
            std::fs::read(d.join(x)).unwrap(),
            std::fs::read(d.join(y)).unwrap(),
        );
        let (x, y) = (&x[..x.len() - 4], &y[..y.len() - 4]);
        let n = x
            .iter()
            .rev()
            .zip(y.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        n as f64 / x.len() as f64
    };
    // A job size of 1 MiB puts a sync point about every MiB (zstd's own
    // job size would leave few in 12 MiB).
    for (flags, synced) in [(&["-B1M"][..], false), (&["-B1M", "--rsyncable"][..], true)] {
        let args = |input: &'static str| [&["-q", "-f"][..], flags, &[input]].concat();
        both(d, &args("a"), "za", "pa");
        both(d, &args("b"), "zb", "pb");
        let (theirs, ours) = (shared("za", "zb"), shared("pa", "pb"));
        eprintln!("{flags:?}: common end zstd {theirs:.3}, perfkit {ours:.3}");
        if synced {
            assert!(theirs > 0.5 && ours > 0.5, "{theirs} {ours}");
            assert!((theirs - ours).abs() < 0.1, "{theirs} {ours}");
        } else {
            assert!(theirs < 0.05 && ours < 0.05, "{theirs} {ours}");
        }
        assert_eq!(decoded(d, "pb")[1..], input[..]);
    }
}

/// `-B#` sets the job size: a job size under the input's changes the
/// output where one over it does not, as with zstd, and `-B` in a
/// cluster's place (`-B1M`) and zstd's units (`KiB`) are read alike.
#[test]
fn job_sizes_cut_jobs_as_zstds_do() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = text(6 << 20, 3);
    std::fs::write(d.join("in"), &input).unwrap();
    let cases: [(&[&str], &str, &str); 3] = [
        (&["-T2"], "z0", "p0"),
        (&["-T2", "-B1M"], "z1", "p1"),
        (&["-T2", "-B1024KiB"], "z2", "p2"),
    ];
    for (flags, z, p) in cases {
        both(d, &[&["-q", "-f", "in"][..], flags].concat(), z, p);
        assert_eq!(decoded(d, p), input, "{flags:?}");
    }
    let read = |f: &str| std::fs::read(d.join(f)).unwrap();
    assert_ne!(read("z0"), read("z1"), "zstd: -B1M changes nothing here");
    assert_ne!(read("p0"), read("p1"), "perfkit: -B1M changed nothing");
    assert_eq!(read("z1"), read("z2"));
    assert_eq!(read("p1"), read("p2"));
}

#[test]
fn advanced_parameters_are_read_as_zstd_reads_them() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = text(4 << 20, 4);
    std::fs::write(d.join("in"), &input).unwrap();
    for list in [
        "--zstd=wlog=20",
        "--zstd=windowLog=21,chainLog=18,hashLog=17,searchLog=3,minMatch=5,targetLength=16,strategy=4",
        "--zstd=wlog=22,clog=18,hlog=17,slog=3,mml=5,tlen=16,strat=7",
        "--zstd=wlog=",
    ] {
        for level in ["-3", "-19"] {
            both(d, &["-q", "-f", level, list, "in"], "theirs", "ours");
            let window = listed(d, "ours", "Window Size");
            assert_eq!(window, listed(d, "theirs", "Window Size"), "{list} {level}");
            let size = |f: &str| std::fs::metadata(d.join(f)).unwrap().len() as f64;
            let ratio = size("ours") / size("theirs");
            assert!((0.97..1.03).contains(&ratio), "{list} {level}: {ratio}");
            assert_eq!(decoded(d, "ours"), input, "{list} {level}");
        }
    }
    // Lists zstd cannot read: it exits 1 with "Incorrect parameters";
    // perfkit refuses them as usage errors (exit 2), naming the list.
    for bad in ["foo=1", "wlog=20,", "wlog=2x", "strat=10"] {
        let flag = format!("--zstd={bad}");
        let z = run(
            Command::new("zstd").args(["-q", "-f", &flag, "in", "-o", "t"]),
            d,
        );
        let p = run(
            perfkit().args(["compress", "-q", "-f", &flag, "in", "-o", "t"]),
            d,
        );
        assert_ne!(z.status.code(), Some(0), "zstd took {bad}");
        assert_eq!(p.status.code(), Some(2), "{bad}: {}", stderr(&p));
        assert!(
            stderr(&p).contains(&format!("invalid advanced parameters '{bad}'")),
            "{bad}: {}",
            stderr(&p)
        );
    }
    // A value zstd itself refuses: both name zstd's reason.
    let z = run(
        Command::new("zstd").args(["-q", "-f", "--zstd=wlog=9", "in", "-o", "t"]),
        d,
    );
    let p = run(
        perfkit().args(["compress", "-q", "-f", "--zstd=wlog=9", "in", "-o", "pt"]),
        d,
    );
    assert!(
        stderr(&z).contains("Parameter is out of bound"),
        "{}",
        stderr(&z)
    );
    assert!(
        stderr(&p).contains("Parameter is out of bound"),
        "{}",
        stderr(&p)
    );
    assert_eq!(p.status.code(), Some(1));
    // Refused before any output is made (its own name: zstd's run may
    // have left its `t`).
    assert!(!d.join("pt").exists());
}

/// `-o FILE` with several inputs, both ways: every input goes into FILE
/// in order, with zstd's warning (not under `-q`), and `--rm` removes
/// nothing; an input that fails leaves no FILE.
#[test]
fn one_output_for_several_inputs_concatenates_as_zstd_does() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (x, y) = (text(200_000, 5), text(50_000, 6));
    let write = || {
        std::fs::write(d.join("x"), &x).unwrap();
        std::fs::write(d.join("y"), &y).unwrap();
    };
    write();
    let joined = [x.as_slice(), &y].concat();
    for flags in [
        &["-f"][..],
        &["-f", "--rm"],
        &["-f", "-q"],
        &["-f", "-q", "--rm"],
    ] {
        let args = [flags, &["x", "y"]].concat();
        let z = run(Command::new("zstd").args(&args).args(["-o", "z.zst"]), d);
        let p = run(
            perfkit().arg("compress").args(&args).args(["-o", "p.zst"]),
            d,
        );
        assert!(
            z.status.success() && p.status.success(),
            "{flags:?}: {}",
            stderr(&p)
        );
        assert!(d.join("x").exists() && d.join("y").exists(), "{flags:?}");
        assert_eq!(decoded(d, "p.zst"), joined, "{flags:?}");
        assert_eq!(decoded(d, "z.zst"), joined, "{flags:?}");
        // The warning's lines, the program's name and zstd's trailing
        // spaces aside; then the total (its sizes are each tool's own).
        let words = |o: &Output, name: &str| -> Vec<String> {
            stderr(o)
                .lines()
                .filter(|l| !l.contains("files compressed"))
                .map(|l| l.trim_end().replace(name, "FILE").replacen("zstd: ", "", 1))
                .map(|l| l.replacen("perfkit: ", "", 1))
                .collect()
        };
        assert_eq!(words(&p, "p.zst"), words(&z, "z.zst"), "{flags:?}");
        write();
    }
    // Without -f both ask first: a yes on stdin goes on, no answer (or
    // -q, which cannot ask) stops before anything is written.
    for (flags, answer, goes) in [
        (&[][..], "y\n", true),
        (&[][..], "", false),
        (&["-q"][..], "y\n", false),
    ] {
        for (tool, out) in [("zstd", "za.zst"), ("perfkit", "pa.zst")] {
            let mut cmd = tool_named(tool);
            let mut child = cmd
                .args(flags)
                .args(["x", "y", "-o", out])
                .current_dir(d)
                .stdin(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write as _;
            // Under -q neither tool reads the answer, and may be gone
            // before it is written: a broken pipe is no failure.
            let _ = child.stdin.take().unwrap().write_all(answer.as_bytes());
            let o = child.wait_with_output().unwrap();
            assert_eq!(
                o.status.success(),
                goes,
                "{tool} {flags:?} {answer:?}: {}",
                stderr(&o)
            );
            assert_eq!(d.join(out).exists(), goes, "{tool} {flags:?} {answer:?}");
            let asked = stderr(&o).contains("Proceed? (y/n): ");
            assert_eq!(asked, flags.is_empty(), "{tool} {flags:?}: {}", stderr(&o));
        }
        let _ = std::fs::remove_file(d.join("za.zst"));
        let _ = std::fs::remove_file(d.join("pa.zst"));
    }
    // Decoding: the same, into one file.
    for (tool, out) in [("zstd", "zd"), ("perfkit", "pd")] {
        let mut cmd = tool_named(tool);
        let o = run(cmd.args(["-q", "-d", "-f", "p.zst", "z.zst", "-o", out]), d);
        assert!(o.status.success(), "{tool}: {}", stderr(&o));
        assert_eq!(
            std::fs::read(d.join(out)).unwrap(),
            [joined.as_slice(), &joined].concat()
        );
    }
    // zstd keeps what it wrote before a missing input; perfkit writes no
    // file that holds less than was asked (docs/compress.md says so).
    let p = run(
        perfkit().args(["compress", "-q", "-f", "x", "missing", "y", "-o", "bad.zst"]),
        d,
    );
    assert_eq!(p.status.code(), Some(1));
    assert!(!d.join("bad.zst").exists());
    assert!(
        stderr(&p).contains("bad.zst: not written: an input failed"),
        "{}",
        stderr(&p)
    );
}

/// Every file under `root`, as paths below it, sorted.
fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// `--output-dir-flat` and `--output-dir-mirror`, both ways, beside
/// zstd: the same files in the same places, the same exit codes (a name
/// met twice in a flat directory, a mirrored path that climbs).
#[test]
fn output_directories_place_files_as_zstds_do() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (f, body) in [
        ("src/a.txt", "one"),
        ("src/sub/b.txt", "two"),
        ("src/sub/a.txt", "3"),
    ] {
        std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
        std::fs::write(d.join(f), body).unwrap();
    }
    let abs = d.join("src/sub/b.txt").display().to_string();
    // (arguments with OUT for the directory, exit code both give)
    let cases: [(&[&str], i32); 6] = [
        (
            &["--output-dir-flat", "OUT", "src/a.txt", "src/sub/b.txt"],
            0,
        ),
        (
            &["--output-dir-flat", "OUT", "src/a.txt", "src/sub/a.txt"],
            1,
        ),
        (
            &[
                "-f",
                "--output-dir-flat",
                "OUT",
                "src/a.txt",
                "src/sub/a.txt",
            ],
            0,
        ),
        (&["-r", "--output-dir-mirror", "OUT", "src"], 0),
        (&["--output-dir-mirror", "OUT", "../src/a.txt"], 1),
        (&["--output-dir-mirror", "OUT", &abs], 0),
    ];
    // A path that climbs is run from a sibling folder, where it names a
    // file that is there.
    std::fs::create_dir_all(d.join("x")).unwrap();
    for (args, code) in cases {
        for (tool, out) in [("zstd", "zout"), ("perfkit", "pout")] {
            // zstd 1.5.4 crashes when a flat directory is missing: both
            // start with it made.
            std::fs::create_dir_all(d.join(out)).unwrap();
            let args: Vec<String> = args.iter().map(|a| a.replace("OUT", out)).collect();
            let mut cmd = tool_named(tool);
            let cwd = if args.iter().any(|a| a.starts_with("../")) {
                d.join("x")
            } else {
                d.to_path_buf()
            };
            let args: Vec<String> = args
                .into_iter()
                .map(|a| {
                    if cwd != d && a == out {
                        format!("../{out}")
                    } else {
                        a
                    }
                })
                .collect();
            let o = run(cmd.arg("-q").args(&args), &cwd);
            assert_eq!(
                o.status.code(),
                Some(code),
                "{tool} {args:?}: {}",
                stderr(&o)
            );
        }
        let (z, p) = (tree(&d.join("zout")), tree(&d.join("pout")));
        assert_eq!(p, z, "{args:?}");
        for f in &p {
            let name = format!("pout/{f}");
            assert_eq!(decoded(d, &name), decoded(d, &format!("zout/{f}")), "{f}");
        }
        // And back: each tree decoded into a mirror of itself.
        if args.contains(&"-r") {
            for (tool, from, to) in [("zstd", "zout", "zback"), ("perfkit", "pout", "pback")] {
                let mut cmd = tool_named(tool);
                let o = run(
                    cmd.args(["-q", "-d", "-r", "--output-dir-mirror", to, from]),
                    d,
                );
                assert!(o.status.success(), "{tool}: {}", stderr(&o));
            }
            let strip = |t: Vec<String>| -> Vec<String> {
                t.into_iter()
                    .map(|f| f.split_once('/').unwrap().1.to_owned())
                    .collect()
            };
            assert_eq!(strip(tree(&d.join("pback"))), strip(tree(&d.join("zback"))));
            assert_eq!(
                std::fs::read(d.join("pback/pout/src/sub/b.txt")).unwrap(),
                b"two"
            );
        }
        for out in ["zout", "pout", "zback", "pback"] {
            let _ = std::fs::remove_dir_all(d.join(out));
        }
    }
    // Where zstd 1.5.4 crashes (a flat directory that is not there),
    // perfkit makes it.
    let o = run(
        perfkit().args([
            "compress",
            "-q",
            "--output-dir-flat",
            "new/dir",
            "src/a.txt",
        ]),
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(tree(&d.join("new")), ["dir/a.txt.zst"]);
}

/// `--format=gzip` beside zstd's gzip mode (zlib) at its default and at
/// the ends of gzip's scale, on text, source code and base64: never more
/// than 1 % larger, and what gzip decodes is the input.
#[test]
fn gzip_outputs_are_no_larger_than_zstds() {
    if !have("zstd", "zstd") || !have("gzip", "gzip") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lock = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock")).unwrap();
    let mut source = Vec::new();
    for f in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/src/cmd/compress")).unwrap() {
        source.extend(std::fs::read(f.unwrap().path()).unwrap_or_default());
    }
    for (what, input) in [
        ("Cargo.lock", lock),
        ("source", source),
        ("base64", text(1 << 20, 7)),
    ] {
        std::fs::write(d.join("in"), &input).unwrap();
        for level in [
            None,
            Some("-1"),
            Some("-3"),
            Some("-6"),
            Some("-9"),
            Some("-19"),
        ] {
            let args: Vec<&str> = ["-q", "-f", "--format=gzip"]
                .into_iter()
                .chain(level)
                .chain(["in"])
                .collect();
            both(d, &args, "z.gz", "p.gz");
            let size = |f: &str| std::fs::metadata(d.join(f)).unwrap().len() as f64;
            let ratio = size("p.gz") / size("z.gz");
            eprintln!("{what} {level:?}: {ratio:.4}");
            assert!(ratio <= 1.01, "{what} {level:?}: {ratio}");
            let o = run(Command::new("gzip").args(["-dc", "p.gz"]), d);
            assert!(o.status.success() && o.stdout == input, "{what} {level:?}");
        }
    }
}
