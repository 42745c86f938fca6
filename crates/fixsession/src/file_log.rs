//! [`FileLog`]: a session's message and event logs in QuickFIX/C++'s
//! file-log layout, so the tools a shop already points at those files
//! (and `perfkit fix check`) read ours unchanged.
//!
//! In the directory `FileLogPath` names, each session has two files named
//! after its ID (`FIX.4.4-EXEC-BANZAI` and so on, the prefix the file
//! store uses):
//!
//! - `PREFIX.messages.current.log`: every message sent and received, one
//!   per line, as `YYYYMMDD-HH:MM:SS.nnnnnnnnn : 8=FIX.4.4␁9=…`;
//! - `PREFIX.event.current.log`: the session's events, one per line, as
//!   `YYYYMMDD-HH:MM:SS.nnnnnnnnn : Logon complete`.
//!
//! Both are opened for appending, as QuickFIX does, so a restarted engine
//! adds to what the last run wrote. [`FileLog::backup`] moves both to
//! `FileLogBackupPath` (`FileLogPath` when unset) as
//! `PREFIX.messages.backup.N.log` and `PREFIX.event.backup.N.log`, N the
//! first number neither name is taken under, and starts them afresh.
//! QuickFIX leaves the moment to the application; the session drivers
//! here back up when the sequence numbers are reset (see
//! [`crate::log::Log::reset`]), so each current log holds one run of
//! sequence numbers.
//!
//! Lines are buffered and written at [`FileLog::flush`], which the
//! session driver calls once a round, beside the store's flush: a write
//! per message would cost more than the session's own work.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::log::Log;
use fixcore::build::format::{TimePrecision, timestamp};
use fixcore::value::UtcTimestamp;

/// A log file that could not be opened, written or moved.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {op}: {source}")]
pub struct FileLogError {
    /// The file or directory.
    pub path: PathBuf,
    /// What was being done.
    pub op: &'static str,
    /// The OS error.
    pub source: io::Error,
}

/// Where a session's file logs go: QuickFIX's `FileLogPath` and
/// `FileLogBackupPath`, and QuickFIX/J's `FileLogHeartbeats`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLogSettings {
    /// The directory of the current logs (`FileLogPath`).
    pub path: PathBuf,
    /// The directory backups are moved to (`FileLogBackupPath`); `None`:
    /// [`Self::path`].
    pub backup_path: Option<PathBuf>,
    /// Whether Heartbeats go to the message log (`FileLogHeartbeats`,
    /// default yes, as QuickFIX/C++ logs every message).
    pub heartbeats: bool,
}

/// One of the two files.
#[derive(Debug)]
struct Part {
    path: PathBuf,
    out: BufWriter<File>,
}

impl Part {
    fn open(path: PathBuf) -> Result<Part, FileLogError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|source| FileLogError {
                path: path.clone(),
                op: "open",
                source,
            })?;
        Ok(Part {
            path,
            out: BufWriter::with_capacity(64 << 10, file),
        })
    }

    fn line(&mut self, now: UtcTimestamp, text: &[u8]) -> io::Result<()> {
        let mut stamp = [0u8; 32];
        let n = timestamp(&mut stamp, now, TimePrecision::Nanos).unwrap_or(0);
        self.out.write_all(&stamp[..n])?;
        self.out.write_all(b" : ")?;
        self.out.write_all(text)?;
        self.out.write_all(b"\n")
    }

    fn flush(&mut self) -> Result<(), FileLogError> {
        self.out.flush().map_err(|source| FileLogError {
            path: self.path.clone(),
            op: "write",
            source,
        })
    }
}

/// A session's message and event logs; see the [module docs](self).
#[derive(Debug)]
pub struct FileLog {
    messages: Part,
    events: Part,
    /// `BACKUP_DIR/PREFIX.`, what backup names start with.
    backup_prefix: PathBuf,
    heartbeats: bool,
    /// Whether the current files may hold lines: an empty pair is not
    /// backed up.
    written: bool,
    /// The first write that failed since the last flush; reported by it.
    failed: Option<FileLogError>,
}

impl FileLog {
    /// Opens (creating them and their directories if need be) the logs of
    /// the session whose file prefix is `prefix` (`FIX.4.4-EXEC-BANZAI`;
    /// see [`crate::store::FileStore::prefix_in`]).
    pub fn open(settings: &FileLogSettings, prefix: &str) -> Result<FileLog, FileLogError> {
        let backup_dir = settings.backup_path.as_ref().unwrap_or(&settings.path);
        for dir in [&settings.path, backup_dir] {
            std::fs::create_dir_all(dir).map_err(|source| FileLogError {
                path: dir.clone(),
                op: "create directory",
                source,
            })?;
        }
        let name = |dir: &Path, rest: &str| dir.join(format!("{prefix}.{rest}"));
        let messages = Part::open(name(&settings.path, "messages.current.log"))?;
        let events = Part::open(name(&settings.path, "event.current.log"))?;
        let written = [&messages, &events].iter().any(|p| {
            p.out
                .get_ref()
                .metadata()
                .map(|m| m.len() > 0)
                .unwrap_or(true)
        });
        Ok(FileLog {
            messages,
            events,
            backup_prefix: name(backup_dir, ""),
            heartbeats: settings.heartbeats,
            written,
            failed: None,
        })
    }

    /// The message log's path.
    pub fn messages_path(&self) -> &Path {
        &self.messages.path
    }

    /// The event log's path.
    pub fn events_path(&self) -> &Path {
        &self.events.path
    }

    /// Writes what is buffered to both files, reporting the first write
    /// that failed since the last flush.
    pub fn flush(&mut self) -> Result<(), FileLogError> {
        let messages = self.messages.flush();
        let events = self.events.flush();
        match self.failed.take() {
            Some(e) => Err(e),
            None => messages.and(events),
        }
    }

    /// Moves both current files to the backup directory under the first
    /// free `messages.backup.N.log`/`event.backup.N.log` pair and starts
    /// new ones. Returns the message log's backup name, or `None` when
    /// both files were empty and stay where they are.
    pub fn backup(&mut self) -> Result<Option<PathBuf>, FileLogError> {
        self.flush()?;
        if !self.written {
            return Ok(None);
        }
        let backup = |n: u64, rest: &str| {
            let mut p = self.backup_prefix.clone().into_os_string();
            p.push(format!("{rest}.backup.{n}.log"));
            PathBuf::from(p)
        };
        let mut n = 1;
        while backup(n, "messages").exists() || backup(n, "event").exists() {
            n += 1;
        }
        let (messages, events) = (backup(n, "messages"), backup(n, "event"));
        for (part, to) in [
            (&self.messages.path, &messages),
            (&self.events.path, &events),
        ] {
            std::fs::rename(part, to).map_err(|source| FileLogError {
                path: to.clone(),
                op: "move the current log",
                source,
            })?;
        }
        self.messages = Part::open(self.messages.path.clone())?;
        self.events = Part::open(self.events.path.clone())?;
        self.written = false;
        Ok(Some(messages))
    }

    fn note(&mut self, result: io::Result<()>, which: fn(&FileLog) -> &Path) {
        if let Err(source) = result
            && self.failed.is_none()
        {
            self.failed = Some(FileLogError {
                path: which(self).to_path_buf(),
                op: "write",
                source,
            });
        }
    }
}

/// Whether `msg`'s MsgType (the third field) is Heartbeat.
fn is_heartbeat(msg: &[u8]) -> bool {
    let Some(at) = msg.windows(4).position(|w| w == b"\x0135=") else {
        return false;
    };
    msg[at + 4..].starts_with(b"0\x01")
}

impl Log for FileLog {
    fn message(&mut self, now: UtcTimestamp, _incoming: bool, msg: &[u8]) {
        if !self.heartbeats && is_heartbeat(msg) {
            return;
        }
        self.written = true;
        let r = self.messages.line(now, msg);
        self.note(r, FileLog::messages_path);
    }

    fn event(&mut self, now: UtcTimestamp, text: &str) {
        self.written = true;
        let r = self.events.line(now, text.as_bytes());
        self.note(r, FileLog::events_path);
    }

    fn flush(&mut self) {
        // A failed write is kept for the owner's own `FileLog::flush`
        // (the trait's cannot return it); a driver calls this one.
        if let Err(e) = FileLog::flush(self) {
            self.failed = Some(e);
        }
    }

    fn reset(&mut self, _now: UtcTimestamp) {
        if let Err(e) = self.backup()
            && self.failed.is_none()
        {
            self.failed = Some(e);
        }
    }
}

#[cfg(test)]
mod tests;
