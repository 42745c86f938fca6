//! Equal work beside Info-ZIP (issue 64): `perfkit zip` at a level writes
//! an archive no larger than Info-ZIP zip 3.0's at the same level + 1 %, on
//! data found on this machine (shared libraries, packages' docs, this
//! repository's sources) and on generated data (a request log, the
//! corpus's JSON and source, where each piece's level is chosen by an
//! estimate of Info-ZIP's size, repeated text, a repeated random block),
//! one thread or two
//! (`--jobs 2`, the blocks compressed apart); and each archive reads back
//! byte for byte through Info-ZIP's unzip, Python's zipfile and perfkit's
//! own unzip. Most inputs are several MiB, so every entry is deflated in
//! several chained pieces; the short entries (400-700 kB, one piece each)
//! are also held to no more work than `-6` asks on JSON.

mod interop;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use interop::perfkit;

/// Bytes taken of each input found on the machine: several 1 MiB pieces
/// each, and Info-ZIP -9 still well under a second on them.
const TAKE: usize = 5 << 20;

fn have_peers() -> bool {
    perfkit_testkit::interop::have("zip", "-v", "apt-get install zip")
        && perfkit_testkit::interop::have("unzip", "-v", "apt-get install unzip")
        && perfkit_testkit::interop::have("python3", "--version", "apt-get install python3")
}

/// The regular files under `dir` (links not followed), in name order.
fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    paths.sort();
    for p in paths {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            files_under(&p, keep, out);
        } else if meta.is_file() && keep(&p) {
            out.push(p);
        }
    }
}

/// The first [`TAKE`] bytes of the files under `dirs` that `keep` keeps,
/// one after the other in name order, as a tar of them would hold them.
fn found(dirs: &[&str], keep: &dyn Fn(&Path) -> bool) -> Vec<u8> {
    let mut files = Vec::new();
    for d in dirs {
        files_under(Path::new(d), keep, &mut files);
    }
    let mut out = Vec::with_capacity(TAKE);
    for f in files {
        if out.len() >= TAKE {
            break;
        }
        if let Ok(bytes) = std::fs::read(&f) {
            out.extend_from_slice(&bytes[..bytes.len().min(TAKE - out.len())]);
        }
    }
    out
}

/// `n` bytes of a web service's request log: lines alike but for a few
/// digits, where a deep match search walks many equal candidates (issue
/// 64: 1.3x Info-ZIP's CPU there at libdeflate's level 7).
fn request_log(n: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut out = Vec::with_capacity(n + 200);
    let mut i = 0u64;
    while out.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let status = [200, 200, 200, 304, 404][(x % 5) as usize];
        out.extend_from_slice(
            format!(
                "2026-11-28 05:{:02}:{:02} INFO server.request id={i} path=/api/v1/items/{} status={status} bytes={}\n",
                i / 60 % 60,
                i % 60,
                (x >> 8) % 500,
                (x >> 20) % 9000 + 100
            )
            .as_bytes(),
        );
        i += 1;
    }
    out.truncate(n);
    out
}

fn has_ext(p: &Path, exts: &[&str]) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| exts.contains(&e))
}

/// Runs `cmd` in `dir` and fails the test if it fails; its stdout.
fn run(cmd: &mut Command, dir: &Path) -> Vec<u8> {
    cmd.current_dir(dir).stdin(Stdio::null());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `input` of `dir` reads back as `data` through Info-ZIP's unzip (-t and
/// -p), Python's zipfile and perfkit unzip -p.
fn reads_back(dir: &Path, zip: &str, data: &[u8], what: &str) {
    run(Command::new("unzip").args(["-tq", zip]), dir);
    let peers = [
        (
            "Info-ZIP unzip",
            run(Command::new("unzip").args(["-p", zip, "input"]), dir),
        ),
        (
            "Python zipfile",
            run(
                Command::new("python3").args([
                    "-c",
                    "import sys, zipfile\n\
                     z = zipfile.ZipFile(sys.argv[1])\n\
                     assert z.testzip() is None\n\
                     sys.stdout.buffer.write(z.read('input'))",
                    zip,
                ]),
                dir,
            ),
        ),
        (
            "perfkit unzip",
            run(perfkit().args(["unzip", "-p", zip, "input"]), dir),
        ),
    ];
    for (reader, bytes) in peers {
        assert!(bytes == data, "{what}: {reader} reads other bytes back");
    }
}

#[test]
fn archives_are_no_larger_than_info_zips_at_the_same_level_on_found_and_generated_data() {
    if !have_peers() {
        return;
    }
    let repo = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let noise = perfkit_testkit::noise::noise(3 << 20, 7);
    let sources = found(&[repo], &|p| {
        has_ext(p, &["rs", "md", "toml"]) && !p.components().any(|c| c.as_os_str() == "target")
    });
    let cut = sources.len().min(2 << 20);
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "shared libraries",
            found(&["/usr/lib/x86_64-linux-gnu", "/usr/lib"], &|p| {
                p.to_str().is_some_and(|s| s.contains(".so"))
            }),
        ),
        ("packages' docs", found(&["/usr/share/doc"], &|_| true)),
        ("this repository's sources", sources.clone()),
        (
            "sources with an incompressible stretch",
            [&sources[..cut], &noise, &sources[cut..]].concat(),
        ),
        ("a request log", request_log(6 << 20)),
        // Text where each piece's level is chosen by an estimate of
        // Info-ZIP's size (issue 64): libdeflate's 5 is 1.5 % over it on
        // the JSON and 8 % on the source, its 6 2.4 % over on the source.
        (
            "the corpus's JSON",
            perfkit_corpus::generate(perfkit_corpus::Kind::Json, 6 << 20, 64).unwrap(),
        ),
        (
            "the corpus's source",
            perfkit_corpus::generate(perfkit_corpus::Kind::Source, 6 << 20, 64).unwrap(),
        ),
        // Repetition: each fresh piece or block would spell the repeated
        // stretch out again (30 % over Info-ZIP for the 4 KiB block).
        (
            "one sentence repeated",
            b"the same sentence over and over again, as a log line that never changes\n"
                .iter()
                .copied()
                .cycle()
                .take(5 << 20)
                .collect(),
        ),
        (
            "one 4 KiB random block repeated",
            noise[..4096]
                .iter()
                .copied()
                .cycle()
                .take(5 << 20)
                .collect(),
        ),
    ];
    cases.retain(|(what, data)| {
        let enough = data.len() >= 2 << 20;
        if !enough {
            eprintln!(
                "{what}: only {} bytes on this machine, left out",
                data.len()
            );
        }
        enough
    });
    assert!(
        cases.len() >= 6,
        "fewer than three inputs of 2 MiB or more were found on this machine"
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (what, data) in &cases {
        std::fs::write(d.join("input"), data).unwrap();
        let levels: &[&str] = if what.starts_with("shared") || what.starts_with("this") {
            &["-1", "-6", "-9"]
        } else if what.starts_with("the corpus") {
            // The levels whose pieces choose among libdeflate's.
            &["-5", "-6"]
        } else {
            &["-6"]
        };
        for level in levels {
            let _ = std::fs::remove_file(d.join("theirs.zip"));
            run(
                Command::new("zip").args(["-q", level, "theirs.zip", "input"]),
                d,
            );
            let theirs = std::fs::metadata(d.join("theirs.zip")).unwrap().len();
            for jobs in ["1", "2"] {
                let _ = std::fs::remove_file(d.join("ours.zip"));
                run(
                    perfkit().args(["zip", "-q", level, "--jobs", jobs, "ours.zip", "input"]),
                    d,
                );
                let ours = std::fs::metadata(d.join("ours.zip")).unwrap().len();
                let case = format!("{what} ({} bytes), zip {level} --jobs {jobs}", data.len());
                eprintln!(
                    "{case}: perfkit {ours} bytes, Info-ZIP {theirs} ({:+.2} %)",
                    (ours as f64 / theirs as f64 - 1.0) * 100.0
                );
                assert!(
                    ours * 100 <= theirs * 101,
                    "{case}: our archive is {ours} bytes, over Info-ZIP's {theirs} + 1 %"
                );
                reads_back(d, "ours.zip", data, &case);
            }
        }
    }
}

/// A short entry (one piece under 1 MiB, here 400-700 kB) takes its level
/// from a short sample as a long one does: as light as Info-ZIP's size
/// allows, and never over it + 1 %. The corpus's JSON came out 4.4 %
/// under Info-ZIP's archive at libdeflate's 7 (more work than `-6` asks)
/// while its 6 is 2 % under: it must not be more than 3 % under. The
/// source passes only at 7 and the request log goes lighter still; each
/// is held to the rule and read back.
#[test]
fn short_entries_are_made_as_light_as_info_zips_size_allows() {
    if !have_peers() {
        return;
    }
    let json = perfkit_corpus::generate(perfkit_corpus::Kind::Json, 500_000, 64).unwrap();
    let cases: [(&str, Vec<u8>, f64); 4] = [
        ("500 kB of the corpus's JSON", json.clone(), 3.0),
        ("400 kB of the corpus's JSON", json[..400_000].to_vec(), 3.0),
        (
            "500 kB of the corpus's source",
            perfkit_corpus::generate(perfkit_corpus::Kind::Source, 500_000, 64).unwrap(),
            100.0,
        ),
        ("700 kB of a request log", request_log(700_000), 100.0),
    ];
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (what, data, most_under) in &cases {
        std::fs::write(d.join("input"), data).unwrap();
        let _ = std::fs::remove_file(d.join("theirs.zip"));
        run(
            Command::new("zip").args(["-q", "-6", "theirs.zip", "input"]),
            d,
        );
        let theirs = std::fs::metadata(d.join("theirs.zip")).unwrap().len();
        let _ = std::fs::remove_file(d.join("ours.zip"));
        run(perfkit().args(["zip", "-q", "-6", "ours.zip", "input"]), d);
        let ours = std::fs::metadata(d.join("ours.zip")).unwrap().len();
        let off = (ours as f64 / theirs as f64 - 1.0) * 100.0;
        eprintln!("{what}: perfkit {ours} bytes, Info-ZIP {theirs} ({off:+.2} %)");
        assert!(
            ours * 100 <= theirs * 101,
            "{what}: our archive is {ours} bytes, over Info-ZIP's {theirs} + 1 %"
        );
        assert!(
            off >= -most_under,
            "{what}: our archive is {ours} bytes, {off:.2} % under Info-ZIP's {theirs}: more work than -6 asks"
        );
        reads_back(d, "ours.zip", data, what);
    }
}
