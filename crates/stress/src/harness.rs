//! The run itself: producers make blocks, compress them and send them over
//! a bounded channel; consumers decompress each one and compare it with the
//! original. The caller's thread samples the process once per
//! [`Config::sample_every`] while the workers run on a tokio multi-thread
//! runtime or on plain OS threads.

mod config;
mod outcome;
mod plan;
mod run;
mod workers;

pub use config::{Config, Fault, FaultKind, MIN_SOAK_SAMPLES, Runtime, SoakLimits};
pub use outcome::{Growth, Outcome, Sample, Totals};
pub use plan::{Plan, Progress};
pub use run::run;

#[cfg(test)]
mod tests;
