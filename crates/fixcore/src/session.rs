//! FIX session layer (issue 16), protocol only: no threads, no sockets, no
//! clocks of its own.
//!
//! - [`machine`]: the sans-I/O state machine ([`machine::Session`]): framed
//!   messages and clock ticks in, bytes to send and application messages
//!   out;
//! - [`connection`]: runs a session over one blocking TCP connection,
//!   with an [`app::Application`] and an [`app::Log`];
//! - [`acceptor`]: many sessions on one port, each connection routed to
//!   its session by the CompIDs of its first Logon;
//! - [`app`]: the `echo` and `exec` applications;
//! - [`id`]: [`id::SessionId`], a session's identity, and which CompIDs
//!   can name files;
//! - [`file_log`]: the message and event logs in QuickFIX's file layout;
//! - [`tls`]: QuickFIX's certificate keys as rustls configurations, and
//!   the TLS stream a connection runs over when they are on;
//! - [`reject`]: SessionRejectReason codes and QuickFIX's texts for them;
//! - [`window`]: daily and weekly session and logon windows (QuickFIX's
//!   `TimeRange`), re-exported from [`crate::window`], where settings and
//!   sessions both find it;
//! - [`store`]: what a session must remember across connections and
//!   restarts: its two sequence numbers and the messages it sent, for
//!   serving ResendRequests.

pub mod acceptor;
pub mod app;
pub mod connection;
pub mod file_log;
pub mod id;
pub mod machine;
pub mod reject;
pub mod store;
pub mod tls;

/// Session and logon windows, at home in [`crate::window`] (settings read
/// them, sessions check them); re-exported here so
/// `fixcore::session::window::TimeWindow` keeps working.
pub use crate::window;
