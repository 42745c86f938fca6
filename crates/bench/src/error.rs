//! The crate's error type: what can stop a measurement. The protocol's own
//! errors stay fixcore's; thread, OS and environment failures are ours.

use fixcore::affinity::PinError;
use fixcore::deferred::WorkerError;

/// Why a measurement could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A FIX message the measurement needs was rejected.
    #[error(transparent)]
    Fix(#[from] fixcore::Error),
    /// A measuring thread could not be placed as asked.
    #[error(transparent)]
    Pin(#[from] PinError),
    /// The deferred processor under measurement failed.
    #[error(transparent)]
    Worker(#[from] WorkerError),
    /// An I/O error from a socket, ring or thread start.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
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
}

/// Result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(context: &'static str) -> impl FnOnce(std::io::Error) -> Error {
        move |source| Error::Io { context, source }
    }
}
