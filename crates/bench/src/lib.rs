//! The measurements behind perfkit's bench commands, returned as data
//! (HDR histograms of nanoseconds per operation, variants side by side) for
//! the `perfkit` binary to render. The component libraries keep their
//! functionality; what times them lives here.
//!
//! - [`fix`]: the before/after comparisons behind `perfkit fix-bench`.
//!
//! ```
//! use perfkit_bench::fix::{self, Settings};
//! let s = Settings { runs: 2, iterations: 200, ..Settings::default() };
//! let built = fix::build(&s);
//! assert!(!built.variants.is_empty());
//! assert!(built.variants.iter().all(|v| v.histogram.len() > 0));
//! ```

#![forbid(unsafe_code)]

pub mod fix;
