//! The `failover` part of `perfkit fix bench`: how long a counterparty
//! waits when the engine serving it dies. Two perfkit acceptors share a
//! PostgreSQL store (a cluster the run starts) and its leases; a perfkit
//! initiator lists both and sends orders, 20 in flight; the acceptor
//! serving is killed (`kill -9`) and started again as the standby, again
//! and again. Each kill's figure is the time from the kill to the first
//! ExecutionReport the initiator receives on its next session (after the
//! next Logon it receives), read from the initiator's message log, whose
//! times are the same wall clock as the kill's (to the millisecond).
//!
//! What bounds it: the initiator notices the closed connection at once,
//! then waits `ReconnectInterval` (1 s, QuickFIX's smallest) before it
//! connects to the other engine; the standby takes the lease within its
//! 100 ms poll of the dead holder's advisory lock; the Logon, the store's
//! reading and the gap's resend follow.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::error::{Error, IoContext, Result};
use crate::invocation::{Invocation, Launcher};
use perfkit_report::one_line;

/// Kills per run of the part.
pub const KILLS: usize = 20;

/// How long the orders flow between two kills, in ms.
pub const FLOW_MS: u64 = 500;
const FLOW: Duration = Duration::from_millis(FLOW_MS);

/// How long the next session may take to answer after a kill before the
/// run fails.
const PATIENCE: Duration = Duration::from_secs(30);

/// The part's result.
pub struct Measured {
    /// Kill to the standby's first ExecutionReport, one per kill; empty
    /// when the part could not run.
    pub times: Vec<Duration>,
    /// Why the part did not run (no PostgreSQL).
    pub missing: Option<String>,
}

/// Runs `kills` failovers; `perfkit` starts the engines.
pub fn measure(kills: usize, perfkit: &dyn Launcher) -> Result<Measured> {
    let cluster = match super::pg::Cluster::start() {
        Ok(c) => c,
        Err(e) => {
            return Ok(Measured {
                times: Vec::new(),
                missing: Some(format!("failover not measured: {}", one_line(&e))),
            });
        }
    };
    let dir = tempfile::tempdir().doing("creating a directory for the failover run")?;
    let d = dir.path();
    let ports = [super::session::free_port()?, super::session::free_port()?];
    let mut cfgs = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let cfg = d.join(format!("acceptor-{i}.cfg"));
        write(
            &cfg,
            &format!(
                "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{}{COMMON}\n\
                 [SESSION]\nBeginString=FIX.4.4\nSenderCompID=EXCH\nTargetCompID=BENCH\n",
                cluster.store_settings()
            ),
        )?;
        cfgs.push(cfg);
    }
    let initiator_cfg = d.join("initiator.cfg");
    write(
        &initiator_cfg,
        &format!(
            "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\n\
             SocketConnectPort={}\nSocketConnectHost1=127.0.0.1\nSocketConnectPort1={}\n\
             ReconnectInterval=1\nLogonTimeout=2\n{COMMON}\n[SESSION]\nBeginString=FIX.4.4\n\
             SenderCompID=BENCH\nTargetCompID=EXCH\n",
            ports[0], ports[1]
        ),
    )?;
    let mut engines = [
        Engine::start(perfkit, &cfgs[0], d, 0)?,
        Engine::start(perfkit, &cfgs[1], d, 1)?,
    ];
    let log = d.join("initiator.log");
    let latencies = d.join("latencies");
    let mut cmd = perfkit.command(&Invocation::FixInitiator {
        settings: &initiator_cfg,
        orders: u64::from(u32::MAX),
        window: 20,
        latencies: &latencies,
        spin: None,
        log: Some(&log),
    });
    let err = d.join("initiator.err");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::create(&err).doing_with(|| format!("creating {}", err.display()))?);
    let initiator = Reaped(
        cmd.spawn()
            .doing("starting the perfkit initiator for the failover run")?,
    );
    let mut times = Vec::with_capacity(kills);
    for _ in 0..kills {
        let serving = serving(&engines, &log, &err)?;
        std::thread::sleep(FLOW);
        let killed_at = SystemTime::now();
        engines[serving].kill()?;
        engines[serving] = Engine::start(perfkit, &cfgs[serving], d, serving)?;
        times.push(first_answer_after(&log, killed_at, &err)?);
    }
    drop(initiator);
    Ok(Measured {
        times,
        missing: None,
    })
}

/// Settings both sides share.
const COMMON: &str = "HeartBtInt=1\nStartTime=00:00:00\nEndTime=00:00:00\n\
                      UseDataDictionary=N\nSocketNodelay=Y\n";

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).doing_with(|| format!("writing {}", path.display()))
}

/// A child killed and reaped when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One of the two acceptors, and the file its stderr goes to.
struct Engine {
    child: Reaped,
    err: PathBuf,
}

impl Engine {
    /// Starts acceptor `n` on `cfg`, its stderr appended to
    /// `acceptor-N.err`, and waits until it listens.
    fn start(perfkit: &dyn Launcher, cfg: &Path, dir: &Path, n: usize) -> Result<Engine> {
        let err = dir.join(format!("acceptor-{n}.err"));
        // A restarted engine's lines start after its predecessor's, so
        // counts of them only grow.
        let out = File::options()
            .create(true)
            .append(true)
            .open(&err)
            .doing_with(|| format!("opening {}", err.display()))?;
        let before = listening_lines(&err);
        let mut cmd = perfkit.command(&Invocation::FixAcceptor { settings: cfg });
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(out);
        let mut child = Reaped(cmd.spawn().doing("starting a perfkit acceptor")?);
        let deadline = Instant::now() + PATIENCE;
        while listening_lines(&err) == before {
            if let Some(status) = child.0.try_wait().doing("waiting for an acceptor")? {
                return Err(Error::Program(format!(
                    "a failover acceptor exited ({status}): {}",
                    tail(&err)
                )));
            }
            if Instant::now() > deadline {
                return Err(Error::Program(format!(
                    "a failover acceptor did not listen: {}",
                    tail(&err)
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(Engine { child, err })
    }

    /// `kill -9`, and reaped.
    fn kill(&mut self) -> Result<()> {
        self.child.0.kill().doing("killing the serving acceptor")?;
        self.child.0.wait().doing("reaping the killed acceptor")?;
        Ok(())
    }
}

fn listening_lines(err: &Path) -> usize {
    std::fs::read_to_string(err)
        .unwrap_or_default()
        .matches("session(s) on port")
        .count()
}

/// The last lines of `path`, for an error.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// Which engine serves now: the one with a `Logon complete` line since
/// its last start, once the initiator has had an answer on it.
fn serving(engines: &[Engine; 2], log: &Path, init_err: &Path) -> Result<usize> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        for (i, e) in engines.iter().enumerate() {
            let text = std::fs::read_to_string(&e.err).unwrap_or_default();
            let since_start = text.rsplit("session(s) on port").next().unwrap_or("");
            if since_start.contains("Logon complete") {
                return Ok(i);
            }
        }
        if Instant::now() > deadline {
            return Err(Error::Program(format!(
                "no acceptor logged the initiator on: {} ({})",
                tail(init_err),
                log.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The time from `killed_at` to the first ExecutionReport the initiator
/// received after the first Logon it received at or after `killed_at`
/// (the standby's answer on the next session), read from its message log
/// (`YYYYMMDD-HH:MM:SS.sss : session <- message`).
fn first_answer_after(log: &Path, killed_at: SystemTime, init_err: &Path) -> Result<Duration> {
    let since_epoch = killed_at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_err(|_| Error::Invalid("a clock before 1970".to_owned()))?;
    // The log's stamps are whole milliseconds: the kill's, truncated.
    let killed_ms = since_epoch.as_millis() as i64;
    let deadline = Instant::now() + PATIENCE;
    loop {
        let text = std::fs::read(log).doing_with(|| format!("reading {}", log.display()))?;
        let mut logged_on = false;
        for line in text.split(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(line);
            let Some((stamp, rest)) = line.split_once(" : ") else {
                continue;
            };
            let Some(at) = stamp_ms(stamp) else { continue };
            if at < killed_ms || !rest.contains(" <- ") {
                continue;
            }
            if rest.contains("\x0135=A\x01") {
                logged_on = true;
            } else if logged_on && rest.contains("\x0135=8\x01") {
                return Ok(Duration::from_millis((at - killed_ms) as u64));
            }
        }
        if Instant::now() > deadline {
            return Err(Error::Program(format!(
                "no ExecutionReport from the standby within {PATIENCE:?} of a kill: {}",
                tail(init_err)
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `YYYYMMDD-HH:MM:SS.sss` (UTC) as milliseconds since 1970.
fn stamp_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 21 || b[8] != b'-' || b[11] != b':' || b[14] != b':' || b[17] != b'.' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (
        num(0..4)?,
        u32::try_from(num(4..6)?).ok()?,
        u32::try_from(num(6..8)?).ok()?,
    );
    if !(1..=12).contains(&m) || d == 0 || d > civil::days_in_month(y, m) {
        return None;
    }
    let days = civil::days_from_civil(y, m, d);
    let secs = days * 86_400 + num(9..11)? * 3_600 + num(12..14)? * 60 + num(15..17)?;
    Some(secs * 1_000 + num(18..21)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_stamps_read_as_milliseconds_since_1970() {
        assert_eq!(stamp_ms("19700101-00:00:01.250"), Some(1_250));
        assert_eq!(stamp_ms("20261126-13:05:00.007"), Some(1_795_698_300_007));
        assert_eq!(stamp_ms("20261126-13:05:00"), None);
        assert_eq!(stamp_ms("not a stamp at all 12"), None);
    }
}
