//! The crate's error type: what can stop a measurement. The libraries a
//! measurement runs keep their own errors, wrapped whole (their causes and
//! kinds intact, so the binary still tells a broken pipe); what is ours is
//! the step that failed (an I/O operation, a peer program, a check of a
//! result) and what it was doing.
//!
//! Every message includes its cause's, as `perfkit_measure::child`'s do,
//! so `{e}` alone says it all; the cause is still the error's `source` for
//! callers that look inside, and the binary's one-line rendering prints
//! each text once.

use std::io;

/// Why a measurement could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O operation failed: a file, a socket, a ring, a thread or a
    /// process that could not be started.
    #[error("{doing}: {source}")]
    Io {
        /// What was being done (e.g. `reading /proc`).
        doing: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A step of a measurement failed: which one, around its own error.
    #[error("{doing}: {source}")]
    During {
        /// The step (e.g. `session bench, perfkit initiator ↔ perfkit acceptor`).
        doing: String,
        /// Why it failed.
        #[source]
        source: Box<Error>,
    },
    /// A peer program that had started failed mid-protocol (it did not
    /// answer in time, died, or said something else than the protocol
    /// allows); it has been killed and reaped. Its errors are rendered
    /// into the message, never kept as a source: a broken pipe to a dead
    /// peer must not read as the binary's own reader going away.
    #[error("{peer}: {message}{}", quote(.stderr))]
    Peer {
        /// The program, as it was started.
        peer: String,
        /// What went wrong.
        message: String,
        /// Its last lines on stderr, oldest first (may be none).
        stderr: Vec<String>,
    },
    /// A program the measurement runs (an engine, a command compared
    /// with, a tool that prepares the inputs) failed or did something
    /// else than asked; the message names it and says what.
    #[error("{0}")]
    Program(String),
    /// A result that fails its check: a round trip that does not give
    /// back its input, a count other than the one asked for.
    #[error("{0}")]
    Mismatch(String),
    /// Something the measurement was given cannot be used: settings out of
    /// range, a path or name a peer cannot be sent, a peer's reply that
    /// breaks its protocol.
    #[error("{0}")]
    Invalid(String),
    /// A number that does not parse (in a peer's reply, a program's output).
    #[error("{what}: {source}")]
    Number {
        /// What it was meant to be, with the text.
        what: String,
        /// Why it does not parse.
        #[source]
        source: std::num::ParseIntError,
    },
    /// A latency that the histogram cannot record.
    #[error("recording {value} ns: {source}")]
    Record {
        /// The latency, in ns.
        value: u64,
        /// Why the histogram refused it.
        #[source]
        source: hdrhistogram::RecordError,
    },
    /// A facility this kernel or platform does not offer (e.g. io_uring
    /// when the syscall is missing or disabled).
    #[error("{what} unavailable: {reason}")]
    Unavailable {
        /// The facility.
        what: &'static str,
        /// Why, as the OS said it.
        reason: String,
    },
    /// The measurement was given nothing to measure (no messages, no
    /// usable core).
    #[error("nothing to measure: {0}")]
    Nothing(&'static str),
    /// A measuring thread panicked or ended early.
    #[error("background thread failed: {0}")]
    Thread(&'static str),
    /// A measured child process could not be started, waited for, or
    /// failed.
    #[error(transparent)]
    Child(#[from] perfkit_measure::child::ChildError),
    /// A FIX message the measurement needs was rejected.
    #[cfg(feature = "fix")]
    #[error(transparent)]
    Fix(#[from] fixcore::Error),
    /// A measuring thread could not be placed as asked.
    #[cfg(feature = "fix")]
    #[error(transparent)]
    Pin(#[from] fixcore::affinity::PinError),
    /// The deferred processor under measurement failed.
    #[cfg(feature = "fix")]
    #[error(transparent)]
    Worker(#[from] fixcore::deferred::WorkerError),
    /// The throwaway PostgreSQL cluster of the session bench's store row
    /// could not be started or read.
    #[cfg(feature = "fix")]
    #[error(transparent)]
    Postgres(#[from] perfkit_peers::postgres::Error),
    /// zstdkit failed (compressing, decompressing, calibrating, or making
    /// the corpus, which it compresses).
    #[cfg(feature = "zstd")]
    #[error(transparent)]
    Zstd(#[from] zstdkit::Error),
    /// A task of the heartbeat experiment's runtime panicked or was
    /// cancelled.
    #[cfg(feature = "zstd")]
    #[error("{task}: {source}")]
    Task {
        /// Which task.
        task: &'static str,
        /// What tokio said.
        #[source]
        source: tokio::task::JoinError,
    },
    /// zipstream failed writing an archive.
    #[cfg(feature = "zip")]
    #[error(transparent)]
    Zip(#[from] zipstream::Error),
    /// The `zip` crate, a peer linked in, failed writing an archive.
    #[cfg(feature = "zip")]
    #[error(transparent)]
    ZipCrate(#[from] zip::result::ZipError),
    /// `s-zip`, a peer linked in, failed writing an archive.
    #[cfg(feature = "zip")]
    #[error(transparent)]
    SZip(#[from] s_zip::error::SZipError),
    /// A kept archive (`Keep`) could not be written in place.
    #[cfg(feature = "zip")]
    #[error(transparent)]
    Output(#[from] landing::OutputError),
    /// The BE-Tree index refused an expression or event, or its search
    /// failed.
    #[cfg(feature = "betree")]
    #[error(transparent)]
    Betree(#[from] betree::Error),
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

// Shared by every part of the bench; the FIX part uses each of them, and
// a build without it (a subset of the parts) may leave some unused.
#[cfg_attr(not(feature = "fix"), allow(dead_code))]
impl Error {
    /// Wraps an I/O error with what was being done; the text is made only
    /// if there is an error, so this costs nothing on a measured path.
    pub(crate) fn io(doing: &'static str) -> impl FnOnce(io::Error) -> Error {
        move |source| Error::Io {
            doing: doing.into(),
            source,
        }
    }

    /// This error as the step `doing`'s cause.
    pub(crate) fn during(self, doing: impl Into<String>) -> Error {
        Error::During {
            doing: doing.into(),
            source: Box::new(self),
        }
    }
}

/// ` (stderr: a | b)`, or nothing for no lines.
fn quote(stderr: &[String]) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(" (stderr: {})", stderr.join(" | "))
    }
}

/// Says what was being done when an I/O operation failed, turning its
/// error into [`Error::Io`].
#[cfg_attr(not(feature = "fix"), allow(dead_code))]
pub(crate) trait IoContext<T> {
    /// With a fixed description.
    fn doing(self, doing: &str) -> Result<T>;
    /// With a description made only if there is an error.
    fn doing_with(self, doing: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn doing(self, doing: &str) -> Result<T> {
        self.map_err(|source| Error::Io {
            doing: doing.to_owned(),
            source,
        })
    }

    fn doing_with(self, doing: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Io {
            doing: doing(),
            source,
        })
    }
}

/// Says which step failed, around the step's own error (this crate's, or
/// one it wraps), as [`Error::During`]. Not for `io::Error`, which has no
/// place in [`Error`] without saying what was being done ([`IoContext`]).
#[cfg_attr(not(feature = "fix"), allow(dead_code))]
pub(crate) trait StepContext<T> {
    /// With a fixed description.
    fn during(self, doing: &str) -> Result<T>;
    /// With a description made only if there is an error.
    fn during_with(self, doing: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<Error>> StepContext<T> for std::result::Result<T, E> {
    fn during(self, doing: &str) -> Result<T> {
        self.map_err(|e| e.into().during(doing))
    }

    fn during_with(self, doing: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| e.into().during(doing()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_names_each_cause_once() {
        let e = Error::Io {
            doing: "reading x".into(),
            source: io::Error::other("gone"),
        }
        .during("step");
        assert_eq!(e.to_string(), "step: reading x: gone");
        assert_eq!(perfkit_report::one_line(&e), "step: reading x: gone");
    }

    #[test]
    fn a_peers_stderr_is_quoted_after_its_message() {
        let peer = |stderr: &[&str]| Error::Peer {
            peer: "p".into(),
            message: "died".into(),
            stderr: stderr.iter().map(|s| (*s).to_owned()).collect(),
        };
        assert_eq!(peer(&[]).to_string(), "p: died");
        assert_eq!(peer(&["a", "b"]).to_string(), "p: died (stderr: a | b)");
    }
}
