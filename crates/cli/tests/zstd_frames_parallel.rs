//! `perfkit decompress --decoder=perfkit` (perfkit's block decoder: one
//! frame on several threads with `-T2` and up, on one with `-T1`), and the
//! default, which takes one large frame through the pipeline on threads
//! and leaves the rest to libzstd, against
//! the real zstd CLI, the oracle: frames the zstd CLI makes at test time
//! with the options users use decode byte for byte as `zstd -d` decodes
//! them, and damaged ones fail as today's path (libzstd) fails, with no
//! output file left behind.

mod interop;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use interop::{have, ok, perfkit};
use perfkit_testkit::noise::noise;

/// Up to `limit` bytes of the regular files under `dir` whose names pass
/// `accept`, in a fixed order: real source text or machine code.
fn files_under(dir: &Path, limit: usize, accept: &dyn Fn(&Path) -> bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut paths = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
            }
        } else if meta.is_file() && accept(&p) {
            paths.push(p);
        }
    }
    paths.sort();
    for p in paths {
        if out.len() >= limit {
            break;
        }
        if let Ok(bytes) = std::fs::read(&p) {
            out.extend_from_slice(&bytes[..bytes.len().min(limit - out.len())]);
        }
    }
    assert!(
        out.len() >= limit / 2,
        "too few files under {}",
        dir.display()
    );
    out
}

fn source(limit: usize) -> Vec<u8> {
    files_under(Path::new("/usr/include"), limit, &|p| {
        p.extension().is_some_and(|e| e == "h")
    })
}

fn binary(limit: usize) -> Vec<u8> {
    files_under(Path::new("/usr/lib/x86_64-linux-gnu"), limit, &|p| {
        p.to_string_lossy().contains(".so")
    })
}

/// `zstd ARGS` compressing `data` from a file, or with `stdin` from a pipe
/// (streamed: no content size in the header).
fn zstd(dir: &Path, data: &[u8], args: &[&str], stdin: bool) -> Vec<u8> {
    if stdin {
        return ok(Command::new("zstd")
            .args(["-q", "-c"])
            .args(args)
            .stdin_bytes(data))
        .stdout;
    }
    let src = dir.join("src");
    std::fs::write(&src, data).unwrap();
    ok(Command::new("zstd").args(["-q", "-c"]).args(args).arg(&src)).stdout
}

/// A skippable frame holding `payload`.
fn skippable(payload: &[u8]) -> Vec<u8> {
    let mut f = 0x184D_2A53u32.to_le_bytes().to_vec();
    f.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    f.extend_from_slice(payload);
    f
}

trait StdinBytes {
    fn stdin_bytes(&mut self, data: &[u8]) -> &mut Self;
}

impl StdinBytes for Command {
    /// Feeds `data` to the command's stdin from a file (no thread, no
    /// pipe to fill): a temporary file unlinked once opened.
    fn stdin_bytes(&mut self, data: &[u8]) -> &mut Self {
        let mut f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut f, data).unwrap();
        std::io::Seek::rewind(&mut f).unwrap();
        self.stdin(Stdio::from(f))
    }
}

/// `zstd -d` of the file `input` to stdout: the oracle's output, or its
/// failure.
fn oracle(input: &Path) -> Output {
    Command::new("zstd")
        .args(["-d", "-q", "-c"])
        .arg(input)
        .output()
        .unwrap()
}

/// `perfkit decompress FLAGS input -o output -v`.
fn decode(input: &Path, output: &Path, flags: &[&str]) -> Output {
    let _ = std::fs::remove_file(output);
    perfkit()
        .args(["decompress", "-f", "-v", "--no-progress"])
        .args(flags)
        .arg(input)
        .arg("-o")
        .arg(output)
        .output()
        .unwrap()
}

/// The ways of decoding under test: `-T1`, `-T2`, `-T4` as users run
/// them, and the block decoder forced on one, two and four threads.
const WAYS: [&[&str]; 6] = [
    &["-T1"],
    &["-T2"],
    &["-T4"],
    &["-T1", "--decoder=perfkit"],
    &["-T2", "--decoder=perfkit"],
    &["-T4", "--decoder=perfkit"],
];

/// One test's scratch directory and the two files in it that each test
/// decodes from and to: `in.zst` (the name the error lines are checked
/// for) and `out`.
struct Scratch {
    dir: tempfile::TempDir,
    input: PathBuf,
    output: PathBuf,
}

/// A new [`Scratch`], or `None` when the zstd CLI, the oracle, is missing
/// and skipping is asked for ([`have`] fails the test otherwise).
fn scratch() -> Option<Scratch> {
    if !have("zstd", "zstd") {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.zst");
    let output = dir.path().join("out");
    Some(Scratch { dir, input, output })
}

/// The corpus: (name, frame) made by the zstd CLI now.
fn corpus(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let src = source(3 << 20);
    let small_src = source(256 << 10);
    let bin = binary(1 << 20);
    let noise = noise(600 << 10, 7);
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |name: &str, frame: Vec<u8>| out.push((name.to_string(), frame));
    add("source --fast=7", zstd(dir, &src, &["--fast=7"], false));
    add("source -3", zstd(dir, &src, &["-3"], false));
    add("source -19", zstd(dir, &small_src, &["-19"], false));
    add(
        "source --ultra -22",
        zstd(dir, &small_src, &["--ultra", "-22"], false),
    );
    add(
        "source --long=27",
        zstd(dir, &src, &["-3", "--long=27"], false),
    );
    add("binary -3", zstd(dir, &bin, &["-3"], false));
    add("binary -19", zstd(dir, &bin[..256 << 10], &["-19"], false));
    add(
        "source -B",
        zstd(dir, &src, &["-3", "-T2", "-B256K"], false),
    );
    add(
        "source --rsyncable",
        zstd(dir, &src, &["-3", "-T2", "--rsyncable"], false),
    );
    add(
        "source --no-check",
        zstd(dir, &src, &["-3", "--no-check"], false),
    );
    add(
        "source --no-content-size",
        zstd(dir, &src, &["-3", "--no-content-size"], false),
    );
    add("source streamed from stdin", zstd(dir, &src, &["-3"], true));
    add("incompressible", zstd(dir, &noise, &["-3"], false));
    add("0 bytes", zstd(dir, b"", &["-3"], false));
    add("1 byte", zstd(dir, b"x", &["-3"], false));
    let mut concatenated = zstd(dir, &src, &["-3"], false);
    concatenated.extend(zstd(dir, &bin, &["-3"], true));
    add("concatenated", concatenated);
    let mut with_skippable = skippable(b"metadata before");
    with_skippable.extend(zstd(dir, &src, &["--fast=7"], true));
    with_skippable.extend(skippable(b"and after"));
    add("skippable frames around one", with_skippable);
    out
}

#[test]
fn frames_the_zstd_cli_makes_decode_as_zstd_d_decodes_them() {
    let Some(Scratch { dir, input, output }) = scratch() else {
        return;
    };
    let mut pipelined = Vec::new();
    for (name, frame) in corpus(dir.path()) {
        std::fs::write(&input, &frame).unwrap();
        let want = oracle(&input);
        assert!(want.status.success(), "zstd -d failed on {name}");
        for flags in WAYS {
            let got = decode(&input, &output, flags);
            let stderr = String::from_utf8_lossy(&got.stderr);
            assert!(got.status.success(), "{name} {flags:?}: {stderr}");
            let bytes = std::fs::read(&output).unwrap();
            assert!(
                bytes == want.stdout,
                "{name} {flags:?}: {} bytes, zstd -d gives {}",
                bytes.len(),
                want.stdout.len()
            );
            if stderr.contains("perfkit's block decoder on") && flags[0] != "-T1" {
                pipelined.push(format!("{name} {flags:?}"));
            }
        }
    }
    // Asked for by name, the pipeline took one large frame, and small
    // ones too.
    for must in [
        "source --fast=7 [\"-T2\", \"--decoder=perfkit\"]",
        "source --fast=7 [\"-T4\", \"--decoder=perfkit\"]",
        "skippable frames around one [\"-T2\", \"--decoder=perfkit\"]",
        "1 byte [\"-T2\", \"--decoder=perfkit\"]",
    ] {
        assert!(pipelined.iter().any(|p| p == must), "{must}: {pipelined:?}");
    }
    // By default it never runs on frames this small: on two cores it
    // measured slower than libzstd's one thread on some of them, and -T2
    // must never be slower than -T1.
    let by_default: Vec<_> = pipelined
        .iter()
        .filter(|p| !p.contains("--decoder=perfkit"))
        .collect();
    assert!(by_default.is_empty(), "{by_default:?}");
}

/// By default `-T2` and `-T0` take one frame of 66 MiB of real data
/// (sources and libraries, `zstd -1`) through the pipeline, and decode it
/// as `zstd -d` does; `-T1` leaves it to libzstd, as does `-T2` when the
/// frame is 60 MiB (under the least it pays from), on one thread, not
/// frame-parallel (which would hold the one frame whole), and `-T2`
/// writing into a pipe, whose reader needs a core.
#[test]
fn by_default_threads_decode_one_large_frame_through_the_pipeline() {
    let Some(Scratch { dir, input, output }) = scratch() else {
        return;
    };
    let mut data = source(10 << 20);
    data.extend(binary(56 << 20));
    assert!(data.len() >= 66 << 20, "{} bytes of real data", data.len());
    for (content, ways) in [
        (
            &data[..],
            &[("-T2", true), ("-T0", true), ("-T1", false)][..],
        ),
        (&data[..60 << 20], &[("-T2", false)][..]),
    ] {
        std::fs::write(&input, zstd(dir.path(), content, &["-1"], false)).unwrap();
        let want = oracle(&input);
        assert!(want.status.success());
        for &(threads, pipelined) in ways {
            let case = format!("{} bytes, {threads}", content.len());
            let got = decode(&input, &output, &[threads]);
            let stderr = String::from_utf8_lossy(&got.stderr);
            assert!(got.status.success(), "{case}: {stderr}");
            assert!(std::fs::read(&output).unwrap() == want.stdout, "{case}");
            let said = stderr.contains("in.zst: decoded by perfkit's block decoder on");
            assert_eq!(said, pipelined, "{case}: {stderr}");
            assert!(!stderr.contains("frames decoded on"), "{case}: {stderr}");
        }
    }
    std::fs::write(&input, zstd(dir.path(), &data, &["-1"], false)).unwrap();
    let piped = perfkit()
        .args(["decompress", "-v", "--no-progress", "-T2", "-c"])
        .arg(&input)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(piped.status.success(), "{stderr}");
    assert!(piped.stdout == data, "into a pipe");
    assert!(!stderr.contains("block decoder"), "into a pipe: {stderr}");
    assert!(
        !stderr.contains("frames decoded on"),
        "into a pipe: {stderr}"
    );
}

/// Damaged copies of `frame`: a bit flipped in several blocks, cuts, and
/// a wrong checksum.
fn damaged(frame: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let n = frame.len();
    for at in [20, n / 5, n / 2, n * 4 / 5, n - 40] {
        for bit in [0, 5] {
            let mut d = frame.to_vec();
            d[at] ^= 1 << bit;
            out.push((format!("bit {bit} of byte {at} flipped"), d));
        }
    }
    for cut in [n / 3, n - 5, n - 1] {
        out.push((format!("cut at {cut}"), frame[..cut].to_vec()));
    }
    let mut d = frame.to_vec();
    d[n - 2] ^= 0x40;
    out.push(("wrong checksum".into(), d));
    out
}

/// Runs `flags` on `input` and returns (exit code, stderr, whether the
/// output file exists).
fn outcome(input: &Path, output: &Path, flags: &[&str]) -> (Option<i32>, String, bool) {
    let got = decode(input, output, flags);
    (
        got.status.code(),
        String::from_utf8_lossy(&got.stderr).into_owned(),
        output.exists(),
    )
}

#[test]
fn damaged_frames_fail_as_todays_path_fails_and_leave_no_file() {
    let Some(Scratch { dir, input, output }) = scratch() else {
        return;
    };
    let src = source(3 << 20);
    let mut cases = damaged(&zstd(dir.path(), &src, &["--fast=7"], false));
    // The window rewritten to 1 KiB under blocks that reach further back
    // (and are larger than the new window): the headers do not walk.
    let mut narrowed = zstd(dir.path(), &src, &["-3"], true);
    narrowed[5] = 0;
    cases.push(("window narrowed to 1 KiB".into(), narrowed));
    // A 1 MiB window halved under matches reaching up to 1 MiB back: the
    // headers walk, and the block decoder refuses the first match past
    // 512 KiB, which libzstd's one-shot decoder (-T2's frame-parallel
    // path) accepts and its streaming one (-T1, zstd -d, and by default
    // -T2 on one frame) refuses.
    let mut halved = zstd(dir.path(), &src, &["-3", "--zstd=wlog=20"], true);
    assert_eq!(halved[5], (20 - 10) << 3, "a streamed frame's window byte");
    halved[5] = (19 - 10) << 3;
    cases.push(("window halved under its matches".into(), halved));
    let mut seen_ours = 0;
    let mut decoded_again = 0;
    for (name, bytes) in cases {
        std::fs::write(&input, &bytes).unwrap();
        for flags in &WAYS[1..] {
            // The block decoder asked for by name answers as libzstd, by
            // name, at the same -T; the default (on files this small,
            // libzstd's one thread) as `zstd -d` does. They differ on the
            // halved window, which libzstd's one-shot decoder (-T2's
            // frame-parallel path) accepts and its streaming one refuses.
            let (today, today_err, today_out) = if flags.contains(&"--decoder=perfkit") {
                let today_flags = [flags[0], "--decoder=libzstd"];
                let (today, today_err, today_file) = outcome(&input, &output, &today_flags);
                let today_out = today_file.then(|| std::fs::read(&output).unwrap());
                (today, today_err, today_out)
            } else {
                let zstd = oracle(&input);
                let err = String::from_utf8_lossy(&zstd.stderr).into_owned();
                let out = zstd.status.success().then_some(zstd.stdout);
                (zstd.status.code(), err, out)
            };
            let (code, err, file) = outcome(&input, &output, flags);
            assert_eq!(code, today, "{name} {flags:?}: {err}\ntoday: {today_err}");
            if err.contains("decoded again by libzstd") {
                decoded_again += 1;
            }
            if today == Some(0) {
                assert_eq!(
                    std::fs::read(&output).ok(),
                    today_out,
                    "{name} {flags:?}: output differs"
                );
                continue;
            }
            assert!(!file, "{name} {flags:?}: a partial output was left");
            // One line naming the input (the last: -v's notes come
            // first); the block decoder's names the frame and the byte.
            let line = err
                .lines()
                .rfind(|l| l.starts_with("perfkit: ") && l.contains("in.zst: "))
                .unwrap_or_else(|| panic!("{name} {flags:?}: no error line in {err}"));
            assert!(line.contains("byte"), "{name} {flags:?}: {line}");
            if line.contains("in.zst: frame 0 at byte") {
                seen_ours += 1;
            }
        }
    }
    assert!(
        seen_ours > 10,
        "the block decoder reported {seen_ours} errors"
    );
    // The halved window on --decoder=perfkit -T1, -T2 and -T4 at least.
    assert!(
        decoded_again >= 3,
        "libzstd decoded again {decoded_again} times"
    );
}

#[test]
fn a_window_over_memory_is_refused_as_zstd_refuses_it() {
    let Some(Scratch { dir, input, output }) = scratch() else {
        return;
    };
    let src = source(3 << 20);
    std::fs::write(&input, zstd(dir.path(), &src, &["--fast=7"], true)).unwrap();
    let zstd_says = Command::new("zstd")
        .args(["-d", "-q", "-c", "--memory=64KB"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(!zstd_says.status.success());
    for flags in WAYS {
        let mut flags = flags.to_vec();
        flags.push("--memory=64K");
        let (code, err, file) = outcome(&input, &output, &flags);
        assert_eq!(code, Some(1), "{flags:?}: {err}");
        assert!(!file, "{flags:?}");
        assert!(err.contains("--memory="), "{flags:?}: {err}");
    }
}

/// What `-v` says when the block decoder was asked for and libzstd
/// decodes instead: a frame with a dictionary.
#[test]
fn a_dictionary_frame_goes_to_libzstd_with_a_line_saying_so() {
    let Some(Scratch { dir, input, output }) = scratch() else {
        return;
    };
    let text = source(2 << 20);
    let samples: Vec<PathBuf> = text
        .chunks(64 << 10)
        .enumerate()
        .map(|(i, chunk)| {
            let p = dir.path().join(format!("s{i}"));
            std::fs::write(&p, chunk).unwrap();
            p
        })
        .collect();
    let dict = dir.path().join("dict");
    ok(Command::new("zstd")
        .args(["-q", "--train", "--maxdict=16K", "-o"])
        .arg(&dict)
        .args(&samples));
    let src = source(1 << 20);
    let frame = zstd(
        dir.path(),
        &src,
        &["-3", "-D", dict.to_str().unwrap()],
        false,
    );
    std::fs::write(&input, frame).unwrap();
    let (code, err, _) = outcome(
        &input,
        &output,
        &["-T2", "--decoder=perfkit", "-D", dict.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(std::fs::read(&output).unwrap(), src);
    assert!(err.contains("decoded by libzstd"), "{err}");
    let (code, err, _) = outcome(&input, &output, &["-T2", "--decoder=perfkit"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("needs dictionary"), "{err}");
}

/// A wrong checksum under `--no-check` is no error, as in zstd: the
/// block decoder's refusal goes to libzstd, whose output continues what
/// was written, and the file holds the whole content.
#[test]
fn a_wrong_checksum_under_no_check_decodes_whole() {
    let Some(Scratch { dir, input, output }) = scratch() else {
        return;
    };
    let src = source(3 << 20);
    let mut frame = zstd(dir.path(), &src, &["--fast=7"], false);
    let n = frame.len();
    frame[n - 2] ^= 0x40;
    std::fs::write(&input, &frame).unwrap();
    for flags in WAYS {
        let mut flags = flags.to_vec();
        flags.push("--no-check");
        let (code, err, _) = outcome(&input, &output, &flags);
        assert_eq!(code, Some(0), "{flags:?}: {err}");
        assert!(std::fs::read(&output).unwrap() == src, "{flags:?}");
    }
}

#[test]
fn a_file_too_large_to_hold_is_decoded_as_it_is_read() {
    let Some(Scratch { dir, input, output }) = scratch() else {
        return;
    };
    // Over 32 MiB compressed (read whole below that): 64 KiB pieces of
    // 40 KiB of noise (raw literals, cheap to decode) and 24 KiB of text.
    let text = b"one frame, every core; ".repeat(1100);
    let mut data = Vec::new();
    for seed in 1..=900u64 {
        data.extend_from_slice(&noise(40 << 10, seed));
        data.extend_from_slice(&text[..24 << 10]);
    }
    let frame = zstd(dir.path(), &data, &["-1"], false);
    assert!(frame.len() > 33 << 20, "{} bytes", frame.len());
    std::fs::write(&input, &frame).unwrap();
    let got = decode(&input, &output, &["-T2", "--decoder=perfkit"]);
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(got.status.success(), "{err}");
    assert!(
        err.contains("decoded by perfkit's block decoder on 2 threads"),
        "{err}"
    );
    assert!(std::fs::read(&output).unwrap() == data);
    // It holds only the ranges in flight: the process's peak beyond what
    // it takes to decode one byte (its own code and buffers: 17 MB for a
    // debug build, which the input's 37 MB less the ranges in flight left
    // almost no room for) is less than the input (mapped, its pages are
    // handed back as the walk leaves them; held whole, the input alone
    // would be more).
    let peak_kib = |input: &Path| -> usize {
        let timed = ok(Command::new("/usr/bin/time")
            .args(["-f", "%M"])
            .arg(perfkit().get_program())
            .args(["decompress", "-q", "-f", "-T2", "--decoder=perfkit"])
            .arg(input)
            .arg("-o")
            .arg(&output));
        String::from_utf8_lossy(&timed.stderr)
            .trim()
            .parse()
            .unwrap()
    };
    let one_byte = dir.path().join("one.zst");
    std::fs::write(&one_byte, zstd(dir.path(), b"x", &["-1"], false)).unwrap();
    let (base, peak) = (peak_kib(&one_byte), peak_kib(&input));
    assert!(
        (peak.saturating_sub(base) << 10) < frame.len(),
        "peak RSS {peak} KiB ({base} KiB for one byte) for a {}-byte input",
        frame.len()
    );
    // Damage past the first MiB, found once bytes are written: it fails
    // as today's path fails, with no file left.
    let n = frame.len();
    let mut wrong_sum = frame.clone();
    wrong_sum[n - 2] ^= 0x40;
    for (name, bytes) in [("cut", frame[..n - 1000].to_vec()), ("checksum", wrong_sum)] {
        std::fs::write(&input, &bytes).unwrap();
        let (today, today_err, _) = outcome(&input, &output, &["-T2", "--decoder=libzstd"]);
        let (code, err, file) = outcome(&input, &output, &["-T2", "--decoder=perfkit"]);
        assert_eq!(code, today, "{name}: {err}\ntoday: {today_err}");
        assert_ne!(code, Some(0), "{name}");
        assert!(!file, "{name}: a partial output was left");
        assert!(err.contains("in.zst: frame 0 at byte"), "{name}: {err}");
    }
}

#[test]
fn a_file_that_shrinks_while_it_is_decoded_stops_with_an_error_not_a_signal() {
    let Some(Scratch { dir, input, output }) = scratch() else {
        return;
    };
    // Stored blocks, the fastest to decode, so the truncation below lands
    // while most of the file is still ahead of the walk.
    let data: Vec<u8> = (1..=512u64)
        .flat_map(|seed| noise(64 << 10, seed))
        .collect();
    let frame = zstd(dir.path(), &data, &["-1"], false);
    let mut shrank = 0;
    for delay_ms in [0u64, 1, 2, 4, 8] {
        std::fs::write(&input, &frame).unwrap();
        let _ = std::fs::remove_file(&output);
        let child = perfkit()
            .args(["decompress", "-f", "-q", "-T2", "--decoder=perfkit"])
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // What another process truncating the file does.
        std::fs::File::options()
            .write(true)
            .open(&input)
            .unwrap()
            .set_len(frame.len() as u64 / 3)
            .unwrap();
        let got = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&got.stderr);
        // Killed by SIGBUS, a process has no exit code.
        let code = got.status.code();
        assert!(code.is_some(), "{delay_ms} ms: {:?}, {err}", got.status);
        if code == Some(0) {
            // Done before the truncation reached it: the whole output.
            assert!(std::fs::read(&output).unwrap() == data, "{delay_ms} ms");
            continue;
        }
        assert!(!output.exists(), "{delay_ms} ms: a partial output was left");
        assert!(err.contains("in.zst: "), "{delay_ms} ms: {err}");
        if err.contains("shrank while it was being read") {
            shrank += 1;
        } else {
            // Cut before it was opened: a truncated input, as today.
            assert!(err.contains("frame 0 at byte"), "{delay_ms} ms: {err}");
        }
    }
    eprintln!("{shrank} of 5 runs met the file shrinking while mapped");
}
