//! The measurements behind perfkit's bench commands, returned as data
//! (HDR histograms of nanoseconds per operation, variants side by side) for
//! the `perfkit` binary to render. The component libraries keep their
//! functionality; what times them lives here.
//!
//! What every measurement here shares (the latency histogram, the
//! interleaving runner, CPU clocks, memory probes) is `perfkit-measure`'s,
//! which libraries use too; the report a comparison returns is
//! `perfkit-report`'s model. What stops one is an [`Error`]; the betree
//! comparisons return the `betree` crate's own.
//!
//! - [`betree`]: the reference benchmark's three search modes timed per
//!   event and per cooperative slice, and the long slices replayed;
//! - [`fix`]: the before/after comparisons behind `perfkit fix bench`,
//!   including the loopback transports (blocking, tokio, io_uring);
//! - [`stress`](mod@stress): `perfkit stress`'s report of the stress crate's runs;
//! - [`summary`]: `perfkit bench`'s report assembled from the components'
//!   and its headline lines computed from their rows.
//!
//! ```
//! use perfkit_bench::fix::{self, Settings};
//! let s = Settings { runs: 2, iterations: 200, ..Settings::default() };
//! let built = fix::build(&s);
//! assert!(!built.variants.is_empty());
//! assert!(built.variants.iter().all(|v| v.histogram.len() > 0));
//! ```

#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "betree")]
pub mod betree;
#[cfg(feature = "commands")]
pub mod commands;
mod error;
#[cfg(feature = "fix")]
pub mod fix;
pub mod invocation;
pub mod peer;
#[cfg(any(
    feature = "commands",
    feature = "zip",
    feature = "fix",
    feature = "zstd"
))]
mod rounds;
#[cfg(feature = "stress")]
pub mod stress;
#[cfg(feature = "commands")]
pub mod summary;
#[cfg(feature = "zip")]
pub mod zip;
#[cfg(feature = "zstd")]
pub mod zstd;
#[cfg(feature = "zstd")]
pub mod zstd_frame;

pub use error::{Error, Result};
