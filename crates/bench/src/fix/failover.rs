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
use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime};

use super::session::{Acceptor, Engine};
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
    // Each start of an engine writes a log of its own, so an engine's
    // current log holds only the Logons since it last started.
    let ours = Engine::Perfkit(perfkit);
    let mut starts = 0;
    let mut start = |i: usize| {
        starts += 1;
        Acceptor::start(
            &ours,
            &cfgs[i],
            &d.join(format!("acceptor-{i}-{starts}.log")),
            None,
        )
    };
    let mut engines = [start(0)?, start(1)?];
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
    let mut answers = Answers::new(&log, &err)?;
    let mut times = Vec::with_capacity(kills);
    for _ in 0..kills {
        let serving = serving(&engines, &err)?;
        std::thread::sleep(FLOW);
        let killed_at = SystemTime::now();
        engines[serving].kill()?;
        engines[serving] = start(serving)?;
        times.push(answers.first_after(killed_at)?);
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

/// The last lines of `path`, for an error.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// Which engine serves now: the one whose log (since its start) has a
/// `Logon complete` line.
fn serving(engines: &[Acceptor; 2], init_err: &Path) -> Result<usize> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        for (i, e) in engines.iter().enumerate() {
            let text = std::fs::read_to_string(e.log()).unwrap_or_default();
            if text.contains("Logon complete") {
                return Ok(i);
            }
        }
        if Instant::now() > deadline {
            return Err(Error::Program(format!(
                "no acceptor logged the initiator on: {}",
                tail(init_err)
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The initiator's message log (`YYYYMMDD-HH:MM:SS.sss : session <-
/// message`), read once from start to end over the whole run: each kill
/// reads on from where the last answer was found.
struct Answers<'a> {
    file: File,
    /// The start of a line not yet whole.
    partial: Vec<u8>,
    init_err: &'a Path,
}

impl<'a> Answers<'a> {
    fn new(log: &Path, init_err: &'a Path) -> Result<Answers<'a>> {
        // The initiator creates the log at its start: wait for it.
        let deadline = Instant::now() + PATIENCE;
        let file = loop {
            match File::open(log) {
                Ok(f) => break f,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => {
                    return Err(Error::Io {
                        doing: format!("opening {}", log.display()),
                        source: e,
                    });
                }
            }
        };
        Ok(Answers {
            file,
            partial: Vec::new(),
            init_err,
        })
    }

    /// The time from `killed_at` to the first ExecutionReport the
    /// initiator received after the first Logon it received at or after
    /// `killed_at` (the standby's answer on the next session).
    fn first_after(&mut self, killed_at: SystemTime) -> Result<Duration> {
        let since_epoch = killed_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_err(|_| Error::Invalid("a clock before 1970".to_owned()))?;
        // The log's stamps are whole milliseconds: the kill's, truncated.
        let killed_ms = since_epoch.as_millis() as i64;
        let deadline = Instant::now() + PATIENCE;
        let mut logged_on = false;
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            let n = self
                .file
                .read(&mut chunk)
                .doing("reading the initiator's message log")?;
            if n == 0 {
                if Instant::now() > deadline {
                    return Err(Error::Program(format!(
                        "no ExecutionReport from the standby within {PATIENCE:?} of a kill: {}",
                        tail(self.init_err)
                    )));
                }
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            self.partial.extend_from_slice(&chunk[..n]);
            let whole = match self.partial.iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => continue,
            };
            let lines: Vec<u8> = self.partial.drain(..whole).collect();
            for line in lines.split(|&b| b == b'\n') {
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
        }
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
