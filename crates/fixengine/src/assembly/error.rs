//! [`Error`]: why an engine could not start or stopped, as a chain of
//! contexts and causes (what was being done, then why it failed) that the
//! caller renders in one line.

use fixsession::store::StoreError;

/// Why an engine could not start, or why it stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// What the settings file asks for cannot be run as it is (no
    /// session of the role, sessions of one port that disagree, files
    /// another session owns...).
    #[error("{0}")]
    Refused(String),
    /// A store failed to open (damaged, another session's, held).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Doing `context` failed; the source says why.
    #[error("{context}")]
    Failed {
        /// What was being done, e.g. `opening the store of FIX.4.2:A->B`.
        context: String,
        /// Why it failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A session's thread panicked.
    #[error("a session thread panicked")]
    Panicked,
}

/// Adds what was being done to a failure, as `anyhow`'s `with_context`
/// does: the failure becomes the [`Error::Failed`]'s source.
pub(super) trait Context<T> {
    /// `self`, its error wrapped in `context()`.
    fn context(self, context: impl FnOnce() -> String) -> Result<T, Error>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> Context<T> for Result<T, E> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T, Error> {
        self.map_err(|e| Error::Failed {
            context: context(),
            source: Box::new(e),
        })
    }
}
