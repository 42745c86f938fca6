//! File stores whose process is killed (`SIGKILL`: no destructor, no
//! flush):
//!
//! - while it keeps storing: every record it had flushed and
//!   acknowledged is read back, whole, by a fresh open;
//! - while it recovers a damaged store, at each step of the recovery (a
//!   fault point the recovery calls, not a timer): whatever a later
//!   plain start or a second recovery makes of what it left, no number
//!   already sent is given out again.
//!
//! The children are this same binary run with `STORE_KILL_CHILD` or
//! `RECOVER_KILL_CHILD` set, so the test has its own `main` (`harness =
//! false`) instead of registering the children's entry points as tests
//! that pass by doing nothing.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use fixsession::id::SessionId;
use fixsession::store::{Durability, FileStore, RecoveryStep, SessionStore, StoreError};

const CHILD: &str = "STORE_KILL_CHILD";
const RECOVER_CHILD: &str = "RECOVER_KILL_CHILD";

/// The recovery steps, in the order the store reaches them.
const STEPS: [RecoveryStep; 4] = [
    RecoveryStep::Scanned,
    RecoveryStep::SeqnumsWritten,
    RecoveryStep::HeaderCut,
    RecoveryStep::SessionWritten,
];

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
    let mut s = FileStore::open(prefix, Durability::Process, None).unwrap();
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
    let s = FileStore::open(&prefix, Durability::Process, None).unwrap();
    let next = s.next_sender_seq();
    assert!(next > acked, "acknowledged {acked}, resumed at {next}");
    let mut out = Vec::new();
    for seq in 1..next {
        out.clear();
        let found = s.load(seq, &mut out).unwrap();
        // Past the last acknowledged number, a death between writing the
        // body and its header entry leaves a number that is not reused
        // (the open skips past it) but has no entry to resend from.
        assert!(
            found || seq > acked,
            "seq {seq} lost (acknowledged {acked})"
        );
        if found {
            assert_eq!(out, message(seq), "seq {seq}");
        }
    }
}

/// The session the recovery tests' store belongs to.
fn owner() -> SessionId {
    SessionId::new("FIX.4.4", "EXEC", "BANZAI", "")
}

/// The message the recovery tests' store holds under `seq`: `message`
/// with the owner's CompIDs.
fn owned(seq: u64) -> Vec<u8> {
    let body = format!("35=D\x0134={seq}\x0149=EXEC\x0156=BANZAI\x0111=order-{seq}\x01");
    let mut m = format!("8=FIX.4.4\x019={}\x01{body}", body.len()).into_bytes();
    let sum = m.iter().map(|&b| u32::from(b)).sum::<u32>() % 256;
    m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    m
}

/// The recovering child: recovers the store, killing itself (`SIGKILL`,
/// so nothing after the step runs) when it reaches step `kill_at`.
fn recoverer(prefix: &Path, kill_at: usize) {
    let mut step = |s: RecoveryStep| {
        if STEPS[kill_at] == s {
            // SAFETY: kill(2) on this process's own pid; no memory is
            // involved.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
    };
    FileStore::recover_observed(prefix, Durability::Process, Some(&owner()), &mut step).unwrap();
}

/// Twelve messages sent, then damage everywhere: the header's sixth
/// entry, the numbers and the creation time. A recovery killed at each
/// step, then a plain start (which may refuse what is still damaged, but
/// never starts below 13) and a second recovery (which must start at 13
/// or above).
fn recovery_killed_at_each_step_never_reuses_a_number() {
    for (k, step) in STEPS.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = FileStore::prefix_in(dir.path(), "FIX.4.4", "EXEC", "BANZAI", "");
        let file = |ext: &str| dir.path().join(format!("FIX.4.4-EXEC-BANZAI.{ext}"));
        {
            let mut s = FileStore::open(&prefix, Durability::Process, Some(&owner())).unwrap();
            for seq in 1..=12 {
                s.save(seq, &owned(seq)).unwrap();
                s.set_seqs(seq + 1, 1).unwrap();
                s.flush().unwrap();
            }
        }
        let header = std::fs::read_to_string(file("header")).unwrap();
        let sixth = header.match_indices(' ').nth(4).unwrap().0 + 1;
        let mut damaged = header.into_bytes();
        damaged[sixth] = b'x';
        std::fs::write(file("header"), &damaged).unwrap();
        std::fs::write(file("seqnums"), "garbage").unwrap();
        std::fs::write(file("session"), "not a time").unwrap();
        let status = Command::new(std::env::current_exe().unwrap())
            .env(RECOVER_CHILD, &prefix)
            .env("RECOVER_KILL_AT", k.to_string())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{step:?}: {status}");
        match FileStore::open(&prefix, Durability::Process, Some(&owner())) {
            Ok(s) => assert!(
                s.next_sender_seq() >= 13,
                "{step:?}: plain start at {}",
                s.next_sender_seq()
            ),
            Err(StoreError::Corrupt { .. }) => {}
            Err(e) => panic!("{step:?}: plain start: {e}"),
        }
        let (s, _) = FileStore::recover(&prefix, Durability::Process, Some(&owner())).unwrap();
        assert!(
            s.next_sender_seq() >= 13,
            "{step:?}: second recovery at {}",
            s.next_sender_seq()
        );
        // Whole again: a plain start agrees, and what is left resends.
        drop(s);
        let s = FileStore::open(&prefix, Durability::Process, Some(&owner())).unwrap();
        assert!(s.next_sender_seq() >= 13, "{step:?}");
        let mut out = Vec::new();
        for seq in 1..=5 {
            out.clear();
            assert!(s.load(seq, &mut out).unwrap(), "{step:?}: {seq} lost");
            assert_eq!(out, owned(seq));
        }
    }
}

fn main() {
    if let Some(prefix) = std::env::var_os(CHILD) {
        writer(Path::new(&prefix));
        return;
    }
    if let Some(prefix) = std::env::var_os(RECOVER_CHILD) {
        let k = std::env::var("RECOVER_KILL_AT").unwrap().parse().unwrap();
        recoverer(Path::new(&prefix), k);
        // Not killed: the step was never reached, which the parent sees.
        return;
    }
    killed_writer_resumes_from_disk();
    recovery_killed_at_each_step_never_reuses_a_number();
    println!("store_kill: 2 passed, 0 failed");
}
