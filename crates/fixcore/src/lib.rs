//! fixcore: the FIX tag=value hot path — field scanner, zero-copy parser,
//! builder, message store, deferred processor, core pinning and transports.
//!
//! This crate is being built under the fixcore issue; it holds no code yet.
