//! fixsession's session store and log on PostgreSQL, in the tables QuickFIX's
//! own `PostgreSQLStore` and `PostgreSQLLog` use (its `src/sql/postgresql`
//! scripts): a database a QuickFIX shop already runs is read as it is, and
//! a standby engine on another host takes a session over from where the
//! engine before it stopped, fenced so that two never serve it at once.
//!
//! - [`PostgresStore`]: a [`SessionStore`](fixsession::store::SessionStore)
//!   over the `sessions` and `messages` tables. Records are held in memory
//!   until [`flush`](fixsession::store::SessionStore::flush), which
//!   writes the round's messages and both sequence numbers in one
//!   statement (one transaction, one round trip); the session driver
//!   flushes before it writes to the socket, so a message is sent only
//!   once it is in the database. A large round may be written by the
//!   store's writer thread while the driver goes on
//!   ([`begin_flush`](fixsession::store::SessionStore::begin_flush)).
//! - [`PostgresLease`]: a session's
//!   [`SessionLease`](fixsession::lease::SessionLease) in perfkit's own
//!   `perfkit_session_leases` table, so that of several engines sharing
//!   the database one serves each session; a store opened with
//!   [`PostgresStore::open_fenced`] writes only under the lease's epoch.
//! - [`PostgresLog`]: a [`Log`](fixsession::log::Log) into the
//!   incoming, outgoing and event tables (`messages_log`, `event_log` by
//!   default), handed over per round to a writer thread of its own, so
//!   the session never waits for its log.
//!
//! A lost connection is
//! [`StoreError::Unavailable`](fixsession::store::StoreError::Unavailable):
//! the store keeps what it has not written, opens a new connection on the
//! next call, and the driver holds the session's traffic back until then
//! (see
//! `fixengine::connection::run`). The tables are created when
//! missing, with QuickFIX's column names and types.
//!
//! This crate is its own so that fixsession, and the sans-I/O session
//! machine in it, gain no database client and no async runtime (the
//! `postgres` client runs tokio inside).
//!
//! ```no_run
//! use fixsession::store::SessionStore;
//! use fixsession::settings::PostgresSettings;
//! use fixsession_postgres::{PostgresStore, SessionKey};
//!
//! let db = PostgresSettings { hosts: vec!["db.example".into()], ..PostgresSettings::default() };
//! let key = SessionKey::new("FIX.4.2", "ISLD", "TW", "");
//! let mut store = PostgresStore::open(&db, key)?;
//! store.save(store.next_sender_seq(), b"8=FIX.4.2\x019=5\x0135=0\x0110=161\x01")?;
//! store.set_seqs(store.next_sender_seq() + 1, store.next_target_seq())?;
//! store.flush()?; // both rows are in the database now
//! # Ok::<(), fixsession::store::StoreError>(())
//! ```

#![forbid(unsafe_code)]

mod conn;
pub mod lease;
pub mod log;
pub mod store;

pub use lease::PostgresLease;
pub use log::PostgresLog;
pub use store::PostgresStore;

/// Which session a row belongs to: the four columns that key every
/// QuickFIX table (`beginstring`, `sendercompid`, `targetcompid`,
/// `session_qualifier`), which are fixsession's
/// [`SessionId`](fixsession::id::SessionId)'s.
pub use fixsession::id::SessionId as SessionKey;
