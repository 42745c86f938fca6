//! The acceptor process a session round runs against: started, waited on
//! until it listens, its CPU clock read, and stopped or killed. It stands
//! alone as the one owner of that child's lifetime, which the session
//! rounds and the failover runs both lean on.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use perfkit_measure::clock::{self, CpuClock};

use super::{Engine, spawn_on};
use crate::error::{Error, IoContext, Result};
use crate::invocation::Invocation;

/// How long an acceptor gets to start listening.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// A running acceptor process; dropped, it is killed and reaped.
pub(in crate::fix) struct Acceptor {
    child: Child,
    engine: &'static str,
    /// perfkit's acceptor stops on SIGTERM; QuickFIX's peer when its stdin
    /// closes.
    stops_on_signal: bool,
    /// The process's CPU clock (every thread's time, exited ones too).
    clock: CpuClock,
    log: PathBuf,
}

impl Acceptor {
    /// Starts `engine`'s acceptor on `cfg` and waits until it listens:
    /// perfkit says so on stderr, the QuickFIX peer on stdout.
    /// The process starts pinned to `core` when given (every thread of it),
    /// else on the mask of the calling thread.
    pub(in crate::fix) fn start(
        engine: &Engine,
        cfg: &Path,
        log: &Path,
        core: Option<usize>,
    ) -> Result<Acceptor> {
        let log = log.to_owned();
        let out = File::create(&log).doing_with(|| format!("creating {}", log.display()))?;
        let mut cmd = match engine {
            Engine::Perfkit(perfkit) => {
                let mut c = perfkit.command(&Invocation::FixAcceptor { settings: cfg });
                c.stdout(Stdio::null()).stderr(out);
                c
            }
            Engine::Quickfix(exe) => {
                let mut c = Command::new(exe);
                c.arg("acceptor").arg(cfg);
                c.stdout(
                    out.try_clone()
                        .doing_with(|| format!("opening {} again", log.display()))?,
                )
                .stderr(out);
                c
            }
        };
        // QuickFIX's acceptor runs until its stdin closes.
        cmd.stdin(Stdio::piped());
        let mut child = spawn_on(core, &mut cmd)
            .doing_with(|| format!("starting the {} acceptor", engine.name()))?;
        // The pid stays ours until `Acceptor` is dropped (the child is not
        // reaped before), so the clock names this process throughout.
        let clock = match clock::of_process(child.id()) {
            Ok(clock) => clock,
            Err(source) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::Io {
                    doing: format!("reading the {} acceptor's CPU clock", engine.name()),
                    source,
                });
            }
        };
        let mut acceptor = Acceptor {
            child,
            engine: engine.name(),
            stops_on_signal: matches!(engine, Engine::Perfkit(_)),
            clock,
            log,
        };
        let ready = match engine {
            Engine::Perfkit(_) => "session(s) on port",
            Engine::Quickfix(_) => "listening",
        };
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let text = std::fs::read_to_string(&acceptor.log).unwrap_or_default();
            if text.contains(ready) {
                return Ok(acceptor);
            }
            let exited = acceptor
                .child
                .try_wait()
                .doing_with(|| format!("waiting for the {} acceptor", acceptor.engine))?;
            if let Some(status) = exited {
                return Err(Error::Program(format!(
                    "the {} acceptor exited ({status}): {}",
                    acceptor.engine,
                    text.trim()
                )));
            }
            if Instant::now() > deadline {
                return Err(Error::Program(format!(
                    "the {} acceptor did not listen within {READY_TIMEOUT:?}: {}",
                    acceptor.engine,
                    text.trim()
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `kill -9`, and reaped.
    pub(in crate::fix) fn kill(&mut self) -> Result<()> {
        self.child
            .kill()
            .doing_with(|| format!("killing the {} acceptor", self.engine))?;
        self.child
            .wait()
            .doing_with(|| format!("reaping the {} acceptor", self.engine))?;
        Ok(())
    }

    /// Where its output goes.
    pub(in crate::fix) fn log(&self) -> &Path {
        &self.log
    }

    /// CPU time the acceptor has used so far.
    pub(super) fn cpu(&self) -> Result<Duration> {
        self.clock
            .read()
            .doing_with(|| format!("reading the {} acceptor's CPU clock", self.engine))
    }

    /// Ends the acceptor: end of stdin for QuickFIX's, SIGTERM (which
    /// logs its sessions out) for perfkit's; killed if it lingers.
    pub(super) fn stop(mut self) -> Result<()> {
        drop(self.child.stdin.take());
        if self.stops_on_signal {
            // SAFETY: signalling our own unreaped child by its pid.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let exited = self
                .child
                .try_wait()
                .doing_with(|| format!("waiting for the {} acceptor", self.engine))?;
            if let Some(status) = exited {
                // perfkit exits 128 + SIGTERM once its sessions logged out.
                let stopped = self.stops_on_signal && status.code() == Some(128 + libc::SIGTERM);
                if !status.success() && !stopped {
                    let text = std::fs::read_to_string(&self.log).unwrap_or_default();
                    return Err(Error::Program(format!(
                        "the {} acceptor failed ({status}): {}",
                        self.engine,
                        text.trim()
                    )));
                }
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(Error::Program(format!(
            "the {} acceptor did not stop within 10 s",
            self.engine
        )))
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
