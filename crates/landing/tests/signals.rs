//! `cleanup::install`'s guarantees, each checked in a child process (this
//! test program run again with `LANDING_CHILD` set), as handlers and
//! threads are the whole process's: the signal thread starts only with
//! the first output, a signal before it ends the process with 128 + the
//! signal's number, and one after it also deletes the temporaries.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The environment variable naming what a child does.
const CHILD: &str = "LANDING_CHILD";
/// The directory a child writes its output in.
const DIR: &str = "LANDING_DIR";

/// Whether this process has a thread named `cleanup` (the signal
/// thread), or gets one within 200 ms: a thread names itself once
/// it runs.
fn has_cleanup_thread() -> bool {
    let deadline = Instant::now() + Duration::from_millis(200);
    loop {
        let named = std::fs::read_dir("/proc/self/task").unwrap().any(|t| {
            let comm = t.unwrap().path().join("comm");
            std::fs::read_to_string(comm).is_ok_and(|c| c.trim() == "cleanup")
        });
        if named || Instant::now() > deadline {
            return named;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What a child runs: the test harness calls it like any test, and it
/// does nothing unless `LANDING_CHILD` says what to do.
#[test]
fn child() {
    let Ok(what) = std::env::var(CHILD) else {
        return;
    };
    landing::cleanup::install().unwrap();
    let mut out = std::io::stdout();
    writeln!(out, "@thread after install: {}", has_cleanup_thread()).unwrap();
    let output = match what.as_str() {
        "idle" => None,
        "writing" => {
            let dir = std::env::var(DIR).unwrap();
            let mut o = landing::Output::create(&Path::new(&dir).join("out"), false).unwrap();
            o.file_mut().write_all(b"half").unwrap();
            Some(o)
        }
        other => panic!("unknown child {other}"),
    };
    writeln!(out, "@thread now: {}", has_cleanup_thread()).unwrap();
    writeln!(out, "@ready").unwrap();
    out.flush().unwrap();
    std::thread::sleep(Duration::from_secs(60));
    drop(output);
}

/// Starts a child doing `what` (writing in `dir`), waits for its
/// "ready", sends it `signal`, and returns its lines and exit code.
fn run_child(what: &str, dir: &Path, signal: i32) -> (Vec<String>, Option<i32>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads", "1"])
        .env(CHILD, what)
        .env(DIR, dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    loop {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "child: {lines:?}");
        // The child's own lines start at an `@` (the harness writes too).
        let Some((_, ours)) = line.trim().split_once('@') else {
            continue;
        };
        if ours == "ready" {
            break;
        }
        lines.push(ours.to_owned());
    }
    // SAFETY: kill(2) on the pid of a child spawned above and not yet
    // reaped, so the pid cannot have been reused.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the child did not exit on signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (lines, status.code())
}

/// A process that lists no temporary starts no signal thread, and a
/// signal still ends it with 128 + its number (an exit, not a death by
/// the signal, as before the thread was made lazy).
#[test]
fn no_thread_until_an_output_and_the_status_is_the_same() {
    let dir = tempfile::tempdir().unwrap();
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let (lines, code) = run_child("idle", dir.path(), signal);
        assert_eq!(
            lines,
            ["thread after install: false", "thread now: false"],
            "signal {signal}"
        );
        assert_eq!(code, Some(128 + signal));
    }
}

/// The first output starts the signal thread before its temporary
/// exists, and a signal then deletes the temporary and exits with 128 +
/// its number.
#[test]
fn the_first_output_starts_the_thread_that_deletes_it() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let dir = tempfile::tempdir().unwrap();
        let (lines, code) = run_child("writing", dir.path(), signal);
        assert_eq!(
            lines,
            ["thread after install: false", "thread now: true"],
            "signal {signal}"
        );
        assert_eq!(code, Some(128 + signal));
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "left after signal {signal}: {left:?}");
    }
}
