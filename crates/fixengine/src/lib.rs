//! fixengine: the FIX session engine — [`fixsession`]'s sans-I/O machine
//! driven over TCP and TLS, many sessions on one port, initiators that
//! reconnect, the built-in applications, and the [`assembly`] of sessions
//! from a QuickFIX settings file that `perfkit fix acceptor`,
//! `fix initiator` and `fix load` call.
//!
//! - [`connection`]: runs a session over one blocking TCP (or TLS)
//!   connection, with an [`Application`](fixsession::app::Application)
//!   and a [`Log`](fixsession::log::Log);
//! - [`acceptor`]: many sessions on one port, each connection routed to
//!   its session by the CompIDs of its first Logon; templates make
//!   sessions at their Logon;
//! - [`initiator`]: where an initiator's next attempt goes, and the TCP
//!   connection to it;
//! - [`lease`]: the keeper that takes and renews the leases of sessions
//!   whose store engines share, so one engine serves each;
//! - [`tls`]: QuickFIX's certificate keys as rustls configurations, and
//!   the TLS stream a connection runs over when they are on;
//! - [`apps`]: the `echo` and `exec` applications and the initiator's
//!   orders;
//! - [`assembly`]: stores (memory, file, PostgreSQL), logs, dictionaries
//!   and TLS chosen from a settings file, and the acceptor and initiator
//!   run with them;
//! - [`whole_file`]: the files read whole (settings, dictionaries,
//!   templates, PEM), each kind bounded by a limit.
//!
//! A session over a TCP connection the caller made:
//!
//! ```no_run
//! use std::net::TcpStream;
//! use std::sync::atomic::AtomicBool;
//!
//! use fixcore::version::BeginString;
//! use fixengine::apps::Echo;
//! use fixengine::connection::{self, Options};
//! use fixsession::log::Discard;
//! use fixsession::machine::{Config, Role, Session};
//! use fixsession::store::MemoryStore;
//!
//! static STOP: AtomicBool = AtomicBool::new(false);
//! let mut stream = TcpStream::connect("127.0.0.1:9878")?;
//! let cfg = Config::new(Role::Initiator, BeginString::Fix44, "BUYER", "SELLER");
//! let mut session = Session::new(cfg, MemoryStore::default());
//! connection::run(&mut stream, &[], &mut session, &mut Echo::default(), &mut Discard, Options::new(&STOP))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod acceptor;
pub mod apps;
pub mod assembly;
pub mod connection;
pub mod initiator;
pub mod lease;
mod socket;
pub mod tls;
pub mod whole_file;
