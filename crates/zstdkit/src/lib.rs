//! zstdkit: zstd with named recipes, reusable contexts, streaming with flush
//! modes, tokio adapters and a per-call inline-or-offload budget.
//!
//! Everything runs on the reference C implementation through `zstd-safe`, so
//! frames are byte-compatible with the `zstd` CLI both ways.
//!
//! - [`recipe`]: [`Recipe`] presets (`fast` … `maximum`) and [`Params`]
//!   overrides (level, strategy, window log, long mode, checksum, workers).
//! - [`context`]: reusable [`Compressor`] / [`Decompressor`] and the
//!   fresh-context one-shots [`compress`] / [`decompress`].
//! - [`raw`]: [`RawDecoder`], the sans-I/O decoding step (slice in, slice
//!   out) that every decoder runs on.
//! - [`stream`]: [`Encoder`] (with [`FlushMode`]) and [`Decoder`] over `std::io`.
//! - [`runway`]: [`RunwayEncoder`], which compresses a reader's stream in
//!   place, read ahead by a thread, without copying it into zstd's ring.
//! - `async_io`: `AsyncEncoder` / `AsyncDecoder` over tokio (the default
//!   feature `tokio`, as are [`Budget`]'s async calls).
//! - [`tuning`]: zstd's advanced parameters as `--zstd=` writes them.
//! - [`dict`]: dictionary training.
//! - [`patch`]: a target compressed against a reference file (`--patch-from`).
//! - [`seekable`]: zstd's seekable format, independent frames and a seek table.
//! - [`frame`]: walking a stream frame by frame without decoding it.
//! - [`parallel`]: the frames of one input decoded on several threads, in order.
//! - [`job`]: a whole input compressed or decompressed, reader to writer, in
//!   any of the formats above or gzip: the one entry point of a file tool.
//! - [`pipeline`]: a read-ahead and a write-behind thread, so that a job's
//!   coding overlaps its I/O.
//! - [`budget`]: the [`CostModel`] and the per-call [`Budget`] placement.
//!
//! ```
//! use zstdkit::{Compressor, Decompressor, Recipe};
//! let mut c = Compressor::new(Recipe::Text)?;
//! let mut d = Decompressor::new()?;
//! for msg in [&b"first message"[..], b"second message"] {
//!     let frame = c.compress(msg)?;          // context reused across calls
//!     assert_eq!(d.decompress(&frame)?, msg);
//! }
//! assert!(matches!(d.decompress(b"not zstd"), Err(zstdkit::Error::UnknownFormat { offset: 0 })));
//! # Ok::<(), zstdkit::Error>(())
//! ```

#[cfg(feature = "tokio")]
pub mod async_io;
pub mod budget;
pub mod context;
pub mod dict;
pub mod error;
mod ffi;
pub mod frame;
pub mod fuzzing;
pub mod job;
pub mod parallel;
pub mod patch;
pub mod pipeline;
pub mod raw;
pub mod recipe;
pub mod runway;
pub mod seekable;
mod stable;
pub mod stream;
pub mod tuning;
pub mod whole;

#[cfg(feature = "tokio")]
pub use async_io::{AsyncDecoder, AsyncEncoder};
pub use budget::{Budget, CostModel, DEFAULT_BUDGET, LinearCost, Operation, Placement, Policy};
pub use context::{
    CLEAN_TABLES_FROM, Compressor, DEFAULT_WINDOW_LOG_MAX, Decompressor, compress, decompress,
};
pub use error::{Error, JobError, Result};
pub use raw::{DecodeStep, RawDecoder};
pub use recipe::{Params, Recipe, Strategy};
pub use runway::{Runway, RunwayEncoder};
pub use stream::{Decoder, Encoder, FlushMode};

/// The version of the bundled zstd library, e.g. `"1.5.7"`.
pub fn zstd_version() -> &'static str {
    zstd_safe::version_string()
}
