//! Every command that streams keeps its memory flat as its input grows.
//!
//! Each case runs one command twice as a child process, on a small input and
//! on one 16 times larger, and reads the child's peak resident set from the
//! kernel (`wait4`'s rusage, so it is the child's own figure, not a sample).
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
/// given), and returns its peak resident set in KiB from `wait4`. Fails the
/// test when the command fails.
fn peak_rss_kib(cmd: &mut Command, stdin: Option<&Path>) -> u64 {
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    match stdin {
        Some(p) => cmd.stdin(std::fs::File::open(p).expect("open stdin input")),
        None => cmd.stdin(Stdio::null()),
    };
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
    let mut stderr = child.stderr.take().expect("piped stderr");
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut v);
        v
    });
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet reaped (std's `Child` is never
    // waited on after this), and both out-pointers are valid for writes.
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4: {}", std::io::Error::last_os_error());
    let err = err.join().unwrap();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{cmd:?} failed (wait status {status}): {}",
        String::from_utf8_lossy(&err)
    );
    // Linux reports ru_maxrss in KiB.
    u64::try_from(usage.ru_maxrss).expect("non-negative ru_maxrss")
}

/// Runs the small and the large case and asserts the large one's peak RSS
/// stays within [`MAX_GROWTH`] of the small one's. `make` builds the
/// command for an input of `scale` units; `stdin` names the file each run
/// reads on its standard input, if any.
fn assert_flat(what: &str, mut make: impl FnMut(usize) -> (Command, Option<std::path::PathBuf>)) {
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
        if x % 11 == 0 {
            v.extend_from_slice(format!("{}\n", x % 100_000).as_bytes());
        }
    }
    v.truncate(len);
    v
}

#[test]
fn compress_and_decompress_stay_flat() {
    let dir = tempfile::tempdir().unwrap();
    let chunk = text_chunk(4 << 20);
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
