//! A child process run to completion and what the kernel says it cost:
//! wall time, user+system CPU time and peak resident set, from `wait4`'s
//! rusage, so the figures are the child's own rather than samples.
//!
//! One kernel rule shapes this module: a child's `ru_maxrss` starts at the
//! peak resident set of the process that spawned it (Linux carries the old
//! memory map's high-water mark across `exec`, and a `vfork`ed child shares
//! its parent's map). A big parent, such as `perfkit bench` after its
//! in-process parts, would then lend every child its own peak. A
//! [`Spawner`] is therefore forked while the program is still small (before
//! its measuring starts) and starts every measured child from there, so the
//! floor is the few MiB the program had then, the same for every program
//! measured; no second program, and no launcher mode of the binary.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod spawner;

pub use spawner::Spawner;

/// Why a child's usage could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The program could not be started.
    #[error("starting {command}: {source}")]
    Start {
        /// The command, as `Debug` shows it.
        command: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// Waiting for it failed.
    #[error("waiting for {command}: {source}")]
    Wait {
        /// The command, as `Debug` shows it.
        command: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// It ran and did not exit 0.
    #[error("{command} failed (wait status {status}): {stderr}")]
    Failed {
        /// The command, as `Debug` shows it.
        command: String,
        /// The raw wait status.
        status: i32,
        /// What it wrote to stderr, trimmed.
        stderr: String,
    },
    /// Talking to the [`Spawner`] failed, or it ended.
    #[error("the spawner: {0}")]
    Spawner(String),
}

/// A child's usage, or why there is none.
pub type Result<T, E = ChildError> = std::result::Result<T, E>;

/// What one finished child cost.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// From spawn to reaped.
    pub wall: Duration,
    /// User plus system CPU time of the child.
    pub cpu: Duration,
    /// Peak resident set, in bytes.
    pub peak_rss_bytes: u64,
}

impl Usage {
    /// The one-line form a [`Spawner`] replies with: wall ns, CPU ns, bytes.
    pub fn to_line(&self) -> String {
        format!(
            "{} {} {}\n",
            self.wall.as_nanos(),
            self.cpu.as_nanos(),
            self.peak_rss_bytes
        )
    }

    /// Reads [`Usage::to_line`]'s form back.
    pub fn parse(line: &str) -> Option<Usage> {
        let mut it = line.split_whitespace().map(str::parse::<u64>);
        let (wall, cpu, rss) = (it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?);
        Some(Usage {
            wall: Duration::from_nanos(wall),
            cpu: Duration::from_nanos(cpu),
            peak_rss_bytes: rss,
        })
    }
}

/// Runs `cmd` with stdin and stdout as given by the caller (stderr is
/// captured and shown if it fails), waits with `wait4`, and fails unless it
/// exited 0. Its peak RSS includes this process's own (see the module doc).
pub fn run(cmd: &mut Command) -> Result<Usage> {
    let shown = format!("{cmd:?}");
    cmd.stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|source| ChildError::Start {
        command: shown.clone(),
        source,
    })?;
    // Drained on a thread so a chatty child cannot fill the pipe and stall.
    let stderr = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
            s
        })
    });
    // A pid always fits pid_t; the kernel hands out no larger ones.
    let pid = libc::pid_t::try_from(child.id()).unwrap_or(libc::pid_t::MAX);
    let mut status: libc::c_int = 0;
    // SAFETY: zeroed rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let got = loop {
        // SAFETY: pid is our own unreaped child; status and usage are valid
        // for writes for the duration of the call.
        let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if got == -1 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        break got;
    };
    let wall = start.elapsed();
    if got != pid {
        return Err(ChildError::Wait {
            command: shown,
            source: std::io::Error::last_os_error(),
        });
    }
    let err = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(ChildError::Failed {
            command: shown,
            status,
            stderr: err.trim().to_owned(),
        });
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    Ok(Usage {
        wall,
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        // Linux reports ru_maxrss in KiB.
        peak_rss_bytes: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_fails_is_an_error_and_one_that_works_has_usage() {
        let u = run(Command::new("sh").args(["-c", "exit 0"])).unwrap();
        assert!(u.peak_rss_bytes > 0);
        let e = run(Command::new("sh").args(["-c", "echo nope >&2; exit 3"])).unwrap_err();
        assert!(format!("{e:#}").contains("nope"), "{e:#}");
    }

    #[test]
    fn usage_lines_round_trip() {
        let u = Usage {
            wall: Duration::from_nanos(123_456_789),
            cpu: Duration::from_nanos(98_765),
            peak_rss_bytes: 4 << 20,
        };
        let back = Usage::parse(&u.to_line()).unwrap();
        assert_eq!(
            (back.wall, back.cpu, back.peak_rss_bytes),
            (u.wall, u.cpu, u.peak_rss_bytes)
        );
        assert!(Usage::parse("1 2").is_none());
        assert!(Usage::parse("a b c").is_none());
    }
}
