//! The application side of a session: the [`Application`] trait a
//! driver hands delivered messages to, what it hands them as
//! ([`Delivered`]) and how ([`deliver`]). Nothing here touches a socket, so socket-free drivers
//! (the scenario scripts) use it as the TCP connection does. [`Echo`],
//! the application QuickFIX's acceptance tests run against, is here so
//! that those scripts play the session against the same echo the engine
//! runs; the engine's other applications are its own (`fixengine::apps`).

mod echo;

pub use echo::Echo;

use fixcore::parse::{Message, Parser};
use fixcore::value::UtcTimestamp;

use crate::machine::{Session, SessionError};
use crate::store::SessionStore;

/// A message the session delivers in sequence: its bytes, and the
/// session's own parse of them when it has one to share, so that the
/// application need not parse every message a second time. A message only
/// the lenient reading accepted (a repeated tag, an empty value...) comes
/// without one.
#[derive(Debug, Clone, Copy)]
pub struct Delivered<'a> {
    bytes: &'a [u8],
    parsed: Option<Message<'a>>,
}

impl<'a> Delivered<'a> {
    /// A delivery of `bytes` without a parse.
    pub fn new(bytes: &'a [u8]) -> Delivered<'a> {
        Delivered {
            bytes,
            parsed: None,
        }
    }

    /// A delivery of `bytes` with the session's strict parse of them.
    pub(crate) fn with_parse(bytes: &'a [u8], parsed: Message<'a>) -> Delivered<'a> {
        Delivered {
            bytes,
            parsed: Some(parsed),
        }
    }

    /// The whole message as received (a complete frame).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The strict parse of [`Self::bytes`], when the session has it.
    pub fn parsed(&self) -> Option<Message<'a>> {
        self.parsed
    }

    /// The session's parse when it has one, else `parser`'s parse of the
    /// bytes.
    pub fn parse_with<'p>(&self, parser: &'p mut Parser) -> fixcore::Result<Message<'p>>
    where
        'a: 'p,
    {
        match self.parsed {
            Some(m) => Ok(m),
            None => parser.parse(self.bytes),
        }
    }
}

/// What the application side of a session does with its messages.
pub trait Application {
    /// A message delivered in sequence; reply through `session`.
    fn on_message<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        msg: Delivered<'_>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError>;

    /// The session has just logged on (send what waited for it).
    fn on_logon<S: SessionStore>(
        &mut self,
        _session: &mut Session<S>,
        _now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        Ok(())
    }

    /// The session's timers ran at `now` (every tick of the driver, about
    /// ten a second, and after each read): an application with deadlines
    /// of its own checks them here.
    fn on_tick<S: SessionStore>(
        &mut self,
        _session: &mut Session<S>,
        _now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        Ok(())
    }

    /// Whether the application has finished its work, so an initiator
    /// should not reconnect once the session ends.
    fn done(&self) -> bool {
        false
    }
}

/// Hands `msg`, the buffer of an [`Output::Deliver`](crate::machine::Output::Deliver),
/// to `app`, with the session's own parse of it when the session has it
/// to lend (the latest strict delivery), so the application need not
/// parse it a second time; the parser goes back to the session after.
#[inline]
pub fn deliver<S: SessionStore, A: Application>(
    session: &mut Session<S>,
    app: &mut A,
    msg: &[u8],
    now: UtcTimestamp,
) -> Result<(), SessionError> {
    match session.lend_parser(msg) {
        Some(parser) => {
            let delivered = Delivered::with_parse(msg, parser.view(msg));
            let res = app.on_message(session, delivered, now);
            session.give_back_parser(parser);
            res
        }
        None => app.on_message(session, Delivered::new(msg), now),
    }
}
