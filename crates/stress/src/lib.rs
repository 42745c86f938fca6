//! stress: a producer/consumer codec stress harness with interchangeable
//! context-pool strategies, measuring whether throughput, memory and thread
//! count stay flat over time and whether any block is lost or corrupted.
//!
//! Producers generate blocks ([`workload`]), compress them with contexts
//! from a [`ContextPool`] and send them over a bounded channel; consumers
//! decompress each block and compare it with its original. The caller's
//! thread samples throughput, CPU, resident memory, threads and contexts
//! once per period (`perfkit_measure`'s probes), and per-block latencies go into HDR
//! histograms ([`latency`]). A soak run fits the memory and context series
//! to a line ([`trend`]) to detect leaks. The library measures and returns
//! data; rendering belongs to the caller.
//!
//! ```
//! use std::time::Duration;
//! use stress::{Config, PoolKind, Runtime};
//! let config = Config {
//!     pool: PoolKind::ThreadLocal,
//!     runtime: Runtime::Tokio,
//!     producers: 4,
//!     consumers: 4,
//!     interval: Duration::ZERO,
//!     duration: Duration::from_millis(100),
//!     sample_every: Duration::from_millis(50),
//!     ..Config::default()
//! };
//! let outcome = stress::run(&config, &mut |_sample| {})?;
//! assert!(outcome.passed(), "{:?}", outcome.failures());
//! assert!(outcome.totals.verified > 0);
//! assert_eq!(outcome.totals.verified, outcome.totals.produced);
//! # Ok::<(), stress::Error>(())
//! ```

#![forbid(unsafe_code)]

pub mod error;
pub mod harness;
pub mod latency;
mod ledger;
pub mod pool;
pub mod trend;
pub mod workload;

pub use error::{Error, Result};
pub use harness::{
    Config, Fault, FaultKind, Growth, MIN_SOAK_SAMPLES, Outcome, Plan, Progress, Runtime, Sample,
    SoakLimits, Totals, run,
};
pub use pool::{ContextCounts, ContextPool, PoolKind};
pub use workload::{BlockSource, Content, Workload};
