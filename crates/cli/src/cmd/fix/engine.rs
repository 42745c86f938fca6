//! `perfkit fix acceptor` and `perfkit fix initiator`: fixengine's
//! [`assembly`](fixengine::assembly) run on the flags' settings, its
//! lines for the operator on stderr ([`Stderr`]) and an initiator's
//! results on stdout; Ctrl-C logs the sessions out.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use fixcore::scan::ScanPath;
use fixengine::assembly::{self, Console, EngineSettings, Listening, Warning};

/// The engine's lines written as perfkit writes them: the screen log
/// and warnings to stderr, each in one write, results to stdout. With a
/// stop flag, Ctrl-C sets it once the sessions run, so they log out.
#[derive(Default)]
pub(super) struct Stderr {
    stop: Option<&'static AtomicBool>,
}

impl Console for Stderr {
    fn running(&self) {
        if let Some(flag) = self.stop {
            landing::cleanup::stop_gracefully(flag);
        }
    }

    fn screen(&self, line: &[u8]) {
        let mut whole = Vec::with_capacity(line.len() + 1);
        whole.extend_from_slice(line);
        whole.push(b'\n');
        let _ = std::io::stderr().write_all(&whole);
    }

    fn warn(&self, warning: Warning<'_>) {
        match warning {
            Warning::Text(text) => eprintln!("perfkit: warning: {text}"),
            Warning::UnusedCertificates { file, session } => eprintln!(
                "perfkit: warning: {}: {session}: certificate keys are set but TLS is off \
                 (neither --tls nor SocketUseSSL=Y): the connection is plain TCP",
                file.display()
            ),
        }
    }

    fn notice(&self, text: &str) {
        eprintln!("perfkit: {text}");
    }

    fn listening(&self, l: Listening) {
        eprintln!(
            "perfkit fix acceptor: {} session(s){} on port {}{}",
            l.sessions,
            match l.templates {
                0 => String::new(),
                n => format!(" and {n} template(s)"),
            },
            l.port,
            if l.tls { " (TLS)" } else { "" }
        );
    }

    fn result(&self, line: &str) {
        println!("{line}");
    }

    fn one_line(&self, err: &(dyn std::error::Error + 'static)) -> String {
        crate::cmd::explained(err)
    }
}

/// The flag Ctrl-C sets once the sessions run (see [`Stderr::running`]):
/// sessions log out, then the command exits; and the console that says
/// so.
fn stop_flag() -> (&'static AtomicBool, Arc<Stderr>) {
    let flag: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    (flag, Arc::new(Stderr { stop: Some(flag) }))
}

/// Runs `perfkit fix acceptor`.
pub fn acceptor(engine: &EngineSettings) -> Result<ExitCode> {
    ScanPath::cap_from_env()?;
    let (stop, console) = stop_flag();
    assembly::run_acceptor(engine, stop, console)?;
    // 130 after Ctrl-C, 143 after SIGTERM: the sessions logged out first.
    Ok(landing::cleanup::exit_code(ExitCode::SUCCESS))
}

/// Runs `perfkit fix initiator`: each initiator session connects,
/// reconnecting after ReconnectInterval when the connection drops, until
/// Ctrl-C logs it out.
pub fn initiator(engine: &EngineSettings) -> Result<ExitCode> {
    ScanPath::cap_from_env()?;
    let (stop, console) = stop_flag();
    let outcome = assembly::run_initiator(engine, stop, console)?;
    if landing::cleanup::stopped_by().is_none() && !outcome.failures.is_empty() {
        // Rejected or unanswered orders fail the run, in one line.
        eprintln!("perfkit: fix initiator: {}", outcome.failures.join("; "));
        return Ok(ExitCode::FAILURE);
    }
    Ok(landing::cleanup::exit_code(ExitCode::SUCCESS))
}
