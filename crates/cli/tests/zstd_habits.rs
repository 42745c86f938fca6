//! zstd's habits beyond its flags: the lines it prints at its default
//! verbosity, its refusal to read a terminal, `-r`, `--exclude-compressed`,
//! `--format=gzip`. The reference `zstd` (and `gzip`) run beside perfkit on
//! the same inputs, and their outputs, exit codes and what they leave on
//! disk are compared.

mod interop;

use interop::{have, listing, perfkit};
use std::path::Path;
use std::process::{Command, Output};

fn run(cmd: &mut Command, dir: &Path) -> Output {
    cmd.current_dir(dir).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Random bytes: stored as raw blocks by either library, so both tools'
/// frames have the same size and their lines must match byte for byte.
fn random(len: usize, seed: u64) -> Vec<u8> {
    perfkit_testkit::noise::noise(len, seed)
}

#[test]
fn the_ratio_lines_are_zstds() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, bytes) in [
        ("empty", Vec::new()),
        ("five", b"hello".to_vec()),
        ("random", random(300_000, 7)),
        ("kib", random(1024, 9)),
    ] {
        std::fs::write(d.join(name), &bytes).unwrap();
        for (args, what) in [
            (vec!["-3", "-f", name], "compress"),
            (
                vec!["-d", "-f", "-o", "back", &format!("{name}.zst")],
                "decompress",
            ),
            (vec!["-t", &format!("{name}.zst")], "test"),
        ] {
            let theirs = run(Command::new("zstd").args(&args), d);
            let ours = run(perfkit().arg("compress").args(&args), d);
            assert_eq!(ours.status.code(), theirs.status.code(), "{what} {name}");
            assert_eq!(stderr(&ours), stderr(&theirs), "{what} {name}");
        }
    }
    // Several inputs: the totals alone; -q: nothing; stdout: nothing.
    for args in [
        vec!["-3", "-f", "five", "random"],
        vec!["-d", "-f", "five.zst", "random.zst"],
        vec!["-q", "-3", "-f", "five"],
        vec!["-3", "-c", "random"],
        vec!["-d", "-c", "random.zst"],
    ] {
        let theirs = run(Command::new("zstd").args(&args), d);
        let ours = run(perfkit().arg("compress").args(&args), d);
        assert_eq!(stderr(&ours), stderr(&theirs), "{args:?}");
        assert_eq!(ours.stdout, theirs.stdout, "{args:?}");
    }
    // A compressible input: the same line but for the size each library's
    // frame came to.
    std::fs::write(d.join("text"), "perfkit and zstd\n".repeat(4000)).unwrap();
    let shape = |o: &Output| {
        let line = stderr(o);
        let (head, tail) = line.split_once('(').unwrap();
        let (input, _) = tail.split_once("=>").unwrap();
        (
            head[..22].to_string(),
            input.to_string(),
            line.ends_with(", text.zst) \n"),
        )
    };
    let theirs = run(Command::new("zstd").args(["-3", "-f", "text"]), d);
    let ours = run(perfkit().args(["compress", "-3", "-f", "text"]), d);
    assert_eq!(shape(&ours), shape(&theirs));
    // Nothing else was left behind: no temporary, no stray output.
    assert_eq!(
        listing(d),
        [
            "back",
            "empty",
            "empty.zst",
            "five",
            "five.zst",
            "kib",
            "kib.zst",
            "random",
            "random.zst",
            "text",
            "text.zst"
        ]
    );
}

/// `script` runs `command` on a pseudo-terminal (its stdin a terminal);
/// the transcript and the command's own exit status.
fn on_a_terminal(command: &str, dir: &Path) -> (String, Option<i32>) {
    let out = Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).replace('\r', ""),
        out.status.code(),
    )
}

#[test]
fn a_terminal_on_stdin_is_refused_as_zstd_refuses_it() {
    if !have("zstd", "zstd") || !have("script", "bsdutils") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pk = env!("CARGO_BIN_EXE_perfkit");
    for args in ["", "-d", "-c", "-"] {
        let (theirs, their_code) = on_a_terminal(&format!("zstd {args}"), dir.path());
        let (ours, our_code) = on_a_terminal(&format!("{pk} compress {args}"), dir.path());
        assert_eq!(theirs, "stdin is a console, aborting\n", "{args}");
        assert_eq!(ours, "perfkit: stdin is a console, aborting\n", "{args}");
        assert_eq!(our_code, their_code, "{args}");
    }
    assert!(listing(dir.path()).is_empty());
}

/// A small tree: text at two depths, a file already compressed, a `.gz`,
/// and a symbolic link (which -r skips).
fn tree(root: &Path) {
    std::fs::create_dir_all(root.join("sub/deep")).unwrap();
    std::fs::write(root.join("a.txt"), "alpha\n".repeat(500)).unwrap();
    std::fs::write(root.join("sub/b.txt"), "beta\n".repeat(900)).unwrap();
    std::fs::write(root.join("sub/deep/c.gz"), random(2000, 3)).unwrap();
    std::fs::write(root.join("sub/deep/d.zst"), random(100, 5)).unwrap();
    std::os::unix::fs::symlink("../a.txt", root.join("sub/link.txt")).unwrap();
}

/// Every path under `root` (relative, sorted), with each file's bytes
/// decompressed when it is a `.zst` (so frames of two libraries compare
/// by what they hold).
fn contents(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
                out.push((rel, Vec::new()));
            } else if meta.file_type().is_symlink() {
                out.push((rel, b"link".to_vec()));
            } else if rel.ends_with(".zst") {
                let plain = Command::new("zstd")
                    .args(["-d", "-c", "-q"])
                    .arg(&p)
                    .output()
                    .unwrap();
                out.push((rel, plain.stdout));
            } else {
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn recursion_and_exclude_compressed_follow_zstd() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for args in [
        &["-r", "-q"][..],
        &["-r", "-q", "--exclude-compressed"],
        &["-q", "--exclude-compressed", "a.txt", "sub/deep/c.gz"],
    ] {
        let (theirs, ours) = (d.join("theirs"), d.join("ours"));
        for t in [&theirs, &ours] {
            let _ = std::fs::remove_dir_all(t);
            tree(t);
        }
        let dirs: &[&str] = if args.contains(&"-r") { &["."] } else { &[] };
        let t = run(Command::new("zstd").args(args).args(dirs), &theirs);
        let o = run(perfkit().arg("compress").args(args).args(dirs), &ours);
        assert_eq!(o.status.code(), t.status.code(), "{args:?}: {}", stderr(&o));
        assert_eq!(contents(&ours), contents(&theirs), "{args:?}");
        // And back: each tool decompresses its own tree's frames (the
        // inputs are still there, so -f).
        if args.contains(&"-r") {
            for t in [&theirs, &ours] {
                for e in std::fs::read_dir(t).unwrap() {
                    let p = e.unwrap().path();
                    if p.extension().is_some_and(|x| x == "txt") {
                        std::fs::remove_file(p).unwrap();
                    }
                }
            }
            let t = run(
                Command::new("zstd").args(["-d", "-r", "-q", "-f", "."]),
                &theirs,
            );
            let o = run(perfkit().args(["decompress", "-r", "-q", "-f", "."]), &ours);
            assert_eq!(
                o.status.code(),
                t.status.code(),
                "-d {args:?}: {}",
                stderr(&o)
            );
            assert_eq!(contents(&ours), contents(&theirs), "-d {args:?}");
        }
    }
    // One output for several inputs, without -f and with no one to say
    // yes, is refused by both, the trees untouched.
    let before = contents(&d.join("ours"));
    let o = run(
        perfkit().args(["compress", "-r", "-o", "x.zst", "."]),
        &d.join("ours"),
    );
    let t = run(
        Command::new("zstd").args(["-r", "-o", "x.zst", "."]),
        &d.join("theirs"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(t.status.code(), Some(1), "{}", stderr(&t));
    assert!(
        stderr(&o).contains("Proceed? (y/n): Aborting..."),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&t).contains("Proceed? (y/n): Aborting..."),
        "{}",
        stderr(&t)
    );
    assert_eq!(contents(&d.join("ours")), before);
}

#[test]
fn gzip_format_both_ways_as_zstd_and_gzip_read_it() {
    if !have("zstd", "zstd") || !have("gzip", "gzip") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = "gzip habits\n".repeat(3000);
    for side in ["theirs", "ours"] {
        std::fs::create_dir(d.join(side)).unwrap();
        std::fs::write(d.join(side).join("a.txt"), &text).unwrap();
        std::fs::write(d.join(side).join("b.bin"), random(5000, 11)).unwrap();
    }
    let t = run(
        Command::new("zstd").args(["--format=gzip", "-q", "a.txt", "b.bin"]),
        &d.join("theirs"),
    );
    let o = run(
        perfkit().args(["compress", "--format=gzip", "-q", "a.txt", "b.bin"]),
        &d.join("ours"),
    );
    assert_eq!(o.status.code(), t.status.code(), "{}", stderr(&o));
    assert_eq!(listing(&d.join("ours")), listing(&d.join("theirs")));
    // gzip reads what we wrote.
    for name in ["a.txt", "b.bin"] {
        let plain = Command::new("gzip")
            .args(["-d", "-c"])
            .arg(d.join("ours").join(format!("{name}.gz")))
            .output()
            .unwrap();
        assert!(plain.status.success());
        assert_eq!(
            plain.stdout,
            std::fs::read(d.join("ours").join(name)).unwrap()
        );
    }
    // We read what gzip wrote, two members end to end included, into the
    // name zstd derives.
    let member = Command::new("gzip")
        .args(["-c", "-n"])
        .arg(d.join("ours/a.txt"))
        .output()
        .unwrap();
    std::fs::write(
        d.join("two.gz"),
        [member.stdout.clone(), member.stdout].concat(),
    )
    .unwrap();
    let o = run(perfkit().args(["decompress", "-q", "two.gz"]), d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("two")).unwrap(),
        text.repeat(2)
    );
    // A cut gzip stream fails in one line, exit 1, and leaves no output.
    let whole = std::fs::read(d.join("ours/a.txt.gz")).unwrap();
    for side in ["theirs", "ours"] {
        std::fs::write(d.join(side).join("cut.gz"), &whole[..whole.len() / 2]).unwrap();
    }
    let t = run(
        Command::new("zstd").args(["-d", "-q", "cut.gz"]),
        &d.join("theirs"),
    );
    let o = run(
        perfkit().args(["decompress", "-q", "cut.gz"]),
        &d.join("ours"),
    );
    assert_eq!(o.status.code(), t.status.code(), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert_eq!(listing(&d.join("ours")), listing(&d.join("theirs")));
}

#[test]
fn benchmark_mode_gives_each_level_a_row() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("t.txt"), "benchmark me\n".repeat(5000)).unwrap();
    let o = run(
        perfkit().args(["compress", "-b1", "-e4", "-i0", "--json", "t.txt"]),
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = doc["sections"][0]["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["level 1", "level 2", "level 3", "level 4"]);
    for (level, r) in (1..).zip(rows) {
        // Each row's size is that of the file's frame at that level, as
        // the file tool writes it.
        let frame = run(
            perfkit().args(["compress", &format!("-{level}"), "-c", "t.txt"]),
            d,
        );
        assert_eq!(
            r["compressed_bytes"].as_f64(),
            Some(frame.stdout.len() as f64),
            "{r}"
        );
        let ratio = 65_000.0 / frame.stdout.len() as f64;
        assert!((r["ratio"].as_f64().unwrap() - ratio).abs() < 0.01, "{r}");
    }
    // -b alone is zstd's level 3; the report flags belong to -b only.
    let o = run(
        perfkit().args(["compress", "-b", "-i0", "--json", "t.txt"]),
        d,
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["sections"][0]["rows"][0]["name"], "level 3");
    let o = run(perfkit().args(["compress", "--json", "t.txt"]), d);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--json applies to benchmark mode (-b#) only"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("t.txt.zst").exists());
    // -e# and -i# without -b are ignored, as zstd ignores them: the
    // file is compressed.
    for tool in [Command::new("zstd"), perfkit()] {
        let mut cmd = tool;
        if cmd.get_program() != "zstd" {
            cmd.arg("compress");
        }
        let o = run(cmd.args(["-q", "-f", "-e3", "-i1", "t.txt"]), d);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let back = zstdkit::decompress(&std::fs::read(d.join("t.txt.zst")).unwrap()).unwrap();
        assert_eq!(back, std::fs::read(d.join("t.txt")).unwrap());
        std::fs::remove_file(d.join("t.txt.zst")).unwrap();
    }
}

#[test]
fn seekable_files_are_plain_zstd_to_zstd() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data: Vec<u8> = "a seekable line of text\n".repeat(40_000).into_bytes();
    std::fs::write(d.join("in"), &data).unwrap();
    // From a file, and from a pipe (the table is written at the end).
    let o = run(
        perfkit().args(["compress", "-q", "--seekable", "--frame-size", "100K", "in"]),
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        Command::new("sh").args([
            "-c",
            &format!(
                "{} compress -q --seekable --no-check --frame-size 64K < in > piped.zst",
                env!("CARGO_BIN_EXE_perfkit")
            ),
        ]),
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // zstd -l counts the table's skippable frame among the frames too.
    for (file, frames) in [("in.zst", 11), ("piped.zst", 16)] {
        let plain = run(Command::new("zstd").args(["-d", "-c", file]), d);
        assert!(plain.status.success(), "{file}: {}", stderr(&plain));
        assert!(plain.stdout == data, "{file}");
        let list = run(Command::new("zstd").args(["-l", file]), d);
        let line = String::from_utf8_lossy(&list.stdout)
            .lines()
            .nth(1)
            .unwrap()
            .to_string();
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            (cols[0], cols[1]),
            (&*frames.to_string(), "1"),
            "{file}: {line}"
        );
    }
    // perfkit's listing adds what the seek table says.
    let list = run(perfkit().args(["compress", "-l", "in.zst", "piped.zst"]), d);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        text.contains("  seekable: 10 frames of 102400 bytes, checksums in the seek table\n"),
        "{text}"
    );
    assert!(
        text.contains("  seekable: 15 frames of 65536 bytes\n"),
        "{text}"
    );
    let o = run(perfkit().args(["compress", "--frame-size", "1M", "in"]), d);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_range_of_a_seekable_file_reads_only_its_frames() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data: Vec<u8> = (0..2_000_000u32)
        .flat_map(|i| (i / 7).to_le_bytes())
        .collect();
    std::fs::write(d.join("big"), &data).unwrap();
    let o = run(
        perfkit().args(["compress", "-q", "--seekable", "--frame-size", "64K", "big"]),
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        perfkit().args(["decompress", "-v", "--range", "1M..1M", "big.zst"]),
        d,
    );
    assert!(o.status.success() && o.stdout.is_empty(), "{}", stderr(&o));
    let o = run(
        perfkit().args(["decompress", "-v", "--range", "4000000..4100000", "big.zst"]),
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == data[4_000_000..4_100_000]);
    // 100,000 bytes span at most 3 frames of 64 KiB: what was read is a
    // few frames and the table, never the file.
    let said = stderr(&o);
    let read: u64 = said
        .split(", ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    let whole = std::fs::metadata(d.join("big.zst")).unwrap().len();
    assert!(read * 10 < whole, "{read} of {whole}: {said}");
    let o = run(
        perfkit().args(["decompress", "--range", "1K..2K", "-o", "part", "big.zst"]),
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(d.join("part")).unwrap() == data[1024..2048]);
    // Past the end, from a pipe, a file without a table: one line each,
    // exit 1, nothing written.
    for (args, what) in [
        (
            vec!["decompress", "--range", "7M..9M", "-o", "x", "big.zst"],
            "past the data's end",
        ),
        (
            vec!["decompress", "--range", "0..1", "-o", "x", "big"],
            "not seekable",
        ),
    ] {
        let o = run(perfkit().args(&args), d);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains(what), "{}", stderr(&o));
        assert!(!d.join("x").exists());
    }
    let o = run(
        Command::new("sh").args([
            "-c",
            &format!(
                "{} decompress --range 0..1 < big.zst",
                env!("CARGO_BIN_EXE_perfkit")
            ),
        ]),
        d,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("needs a regular file"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn flags_that_cannot_combine_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("f"), b"some bytes").unwrap();
    for args in [
        &["compress", "--format=gzip", "--patch-from=f", "f"][..],
        &["compress", "--format=gzip", "--seekable", "f"],
        &["decompress", "--range", "0..1", "-r", "f"],
        &["decompress", "--range", "0..1", "-t", "f"],
        &["decompress", "--range", "0..1", "--patch-from=f", "f"],
        // A part's flags without the part: refused before anything runs.
        &["bench", "--only", "fix", "--recipes", "fast"],
        &["bench", "--only", "zstd", "--keep", "kept"],
    ] {
        let o = run(perfkit().args(args), d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(listing(d), ["f"]);
}

/// Text-like runs between noise: frames that cost different times, so
/// workers finish out of order.
fn mixed(len: usize) -> Vec<u8> {
    let noise = random(len, 7);
    (0..len)
        .map(|i| {
            if (i / 50_000) % 3 == 0 {
                noise[i]
            } else {
                b"several frames, one order\n"[i % 26]
            }
        })
        .collect()
}

#[test]
fn several_frames_decode_on_two_threads_from_pzstd_seekable_and_concatenated_files() {
    if !have("zstd", "zstd") || !have("pzstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = mixed(6 << 20);
    std::fs::write(d.join("in"), &data).unwrap();
    // Seekable frames compressed on three threads: the same bytes as on one.
    for (threads, out) in [("1", "one.zst"), ("3", "three.zst")] {
        let o = run(
            perfkit()
                .args(["compress", "-q", "--seekable", "--frame-size", "256K"])
                .args(["-T", threads, "in", "-o", out]),
            d,
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let seekable = std::fs::read(d.join("three.zst")).unwrap();
    assert!(seekable == std::fs::read(d.join("one.zst")).unwrap());
    // pzstd's own output, which must hold several frames for the test to
    // mean anything (zstd -l counts its skippable frames too).
    let o = run(
        Command::new("pzstd").args(["-q", "-p", "2", "-1", "in", "-o", "p.zst"]),
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let list = run(Command::new("zstd").args(["-l", "p.zst"]), d);
    let frames: u64 = String::from_utf8_lossy(&list.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap();
    assert!(frames >= 4, "pzstd wrote {frames} frames");
    // Two .zst files end to end.
    let mut cat = zstdkit::compress(&data[..1 << 20], zstdkit::Recipe::Fast).unwrap();
    cat.extend(zstdkit::compress(&data[1 << 20..], zstdkit::Recipe::Fast).unwrap());
    std::fs::write(d.join("cat.zst"), &cat).unwrap();
    for file in ["three.zst", "p.zst", "cat.zst"] {
        let o = run(perfkit().args(["decompress", "-T", "2", "-c", file]), d);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        assert!(o.stdout == data, "{file}");
        // Every frame went to a worker: none was too large to hold.
        let o = run(
            perfkit().args(["decompress", "-v", "-T", "2", "-t", file]),
            d,
        );
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(" frames decoded on 2 threads, 0 of them in order"),
            "{file}: {}",
            stderr(&o)
        );
    }
    // A damaged frame: one line naming it and where it starts, exit 1, and
    // no output file left behind.
    let table = zstdkit::seekable::SeekTable::parse(&seekable).unwrap();
    let at: u64 = table.entries[..9]
        .iter()
        .map(|e| u64::from(e.compressed))
        .sum();
    let mut bad = seekable.clone();
    let mid = at as usize + table.entries[9].compressed as usize / 2;
    for b in &mut bad[mid..mid + 8] {
        *b ^= 0x5A;
    }
    std::fs::write(d.join("bad.zst"), &bad).unwrap();
    let o = run(
        perfkit().args(["decompress", "-T", "2", "bad.zst", "-o", "bad"]),
        d,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let said = stderr(&o);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains(&format!("frame 9 at byte {at}")), "{said}");
    assert!(!d.join("bad").exists());
}

#[test]
fn a_seek_table_that_lies_about_boundaries_or_sizes_is_named_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = mixed(300_000);
    std::fs::write(d.join("in"), &data).unwrap();
    let o = run(
        perfkit().args(["compress", "-q", "--seekable", "--frame-size", "64K", "in"]),
        d,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let file = std::fs::read(d.join("in.zst")).unwrap();
    let table = zstdkit::seekable::SeekTable::parse(&file).unwrap();
    let entries_at = file.len() - table.encode().len() + 8;
    let frame1_at = u64::from(table.entries[0].compressed);
    let field = |entry: usize, at: usize| entries_at + entry * 12 + at;
    let add = |bytes: &mut Vec<u8>, at: usize, delta: i32| {
        let v = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        bytes[at..at + 4].copy_from_slice(&v.wrapping_add_signed(delta).to_le_bytes());
    };
    // Boundaries moved by a byte (the sizes still add up to the file), and
    // a decompressed size one too large.
    let mut moved = file.clone();
    add(&mut moved, field(0, 0), 1);
    add(&mut moved, field(1, 0), -1);
    let mut grown = file.clone();
    add(&mut grown, field(1, 4), 1);
    for (name, bytes, frame) in [("moved.zst", moved, 0), ("grown.zst", grown, 1)] {
        std::fs::write(d.join(name), &bytes).unwrap();
        // From the start, so the frames before the lie are written first.
        let o = run(
            perfkit().args(["decompress", "--range", "0..200000", "-o", "x", name]),
            d,
        );
        let said = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {said}");
        assert_eq!(said.lines().count(), 1, "{name}: {said}");
        let at = if frame == 0 { 0 } else { frame1_at };
        assert!(
            said.contains(&format!("frame {frame}")) && said.contains(&format!("byte {at}")),
            "{name}: {said}"
        );
        assert!(!d.join("x").exists(), "{name}: partial output left");
    }
}

/// Issue 49.1: zstd's short flags in clusters and repeated, as zstd
/// 1.5.4's parser reads them (a level among other flags, a number after
/// `-T`, `-o` taking the next argument from inside a cluster, a flag
/// given twice), each command line run by the real zstd and by perfkit
/// on the same files: the same exit code and, decoded, the same output
/// on stdout and in the files written.
#[test]
fn short_flag_clusters_and_repeats_read_as_zstd_reads_them() {
    if !have("zstd", "zstd") {
        return;
    }
    let input = mixed(300_000);
    let cases: &[&[&str]] = &[
        &["-19c", "x"],
        &["-c19", "x"],
        &["-3fc", "x"],
        &["-19T2", "-c", "x"],
        &["-19fo", "y", "x"],
        &["-qq", "-c", "x"],
        &["-c", "-q", "-c", "x"],
        &["-kf", "x"],
        &["-dc", "x.zst"],
        &["-cd", "x.zst"],
        &["-dfo", "z", "x.zst"],
    ];
    // What a run leaves: its exit code, stdout decoded (compressed output
    // is decoded by the real zstd; a decoder's output is taken as it is)
    // and each file it wrote, decoded the same way.
    let decoded = |bytes: &[u8]| -> Vec<u8> {
        if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            let mut z = Command::new("zstd")
                .args(["-dcq"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = z.stdin.take().unwrap();
            let owned = bytes.to_vec();
            let feeder = std::thread::spawn(move || {
                use std::io::Write;
                let _ = stdin.write_all(&owned);
            });
            let out = z.wait_with_output().unwrap();
            feeder.join().unwrap();
            out.stdout
        } else {
            bytes.to_vec()
        }
    };
    let outcome = |tool: &mut Command, args: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("x"), &input).unwrap();
        assert!(
            run(Command::new("zstd").args(["-q", "x", "-o", "x.zst"]), d)
                .status
                .success()
        );
        let before = listing(d);
        let out = run(tool.args(args), d);
        let mut written: Vec<(String, Vec<u8>)> = listing(d)
            .into_iter()
            .filter(|f| !before.contains(f) || f == "x.zst")
            .map(|f| {
                let bytes = std::fs::read(d.join(&f)).unwrap_or_default();
                (f, decoded(&bytes))
            })
            .collect();
        written.sort();
        (
            out.status.code(),
            decoded(&out.stdout),
            written,
            stderr(&out),
        )
    };
    for args in cases {
        let (z_code, z_out, z_files, z_err) = outcome(&mut Command::new("zstd"), args);
        let mut pk = perfkit();
        pk.arg("compress");
        let (p_code, p_out, p_files, p_err) = outcome(&mut pk, args);
        assert_eq!(p_code, z_code, "{args:?}: perfkit {p_err} / zstd {z_err}");
        assert!(p_out == z_out, "{args:?}: stdout differs once decoded");
        assert_eq!(
            p_files.iter().map(|(f, _)| f).collect::<Vec<_>>(),
            z_files.iter().map(|(f, _)| f).collect::<Vec<_>>(),
            "{args:?}: files"
        );
        assert!(
            p_files == z_files,
            "{args:?}: a written file differs once decoded"
        );
    }
    // The level in a cluster is the level: `-19c` writes what `--level 19
    // -c` writes.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x"), &input).unwrap();
    let clustered = run(perfkit().args(["compress", "-19c", "x"]), dir.path());
    let spelled = run(
        perfkit().args(["compress", "--level", "19", "-c", "x"]),
        dir.path(),
    );
    assert!(clustered.stdout == spelled.stdout);
    let default = run(perfkit().args(["compress", "-c", "x"]), dir.path());
    assert!(
        clustered.stdout != default.stdout,
        "-19c fell back to the default level"
    );
}

/// `member` (gzip's own, no optional field) with every optional header
/// field spliced in: an extra field of `extra` bytes, a name and a comment
/// of `name` bytes each, and the header's CRC-16.
fn with_long_fields(member: &[u8], extra: usize, name: usize) -> Vec<u8> {
    assert_eq!(member[3], 0, "gzip -n writes no optional field");
    let mut header = member[..10].to_vec();
    header[3] = 0b0001_1110;
    header.extend_from_slice(&u16::try_from(extra).unwrap().to_le_bytes());
    header.extend((0..extra).map(|i| (i % 253) as u8));
    for first in [b'a', b'A'] {
        header.extend((0..name).map(|i| first + (i % 26) as u8));
        header.push(0);
    }
    let mut crc = flate2::Crc::new();
    crc.update(&header);
    header.extend_from_slice(&(crc.sum() as u16).to_le_bytes());
    [&header[..], &member[10..]].concat()
}

/// Issue 63.6: gzip members whose name or comment is 64 KiB or more, or
/// whose extra field is 65,535 bytes, decode as gzip decodes them (they
/// were "not a valid gzip stream"); cut inside the long name, both fail
/// at once instead of waiting or decoding a part.
#[test]
fn gzip_headers_of_any_length_decode_as_gzip_decodes_them() {
    if !have("gzip", "gzip") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = "long gzip headers\n".repeat(20_000);
    std::fs::write(d.join("t"), &text).unwrap();
    let member = run(Command::new("gzip").args(["-n", "-c", "t"]), d).stdout;
    let long = with_long_fields(&member, 65_535, 100 << 10);
    let two = [long.clone(), with_long_fields(&member, 10, 70_000)].concat();
    for (name, bytes) in [("long.gz", &long), ("two.gz", &two)] {
        std::fs::write(d.join(name), bytes).unwrap();
        let theirs = run(Command::new("gzip").args(["-dc", name]), d);
        assert!(theirs.status.success(), "gzip: {}", stderr(&theirs));
        for args in [&["decompress", "-c", name][..], &["compress", "-dc", name]] {
            let ours = run(perfkit().args(args), d);
            assert!(ours.status.success(), "{args:?}: {}", stderr(&ours));
            assert!(ours.stdout == theirs.stdout, "{args:?}: other bytes");
        }
        let ours = run(perfkit().args(["decompress", "-t", name]), d);
        assert!(ours.status.success(), "-t {name}: {}", stderr(&ours));
    }
    // Cut in the middle of the 100 KiB name.
    std::fs::write(d.join("cut.gz"), &long[..10 + 2 + 65_535 + 50_000]).unwrap();
    let theirs = run(Command::new("gzip").args(["-dc", "cut.gz"]), d);
    assert!(!theirs.status.success());
    let ours = interop::output_within(
        perfkit()
            .args(["decompress", "-c", "cut.gz"])
            .current_dir(d),
        20,
    );
    assert_eq!(ours.status.code(), Some(1), "{}", stderr(&ours));
    assert!(ours.stdout.is_empty());
    assert!(
        stderr(&ours).contains("ends inside a gzip member"),
        "{}",
        stderr(&ours)
    );
}
