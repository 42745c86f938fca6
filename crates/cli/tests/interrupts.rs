//! Issue 13.8: a signal that ends perfkit mid-run (Ctrl-C, `kill`, a
//! closed terminal) leaves no hidden temporary beside the output (the
//! commands' `.perfkit-*.partial`, unzip's `.NAME.zipstream-*`), and the
//! exit status is 128 + the signal's number.
//!
//! Each case runs a real child whose input is a FIFO (or stdin) fed half
//! its data and then held open, so the child is provably mid-run, with its
//! temporary on disk, when the signal comes.

mod interop;

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use interop::{listing, ok, perfkit};

/// The hidden files in `dir`: every temporary perfkit makes is one, and
/// the tests put none there themselves.
fn temporaries(dir: &Path) -> Vec<String> {
    listing(dir)
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect()
}

/// Waits until `dir` holds a perfkit temporary (the child is writing).
fn wait_for_temporary(dir: &Path, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while temporaries(dir).is_empty() {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("perfkit exited ({st}) before writing a temporary");
        }
        assert!(Instant::now() < deadline, "no temporary appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` to `child` and checks it exits with 128 + signal within
/// a minute.
fn signal_and_wait(mut child: Child, signal: i32) {
    // SAFETY: kill(2) on the pid of a child this test spawned and has not
    // yet reaped, so the pid cannot have been reused.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(rc, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("perfkit did not exit on signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(128 + signal), "{status}");
}

/// Sends `signal` to `child` and checks it exits with 128 + signal within
/// a minute, leaving no temporary and no output in `dir`.
fn interrupt(child: Child, signal: i32, dir: &Path, output: &str) {
    signal_and_wait(child, signal);
    assert_eq!(temporaries(dir), Vec::<String>::new(), "signal {signal}");
    assert!(
        !dir.join(output).exists(),
        "{output} left after signal {signal}"
    );
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Opens `fifo` for writing on a thread, writes `data` and holds the FIFO
/// open until the returned sender is dropped.
fn feed_and_hold(fifo: &Path, data: Vec<u8>) -> std::sync::mpsc::Sender<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let path = fifo.to_path_buf();
    std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        let _ = f.write_all(&data);
        let _ = f.flush();
        let _ = rx.recv();
    });
    tx
}

fn sample(len: usize) -> Vec<u8> {
    (0..len as u64)
        .flat_map(|i| format!("{} ", i.wrapping_mul(0x9E37_79B9) % 100_003).into_bytes())
        .take(len)
        .collect()
}

#[test]
fn decompress_and_compress_from_a_slow_fifo_leave_no_temporary() {
    for (signal, mode) in [
        (libc::SIGINT, "decompress"),
        (libc::SIGTERM, "decompress"),
        (libc::SIGHUP, "compress"),
        (libc::SIGTERM, "compress"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let plain = sample(4 << 20);
        let data = if mode == "decompress" {
            std::fs::write(d.join("p"), &plain).unwrap();
            ok(perfkit()
                .current_dir(d)
                .args(["compress", "-q", "--rm", "p"]));
            let z = std::fs::read(d.join("p.zst")).unwrap();
            std::fs::remove_file(d.join("p.zst")).unwrap();
            z[..z.len() / 2].to_vec()
        } else {
            plain[..plain.len() / 2].to_vec()
        };
        let fifo = d.join("in.fifo");
        mkfifo(&fifo);
        let hold = feed_and_hold(&fifo, data);
        let mut child = perfkit()
            .current_dir(d)
            .args([mode, "in.fifo", "-o", "out"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_temporary(d, &mut child);
        // Let it consume what the FIFO holds and write it out.
        std::thread::sleep(Duration::from_millis(300));
        interrupt(child, signal, d, "out");
        drop(hold);
        let left: Vec<String> = listing(d).into_iter().filter(|n| n != "in.fifo").collect();
        assert_eq!(left, Vec::<String>::new(), "{mode} signal {signal}");
    }
}

/// `len` letters from sixteen, at random (the testkit's noise, four bits
/// a byte): data that zstd halves, so half its frame is half the output
/// (of `sample`'s, 24 MiB make 140 kB).
fn letters(len: usize) -> Vec<u8> {
    perfkit_testkit::noise::noise(len, 7)
        .into_iter()
        .map(|b| b'a' + (b >> 4))
        .collect()
}

/// `decompress -c > out` ended by a signal mid-run: standard output's
/// file had blocks reserved ahead of its writes (`landing::reserve`),
/// which the writer's drop would have released; no destructor runs on a
/// signal, so the signal thread releases them, and the file holds no more
/// blocks than its bytes need.
#[test]
fn decompress_to_a_redirected_stdout_releases_its_reserved_blocks_on_a_signal() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("p"), letters(24 << 20)).unwrap();
        ok(perfkit()
            .current_dir(d)
            .args(["compress", "-q", "--rm", "p"]));
        let z = std::fs::read(d.join("p.zst")).unwrap();
        let fifo = d.join("in.fifo");
        mkfifo(&fifo);
        let hold = feed_and_hold(&fifo, z[..z.len() / 2].to_vec());
        let out = d.join("out");
        let mut child = perfkit()
            .current_dir(d)
            .args(["decompress", "-c", "in.fifo"])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait until what the FIFO holds is decoded and written: the file
        // stops growing, some MiB long.
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = 0;
        let meta = loop {
            std::thread::sleep(Duration::from_millis(300));
            let meta = std::fs::metadata(&out).unwrap();
            if meta.len() >= 4 << 20 && meta.len() == last {
                break meta;
            }
            last = meta.len();
            assert!(child.try_wait().unwrap().is_none(), "perfkit exited early");
            assert!(Instant::now() < deadline, "{} bytes written", meta.len());
        };
        // Blocks reserved past the end, or the test shows nothing.
        let (len, held) = (meta.len(), meta.blocks() * 512);
        assert!(
            held >= len + (1 << 20),
            "{held} bytes allocated to {len} written: nothing was reserved ahead"
        );
        signal_and_wait(child, signal);
        drop(hold);
        let meta = std::fs::metadata(&out).unwrap();
        let (len, held) = (meta.len(), meta.blocks() * 512);
        assert!(
            held < len + (256 << 10),
            "{held} bytes allocated to {len} written after signal {signal}: the reservation was left"
        );
    }
}

#[test]
fn zip_and_betree_search_from_a_slow_stdin_leave_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(perfkit().current_dir(d).args([
        "betree",
        "gen-exprs",
        "--params",
        "8",
        "--count",
        "50",
        "-o",
        "e.txt",
    ]));
    let events = ok(perfkit().current_dir(d).args([
        "betree",
        "gen-events",
        "--params",
        "8",
        "--count",
        "5000",
    ]))
    .stdout;
    let cases: [(&[&str], &str, Vec<u8>); 2] = [
        (&["zip", "-q", "out.zip", "-"], "out.zip", sample(1 << 20)),
        (
            &[
                "betree", "search", "--exprs", "e.txt", "--events", "-", "-o", "out",
            ],
            "out",
            events[..events.len() / 2].to_vec(),
        ),
    ];
    for (args, output, data) in cases {
        let mut child = perfkit()
            .current_dir(d)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&data).unwrap();
        stdin.flush().unwrap();
        wait_for_temporary(d, &mut child);
        std::thread::sleep(Duration::from_millis(300));
        interrupt(child, libc::SIGINT, d, output);
        drop(stdin);
    }
    assert_eq!(listing(d), vec!["e.txt".to_string()]);
}

#[test]
fn unzip_from_a_slow_stdin_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Larger than extraction's 64 KiB buffer, so the entry is written to a
    // temporary and renamed; stored, so half the archive is half the file.
    std::fs::write(d.join("big.bin"), sample(4 << 20)).unwrap();
    ok(perfkit()
        .current_dir(d)
        .args(["zip", "-q", "-0", "a.zip", "big.bin"]));
    let archive = std::fs::read(d.join("a.zip")).unwrap();
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let out = d.join(format!("out{signal}"));
        std::fs::create_dir(&out).unwrap();
        let mut child = perfkit()
            .current_dir(&out)
            .args(["unzip", "-q", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&archive[..archive.len() / 2]).unwrap();
        stdin.flush().unwrap();
        wait_for_temporary(&out, &mut child);
        std::thread::sleep(Duration::from_millis(300));
        interrupt(child, signal, &out, "big.bin");
        drop(stdin);
        assert_eq!(listing(&out), Vec::<String>::new(), "signal {signal}");
    }
}
