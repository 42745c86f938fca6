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
                serve(request_reader, reply_writer)
            })) {
                Ok(Ok(())) => 0,
                _ => 1,
            };
            // SAFETY: _exit(2) ends this copy without running the
            // parent's exit handlers or destructors a second time.
            unsafe { libc::_exit(code) };
        }
        Ok(Spawner {
            requests: Some(requests),
            replies,
            pid,
        })
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
        // Closing the request pipe ends the spawner's loop.
        drop(self.requests.take());
        let mut status = 0;
        // SAFETY: pid is our own child, not yet reaped; status is valid
        // for writes.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }
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
