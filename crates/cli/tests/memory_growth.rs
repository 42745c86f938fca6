//! Every command that streams keeps its memory flat as its input grows.
//!
//! Each case runs one command twice as a child process, on a small input and
//! on one 16 times larger, and reads the child's peak resident set from the
//! kernel (`ru_maxrss`, through GNU time: the child's own figure, not a
//! sample).
//! The large run's peak must stay within 1.3x of the small one's: a command
//! that reads its whole input, or holds every result before printing, grows
//! with the input and fails here. This is a memory assertion, not a timing.
//!
//! The inputs are large enough that a whole-input read shows well above the
//! process's fixed cost (binary, allocator arenas, thread stacks): the small
//! input is at least several MiB wherever the command allows.

mod interop;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use interop::perfkit;

/// How much larger the large input is than the small one.
const SCALE: usize = 16;

/// The most the large run's peak RSS may be over the small run's.
const MAX_GROWTH: f64 = 1.3;

/// Runs `cmd` to completion, its stdout discarded (or fed from `stdin` when
/// given), and returns its peak resident set in KiB. Fails the test when the
/// command fails.
///
/// The figure comes from GNU time (`%M`, its child's `ru_maxrss` from
/// `wait4`), not from this process's own `wait4`: Linux carries a process's
/// high-water RSS across `fork` and `exec` into the new program's
/// `ru_maxrss`, so a command spawned straight from the test harness would
/// report at least the harness's own peak (every test in this binary adds
/// to it). GNU time is a small, freshly exec'd program, so the floor it
/// passes on is its own few hundred KiB.
fn peak_rss_kib(cmd: &mut Command, stdin: Option<&Path>) -> u64 {
    let figure = tempfile::NamedTempFile::new().unwrap();
    let mut timed = Command::new("time");
    timed
        .args(["-f", "%M", "-o"])
        .arg(figure.path())
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match stdin {
        Some(p) => timed.stdin(std::fs::File::open(p).expect("open stdin input")),
        None => timed.stdin(Stdio::null()),
    };
    let out = timed
        .output()
        .unwrap_or_else(|e| panic!("spawning {timed:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(figure.path()).unwrap();
    text.trim()
        .parse()
        .unwrap_or_else(|e| panic!("GNU time wrote {text:?}, not a KiB figure: {e}"))
}

/// Runs the small and the large case and asserts the large one's peak RSS
/// stays within [`MAX_GROWTH`] of the small one's. `make` builds the
/// command for an input of `scale` units; `stdin` names the file each run
/// reads on its standard input, if any.
fn assert_flat(what: &str, mut make: impl FnMut(usize) -> (Command, Option<std::path::PathBuf>)) {
    if !interop::have("time", "time") {
        return;
    }
    let (mut small_cmd, small_in) = make(1);
    let small = peak_rss_kib(&mut small_cmd, small_in.as_deref());
    let (mut large_cmd, large_in) = make(SCALE);
    let large = peak_rss_kib(&mut large_cmd, large_in.as_deref());
    let growth = large as f64 / small as f64;
    eprintln!("{what}: peak RSS {small} KiB small, {large} KiB at {SCALE}x input ({growth:.2}x)");
    assert!(
        growth <= MAX_GROWTH,
        "{what}: peak RSS grew {growth:.2}x ({small} KiB -> {large} KiB) when the input grew \
         {SCALE}x; a streaming command stays within {MAX_GROWTH}x"
    );
}

/// `units` copies of `chunk` written to `path` (the inputs are built by
/// repetition so that the large one is exactly [`SCALE`] small ones).
fn repeat_into(path: &Path, chunk: &[u8], units: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for _ in 0..units {
        f.write_all(chunk).unwrap();
    }
    f.flush().unwrap();
}

/// Pseudo-random text, compressible but not trivially so, `len` bytes.
fn text_chunk(len: usize) -> Vec<u8> {
    let words = [
        "latency ", "budget ", "frame ", "window ", "entry ", "order ", "session ", "tick ",
    ];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut v = Vec::with_capacity(len + 16);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(words[(x % 8) as usize].as_bytes());
        if x.is_multiple_of(11) {
            v.extend_from_slice(format!("{}\n", x % 100_000).as_bytes());
        }
    }
    v.truncate(len);
    v
}

#[test]
fn compress_and_decompress_stay_flat() {
    let dir = tempfile::tempdir().unwrap();
    // 8 MiB: compressing in place keeps the window, a margin and the
    // read-ahead (about 7 MiB at level 3) and reaches that steady state
    // only once the input is longer; a smaller first input would measure
    // the ramp, not the plateau.
    let chunk = text_chunk(8 << 20);
    for units in [1, SCALE] {
        let input = dir.path().join(format!("in{units}.txt"));
        repeat_into(&input, &chunk, units);
        let status = perfkit()
            .args(["compress", "-f", "--level", "3"])
            .arg(&input)
            .arg("-o")
            .arg(dir.path().join(format!("in{units}.txt.zst")))
            .status()
            .unwrap();
        assert!(status.success());
    }
    assert_flat("compress -c FILE", |units| {
        let mut c = perfkit();
        c.args(["compress", "-c", "--level", "3"])
            .arg(dir.path().join(format!("in{units}.txt")));
        (c, None)
    });
    assert_flat("compress (stdin)", |units| {
        let mut c = perfkit();
        c.args(["compress", "-c", "--level", "3", "-"]);
        (c, Some(dir.path().join(format!("in{units}.txt"))))
    });
    assert_flat("decompress -c FILE", |units| {
        let mut c = perfkit();
        c.args(["decompress", "-c"])
            .arg(dir.path().join(format!("in{units}.txt.zst")));
        (c, None)
    });
}

/// `zip` of one large file holds a deflate piece (1 MiB of input), its
/// output and the check's scratch (docs/zip.md), whatever the file's size:
/// a file to a file, and stdin to stdout (streamed, data descriptors).
/// One thread, the default: `--jobs N` holds up to `2N + 1` blocks in
/// flight, reached only past a few times that many MiB of input.
#[test]
fn zip_stays_flat() {
    let dir = tempfile::tempdir().unwrap();
    // 4 MiB: several pieces, so the small run is already at the plateau.
    let chunk = text_chunk(4 << 20);
    let input = |units: usize| dir.path().join(format!("in{units}.txt"));
    for units in [1, SCALE] {
        repeat_into(&input(units), &chunk, units);
    }
    assert_flat("zip ARCHIVE FILE", |units| {
        let archive = dir.path().join(format!("out{units}.zip"));
        // zip updates an archive that is there; each run writes anew.
        let _ = std::fs::remove_file(&archive);
        let mut c = perfkit();
        c.args(["zip", "-q"]).arg(archive).arg(input(units));
        (c, None)
    });
    assert_flat("zip - - (stdin)", |units| {
        let mut c = perfkit();
        c.args(["zip", "-q", "-", "-"]);
        (c, Some(input(units)))
    });
}

/// A deflated archive holding one entry of `units` copies of `chunk`,
/// written by Python's zipfile (streamed into the archive, so the test
/// itself stays small).
fn py_zip_one_entry(zip: &Path, chunk_file: &Path, units: usize) {
    let script = "import sys, zipfile\n\
        chunk = open(sys.argv[2], 'rb').read()\n\
        with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n\
        \x20   with z.open('big.txt', 'w', force_zip64=True) as f:\n\
        \x20       for _ in range(int(sys.argv[3])):\n\
        \x20           f.write(chunk)\n";
    python(
        script,
        &[
            zip.as_ref(),
            chunk_file.as_ref(),
            units.to_string().as_ref(),
        ],
    );
}

/// Runs a Python `script` with `args` (its `sys.argv[1..]`), which must
/// succeed.
fn python(script: &str, args: &[&std::ffi::OsStr]) {
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "python3 -c {script:?} {args:?}");
}

#[test]
fn unzip_stays_flat() {
    if !interop::have("python3", "python3") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let chunk = dir.path().join("chunk.txt");
    std::fs::write(&chunk, text_chunk(4 << 20)).unwrap();
    for units in [1, SCALE] {
        py_zip_one_entry(&dir.path().join(format!("in{units}.zip")), &chunk, units);
    }
    let zip = |units: usize| dir.path().join(format!("in{units}.zip"));
    let dest = |what: &str, units: usize| {
        let d = dir.path().join(format!("out-{what}-{units}"));
        let _ = std::fs::remove_dir_all(&d);
        d
    };
    assert_flat("unzip -p FILE", |units| {
        let mut c = perfkit();
        c.args(["unzip", "-p"]).arg(zip(units));
        (c, None)
    });
    assert_flat("unzip -t FILE", |units| {
        let mut c = perfkit();
        c.args(["unzip", "-t"]).arg(zip(units));
        (c, None)
    });
    assert_flat("unzip FILE -d DIR", |units| {
        let mut c = perfkit();
        c.arg("unzip")
            .arg(zip(units))
            .arg("-d")
            .arg(dest("file", units));
        (c, None)
    });
    assert_flat("unzip - -d DIR (stdin)", |units| {
        let mut c = perfkit();
        c.args(["unzip", "-", "-d"]).arg(dest("stdin", units));
        (c, Some(zip(units)))
    });
    assert_flat("unzip -p - (stdin)", |units| {
        let mut c = perfkit();
        c.args(["unzip", "-p", "-"]);
        (c, Some(zip(units)))
    });
}

/// The crate sources cargo fetched for this workspace (what users zip):
/// the first `crates` of them in name order, from `$CARGO_HOME` (or
/// `~/.cargo`). A build of this workspace always has them.
fn fetched_crates(crates: usize) -> Vec<std::path::PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let mut dirs: Vec<_> = std::fs::read_dir(home.join("registry/src"))
        .into_iter()
        .flatten()
        .flat_map(|index| std::fs::read_dir(index.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort_by_key(|p| p.file_name().map(|n| n.to_owned()));
    dirs.dedup_by_key(|p| p.file_name().map(|n| n.to_owned()));
    dirs.truncate(crates);
    assert_eq!(
        dirs.len(),
        crates,
        "fewer than {crates} crate sources under {}",
        home.join("registry/src").display()
    );
    dirs
}

/// Extracting a source tree stays small: Info-ZIP's `zip -r` of 60 of
/// the crates cargo fetched (about 5,000 files and their folders)
/// extracts within 32 MiB of peak RSS. Each deflated entry used to cost a
/// fresh 46 KiB inflate state, which glibc's heap kept (64 MB here, 490 MB
/// for all 26,000 files).
#[test]
fn unzip_of_a_source_tree_stays_under_32_mib() {
    if !interop::have("zip", "zip") || !interop::have("time", "time") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("crates.zip");
    for src in fetched_crates(60) {
        let status = Command::new("zip")
            .args(["-q", "-r", "-1"])
            .arg(&zip)
            .arg(src.file_name().unwrap())
            .current_dir(src.parent().unwrap())
            .status()
            .unwrap();
        assert!(status.success());
    }
    let mut c = perfkit();
    c.args(["unzip", "-q"])
        .arg(&zip)
        .arg("-d")
        .arg(dir.path().join("out"));
    let peak = peak_rss_kib(&mut c, None);
    eprintln!("unzip of 60 crates' sources: peak RSS {peak} KiB");
    assert!(
        peak <= 32 << 10,
        "unzip of 60 crates' sources peaked at {peak} KiB (over 32 MiB)"
    );
}

/// An archive Python's zipfile writes: `folders` folders of 100 small
/// files each, every folder an entry of its own.
fn py_zip_many_entries(zip: &Path, folders: usize) {
    let script = "import sys, zipfile\n\
        with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED, compresslevel=1) as z:\n\
        \x20   for d in range(int(sys.argv[2])):\n\
        \x20       z.writestr(f'tree/dir{d:04}/', b'')\n\
        \x20       for i in range(100):\n\
        \x20           z.writestr(f'tree/dir{d:04}/file{i:03}.txt', f'entry {d} {i} '.encode() * 8)\n";
    python(script, &[zip.as_ref(), folders.to_string().as_ref()]);
}

/// unzip's memory does not grow with the number of entries and folders:
/// archives of 10,100 and of 101,000 entries (100 and 1,000 folders of 100
/// files) extract, and test, within 32 MiB of peak RSS, the larger within
/// 6 MiB of the smaller. The central directory is walked a piece at a
/// time, never held; it used to be, about 200 bytes an entry (20 MB more
/// for the larger archive). What still grows is 16 bytes a name (the
/// duplicate check) and, while the archive is opened, 24 bytes an entry
/// (the overlap check): about 4 MB at 100,000 entries.
#[test]
fn unzip_of_100000_entries_stays_flat() {
    if !interop::have("time", "time") || !interop::have("python3", "python3") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Extraction creates 100,000 files: on tmpfs when there is one, since
    // this machine's disk takes 20-30 s of system time for that, and the
    // test measures memory, not the file system.
    let shm = Path::new("/dev/shm");
    let out = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir_in(dir.path()).unwrap()
    };
    let mut peaks = Vec::new();
    for folders in [100, 1_000] {
        let zip = dir.path().join(format!("{folders}.zip"));
        py_zip_many_entries(&zip, folders);
        let dest = out.path().join(folders.to_string());
        let mut c = perfkit();
        c.args(["unzip", "-q"]).arg(&zip).arg("-d").arg(&dest);
        let extract = peak_rss_kib(&mut c, None);
        let files = std::fs::read_dir(dest.join("tree/dir0000"))
            .unwrap()
            .count();
        assert_eq!(files, 100, "files extracted into the first folder");
        let last = dest.join(format!("tree/dir{:04}/file099.txt", folders - 1));
        assert_eq!(
            std::fs::read(&last).unwrap(),
            format!("entry {} 99 ", folders - 1).repeat(8).into_bytes(),
            "{}",
            last.display()
        );
        std::fs::remove_dir_all(&dest).unwrap();
        let mut t = perfkit();
        t.args(["unzip", "-tq"]).arg(&zip);
        let test = peak_rss_kib(&mut t, None);
        eprintln!(
            "unzip of {} entries: peak RSS {extract} KiB extracting, {test} KiB testing",
            folders * 101
        );
        peaks.push((extract, test));
    }
    let [(small_x, small_t), (large_x, large_t)] = peaks[..] else {
        unreachable!()
    };
    for (what, small, large) in [
        ("extracting", small_x, large_x),
        ("testing", small_t, large_t),
    ] {
        assert!(
            large <= 32 << 10,
            "{what} 101,000 entries peaked at {large} KiB (over 32 MiB)"
        );
        assert!(
            large <= small + (6 << 10),
            "{what}: peak RSS grew from {small} KiB at 10,100 entries to {large} KiB at 101,000 \
             (more than 6 MiB)"
        );
    }
}

/// A FIX log chunk of about `len` bytes: SOH-separated messages framed
/// here (BodyLength and CheckSum by plain arithmetic), one per line, every
/// 50th with a wrong checksum so the problem path runs too.
fn fix_log_chunk(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len + 256);
    let mut i = 0u64;
    while v.len() < len {
        let body = format!(
            "35=D\x0149=BUYER\x0156=SELLER\x0134={i}\x0111=ORD{i}\x0155=SYM{}\x0154=1\x0138={}\x01",
            i % 40,
            100 + i % 900
        );
        let head = format!("8=FIX.4.4\x019={}\x01{body}", body.len());
        let sum = head.bytes().map(u32::from).sum::<u32>() + u32::from(i.is_multiple_of(50));
        v.extend_from_slice(format!("{head}10={:03}\x01\n", sum % 256).as_bytes());
        i += 1;
    }
    v
}

/// Runs `fix check` (which exits 1 on the bad messages the inputs hold)
/// with its exit code checked here, so the memory case sees success.
fn fix_check_cmd(
    args: &[&str],
    input: &Path,
    stdin: bool,
) -> (Command, Option<std::path::PathBuf>) {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("\"$@\"; test $? = 1")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_perfkit"))
        .args(["fix", "check"])
        .args(args);
    if stdin {
        c.arg("-");
        (c, Some(input.to_path_buf()))
    } else {
        c.arg(input);
        (c, None)
    }
}

#[test]
fn fix_check_stays_flat() {
    let dir = tempfile::tempdir().unwrap();
    let chunk = fix_log_chunk(2 << 20);
    for units in [1, SCALE] {
        repeat_into(&dir.path().join(format!("fix{units}.log")), &chunk, units);
    }
    let input = |units: usize| dir.path().join(format!("fix{units}.log"));
    assert_flat("fix check FILE", |u| fix_check_cmd(&[], &input(u), false));
    assert_flat("fix check (stdin)", |u| fix_check_cmd(&[], &input(u), true));
    assert_flat("fix check --json FILE", |u| {
        fix_check_cmd(&["--json"], &input(u), false)
    });
    assert_flat("fix check --json (stdin)", |u| {
        fix_check_cmd(&["--json"], &input(u), true)
    });
}

/// `betree search` reads events one batch at a time and writes each batch's
/// lines before the next, in every mode, from a file and from stdin. The
/// expression file is the same small one in both runs; the event files are
/// 4,000 and 64,000 events (about 1 and 17 MB).
#[test]
fn betree_search_stays_flat() {
    let dir = tempfile::tempdir().unwrap();
    let exprs = dir.path().join("exprs.txt");
    let status = perfkit()
        .args(["betree", "gen-exprs", "--params", "128", "--count", "200"])
        .arg("-o")
        .arg(&exprs)
        .status()
        .unwrap();
    assert!(status.success());
    let out = perfkit()
        .args(["betree", "gen-events", "--params", "128", "--count", "4000"])
        .output()
        .unwrap();
    assert!(out.status.success());
    for units in [1, SCALE] {
        repeat_into(
            &dir.path().join(format!("ev{units}.txt")),
            &out.stdout,
            units,
        );
    }
    for mode in ["std", "all"] {
        assert_flat(&format!("betree search --mode {mode} (file)"), |units| {
            let mut c = perfkit();
            c.args(["betree", "search", "--mode", mode, "--exprs"])
                .arg(&exprs)
                .arg("--events")
                .arg(dir.path().join(format!("ev{units}.txt")));
            (c, None)
        });
    }
    assert_flat("betree search (stdin)", |units| {
        let mut c = perfkit();
        c.args(["betree", "search", "--events", "-", "--exprs"])
            .arg(&exprs);
        (c, Some(dir.path().join(format!("ev{units}.txt"))))
    });
}

#[test]
fn betree_adtech_generators_stay_flat() {
    assert_flat("betree gen-exprs --profile adtech", |units| {
        let mut c = perfkit();
        c.args(["betree", "gen-exprs", "--profile", "adtech", "--count"])
            .arg((10_000 * units).to_string());
        (c, None)
    });
    assert_flat("betree gen-events --profile adtech", |units| {
        let mut c = perfkit();
        c.args(["betree", "gen-events", "--profile", "adtech", "--count"])
            .arg((2_000 * units).to_string());
        (c, None)
    });
}

/// `betree diff` reads both outputs a line at a time: two identical search
/// outputs of about 4 and 64 MB (lines of ids as `betree search` writes
/// them, some empty) are compared in the same memory.
#[test]
fn betree_diff_stays_flat() {
    let dir = tempfile::tempdir().unwrap();
    let mut chunk = Vec::with_capacity((4 << 20) + 64);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while chunk.len() < 4 << 20 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        for k in 0..x % 12 {
            if k > 0 {
                chunk.push(b' ');
            }
            chunk.extend_from_slice((x % 5000 + k).to_string().as_bytes());
        }
        chunk.push(b'\n');
    }
    for units in [1, SCALE] {
        for side in ["a", "b"] {
            repeat_into(
                &dir.path().join(format!("{side}{units}.txt")),
                &chunk,
                units,
            );
        }
    }
    assert_flat("betree diff A B", |units| {
        let mut c = perfkit();
        c.args(["betree", "diff"])
            .arg(dir.path().join(format!("a{units}.txt")))
            .arg(dir.path().join(format!("b{units}.txt")));
        (c, None)
    });
    assert_flat("betree diff - B (stdin)", |units| {
        let mut c = perfkit();
        c.args(["betree", "diff", "-"])
            .arg(dir.path().join(format!("b{units}.txt")));
        (c, Some(dir.path().join(format!("a{units}.txt"))))
    });
}

/// `report merge` reads its logs a line at a time and keeps only each
/// tag's total: a log 16 times longer (the same intervals repeated) must
/// not cost more memory.
#[test]
fn report_merge_stays_flat() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let one = d.join("one.hlog");
    interop::ok(
        perfkit()
            .args(["fix", "bench", "--only", "parse", "--iterations", "2000"])
            .args(["--warmup", "100", "--runs", "1", "--hlog"])
            .arg(&one),
    );
    let text = std::fs::read_to_string(&one).unwrap();
    let (head, intervals): (Vec<&str>, Vec<&str>) =
        text.lines().partition(|l| !l.starts_with("Tag="));
    let mut chunk = String::new();
    // ~2 MiB of intervals in the small log: the decoded histograms of the
    // large one alone would be hundreds of MiB if they were all kept.
    while chunk.len() < 2 << 20 {
        for l in &intervals {
            chunk.push_str(l);
            chunk.push('\n');
        }
    }
    assert_flat("report merge", |units| {
        let path = d.join(format!("log-{units}.hlog"));
        let mut f = std::fs::File::create(&path).unwrap();
        writeln!(f, "{}", head.join("\n")).unwrap();
        drop(f);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        for _ in 0..units {
            f.write_all(chunk.as_bytes()).unwrap();
        }
        let mut c = perfkit();
        c.args(["report", "merge", "--json"]).arg(&path);
        (c, None)
    });
}
