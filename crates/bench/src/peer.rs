//! Where the peer programs live: the systems perfkit is measured against
//! that cannot be linked into this binary (QuickFIX is C++; `s-zip` on its
//! own default backend needs a build of its own, because one binary links
//! one flate2 backend).
//!
//! `cargo xtask peers` builds them into `target/peers/`. A bench that finds
//! a peer runs it in the same invocation and prints the ratio; one that does
//! not prints a note naming the command that builds it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use perfkit_report::one_line;

// The names live in their own dependency-free crate so xtask shares them
// without building this one.
pub use perfkit_peers::{
    DIR_ENV, QUICKFIX, QUICKFIX_DICTIONARY, QUICKFIX_SESSION, QUICKFIX_VERSION_FILE,
    ROUNDTRIP_FLOOR, SZIP, dir, locate,
};

/// Why a peer could not be measured (rendered as a note in the report), as
/// opposed to a failure of a peer that had started measuring (an error).
#[derive(Debug)]
pub struct Unavailable(pub String);

impl Unavailable {
    /// The one wording of the note that replaces a peer's rows:
    /// `{label} not measured: {why}`.
    pub fn because(label: &str, why: impl std::fmt::Display) -> Unavailable {
        Unavailable(format!("{label} not measured: {why}"))
    }
}

/// The rule for a peer that cannot be measured: if peer program `name` has
/// not been built, or `start` fails on it, the bench leaves the peer's rows
/// out and prints the returned note instead, naming the peer by `label`.
/// A missing peer's note is [`missing_note`] followed by `needs` (what
/// building it requires; may be empty). Failures after the peer started
/// are errors, not notes: they are the caller's. The note gives `start`'s
/// error with its causes, in one line.
pub fn start_or_note<T>(
    name: &str,
    label: &str,
    needs: &str,
    start: impl FnOnce(&Path) -> Result<T>,
) -> Result<T, Unavailable> {
    let Some(path) = locate(name) else {
        let missing = missing_note(name);
        return Err(Unavailable::because(
            label,
            format_args!("{missing}{needs}"),
        ));
    };
    start(&path).map_err(|e| Unavailable::because(label, one_line(&e)))
}

/// The one wording for a peer that has not been built: the command that
/// builds it and the variable that names another directory. Not the
/// directory it was looked for in, which is the build tree's (a path in
/// the user's output that means nothing where perfkit was installed).
pub fn missing_note(name: &str) -> String {
    format!(
        "{name} is not built; `cargo xtask peers` builds it, and {DIR_ENV} names the \
         directory that holds it"
    )
}

/// How far apart two outputs' sizes may be, in percent of the peer's, and
/// still count as the same work when perfkit is compared with a peer
/// (issue 64).
pub const EQUAL_SIZE_PERCENT: u64 = 1;

/// Whether outputs of `ours` and `theirs` bytes are the same work
/// ([`EQUAL_SIZE_PERCENT`]); in whole numbers, so that exactly 1 % off
/// counts as within it.
pub fn equal_size(ours: u64, theirs: u64) -> bool {
    u128::from(ours.abs_diff(theirs)) * 100 <= u128::from(theirs) * u128::from(EQUAL_SIZE_PERCENT)
}

/// How an output of `ours` bytes compares with one of `theirs`, in the
/// words every row's `held_equal` uses, so that a row off by more than
/// [`EQUAL_SIZE_PERCENT`] says so: "the same size (within 1 %)", "within 1 %", or
/// "NOT equal: 1.6 % smaller" (ours against theirs).
pub fn size_verdict(ours: u64, theirs: u64) -> String {
    if ours == theirs {
        return "the same size (within 1 %)".to_owned();
    }
    if equal_size(ours, theirs) {
        return "within 1 %".to_owned();
    }
    let ratio = ours as f64 / theirs.max(1) as f64;
    format!(
        "NOT equal: {:.1} % {}",
        (ratio - 1.0).abs() * 100.0,
        if ours > theirs { "larger" } else { "smaller" }
    )
}

/// How many of a peer's last stderr lines are kept to quote in an error.
const STDERR_LINES: usize = 8;

/// Longest stdout line accepted from a peer: a program that is not the peer
/// may print without ever ending a line, and that must not grow memory.
const MAX_LINE: u64 = 1 << 16;

/// How long a peer that was asked to exit gets before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How long a failing peer's stderr is waited for, to quote its last words.
/// The wait ends when the draining thread reaches the end of stderr, which
/// follows the child's exit at once unless a process it started holds the
/// pipe; so this is only spent then, and is long enough for the draining
/// thread to be scheduled on a loaded machine (500 ms was not: a dead
/// peer's "out of memory" went unquoted).
const STDERR_GRACE: Duration = Duration::from_secs(3);

/// The last lines a peer wrote to stderr, filled by a draining thread (a
/// peer blocked on a full stderr pipe would hang the bench).
#[derive(Default)]
struct Tail {
    lines: VecDeque<String>,
    ended: bool,
}

/// What fills a peer's stdin for one request, run by the writing thread:
/// it owns what it writes (a scenario of 200 MiB is shared, not copied).
type Request = Box<dyn FnOnce(&mut dyn Write) -> std::io::Result<()> + Send>;

/// The writing thread's side of a peer's stdin: requests go in, and the
/// outcome of each (written and flushed, or the error) comes back.
struct Stdin {
    requests: Sender<Request>,
    written: Receiver<std::io::Result<()>>,
}

/// A running peer program: stdin written by a thread so a write can time
/// out, stdout read line by line by another for the same reason, stderr
/// drained by a third that keeps its last lines. Dropping it ends the
/// child: politely (the `quit` bytes, then end of stdin) when the protocol
/// is between requests, otherwise — or when it does not exit within a
/// grace period — by killing it; either way it is reaped, and drop never
/// waits on a blocked child or a blocked write.
pub struct Process {
    /// The program, for messages.
    name: String,
    child: Child,
    /// `None` once the child has been killed.
    stdin: Option<Stdin>,
    lines: Receiver<std::io::Result<Vec<u8>>>,
    stderr: Arc<(Mutex<Tail>, Condvar)>,
    /// A request was sent and its reply not read to the end: the child may
    /// be blocked writing, so it must be killed, not asked to quit.
    busy: bool,
    /// Sent before stdin is closed when the child is idle at drop.
    quit: Vec<u8>,
}

impl Process {
    /// Starts `cmd` (its stdio is set here). `quit` is what the protocol
    /// sends to end the child politely (may be empty: end of stdin alone).
    pub fn spawn(mut cmd: Command, quit: &[u8]) -> std::io::Result<Process> {
        let name = cmd.get_program().to_string_lossy().into_owned();
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (Some(stdin), Some(stdout), Some(err)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("started without its pipes"));
        };
        let stderr = Arc::new((Mutex::new(Tail::default()), Condvar::new()));
        let tail = Arc::clone(&stderr);
        std::thread::spawn(move || drain_stderr(err, &tail));
        // Bounded, so a peer flooding stdout is held back by the pipe.
        let (tx, lines) = sync_channel(1024);
        std::thread::spawn(move || read_lines(stdout, &tx));
        let (requests, to_write) = channel();
        let (done, written) = channel();
        std::thread::spawn(move || write_requests(stdin, &to_write, &done));
        Ok(Process {
            name,
            child,
            stdin: Some(Stdin { requests, written }),
            lines,
            stderr,
            busy: false,
            quit: quit.to_vec(),
        })
    }

    /// Sends a request: `write` fills stdin, which is then flushed, on the
    /// writing thread. If that has not finished within `limit` (a program
    /// that is not the peer, or a peer that stopped reading, leaves a large
    /// request blocked), the child is killed and this returns without
    /// waiting for the thread. Killing the child ends the blocked write
    /// unless something else (a process the child started) keeps the pipe
    /// open; the thread is then left blocked, never waited on. There is no
    /// write without a limit. The process counts as busy until
    /// [`Process::idle`].
    pub fn send(
        &mut self,
        limit: Duration,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()> + Send + 'static,
    ) -> Result<()> {
        self.busy = true;
        let Some(stdin) = self.stdin.as_ref() else {
            return Err(self.fail("its stdin is closed"));
        };
        if stdin.requests.send(Box::new(write)).is_err() {
            return Err(self.fail("writing to it: the writing thread is gone"));
        }
        // Rendered into the message, not kept as the source: a broken pipe
        // in the chain would read as stdout's reader going away and end
        // perfkit quietly with 141, where a dead peer is a failure.
        match stdin.written.recv_timeout(limit) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(self.fail(&format!("writing to it: {e}"))),
            Err(RecvTimeoutError::Timeout) => Err(self.fail(&format!(
                "did not read its input within {} s",
                limit.as_secs_f64()
            ))),
            Err(RecvTimeoutError::Disconnected) => {
                Err(self.fail("writing to it: the writing thread panicked"))
            }
        }
    }

    /// Marks the reply to the last request as read to its end: the child
    /// is waiting for the next request, so it may be asked to quit.
    pub fn idle(&mut self) {
        self.busy = false;
    }

    /// The next stdout line, without its line break, if it comes within
    /// `timeout`; otherwise the child is killed (a program that is not the
    /// peer may never greet, and a peer may stall mid-run). End of output
    /// is "peer died" with its last stderr lines, and the child is reaped.
    /// There is no read without a limit.
    pub fn read_line_within(&mut self, timeout: Duration) -> Result<String> {
        match self.lines.recv_timeout(timeout) {
            Ok(got) => self.line(Some(got)),
            Err(RecvTimeoutError::Disconnected) => self.line(None),
            Err(RecvTimeoutError::Timeout) => Err(self.fail(&format!(
                "did not answer within {} s",
                timeout.as_secs_f64()
            ))),
        }
    }

    /// [`Process::read_line_within`] with the time left until `deadline`
    /// (one limit for all the lines of a reply).
    pub fn read_line_by(&mut self, deadline: Instant) -> Result<String> {
        self.read_line_within(deadline.saturating_duration_since(Instant::now()))
    }

    fn line(&mut self, got: Option<std::io::Result<Vec<u8>>>) -> Result<String> {
        match got {
            Some(Ok(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Some(Err(e)) => Err(self.fail(&format!("reading from it: {e}"))),
            None => Err(self.fail("peer died (its output ended)")),
        }
    }

    /// Kills and reaps the child and returns `what` as an [`Error::Peer`]
    /// naming the program and quoting its last stderr lines. Every failure
    /// mid-protocol goes through here, so no child is left blocked on a
    /// pipe.
    pub fn fail(&mut self, what: &str) -> Error {
        self.kill();
        Error::Peer {
            peer: self.name.clone(),
            message: what.to_owned(),
            stderr: self.stderr_tail(),
        }
    }

    /// Kills and reaps the child (a no-op if it already exited).
    pub fn kill(&mut self) {
        self.stdin = None;
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        self.busy = false;
    }

    /// The last stderr lines, oldest first (none if they cannot be had);
    /// waits a moment for the draining thread to reach the end of a dead
    /// child's.
    fn stderr_tail(&self) -> Vec<String> {
        let (tail, ended) = &*self.stderr;
        let Ok(guard) = tail.lock() else {
            return Vec::new();
        };
        match ended.wait_timeout_while(guard, STDERR_GRACE, |t| !t.ended) {
            Ok((g, _)) => g.lines.iter().cloned().collect(),
            Err(_) => Vec::new(),
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if !self.busy {
            if let Some(stdin) = self.stdin.take() {
                // Written by the thread, so a child that does not read
                // cannot block the drop; once the request is written, the
                // thread finds no more and closes stdin (end of input).
                let quit = std::mem::take(&mut self.quit);
                let _ = stdin
                    .requests
                    .send(Box::new(move |w: &mut dyn Write| w.write_all(&quit)));
            }
            let deadline = Instant::now() + EXIT_GRACE;
            while Instant::now() < deadline {
                if matches!(self.child.try_wait(), Ok(Some(_)) | Err(_)) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        // Busy (it may be blocked writing a reply no one reads) or deaf to
        // the request to quit: killed, then reaped so no zombie is left.
        self.kill();
    }
}

/// Runs each request on `stdin` and flushes it, reporting the outcome to
/// `done`, until the requests end (stdin is then closed) or one fails.
fn write_requests(
    stdin: ChildStdin,
    requests: &Receiver<Request>,
    done: &Sender<std::io::Result<()>>,
) {
    let mut w = BufWriter::new(stdin);
    for request in requests {
        let r = request(&mut w).and_then(|()| w.flush());
        let failed = r.is_err();
        if done.send(r).is_err() || failed {
            return;
        }
    }
}

/// Keeps the last [`STDERR_LINES`] lines of `err` until it ends.
fn drain_stderr(err: ChildStderr, tail: &(Mutex<Tail>, Condvar)) {
    let mut r = BufReader::new(err);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = r.by_ref().take(MAX_LINE).read_until(b'\n', &mut buf);
        let Ok(mut t) = tail.0.lock() else { return };
        match n {
            Ok(n) if n > 0 => {
                let line = String::from_utf8_lossy(&buf).trim().to_owned();
                if !line.is_empty() {
                    if t.lines.len() == STDERR_LINES {
                        t.lines.pop_front();
                    }
                    t.lines.push_back(line);
                }
            }
            _ => {
                t.ended = true;
                tail.1.notify_all();
                return;
            }
        }
    }
}

/// Sends each stdout line (without `\n`) to `tx` until stdout ends, a read
/// fails, or the receiver is gone.
fn read_lines(out: ChildStdout, tx: &SyncSender<std::io::Result<Vec<u8>>>) {
    let mut r = BufReader::new(out);
    loop {
        let mut buf = Vec::new();
        let item = match r.by_ref().take(MAX_LINE).read_until(b'\n', &mut buf) {
            Ok(0) => return,
            Ok(_) if buf.last() == Some(&b'\n') => {
                buf.pop();
                Ok(buf)
            }
            Ok(_) if buf.len() as u64 == MAX_LINE => Err(std::io::Error::other(format!(
                "a line longer than {MAX_LINE} bytes"
            ))),
            // The last line, cut short by the end of output.
            Ok(_) => Ok(buf),
            Err(e) => Err(e),
        };
        let stop = item.is_err();
        if tx.send(item).is_err() || stop {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn a_program_that_never_greets_times_out_and_is_killed() {
        let t = Instant::now();
        let mut p = Process::spawn(sh("exec sleep 30"), b"").unwrap();
        let e = p.read_line_within(Duration::from_millis(300)).unwrap_err();
        assert!(e.to_string().contains("did not answer within"), "{e}");
        drop(p);
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }

    #[test]
    fn a_large_write_that_is_not_read_times_out_without_waiting_on_the_write() {
        // The script, and the greeting it gives before it stops reading.
        for (script, greeting) in [
            // Never reads: killing it ends the blocked write.
            ("exec sleep 30", None),
            // Greets as a peer does, then stops reading (szip-peer's case:
            // the zip bench loads a scenario of up to 200 MiB after the hello).
            ("echo hello; exec sleep 30", Some("hello")),
            // The background sleep inherits stdin (and stderr) and outlives
            // the kill of the shell, so the blocked write does not end when
            // the child does, and is not waited for.
            ("exec 3<&0; sleep 20 <&3 3<&- & exec sleep 30", None),
        ] {
            let t = Instant::now();
            let mut p = Process::spawn(sh(script), b"").unwrap();
            if let Some(g) = greeting {
                assert_eq!(p.read_line_within(Duration::from_secs(30)).unwrap(), g);
            }
            // Far more than a pipe holds, owned by the writing thread and
            // shared with this one, as the zip bench shares a scenario.
            let big: Arc<[u8]> = vec![b'x'; 4 << 20].into();
            let mine = Arc::clone(&big);
            let limit = Duration::from_millis(300);
            let e = p.send(limit, move |w| w.write_all(&mine)).unwrap_err();
            assert!(
                e.to_string()
                    .contains("did not read its input within 0.3 s"),
                "{script}: {e}"
            );
            drop(p);
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "{script}: {:?}",
                t.elapsed()
            );
        }
    }

    #[test]
    fn a_peer_that_stalls_mid_reply_is_killed_at_the_deadline() {
        let t = Instant::now();
        let mut p = Process::spawn(sh("echo s; exec sleep 30"), b"").unwrap();
        let deadline = Instant::now() + Duration::from_millis(500);
        assert_eq!(p.read_line_by(deadline).unwrap(), "s");
        let e = p.read_line_by(deadline).unwrap_err();
        assert!(e.to_string().contains("did not answer within"), "{e}");
        drop(p);
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }

    #[test]
    fn end_of_output_is_a_death_quoting_the_last_stderr_lines() {
        let script = "for i in 1 2 3 4 5 6 7 8 9 10; do echo line$i >&2; done; exit 3";
        let mut p = Process::spawn(sh(script), b"").unwrap();
        let e = p
            .read_line_within(Duration::from_secs(30))
            .unwrap_err()
            .to_string();
        assert!(e.contains("peer died"), "{e}");
        // The last lines, not the first: line1 and line2 fell out.
        assert!(e.contains("line3 | line4") && e.ends_with("line10)"), "{e}");
        assert!(!e.contains("line1 "), "{e}");
    }

    #[test]
    fn dropping_a_busy_peer_that_floods_stdout_and_stderr_does_not_hang() {
        let t = Instant::now();
        // One process (echo is a shell builtin), so killing it ends both.
        let script = "while :; do echo s; echo err >&2; done";
        let mut p = Process::spawn(sh(script), b"quit\n").unwrap();
        p.send(Duration::from_secs(30), |w| w.write_all(b"run\n"))
            .unwrap();
        assert_eq!(p.read_line_within(Duration::from_secs(30)).unwrap(), "s");
        // Both pipes fill up; the child blocks writing; drop must kill it.
        std::thread::sleep(Duration::from_millis(200));
        drop(p);
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }

    #[test]
    fn an_idle_peer_that_ignores_quit_is_killed_after_the_grace() {
        let t = Instant::now();
        let p = Process::spawn(sh("trap '' HUP; exec sleep 30"), b"quit\n").unwrap();
        drop(p);
        let took = t.elapsed();
        assert!(took >= EXIT_GRACE && took < EXIT_GRACE * 4, "{took:?}");
    }

    #[test]
    fn sizes_more_than_one_percent_apart_are_said_not_equal() {
        assert_eq!(size_verdict(100, 100), "the same size (within 1 %)");
        assert_eq!(size_verdict(1010, 1000), "within 1 %");
        assert_eq!(size_verdict(990, 1000), "within 1 %");
        assert_eq!(size_verdict(1011, 1000), "NOT equal: 1.1 % larger");
        assert_eq!(size_verdict(984, 1000), "NOT equal: 1.6 % smaller");
        assert_eq!(size_verdict(5, 0), "NOT equal: 400.0 % larger");
    }
}
