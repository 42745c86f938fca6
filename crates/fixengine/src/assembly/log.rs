//! [`SessionLog`]: every log a session of the engine writes to, behind one
//! [`Log`]: the console's screen, the engine's message log, QuickFIX's
//! file logs and QuickFIX's PostgreSQL log tables.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};

use fixcore::value::UtcTimestamp;
use fixsession::file_log::FileLog;
use fixsession::log::Log;
use fixsession::settings::{ScreenLog, SessionSettings};

use super::database::{self, DatabaseLog};
use super::error::Context;
use super::{Error, MessageLog, SharedConsole, Warning, stamp};

/// Events to the console, messages to the shared message log, both to
/// the session's QuickFIX file logs when it has `FileLogPath` and to its
/// PostgreSQL log tables when it has `PostgreSQLLog*` keys. A clone
/// writes to the same files (an acceptor's connections of one session).
#[derive(Clone)]
pub(super) struct SessionLog {
    id: String,
    messages: Option<MessageLog>,
    /// What the session's `ScreenLogShow*` keys put on the console.
    screen: ScreenLog,
    console: SharedConsole,
    /// The session's file logs, shared by its connections (one at a time).
    file: Option<Arc<Mutex<FileLog>>>,
    /// The session's PostgreSQL log, shared likewise.
    postgres: Option<Arc<Mutex<DatabaseLog>>>,
}

impl SessionLog {
    /// The log of session `s`, opening its file and PostgreSQL logs
    /// when its settings ask for them.
    pub(super) fn open(
        s: &SessionSettings,
        messages: &Option<MessageLog>,
        console: &SharedConsole,
    ) -> Result<SessionLog, Error> {
        Ok(SessionLog {
            id: s.id(),
            messages: messages.clone(),
            screen: s.screen_log,
            console: Arc::clone(console),
            file: file_log(s)?,
            postgres: database::log(s)?.map(|l| Arc::new(Mutex::new(l))),
        })
    }

    /// The session's id, as its lines name it.
    pub(super) fn id(&self) -> &str {
        &self.id
    }

    fn postgres(&self) -> Option<MutexGuard<'_, DatabaseLog>> {
        self.postgres
            .as_ref()
            .map(|f| f.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn file(&self) -> Option<MutexGuard<'_, FileLog>> {
        self.file
            .as_ref()
            .map(|f| f.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Log for SessionLog {
    fn message(&mut self, now: UtcTimestamp, incoming: bool, msg: &[u8]) {
        if let Some(mut f) = self.file() {
            f.message(now, incoming, msg);
        }
        if let Some(mut p) = self.postgres() {
            p.message(now, incoming, msg);
        }
        let dir = if incoming { "<-" } else { "->" };
        if let Some(f) = &self.messages {
            let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
            let _ = write!(f, "{} : {} {dir} ", stamp(now), self.id);
            let _ = f.write_all(msg);
            let _ = f.write_all(b"\n");
            let _ = f.flush();
        }
        if self.screen.shows(incoming, msg) {
            // One line, whole, so lines of sessions on other threads do
            // not interleave within it.
            let mut line = format!("{} : {} {dir} ", stamp(now), self.id).into_bytes();
            line.extend_from_slice(msg);
            self.console.screen(&line);
        }
    }

    fn event(&mut self, now: UtcTimestamp, text: &str) {
        if let Some(mut f) = self.file() {
            f.event(now, text);
        }
        if let Some(mut p) = self.postgres() {
            p.event(now, text);
        }
        if self.screen.events {
            self.console
                .screen(format!("{} : {} : {text}", stamp(now), self.id).as_bytes());
        }
    }

    fn flush(&mut self) {
        let failed = self.file().and_then(|mut f| f.flush().err());
        if let Some(e) = failed {
            // Logs are the record, not the session: it goes on.
            self.console
                .warn(Warning::Text(&format!("{}: file log: {e}", self.id)));
        }
        let failed = self.postgres().and_then(|mut p| {
            p.flush();
            p.take_failure()
        });
        if let Some(e) = failed {
            // One line per outage; the rows wait in memory meanwhile.
            self.console.warn(Warning::Text(&format!(
                "{}: PostgreSQL log: {e}; its rows are kept and written once the database \
                 is back",
                self.id
            )));
        }
    }

    fn reset(&mut self, now: UtcTimestamp) {
        let moved = self.file().map(|mut f| f.backup());
        match moved {
            Some(Err(e)) => self
                .console
                .warn(Warning::Text(&format!("{}: file log: {e}", self.id))),
            Some(Ok(Some(to))) if self.screen.events => self.console.screen(
                format!(
                    "{} : {} : sequence numbers reset: the logs so far are in {}",
                    stamp(now),
                    self.id,
                    to.display()
                )
                .as_bytes(),
            ),
            _ => {}
        }
    }
}

/// The file logs of session `s` when it has `FileLogPath`.
fn file_log(s: &SessionSettings) -> Result<Option<Arc<Mutex<FileLog>>>, Error> {
    let Some(settings) = &s.file_log else {
        return Ok(None);
    };
    let log = FileLog::open(settings, &s.file_prefix())
        .context(|| format!("opening the file log of {}", s.id()))?;
    Ok(Some(Arc::new(Mutex::new(log))))
}
