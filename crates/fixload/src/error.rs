//! The crate's error type: why a load run could not be made or finished,
//! or a rate or an order template could not be read.
//!
//! What an engine does wrong during a run (orders left unanswered,
//! rejects, sessions it drops) is not an error: it is counted in the
//! [`Outcome`](crate::Outcome). An error is a run that cannot start (a
//! plan out of range, an engine that cannot be reached or refuses the
//! Logon) or a failure of the generator itself.

use std::path::PathBuf;
use std::time::Duration;

use fixcore::affinity::PinError;
use fixsession::machine::SessionError;

/// Why a load run could not be made, or its settings read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A session of the settings file uses TLS (`SocketUseSSL=Y`): the
    /// generator speaks plain TCP only, and will not send orders in the
    /// clear to it.
    #[error(
        "{}: {session}: SocketUseSSL=Y: fix load speaks plain TCP only and will not send \
         orders in the clear to a TLS session; run it against a plain-TCP port",
        file.display()
    )]
    Tls {
        /// The settings file.
        file: PathBuf,
        /// The session's id (`SessionSettings::id`).
        session: String,
    },
    /// A session of the settings file says nowhere to connect.
    #[error("{session}: SocketConnectHost and SocketConnectPort are needed")]
    NoAddress {
        /// The session's id (`SessionSettings::id`).
        session: String,
    },
    /// The plan cannot be run as given (a rate, duration or interval out
    /// of range, no session, too many intervals to keep); the message
    /// says which.
    #[error("{0}")]
    Plan(String),
    /// [`Plan::pin`](crate::Plan::pin) names a core this process may not
    /// run on.
    #[error("core {core}: this process may run on cores {usable:?} only")]
    CoreNotUsable {
        /// The core asked for.
        core: usize,
        /// The cores the process may run on.
        usable: Vec<usize>,
    },
    /// [`Io::Uring`](crate::Io::Uring) was asked for and the kernel
    /// cannot provide it (the reason as the probe found it).
    #[error("io_uring is not available here: {0}")]
    UringUnavailable(String),
    /// A thread of the generator could not be pinned.
    #[error("pinning to core {core}")]
    Pin {
        /// The core.
        core: usize,
        /// Why.
        #[source]
        source: PinError,
    },
    /// A session's engine could not be reached.
    #[error("{session}: connecting to {host}:{port}")]
    Connect {
        /// `SenderCompID->TargetCompID`.
        session: String,
        /// SocketConnectHost.
        host: String,
        /// SocketConnectPort.
        port: u16,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A session could not start its Logon.
    #[error("{session}: starting the session")]
    Start {
        /// `SenderCompID->TargetCompID`.
        session: String,
        /// The session's failure.
        #[source]
        source: SessionError,
    },
    /// The engine refused a session's Logon (or closed the connection
    /// before answering it).
    #[error("{session}: Logon refused ({why})")]
    LogonRefused {
        /// `SenderCompID->TargetCompID`.
        session: String,
        /// What the session saw of why.
        why: String,
    },
    /// The engine did not answer a session's Logon in time.
    #[error("{session}: no Logon answer within {timeout:?}")]
    LogonTimeout {
        /// `SenderCompID->TargetCompID`.
        session: String,
        /// [`Plan::logon_timeout`](crate::Plan::logon_timeout).
        timeout: Duration,
    },
    /// A session's state machine failed (its store, typically).
    #[error(transparent)]
    Session(#[from] SessionError),
    /// An OS call failed while doing what `what` names.
    #[error("{what}")]
    Os {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An OS call failed: a socket option, a thread start, a ring's wait.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A thread of the generator panicked.
    #[error("{0}")]
    Thread(&'static str),
    /// Histograms of different bounds were added together.
    #[error(transparent)]
    Histogram(#[from] hdrhistogram::AdditionError),
    /// A rate that is not a number of orders per second from 1 to 100M.
    #[error("'{0}' is not a rate (orders per second from 1 to 100M, e.g. 50000, 50k or 50k/s)")]
    Rate(String),
    /// An order template that is refused.
    #[error(transparent)]
    Template(#[from] fixsession::order_template::TemplateError),
}

/// Result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Wraps an OS error with what was being done.
    pub(crate) fn os(what: &'static str) -> impl FnOnce(std::io::Error) -> Error {
        move |source| Error::Os { what, source }
    }
}
