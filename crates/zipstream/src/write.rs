//! Archive writers: one format core, a sync front end and an async front end.

pub(crate) mod copy;
pub(crate) mod core;
#[cfg(feature = "tokio")]
pub mod nonblocking;
pub mod sync;

pub use self::core::Written;

/// Output is handed to the sink once this much is buffered (or at entry and
/// archive boundaries), which keeps sink calls large and memory flat.
pub(crate) const DRAIN_AT: usize = 64 * 1024;
