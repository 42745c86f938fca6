//! The one error type of the stress crate.

/// Everything that can stop a stress run before it produces an outcome.
///
/// Lost or corrupt blocks are not errors: they are counted in the
/// [`Outcome`](crate::Outcome), which says whether the run passed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration cannot describe a run (zero workers, empty sizes…).
    #[error("invalid stress configuration: {0}")]
    Config(String),
    /// A codec context could not be created or configured.
    #[error("codec context: {0}")]
    Codec(#[from] zstdkit::Error),
    /// The input file for a file workload is unusable.
    #[error("input file {path}: {detail}")]
    Input {
        /// The file.
        path: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The runtime or a worker thread could not be started.
    #[error("starting workers: {0}")]
    Spawn(#[from] std::io::Error),
    /// A producer or consumer panicked; the run's counts are unreliable.
    #[error("a {0} worker panicked")]
    WorkerPanicked(&'static str),
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;
