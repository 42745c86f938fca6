//! FIX session layer (issue 16), protocol only: no threads, no sockets, no
//! clocks of its own. [`store`] keeps what a session must remember across
//! connections and restarts: its two sequence numbers and the messages it
//! sent, for serving ResendRequests.

pub mod store;
