//! zstd's first-hour habits (issue 65): pass-through (`zstdcat -f`),
//! `-z`/`-d`/`-t` by order, `-H`, `-C`/`--no-check`, `--[no-]sparse`,
//! `--progress`, `--filelist`, `--single-thread`, `--auto-threads`,
//! `--show-default-cparams`, `-e#`/`-i#` without `-b`, and the overwrite
//! prompt. Each case runs zstd 1.5.4 and perfkit on identical copies of
//! the same files, with the same stdin, and compares what it names:
//! success or failure, output bytes (or what they decode to), message
//! lines (zstd's `zstd:` read as `perfkit:`), the files left. The prompt
//! and the progress bar are also run on a pseudo-terminal.

mod interop;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use interop::{have, perfkit};

/// What must agree between zstd's run and perfkit's.
#[derive(Debug, Clone, Copy)]
enum Same {
    /// Success or failure.
    Exit,
    /// Standard output, byte for byte.
    Stdout,
    /// Standard output as zstd decodes it.
    DecodedStdout,
    /// Whether the first frame on stdout carries a content checksum.
    StdoutChecksum,
    /// The first frame's header on stdout, byte for byte (its window, and
    /// whether it records the content size).
    StdoutHeader,
    /// Standard error's lines, zstd's `zstd:` read as `perfkit:`, trailing
    /// blanks dropped.
    Stderr,
    /// Every file in the folder, by name and contents (a `.zst` by what
    /// it decodes to, as two encoders need not agree on bytes).
    Tree,
}

use Same::*;

/// One habit: zstd's arguments, perfkit's, stdin, and what must agree.
struct Case {
    theirs: &'static [&'static str],
    ours: &'static [&'static str],
    stdin: &'static [u8],
    same: &'static [Same],
}

const fn case(
    theirs: &'static [&'static str],
    ours: &'static [&'static str],
    stdin: &'static [u8],
    same: &'static [Same],
) -> Case {
    Case {
        theirs,
        ours,
        stdin,
        same,
    }
}

/// A skippable frame, then what is no frame: stdin for pass-through.
const ZJ: &[u8] = b"\x50\x2a\x4d\x18\x03\x00\x00\x00abcjunk\n";

const CASES: &[Case] = &[
    // Pass-through: on with -c -f (zstdcat -f), or --pass-through; stdin
    // to stdout with -f; off with --no-pass-through; without -c and -o the
    // output name cannot be derived.
    case(
        &["-dcf", "a.txt"],
        &["decompress", "-cf", "a.txt"],
        b"",
        &[Exit, Stdout, Stderr],
    ),
    case(
        &["-dcf", "a.txt"],
        &["decompress", "-dcf", "a.txt"],
        b"",
        &[Exit, Stdout, Stderr],
    ),
    case(
        &["-dcf", "a.txt"],
        &["compress", "-dcf", "a.txt"],
        b"",
        &[Exit, Stdout, Stderr],
    ),
    case(
        &["-dcf", "z.zst", "a.txt", "s"],
        &["decompress", "-cf", "z.zst", "a.txt", "s"],
        b"",
        &[Exit, Stdout, Stderr],
    ),
    case(
        &["-dc", "--pass-through", "a.txt"],
        &["decompress", "-c", "--pass-through", "a.txt"],
        b"",
        &[Exit, Stdout, Stderr],
    ),
    case(
        &["-d", "--pass-through", "a.txt", "-o", "out"],
        &["decompress", "--pass-through", "a.txt", "-o", "out"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-dcf", "--no-pass-through", "a.txt"],
        &["decompress", "-cf", "--no-pass-through", "a.txt"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-dc", "a.txt"],
        &["decompress", "-c", "a.txt"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-df"],
        &["decompress", "-f"],
        b"plain text on stdin\n",
        &[Exit, Stdout, Stderr],
    ),
    case(
        &["-d", "--pass-through"],
        &["decompress", "--pass-through"],
        b"plain\n",
        &[Exit, Stdout, Stderr],
    ),
    case(
        &["-t", "--pass-through", "a.txt"],
        &["decompress", "-t", "--pass-through", "a.txt"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-tf", "a.txt"],
        &["decompress", "-tf", "a.txt"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-df", "a.txt"],
        &["decompress", "-f", "a.txt"],
        b"",
        &[Exit, Tree],
    ),
    case(
        &["-dcf", "empty"],
        &["decompress", "-cf", "empty"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-dcf", "zj"],
        &["decompress", "-cf", "zj"],
        b"",
        &[Exit, Stdout, Stderr],
    ),
    case(
        &["-dcf", "-T2", "zj"],
        &["decompress", "-cf", "-T2", "zj"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-dc", "zj"],
        &["decompress", "-c", "zj"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-d", "--pass-through", "zj", "-o", "out"],
        &["decompress", "--pass-through", "zj", "-o", "out"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-t", "--pass-through", "zj"],
        &["decompress", "-t", "--pass-through", "zj"],
        b"",
        &[Exit, Stderr],
    ),
    case(&["-df"], &["decompress", "-f"], ZJ, &[Exit, Stdout, Stderr]),
    case(
        &["-dcf", "gj.gz"],
        &["decompress", "-cf", "gj.gz"],
        b"",
        &[Exit, Stdout, Stderr],
    ),
    case(
        &["-dc", "gj.gz"],
        &["decompress", "-c", "gj.gz"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-t", "--pass-through", "gj.gz"],
        &["decompress", "-t", "--pass-through", "gj.gz"],
        b"",
        &[Exit, Stderr],
    ),
    // -z, -d and -t: the last wins.
    case(
        &["-d", "-z", "-c", "a.txt"],
        &["decompress", "-z", "-c", "a.txt"],
        b"",
        &[Exit, DecodedStdout],
    ),
    case(
        &["-z", "-d", "-c", "z.zst"],
        &["compress", "-z", "-d", "-c", "z.zst"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-zc", "-q", "a.txt"],
        &["compress", "-zc", "-q", "a.txt"],
        b"",
        &[Exit, DecodedStdout],
    ),
    case(
        &["-d", "-t", "z.zst"],
        &["compress", "-d", "-t", "z.zst"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-t", "-d", "-q", "z.zst"],
        &["compress", "-t", "-d", "-q", "z.zst"],
        b"",
        &[Exit, Tree],
    ),
    case(
        &["-dq", "z.zst", "-o", "out"],
        &["decompress", "-dq", "z.zst", "-o", "out"],
        b"",
        &[Exit, Tree],
    ),
    // -H is zstd's long help.
    case(&["-H"], &["compress", "-H"], b"", &[Exit]),
    // Checksums: -C writes one (the default), --no-check none, and
    // decoding with --no-check does not check it.
    case(
        &["-C", "-q", "-c", "a.txt"],
        &["compress", "-C", "-q", "-c", "a.txt"],
        b"",
        &[Exit, DecodedStdout, StdoutChecksum],
    ),
    case(
        &["--no-check", "-q", "-c", "a.txt"],
        &["compress", "--no-check", "-q", "-c", "a.txt"],
        b"",
        &[Exit, DecodedStdout, StdoutChecksum],
    ),
    case(
        &["--no-check", "-C", "-q", "-c", "a.txt"],
        &["compress", "--no-check", "-C", "-q", "-c", "a.txt"],
        b"",
        &[Exit, DecodedStdout, StdoutChecksum],
    ),
    case(
        &["-d", "--no-check", "-c", "bad.zst"],
        &["decompress", "--no-check", "-c", "bad.zst"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-d", "-C", "-q", "-c", "bad.zst"],
        &["decompress", "-C", "-q", "-c", "bad.zst"],
        b"",
        &[Exit],
    ),
    // Flags whose work perfkit does its own way: the same result.
    case(
        &["-q", "-d", "--sparse", "z.zst", "-o", "out"],
        &["decompress", "-q", "--sparse", "z.zst", "-o", "out"],
        b"",
        &[Exit, Tree],
    ),
    case(
        &["-q", "-d", "--no-sparse", "z.zst", "-o", "out"],
        &["decompress", "-q", "--no-sparse", "z.zst", "-o", "out"],
        b"",
        &[Exit, Tree],
    ),
    case(
        &["-q", "--progress", "-c", "a.txt"],
        &["compress", "-q", "--progress", "-c", "a.txt"],
        b"",
        &[Exit, DecodedStdout],
    ),
    case(
        &["-q", "--single-thread", "a.txt"],
        &["compress", "-q", "--single-thread", "a.txt"],
        b"",
        &[Exit, Tree],
    ),
    case(
        &["-q", "--single-thread", "-B64K", "-c", "a.txt"],
        &["compress", "-q", "--single-thread", "-B64K", "-c", "a.txt"],
        b"",
        &[Exit, DecodedStdout],
    ),
    case(
        &["-q", "-T0", "--auto-threads=logical", "-c", "a.txt"],
        &[
            "compress",
            "-q",
            "-T0",
            "--auto-threads=logical",
            "-c",
            "a.txt",
        ],
        b"",
        &[Exit, DecodedStdout],
    ),
    case(
        &["-q", "-T0", "--auto-threads=physical", "-c", "a.txt"],
        &[
            "compress",
            "-q",
            "-T0",
            "--auto-threads=physical",
            "-c",
            "a.txt",
        ],
        b"",
        &[Exit, DecodedStdout],
    ),
    // --filelist: names one a line, after those given.
    case(
        &["-q", "-c", "--filelist=list"],
        &["compress", "-q", "-c", "--filelist=list"],
        b"",
        &[Exit, DecodedStdout],
    ),
    case(
        &["-q", "-c", "--filelist", "list", "s"],
        &["compress", "-q", "-c", "--filelist", "list", "s"],
        b"",
        &[Exit, DecodedStdout],
    ),
    case(
        &["-q", "--filelist=list"],
        &["compress", "-q", "--filelist=list"],
        b"",
        &[Exit, Tree],
    ),
    case(
        &["-q", "-c", "--filelist=nolist"],
        &["compress", "-q", "-c", "--filelist=nolist"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-q", "-c", "--filelist=gaps"],
        &["compress", "-q", "-c", "--filelist=gaps"],
        b"",
        &[Exit],
    ),
    // --show-default-cparams: zstd's lines on stderr, then compressed.
    case(
        &["--show-default-cparams", "-q", "-c", "a.txt"],
        &["compress", "--show-default-cparams", "-q", "-c", "a.txt"],
        b"",
        &[Exit, Stderr, DecodedStdout],
    ),
    case(
        &["--show-default-cparams", "-19", "-q", "-c", "a.txt", "s"],
        &[
            "compress",
            "--show-default-cparams",
            "-19",
            "-q",
            "-c",
            "a.txt",
            "s",
        ],
        b"",
        &[Exit, Stderr, DecodedStdout],
    ),
    case(
        &["--show-default-cparams", "--fast=3", "-q", "-c", "big"],
        &[
            "compress",
            "--show-default-cparams",
            "--fast=3",
            "-q",
            "-c",
            "big",
        ],
        b"",
        &[Exit, Stderr, DecodedStdout],
    ),
    case(
        &["-d", "--show-default-cparams", "-c", "z.zst"],
        &["compress", "-d", "--show-default-cparams", "-c", "z.zst"],
        b"",
        &[Exit, Stdout],
    ),
    case(
        &["-t", "--show-default-cparams", "z.zst"],
        &["compress", "-t", "--show-default-cparams", "z.zst"],
        b"",
        &[Exit, Stderr],
    ),
    case(
        &["-t", "--no-check", "bad.zst"],
        &["decompress", "-t", "--no-check", "bad.zst"],
        b"",
        &[Exit, Stderr],
    ),
    case(
        &["--pass-through", "-q", "-c", "a.txt"],
        &["compress", "--pass-through", "-q", "-c", "a.txt"],
        b"",
        &[Exit, DecodedStdout],
    ),
    case(
        &["-d", "--pass-through", "--rm", "-q", "a.txt", "-o", "out"],
        &[
            "decompress",
            "--pass-through",
            "--rm",
            "-q",
            "a.txt",
            "-o",
            "out",
        ],
        b"",
        &[Exit, Tree],
    ),
    // Flags that undo each other: the last given wins, as zstd reads
    // them; -q and -v count against each other.
    case(
        &["-k", "--rm", "s"],
        &["compress", "-k", "--rm", "s"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["--rm", "-k", "s"],
        &["compress", "--rm", "-k", "s"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-o", "x.zst", "-c", "s"],
        &["compress", "-o", "x.zst", "-c", "s"],
        b"",
        &[Exit, Stderr, DecodedStdout, Tree],
    ),
    case(
        &["-c", "-o", "x.zst", "s"],
        &["compress", "-c", "-o", "x.zst", "s"],
        b"",
        &[Exit, Stderr, Stdout, Tree],
    ),
    case(
        &["-q", "-q", "-v", "s"],
        &["compress", "-q", "-q", "-v", "s"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-v", "-q", "s"],
        &["compress", "-v", "-q", "s"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-qqv", "-d", "z.zst", "-o", "out"],
        &["compress", "-qqv", "-d", "z.zst", "-o", "out"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    // -e# and -i# belong to benchmark mode; without -b, ignored.
    case(
        &["-e3", "-q", "a.txt"],
        &["compress", "-e3", "-q", "a.txt"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-i1", "-q", "a.txt"],
        &["compress", "-i1", "-q", "a.txt"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    // An existing output: zstd's question on stderr, the answer from
    // stdin; no (or the end of input) keeps the file.
    case(
        &["kept.txt"],
        &["compress", "kept.txt"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["kept.txt"],
        &["compress", "kept.txt"],
        b"n\n",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["kept.txt"],
        &["compress", "kept.txt"],
        b"\n",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["kept.txt"],
        &["compress", "kept.txt"],
        b"y\n",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["kept.txt"],
        &["compress", "kept.txt"],
        b"Yes",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["kept.txt", "a.txt"],
        &["compress", "kept.txt", "a.txt"],
        b"n\n",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-q", "kept.txt"],
        &["compress", "-q", "kept.txt"],
        b"y\n",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-qq", "kept.txt"],
        &["compress", "-qq", "kept.txt"],
        b"y\n",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-f", "kept.txt"],
        &["compress", "-f", "kept.txt"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-o", "kept.txt.zst", "-"],
        &["compress", "-o", "kept.txt.zst", "-"],
        b"stdin data\n",
        &[Exit, Stderr, Tree],
    ),
    // Several inputs into one existing file: zstd's "Proceed?", then the
    // file's own question.
    case(
        &["s", "list", "-o", "kept.txt.zst"],
        &["compress", "s", "list", "-o", "kept.txt.zst"],
        b"y\ny\n",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["s", "list", "-o", "kept.txt.zst"],
        &["compress", "s", "list", "-o", "kept.txt.zst"],
        b"y\nn\n",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["s", "list", "-o", "kept.txt.zst"],
        &["compress", "s", "list", "-o", "kept.txt.zst"],
        b"y\n",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-f", "s", "list", "-o", "kept.txt.zst"],
        &["compress", "-f", "s", "list", "-o", "kept.txt.zst"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-d", "z.zst", "-o", "kept.txt"],
        &["decompress", "z.zst", "-o", "kept.txt"],
        b"",
        &[Exit, Stderr, Tree],
    ),
    case(
        &["-d", "z.zst", "-o", "kept.txt"],
        &["decompress", "z.zst", "-o", "kept.txt"],
        b"y\n",
        &[Exit, Stderr, Tree],
    ),
    // A small input on stdin: zstd's frame has no content size in its
    // header (it ends the frame once a read returns nothing), and
    // perfkit's neither (the bytes after it differ at -19, where the two
    // encoders' searches differ); a file's has one.
    case(
        &["-q", "-c"],
        &["compress", "-q", "-c"],
        b"hello world\n",
        &[Exit, Stdout],
    ),
    case(
        &["-q", "-19", "-c", "-"],
        &["compress", "-q", "-19", "-c", "-"],
        b"perfkit beside zstd\nperfkit beside zstd\n",
        &[Exit, StdoutHeader, DecodedStdout],
    ),
    case(
        &["-q", "-c", "s"],
        &["compress", "-q", "-c", "s"],
        b"",
        &[Exit, Stdout],
    ),
];

/// The same files for both tools: text, a frame of it (made by zstd), the
/// frame with its checksum damaged, short and empty files, file lists, and
/// a file whose output exists already.
fn files(dir: &Path) {
    let text = "perfkit beside zstd, the same habits\n".repeat(40);
    let w = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();
    w("a.txt", text.as_bytes());
    w("s", b"ab");
    w("empty", b"");
    w("big", &"0123456789abcdef".repeat(20_000).into_bytes());
    w("kept.txt", b"to compress\n");
    w("kept.txt.zst", b"precious, not a frame\n");
    w("list", b"a.txt\ns\n");
    w("gaps", b"a.txt\n\ns\n");
    let frame = zstdkit::compress(text.as_bytes(), zstdkit::Params::for_level(3)).unwrap();
    let mut bad = frame.clone();
    *bad.last_mut().unwrap() ^= 1;
    w("z.zst", &frame);
    // Frames, then what is no frame (zstd copies it with pass-through).
    w("zj", &[&frame[..], &frame, b"junk", &frame].concat());
    // A gzip member (gzip's own), then what is no member.
    let member = Command::new("gzip")
        .args(["-nc", "a.txt"])
        .current_dir(dir)
        .output()
        .unwrap()
        .stdout;
    w("gj.gz", &[&member[..], b"junk"].concat());
    w("bad.zst", &bad);
}

fn run(cmd: &mut Command, dir: &Path, stdin: &[u8]) -> Output {
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    // A tool that reads no stdin may close it first: a broken pipe here
    // is no failure of the test.
    let _ = pipe.write_all(stdin);
    drop(pipe);
    child.wait_with_output().unwrap()
}

/// Message lines as compared: the program's name as perfkit's (wherever
/// it starts a message), trailing
/// blanks dropped, lines blank once trimmed dropped (zstd ends its
/// "Not overwritten" with a line holding one space).
fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| {
            let l = l.trim_end();
            // A question answered on the line of the one before it
            // names the program mid-line.
            l.replace("zstd: ", "perfkit: ")
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// Every file in `dir` by name, each `.zst` by what zstd decodes it to
/// (or its bytes, when it is no frame).
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let bytes = std::fs::read(e.path()).unwrap();
            let bytes = if name.ends_with(".zst") {
                zstdkit::decompress(&bytes).unwrap_or(bytes)
            } else {
                bytes
            };
            (name, bytes)
        })
        .collect();
    out.sort();
    out
}

/// The content-checksum flag of the frame at the start of `bytes`.
fn has_checksum(bytes: &[u8]) -> Option<bool> {
    (bytes.len() > 4 && bytes[..4] == [0x28, 0xb5, 0x2f, 0xfd]).then(|| bytes[4] & 0x04 != 0)
}

/// The first zstd frame header in `bytes` (RFC 8878 3.1.1.1): magic,
/// descriptor, window descriptor, dictionary ID and content size.
fn frame_header(bytes: &[u8]) -> Option<&[u8]> {
    let fhd = *bytes.get(4)?;
    let single_segment = fhd & 0x20 != 0;
    let dict_id = [0, 1, 2, 4][usize::from(fhd & 0x03)];
    let content_size = match fhd >> 6 {
        0 if single_segment => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let len = 5 + usize::from(!single_segment) + dict_id + content_size;
    bytes.get(..len)
}

fn decoded(bytes: &[u8]) -> Vec<u8> {
    zstdkit::decompress(bytes).unwrap_or_else(|e| panic!("not zstd frames: {e}"))
}

#[test]
fn first_hour_habits_match_zstd() {
    if !have("zstd", "zstd") || !have("gzip", "gzip") {
        return;
    }
    let mut failures = Vec::new();
    for (n, c) in CASES.iter().enumerate() {
        let (theirs_dir, ours_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        files(theirs_dir.path());
        files(ours_dir.path());
        let theirs = run(
            Command::new("zstd").args(c.theirs),
            theirs_dir.path(),
            c.stdin,
        );
        let ours = run(perfkit().args(c.ours), ours_dir.path(), c.stdin);
        let what = format!("case {n}: zstd {:?} / perfkit {:?}", c.theirs, c.ours);
        for same in c.same {
            let agree = match same {
                Exit => theirs.status.success() == ours.status.success(),
                Stdout => theirs.stdout == ours.stdout,
                DecodedStdout => decoded(&theirs.stdout) == decoded(&ours.stdout),
                StdoutChecksum => has_checksum(&theirs.stdout) == has_checksum(&ours.stdout),
                StdoutHeader => frame_header(&theirs.stdout) == frame_header(&ours.stdout),
                Stderr => lines(&theirs.stderr) == lines(&ours.stderr),
                Tree => tree(theirs_dir.path()) == tree(ours_dir.path()),
            };
            if !agree {
                failures.push(format!(
                    "{what}: {same:?} differs\n  zstd:    {:?} {:?}\n  perfkit: {:?} {:?}",
                    theirs.status.code(),
                    lines(&theirs.stderr),
                    ours.status.code(),
                    lines(&ours.stderr),
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `command` run by `script` on a pseudo-terminal (stdin, stdout and
/// stderr all a terminal), `answer` typed into it once the question is on
/// the screen (or the command is done); the transcript's lines, each as
/// it last shows on the screen (what a `\r` rewrote is gone).
fn on_a_terminal(command: &str, dir: &Path, answer: &[u8]) -> Vec<String> {
    use std::io::Read;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    let mut child = Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let screen = Arc::new(Mutex::new(Vec::new()));
    let mut stdout = child.stdout.take().unwrap();
    let reader = {
        let screen = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    // Typed before the question, the answer's echo would land before it
    // too, as it happens: wait for the question (or for the end).
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let asked = String::from_utf8_lossy(&screen.lock().unwrap()).contains("(y/n) ?");
        if asked || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut pipe = child.stdin.take().unwrap();
    let _ = pipe.write_all(answer);
    drop(pipe);
    child.wait().unwrap();
    reader.join().unwrap();
    let out = std::mem::take(&mut *screen.lock().unwrap());
    let text = String::from_utf8_lossy(&out).replace("\r\n", "\n");
    let screen = text
        .lines()
        .map(|l| match (l.find('\r'), l.rfind('\r')) {
            // A status line rewritten in place: what came before it on
            // the line, and what it was left as.
            (Some(first), Some(last)) => format!("{}{}", &l[..first], &l[last + 1..]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    lines(screen.as_bytes())
}

#[test]
fn the_overwrite_prompt_on_a_terminal_is_zstds() {
    if !have("zstd", "zstd") || !have("script", "bsdutils") {
        return;
    }
    let pk = env!("CARGO_BIN_EXE_perfkit");
    for answer in [&b""[..], b"n\n", b"y\n"] {
        for (args, theirs_args) in [
            ("compress kept.txt", "kept.txt"),
            ("compress -q kept.txt", "-q kept.txt"),
            ("decompress z.zst -o kept.txt", "-d z.zst -o kept.txt"),
        ] {
            let (theirs_dir, ours_dir) =
                (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            files(theirs_dir.path());
            files(ours_dir.path());
            let theirs = on_a_terminal(&format!("zstd {theirs_args}"), theirs_dir.path(), answer);
            let mut ours = on_a_terminal(&format!("{pk} {args}"), ours_dir.path(), answer);
            let mut theirs = theirs;
            if args.contains("-q") {
                // Nothing reads the answer under -q: the terminal's echo
                // of it lands before or after the line, as it happens.
                ours.sort();
                theirs.sort();
            }
            assert_eq!(ours, theirs, "{args}, answer {answer:?}");
            assert_eq!(
                tree(ours_dir.path()),
                tree(theirs_dir.path()),
                "{args}, answer {answer:?}"
            );
        }
    }
}

#[test]
fn the_progress_bar_is_for_inputs_over_16_mib_as_the_help_says() {
    if !have("script", "bsdutils") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("small"), perfkit_testkit::noise::noise(100_000, 3)).unwrap();
    std::fs::write(d.join("large"), vec![7u8; 17 << 20]).unwrap();
    let pk = env!("CARGO_BIN_EXE_perfkit");
    let raw = |command: &str| {
        let out = run(
            Command::new("script").args(["-qec", command, "/dev/null"]),
            d,
            b"",
        );
        String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")
    };
    // 100 kB: the ratio line alone, nothing drawn before it.
    let small = raw(&format!("{pk} compress -f small"));
    assert!(small.starts_with("small "), "{small:?}");
    assert!(!small.contains(['\r', '\u{1b}']), "{small:?}");
    assert_eq!(small.lines().count(), 1, "{small:?}");
    // --progress draws one for it; --no-progress never.
    let forced = raw(&format!("{pk} compress -f --progress small"));
    assert!(forced.contains(['\r', '\u{1b}']), "{forced:?}");
    // Over 16 MiB: the bar is drawn (and cleared before the ratio line).
    let large = raw(&format!("{pk} compress -f large"));
    assert!(large.contains(['\r', '\u{1b}']), "{large:?}");
    let quiet = raw(&format!("{pk} compress -f --no-progress large"));
    assert!(!quiet.contains(['\r', '\u{1b}']), "{quiet:?}");
}

/// Every failure a user meets in the first hour is one line that names
/// the file and says what is wrong in the operating system's words: no
/// Rust names for error kinds (`entity not found`), no `(os error 2)`,
/// no Debug text.
#[test]
fn failures_are_sentences_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    files(d);
    std::fs::create_dir(d.join("folder")).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["compress", "-q", "missing"], "missing"),
        (&["decompress", "-q", "missing.zst"], "missing.zst"),
        (
            &["compress", "-o", "/nonexistent/x.zst", "a.txt"],
            "/nonexistent/x.zst",
        ),
        (
            &["compress", "--output-dir-flat", "/proc/foo", "a.txt"],
            "/proc/foo",
        ),
        (&["compress", "-D", "missing", "a.txt"], "missing"),
        (&["compress", "--patch-from", "missing", "a.txt"], "missing"),
        (&["compress", "-c", "--filelist", "missing"], "missing"),
        (&["compress", "-c", "--filelist", "/dev/zero"], "/dev/zero"),
        (&["compress", "-l", "missing.zst"], "missing.zst"),
        (&["compress", "-f", "-o", "/dev/full", "a.txt"], "/dev/full"),
        (&["compress", "--train", "missing", "a.txt"], "missing"),
        (&["compress", "folder"], "folder"),
        (&["decompress", "-c", "a.txt"], "a.txt"),
        (&["decompress", "-q", "a.txt"], "a.txt"),
    ];
    for (args, path) in cases {
        let out = perfkit().args(*args).current_dir(d).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err
            .lines()
            .find(|l| l.starts_with("perfkit: "))
            .unwrap_or_else(|| panic!("{args:?}: no message: {err:?}"));
        assert!(!out.status.success(), "{args:?}");
        assert!(line.contains(path), "{args:?}: {line}");
        for rust in [
            "os error",
            "entity not found",
            "permission denied",
            "Os {",
            "kind:",
            "Custom {",
            "Error {",
        ] {
            assert!(!line.contains(rust), "{args:?}: {line}");
        }
    }
}

/// The habits docs/compress.md lists as differences, pinned beside zstd:
/// what zstd does, and what perfkit does instead.
#[test]
fn the_differences_kept_are_what_the_docs_say() {
    if !have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    files(d);
    let zstd = |args: &[&str]| run(Command::new("zstd").args(args), d, b"");
    let ours = |args: &[&str]| run(perfkit().args(args), d, b"");
    // --train over an existing file: zstd replaces it without asking;
    // perfkit keeps it (no data lost) unless -f.
    for i in 1..=10usize {
        let sample: String = (i..=i * 1000)
            .step_by(100)
            .map(|n| format!("{n}\n"))
            .collect();
        std::fs::write(d.join(format!("sample{i}")), sample).unwrap();
    }
    let samples: Vec<String> = (1..=10).map(|i| format!("sample{i}")).collect();
    let train = |out: &str| {
        let mut a = vec!["--train", "-q", "-o", out];
        a.extend(samples.iter().map(String::as_str));
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    std::fs::write(d.join("zd"), b"mine").unwrap();
    std::fs::write(d.join("pd"), b"mine").unwrap();
    let z = run(Command::new("zstd").args(train("zd")), d, b"");
    assert!(z.status.success() && std::fs::read(d.join("zd")).unwrap() != b"mine");
    let p = run(perfkit().arg("compress").args(train("pd")), d, b"");
    assert!(!p.status.success());
    assert_eq!(std::fs::read(d.join("pd")).unwrap(), b"mine");
    assert!(String::from_utf8_lossy(&p.stderr).contains("pd already exists; use -f"));
    // --auto-threads: zstd reads any other word as physical; perfkit
    // refuses it (exit 2, a usage error).
    assert!(
        zstd(&["-q", "-c", "--auto-threads=many", "a.txt"])
            .status
            .success()
    );
    let p = ours(&["compress", "-q", "-c", "--auto-threads=many", "a.txt"]);
    assert_eq!(p.status.code(), Some(2));
    // Not zstd data, without pass-through: the same failure in other
    // words.
    let z = zstd(&["-dc", "a.txt"]);
    let p = ours(&["decompress", "-c", "a.txt"]);
    assert_eq!(lines(&z.stderr), ["perfkit: a.txt: unsupported format"]);
    assert_eq!(
        lines(&p.stderr),
        ["perfkit: a.txt: not zstd data: unknown frame header at byte 0"]
    );
    // A zstd frame after a gzip member: zstd decodes both, perfkit
    // fails on it.
    let member = std::fs::read(d.join("gj.gz")).unwrap();
    let frame = std::fs::read(d.join("z.zst")).unwrap();
    std::fs::write(
        d.join("gz.gz"),
        [&member[..member.len() - 4], &frame].concat(),
    )
    .unwrap();
    assert!(zstd(&["-dc", "gz.gz"]).status.success());
    assert!(!ours(&["decompress", "-c", "gz.gz"]).status.success());
    // --sparse: accepted, the same bytes (perfkit writes no holes).
    assert!(
        ours(&["decompress", "-q", "--sparse", "z.zst", "-o", "sparse"])
            .status
            .success()
    );
    assert_eq!(
        std::fs::read(d.join("sparse")).unwrap(),
        std::fs::read(d.join("a.txt")).unwrap()
    );
}

/// zstd's manual: `-c` writes to standard output "even if it is the
/// console", and so does `-f`; stdin compressed to a terminal by default
/// (or with `-o -`) is refused, `stdout is a console, aborting`.
#[test]
fn compressed_data_goes_to_a_terminal_only_when_asked_as_zstd() {
    if !have("zstd", "zstd") || !have("script", "bsdutils") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    files(d);
    let pk = env!("CARGO_BIN_EXE_perfkit");
    let screen = |command: &str| {
        let out = run(
            Command::new("script").args(["-qec", command, "/dev/null"]),
            d,
            b"",
        );
        out.stdout
    };
    let magic = [0x28, 0xb5, 0x2f, 0xfd];
    for (flags, written) in [
        ("-c s", true),
        ("-c < s", true),
        ("-f < s", true),
        ("< s", false),
    ] {
        let theirs = screen(&format!("zstd {flags}"));
        let ours = screen(&format!("{pk} compress {flags}"));
        if written {
            assert!(theirs.starts_with(&magic), "zstd {flags}: {theirs:?}");
            assert!(ours.starts_with(&magic), "perfkit {flags}: {ours:?}");
        } else {
            // zstd's line has no program name (as for stdin's).
            assert_eq!(lines(&theirs), ["stdout is a console, aborting"], "{flags}");
            assert_eq!(
                lines(&ours),
                ["perfkit: stdout is a console, aborting"],
                "{flags}"
            );
        }
    }
    // `-o -` is stdout not asked for by -c (zstd 1.5.4 cannot parse `-o -`
    // at all: "command cannot be separated from its argument").
    let ours = screen(&format!("{pk} compress -o - < s"));
    assert_eq!(lines(&ours), ["perfkit: stdout is a console, aborting"]);
}
