//! FIX session layer (issue 16), protocol only: no threads, no sockets, no
//! clocks of its own.
//!
//! - [`machine`]: the sans-I/O state machine ([`machine::Session`]): framed
//!   messages and clock ticks in, bytes to send and application messages
//!   out;
//! - [`reject`]: SessionRejectReason codes and QuickFIX's texts for them;
//! - [`store`]: what a session must remember across connections and
//!   restarts: its two sequence numbers and the messages it sent, for
//!   serving ResendRequests.

pub mod machine;
pub mod reject;
pub mod store;
