//! A file store written by a process that is killed (`SIGKILL`: no
//! destructor, no flush) while it keeps storing: every record it had
//! flushed and acknowledged is read back, whole, by a fresh open.
//!
//! The writer is this same binary run as a child with `STORE_KILL_CHILD`
//! naming the store, so the test has its own `main` (`harness = false`)
//! instead of registering the child's entry point as a test that passes
//! by doing nothing.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use fixcore::session::store::{Durability, FileStore, SessionStore};

const CHILD: &str = "STORE_KILL_CHILD";

/// The message stored under `seq`: a whole FIX message (the store checks
/// CheckSums at open) whose bytes are a function of `seq` alone.
fn message(seq: u64) -> Vec<u8> {
    let body = format!(
        "35=D\x0134={seq}\x0111=order-{seq}\x0158={}\x01",
        "x".repeat((seq % 50) as usize + 1)
    );
    let mut m = format!("8=FIX.4.4\x019={}\x01{body}", body.len()).into_bytes();
    let sum = m.iter().map(|&b| u32::from(b)).sum::<u32>() % 256;
    m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    m
}

/// The child: stores forever, printing each number once flushed.
fn writer(prefix: &Path) {
    let mut s = FileStore::open(prefix, Durability::Process).unwrap();
    let mut out = std::io::stdout().lock();
    for seq in 1.. {
        s.save(seq, &message(seq)).unwrap();
        s.set_seqs(seq + 1, 1).unwrap();
        s.flush().unwrap();
        writeln!(out, "{seq}").unwrap();
        out.flush().unwrap();
    }
}

fn killed_writer_resumes_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = FileStore::prefix_in(dir.path(), "FIX.4.4", "EXEC", "BANZAI", "");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, &prefix)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut acked = 0u64;
    while acked < 300 {
        let line = lines.next().expect("the writer stopped early").unwrap();
        acked = line.trim().parse().unwrap();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let s = FileStore::open(&prefix, Durability::Process).unwrap();
    let next = s.next_sender_seq();
    assert!(next > acked, "acknowledged {acked}, resumed at {next}");
    let mut out = Vec::new();
    for seq in 1..next {
        out.clear();
        assert!(s.load(seq, &mut out).unwrap(), "seq {seq} lost");
        assert_eq!(out, message(seq), "seq {seq}");
    }
}

fn main() {
    if let Some(prefix) = std::env::var_os(CHILD) {
        writer(Path::new(&prefix));
        return;
    }
    killed_writer_resumes_from_disk();
    println!("store_kill: 1 passed, 0 failed");
}
