//! fixsession: the FIX session layer without I/O, QuickFIX's behaviour as
//! a library. No sockets, threads or TLS live here (the `fixengine` crate
//! drives a session over TCP); the stores' and logs' files are the only
//! I/O.
//!
//! - [`machine`]: the sans-I/O state machine ([`machine::Session`]):
//!   framed messages and clock ticks in, bytes to send and application
//!   messages out;
//! - [`app`]: the [`app::Application`] trait a driver hands delivered
//!   messages to, as [`app::Delivered`], and [`app::Echo`], the
//!   application QuickFIX's acceptance tests run against (the session
//!   scripts of `tests/session` play the machine against it);
//! - [`log`]: the [`log::Log`] trait a driver writes traffic and events
//!   to; [`file_log`]: QuickFIX's file logs;
//! - [`store`]: what a session must remember across connections and
//!   restarts ([`store::SessionStore`], in memory, every message or a
//!   window on fixcore's resend ring, or in QuickFIX's file layout);
//! - [`settings`]: QuickFIX settings files, every key known or refused;
//! - [`schedule`]: QuickFIX's daily and weekly session and logon times
//!   (`TimeRange`);
//! - [`id`]: [`id::SessionId`], a session's identity, and which CompIDs
//!   can name files;
//! - [`lease`]: one engine per session among engines sharing a store
//!   (the lease trait a database store implements, and its fencing
//!   token);
//! - [`reject`]: SessionRejectReason codes and QuickFIX's texts for them.
//!
//! A session is fed by hand here, as a test or a transport would:
//!
//! ```
//! use fixcore::value::UtcTimestamp;
//! use fixcore::version::BeginString;
//! use fixsession::machine::{Config, Output, Role, Session};
//! use fixsession::store::MemoryStore;
//!
//! let cfg = Config::new(Role::Initiator, BeginString::Fix44, "BUYER", "SELLER");
//! let mut session = Session::new(cfg, MemoryStore::default());
//! let now = UtcTimestamp::now();
//! session.on_connect(now).unwrap();
//! // An initiator's first output is its Logon, stored before it is sent.
//! let sent = session.drain().find_map(|o| match o {
//!     Output::Send(bytes) => Some(bytes),
//!     _ => None,
//! });
//! assert!(sent.is_some_and(|b| b.windows(5).any(|w| w == b"35=A\x01")));
//! ```

pub mod app;
pub mod file_log;
#[doc(hidden)]
pub mod fuzzing;
pub mod id;
pub mod lease;
pub mod log;
pub mod machine;
pub mod order_template;
pub mod reject;
pub mod schedule;
pub mod settings;
pub mod store;
