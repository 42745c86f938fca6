//! [`Log`]: where a session driver writes its connection's traffic and
//! events. [`FileLog`](crate::file_log::FileLog) is QuickFIX's file
//! layout; the engine adds the screen and PostgreSQL logs.

use fixcore::value::UtcTimestamp;

/// Where a connection's traffic and events are written.
pub trait Log {
    /// A message received (`incoming`) or sent, as its raw bytes.
    fn message(&mut self, now: UtcTimestamp, incoming: bool, msg: &[u8]);
    /// A session event (logon, gap, reject, disconnect...).
    fn event(&mut self, now: UtcTimestamp, text: &str);
    /// The end of a round: what was logged may be written out now. A
    /// driver calls it once per batch of messages, so a log can buffer
    /// rather than write each line.
    fn flush(&mut self) {}
    /// Both sequence numbers went back to 1 ([`Output::Reset`]): a log
    /// that keeps one run of numbers per file starts a new one.
    ///
    /// [`Output::Reset`]: crate::machine::Output::Reset
    fn reset(&mut self, _now: UtcTimestamp) {}
}

/// A log that keeps nothing, for a driver (or a test) that needs no
/// record of its traffic.
#[derive(Debug, Clone, Copy, Default)]
pub struct Discard;

impl Log for Discard {
    fn message(&mut self, _: UtcTimestamp, _: bool, _: &[u8]) {}
    fn event(&mut self, _: UtcTimestamp, _: &str) {}
}
