//! stress: a producer/consumer codec stress harness with interchangeable
//! context-pool strategies, measuring throughput, memory and threads over time.
//!
//! This crate is being built under the stress issue; it holds no code yet.
