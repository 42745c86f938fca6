//! The small process measured children are started from (see the parent
//! module's doc for why): a `fork` of this program taken early, which
//! reads one request per child over a pipe, runs it with [`super::run`]
//! and writes back the usage or the error.
//!
//! Requests and replies are length-prefixed byte strings (a little-endian
//! `u32`, then the bytes), so arguments holding any bytes, newlines
//! included, cross intact.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::{ChildError, Result, Usage};

fn spawner_error(what: &str, e: impl std::fmt::Display) -> ChildError {
    ChildError::Spawner(format!("{what}: {e}"))
}

/// A forked copy of this program, still as small as it was when forked,
/// that starts the children [`Spawner::run`] asks for. Dropping it ends
/// the copy (it sees its request pipe close) and reaps it.
#[derive(Debug)]
pub struct Spawner {
    /// `None` only while dropping.
    requests: Option<io::PipeWriter>,
    replies: io::PipeReader,
    pid: libc::pid_t,
}

impl Spawner {
    /// Forks the spawner now. Call it before the program grows (before
    /// the in-process measuring starts) and while no other thread is
    /// inside the allocator or holds a lock the spawner needs: the copy
    /// keeps only the calling thread.
    pub fn fork() -> Result<Spawner> {
        let pipe = || io::pipe().map_err(|e| spawner_error("creating its pipes", e));
        let (request_reader, requests) = pipe()?;
        let (replies, reply_writer) = pipe()?;
        // SAFETY: fork(2) has no memory-safety preconditions; the child
        // below only runs `serve`, which allocates (glibc's fork keeps the
        // allocator usable in the child) and never returns to the caller.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(spawner_error("forking it", io::Error::last_os_error()));
        }
        if pid == 0 {
            drop(requests);
            drop(replies);
            let code = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                keep_only(&[request_reader.as_raw_fd(), reply_writer.as_raw_fd()])?;
                let mut reply_writer = reply_writer;
                reply_writer.write_all(&frame(READY))?;
                serve(request_reader, reply_writer)
            })) {
                Ok(Ok(())) => 0,
                _ => 1,
            };
            // SAFETY: _exit(2) ends this copy without running the
            // parent's exit handlers or destructors a second time.
            unsafe { libc::_exit(code) };
        }
        let mut spawner = Spawner {
            requests: Some(requests),
            replies,
            pid,
        };
        // Its first word says it has shed the descriptors it inherited,
        // or that it died trying (end of file).
        match take(&mut spawner.replies) {
            Ok(word) if word == READY => Ok(spawner),
            Ok(_) => Err(ChildError::Spawner(
                "it greeted with an unknown word".into(),
            )),
            Err(e) => Err(spawner_error("its greeting", e)),
        }
    }

    /// Runs `cmd` (program, arguments, directory and environment
    /// changes; stdin and stdout are /dev/null) from the spawner, and
    /// returns what it cost; fails unless it exited 0, with its stderr.
    pub fn run(&mut self, cmd: &Command) -> Result<Usage> {
        let mut request = Vec::new();
        put(&mut request, cmd.get_program().as_bytes());
        put_count(&mut request, cmd.get_args().count());
        for a in cmd.get_args() {
            put(&mut request, a.as_bytes());
        }
        match cmd.get_current_dir() {
            Some(d) => {
                put_count(&mut request, 1);
                put(&mut request, d.as_os_str().as_bytes());
            }
            None => put_count(&mut request, 0),
        }
        put_count(&mut request, cmd.get_envs().count());
        for (k, v) in cmd.get_envs() {
            put(&mut request, k.as_bytes());
            match v {
                Some(v) => {
                    put_count(&mut request, 1);
                    put(&mut request, v.as_bytes());
                }
                None => put_count(&mut request, 0),
            }
        }
        self.requests
            .as_mut()
            .ok_or_else(|| ChildError::Spawner("it has ended".into()))?
            .write_all(&request)
            .map_err(|e| spawner_error("sending it a child", e))?;
        let reply = |r: &mut io::PipeReader| take(r).map_err(|e| spawner_error("its reply", e));
        let ok = reply(&mut self.replies)?;
        let text = reply(&mut self.replies)?;
        let text = String::from_utf8_lossy(&text);
        match ok.as_slice() {
            b"ok" => Usage::parse(&text)
                .ok_or_else(|| ChildError::Spawner(format!("malformed child usage {text:?}"))),
            // The child's own failure, as the spawner's run() worded it.
            _ => Err(ChildError::Spawner(text.into_owned())),
        }
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        // Closing the request pipe ends the spawner's loop. Should it not
        // end (it cannot be inside a request: `run` holds `&mut self`),
        // it is killed rather than waited on for ever.
        drop(self.requests.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let mut status = 0;
            // SAFETY: pid is our own child, not yet reaped; status is
            // valid for writes.
            let reaped = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            if reaped != 0 {
                return;
            }
            if std::time::Instant::now() >= deadline {
                // SAFETY: pid is our own unreaped child, so the signal
                // cannot reach a recycled process; status is valid for
                // writes.
                unsafe {
                    libc::kill(self.pid, libc::SIGKILL);
                    libc::waitpid(self.pid, &mut status, 0);
                }
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

/// The spawner's greeting once it holds only its own descriptors.
const READY: &[u8] = b"ready";

/// Closes every descriptor of this process above stderr but `keep`.
///
/// A fork inherits every descriptor of the program, close-on-exec or
/// not, and the spawner never execs. Holding another spawner's request
/// pipe (two forked from concurrent threads, as tests do) would keep
/// that spawner from ever seeing end of file, and its owner's drop from
/// returning; holding a socket or an output file keeps it open for the
/// program's whole life.
fn keep_only(keep: &[RawFd]) -> io::Result<()> {
    let open: Vec<RawFd> = std::fs::read_dir("/proc/self/fd")?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    for fd in open {
        if fd > 2 && !keep.contains(&fd) {
            // SAFETY: closing a descriptor this copy owns and no Rust
            // object of this copy will use again: the only objects still
            // alive here are the two pipes in `keep`. (The listing's own
            // descriptor is already closed and fails harmlessly.)
            unsafe { libc::close(fd) };
        }
    }
    Ok(())
}

/// The spawner's loop: one child per request until the pipe closes.
fn serve(mut requests: io::PipeReader, mut replies: io::PipeWriter) -> io::Result<()> {
    // Interrupts meant for the program end the spawner too, instead of
    // running the program's handlers in this copy.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: restoring a signal's default disposition.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    loop {
        let program = match take(&mut requests) {
            Ok(p) => OsString::from_vec(p),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        };
        let mut cmd = Command::new(program);
        for _ in 0..take_count(&mut requests)? {
            cmd.arg(OsStr::from_bytes(&take(&mut requests)?));
        }
        if take_count(&mut requests)? == 1 {
            cmd.current_dir(PathBuf::from(OsString::from_vec(take(&mut requests)?)));
        }
        for _ in 0..take_count(&mut requests)? {
            let k = OsString::from_vec(take(&mut requests)?);
            if take_count(&mut requests)? == 1 {
                cmd.env(k, OsStr::from_bytes(&take(&mut requests)?));
            } else {
                cmd.env_remove(k);
            }
        }
        cmd.stdin(Stdio::null()).stdout(Stdio::null());
        let mut reply = Vec::new();
        match super::run(&mut cmd) {
            Ok(u) => {
                put(&mut reply, b"ok");
                put(&mut reply, u.to_line().as_bytes());
            }
            Err(e) => {
                put(&mut reply, b"err");
                put(&mut reply, e.to_string().as_bytes());
            }
        }
        replies.write_all(&reply)?;
    }
}

fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, bytes);
    out
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = u32::try_from(bytes.len()).expect("a request field under 4 GiB");
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(bytes);
}

fn put_count(out: &mut Vec<u8>, n: usize) {
    put(out, &(n as u64).to_le_bytes());
}

fn take(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut n = [0u8; 4];
    r.read_exact(&mut n)?;
    let mut v = vec![0; u32::from_le_bytes(n) as usize];
    r.read_exact(&mut v)?;
    Ok(v)
}

fn take_count(r: &mut impl Read) -> io::Result<u64> {
    let v = take(r)?;
    let bytes: [u8; 8] = v
        .try_into()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a count of 8 bytes"))?;
    Ok(u64::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments, directory and environment reach the child as given,
    /// newlines and all; a failing child's stderr comes back as the error.
    #[test]
    fn the_spawner_runs_what_it_is_sent() {
        let mut spawner = Spawner::fork().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "printf '%s' \"$1\" > out; printf '%s' \"$X\" > env",
            "sh",
            "a\nb c",
        ])
        .current_dir(dir.path())
        .env("X", "y\nz");
        let u = spawner.run(&cmd).unwrap();
        assert!(u.peak_rss_bytes > 0);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("out")).unwrap(),
            "a\nb c"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("env")).unwrap(),
            "y\nz"
        );
        let e = spawner
            .run(Command::new("sh").args(["-c", "echo nope >&2; exit 3"]))
            .unwrap_err();
        assert!(format!("{e:#}").contains("nope"), "{e:#}");
        // Still serving after a failure.
        spawner
            .run(Command::new("true").env_remove("PATH_UNUSED"))
            .unwrap();
    }

    /// A spawner holds stdio and its own two pipes, nothing else: not
    /// the pipes of a spawner forked before it, whose end of file it
    /// would otherwise withhold (the two would wait on each other when
    /// dropped, as concurrent tests did).
    #[test]
    fn a_spawner_holds_only_its_own_pipes() {
        let first = Spawner::fork().unwrap();
        let kept = tempfile::tempfile().unwrap();
        let second = Spawner::fork().unwrap();
        let fds = |pid: libc::pid_t| -> Vec<i32> {
            let mut v: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/fd"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_str().unwrap().parse().unwrap())
                .collect();
            v.sort();
            v
        };
        let own = |s: &Spawner| {
            // What each descriptor above stderr names ("pipe:[inode]"):
            // the spawner's ends name the same pipes as ours.
            let mut v: Vec<String> = fds(s.pid)
                .into_iter()
                .filter(|fd| *fd > 2)
                .map(|fd| {
                    std::fs::read_link(format!("/proc/{}/fd/{fd}", s.pid))
                        .unwrap()
                        .display()
                        .to_string()
                })
                .collect();
            v.sort();
            v
        };
        let inode = |f: &dyn AsRawFd| {
            std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd()))
                .unwrap()
                .display()
                .to_string()
        };
        for s in [&first, &second] {
            let mut want = vec![inode(s.requests.as_ref().unwrap()), inode(&s.replies)];
            want.sort();
            assert_eq!(own(s), want, "spawner {} holds other descriptors", s.pid);
        }
        drop(kept);
        drop(first);
        drop(second);
    }

    /// The reason the spawner exists: a child started from it does not
    /// inherit this process's peak resident set.
    #[test]
    fn a_child_of_the_spawner_does_not_inherit_a_big_peak() {
        let mut spawner = Spawner::fork().unwrap();
        // Grow this process by 256 MiB of touched memory after the fork.
        let big = vec![1u8; 256 << 20];
        std::hint::black_box(&big);
        let direct = super::super::run(Command::new("true").stdin(Stdio::null())).unwrap();
        let spawned = spawner.run(&Command::new("true")).unwrap();
        assert!(
            direct.peak_rss_bytes >= 256 << 20,
            "direct child {}",
            direct.peak_rss_bytes
        );
        assert!(
            spawned.peak_rss_bytes < 128 << 20,
            "spawned child {}",
            spawned.peak_rss_bytes
        );
    }
}
