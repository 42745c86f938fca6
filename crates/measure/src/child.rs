//! A child process run to completion and what the kernel says it cost:
//! wall time, user+system CPU time and peak resident set, from `wait4`'s
//! rusage, so the figures are the child's own rather than samples.
//!
//! One kernel rule shapes this module: a child's `ru_maxrss` starts at the
//! peak resident set of the process that spawned it (Linux carries the old
//! memory map's high-water mark across `exec`, and a `vfork`ed child shares
//! its parent's map). A big parent, such as `perfkit bench` after its
//! in-process parts, would then lend every child its own peak. [`run_isolated`]
//! therefore spawns through a small launcher, a fresh `perfkit` process
//! (`perfkit measure-child`, hidden), so the floor is the launcher's few
//! MiB, the same for every program measured.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

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

/// Runs `cmd` through the launcher (see the module doc) with stdin and
/// stdout as the caller set them, and returns the usage the launcher
/// measured; fails unless the program exited 0.
pub fn run_isolated(cmd: &mut Command) -> Result<Usage> {
    let exe = std::env::current_exe().context("finding this program to launch a child")?;
    let report = tempfile::NamedTempFile::new().context("creating a usage file")?;
    let mut launcher = Command::new(exe);
    launcher
        .arg("measure-child")
        .arg(report.path())
        .arg("--")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        launcher.current_dir(dir);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => launcher.env(k, v),
            None => launcher.env_remove(k),
        };
    }
    // The caller's stdin/stdout settings cannot be read back from a
    // Command; the measured programs here read files and write to nothing.
    launcher.stdin(Stdio::null()).stdout(Stdio::null());
    run(&mut launcher)?;
    let text = std::fs::read_to_string(report.path()).context("reading the child's usage")?;
    Usage::parse(&text).with_context(|| format!("malformed child usage {text:?}"))
}

impl Usage {
    /// The one-line form [`measure_child`] writes: wall ns, CPU ns, bytes.
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

/// The launcher's side: runs `argv` (program and arguments) with this
/// process's stdio, and writes its usage to `usage` when it succeeded.
pub fn measure_child(usage: &std::path::Path, argv: &[std::ffi::OsString]) -> Result<()> {
    let Some((program, args)) = argv.split_first() else {
        bail!("measure-child: no program given");
    };
    let u = run(Command::new(program).args(args))?;
    std::fs::write(usage, u.to_line())
        .with_context(|| format!("writing usage to {}", usage.display()))
}

/// Runs `cmd` with stdin and stdout as given by the caller (stderr is
/// captured and shown if it fails), waits with `wait4`, and fails unless it
/// exited 0. Its peak RSS includes this process's own (see the module doc).
pub fn run(cmd: &mut Command) -> Result<Usage> {
    let shown = format!("{cmd:?}");
    cmd.stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().with_context(|| format!("starting {shown}"))?;
    // Drained on a thread so a chatty child cannot fill the pipe and stall.
    let stderr = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
            s
        })
    });
    let pid = libc::pid_t::try_from(child.id()).context("child pid out of range")?;
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
        bail!("waiting for {shown}: {}", std::io::Error::last_os_error());
    }
    let err = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        bail!("{shown} failed (wait status {status}): {}", err.trim());
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
