//! The sans-I/O session state machine: framed messages and clock ticks in,
//! bytes to send and application messages out. It owns no socket, thread
//! or clock; the caller (a transport loop, or a test script) feeds it and
//! carries out its [`Output`]s in order.
//!
//! Behaviour follows the FIX session-layer specification as QuickFIX
//! implements it (its texts included): Logon with CompID and HeartBtInt,
//! ResetSeqNumFlag and the Reset* settings; Heartbeat and TestRequest on
//! silence and a disconnect when the peer stays silent; a MsgSeqNum too
//! high asks for a resend and queues the message until the gap is filled;
//! too low without PossDupFlag ends the session; resend requests are
//! served from the [`SessionStore`] with admin messages replaced by
//! SequenceReset-GapFill; SequenceReset in both modes; the Logout
//! handshake; garbled messages dropped without consuming a number.
//!
//! This file holds the session's state and its life (connect, ticks,
//! session time, logout); `config` what it is told, `inspect` what it reads
//! of a received frame, `incoming` its checks and handling of each message,
//! `outgoing` what it sends, `resend` how it serves a ResendRequest and
//! `gap` the messages it keeps ahead of a gap.

use crate::settings::ConnectionType;
use crate::store::{SessionStore, StoreError};
use fixcore::build::MessageBuilder;
use fixcore::parse::Parser;
use fixcore::value::UtcTimestamp;
use fixcore::version::BeginString;

mod config;
mod gap;
mod incoming;
mod inspect;
mod outgoing;
mod resend;
mod screen;
#[cfg(test)]
mod tests;

pub use config::{Config, Credentials};
use gap::GapQueue;
pub use inspect::{is_header_tag, split_fields};
pub use screen::screen_logon;

const NANOS: i64 = 1_000_000_000;
/// EndSeqNo(16) meaning "everything after BeginSeqNo" before FIX 4.2.
const INFINITY_41: u64 = 999_999;

/// Most numbers one call of [`Session::continue_resend`] sends.
pub const RESEND_BATCH: u64 = 512;

/// A resend in progress: the next number to look at, the last, and where
/// a run of numbers to gap-fill began.
#[derive(Debug, Clone, Copy)]
struct Resend {
    next: u64,
    last: u64,
    gap_from: Option<u64>,
}

/// Which side of the connection a session is.
pub type Role = ConnectionType;

/// What the caller must do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Write these bytes (one complete message) to the connection.
    Send(Vec<u8>),
    /// An application message, received in sequence (resent or queued
    /// ones in their sequence order too).
    Deliver(Vec<u8>),
    /// The session is logged on (both Logons exchanged).
    LoggedOn,
    /// The session is logged out (both Logouts exchanged, or ours timed
    /// out); a [`Output::Disconnect`] follows.
    LoggedOut,
    /// Close the connection now.
    Disconnect,
    /// A line for the session's event log.
    Log(String),
    /// Both sequence numbers were reset to 1 and the sent messages
    /// forgotten (a Reset* setting, ResetSeqNumFlag, a new session
    /// period): what follows is a new run of numbers.
    Reset,
}

/// A session that cannot go on: its store failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The message store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No connection.
    Disconnected,
    /// Connected; an acceptor waits for the peer's Logon.
    AwaitingLogon,
    /// An initiator sent its Logon at this time and waits for the reply.
    LogonSent(i64),
    /// Logons exchanged.
    LoggedOn,
    /// We sent a Logout at this time and wait for the reply.
    LogoutSent(i64),
}

/// One FIX session: sequence numbers, timers, resend and gap handling.
pub struct Session<S: SessionStore> {
    cfg: Config,
    store: S,
    phase: Phase,
    parser: SessionParser,
    builder: MessageBuilder,
    /// Heartbeat interval in force (seconds; 0 disables the timers).
    heart_bt_int: u64,
    last_sent: i64,
    last_received: i64,
    /// TestRequests sent since the peer was last heard from.
    test_requests: u32,
    /// The gap we asked to be resent: (first, last) sequence numbers.
    resend_range: Option<(u64, u64)>,
    /// Messages received ahead of the gap, by sequence number.
    queue: GapQueue,
    /// Our resend still going out, batch by batch.
    resend: Option<Resend>,
    /// We sent a Logon with ResetSeqNumFlag=Y and await the reply.
    sent_reset: bool,
    /// The peer's Logon arrived (logged on once ours is out too).
    received_logon: bool,
    /// Our Logon went out.
    sent_logon: bool,
    out: Vec<Output>,
    scratch: Vec<u8>,
    /// Buffers of consumed [`Output::Send`] / [`Output::Deliver`] given
    /// back by [`Session::recycle`], reused for the next ones: an
    /// allocation per message was a visible share of an order's cost.
    spare: Vec<Vec<u8>>,
    /// Which instance of the session-time window the numbers belong to
    /// (see [`Session::period_at`]); `None` until first seen in one.
    period: Option<i64>,
    /// The second [`Session::check_session_window`] last found inside
    /// `period`: within it the answer cannot change, and a read round
    /// hands many messages the same time.
    window_checked: Option<i64>,
    /// Session-level Rejects (35=3) received in sequence, for a driver
    /// to report (they never reach the application).
    rejects_received: u64,
}

/// The session's parser, and which delivered message's parse it still
/// holds. Every use goes through [`Self::get`], which forgets that
/// message, so a lend can never hand out a parse of other bytes.
#[derive(Default)]
struct SessionParser {
    parser: Parser,
    /// The [`Output::Deliver`] buffer (address, length) whose strict parse
    /// `parser` holds. The address is compared, never followed.
    delivered: Option<(usize, usize)>,
    /// The parser given back after a lend, swapped in at the next one.
    spare: Option<Parser>,
}

impl SessionParser {
    /// The parser, for a new parse.
    fn get(&mut self) -> &mut Parser {
        self.delivered = None;
        &mut self.parser
    }

    /// The last parse was of `buf`'s bytes, now delivered in `buf`.
    fn mark_delivered(&mut self, buf: &[u8]) {
        self.delivered = Some((buf.as_ptr() as usize, buf.len()));
    }

    /// The parser holding the parse of `msg` when `msg` is the delivered
    /// buffer, replaced by the spare; see [`Session::lend_parser`].
    fn lend(&mut self, msg: &[u8]) -> Option<Parser> {
        // The buffer is alive (the caller holds it), so no other buffer can
        // share its address: equal address and length mean this delivery.
        if self.delivered != Some((msg.as_ptr() as usize, msg.len())) {
            return None;
        }
        self.delivered = None;
        let spare = self.spare.take().unwrap_or_default();
        Some(std::mem::replace(&mut self.parser, spare))
    }
}

/// Most buffers kept for reuse (more are dropped).
const SPARE_BUFFERS: usize = 64;
/// Largest buffer kept for reuse: one huge message must not pin its
/// memory for the session's life.
const SPARE_CAPACITY: usize = 64 << 10;

/// Whether `t` is an admin (session-level) message type.
fn is_admin(t: &[u8]) -> bool {
    matches!(t, b"0" | b"1" | b"2" | b"3" | b"4" | b"5" | b"A")
}

impl<S: SessionStore> Session<S> {
    /// A disconnected session over `store`.
    pub fn new(cfg: Config, store: S) -> Session<S> {
        Session {
            builder: MessageBuilder::new(cfg.begin_string),
            heart_bt_int: u64::from(cfg.heart_bt_int),
            cfg,
            store,
            phase: Phase::Disconnected,
            parser: SessionParser::default(),
            last_sent: 0,
            last_received: 0,
            test_requests: 0,
            resend_range: None,
            queue: GapQueue::default(),
            resend: None,
            sent_reset: false,
            received_logon: false,
            sent_logon: false,
            out: Vec::new(),
            scratch: Vec::new(),
            spare: Vec::new(),
            period: None,
            window_checked: None,
            rejects_received: 0,
        }
    }

    /// Gives back the buffer of a consumed [`Output::Send`] or
    /// [`Output::Deliver`] for the session to reuse. Optional: a buffer
    /// not given back is simply dropped.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if self.spare.len() < SPARE_BUFFERS && buf.capacity() <= SPARE_CAPACITY {
            buf.clear();
            self.spare.push(buf);
        }
    }

    /// The session's parser holding the parse of `msg`, when `msg` is the
    /// buffer of the latest [`Output::Deliver`] and it passed the strict
    /// parse: the application reads it with [`Parser::view`] instead of
    /// parsing every order a second time (that second parse was about a
    /// sixth of an acceptor's instructions per order). The session carries
    /// on with a spare parser; [`Self::give_back_parser`] returns this one.
    pub(crate) fn lend_parser(&mut self, msg: &[u8]) -> Option<Parser> {
        self.parser.lend(msg)
    }

    /// Takes back a parser lent by [`Self::lend_parser`].
    pub(crate) fn give_back_parser(&mut self, parser: Parser) {
        self.parser.spare = Some(parser);
    }

    /// `bytes` in a reused buffer when one is spare.
    fn owned(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut v = self.spare.pop().unwrap_or_default();
        v.extend_from_slice(bytes);
        v
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Where the session stands.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The store (its sequence numbers are the session's).
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The heartbeat interval in force, in seconds (the peer's, once its
    /// Logon arrived); 0 when heartbeats are off.
    pub fn heartbeat_interval(&self) -> u64 {
        self.heart_bt_int
    }

    /// Makes what the store holds back persist ([`SessionStore::flush`]).
    /// A driver calls it after the application took the round's
    /// delivered messages and before writing the round's bytes: stored
    /// before sent, counted only once taken.
    pub fn flush_store(&mut self) -> Result<(), SessionError> {
        self.store.flush()?;
        Ok(())
    }

    /// Starts flushing the store without waiting
    /// ([`SessionStore::begin_flush`]): the ticket that says when it has.
    pub fn begin_flush_store(&mut self) -> Result<u64, SessionError> {
        Ok(self.store.begin_flush()?)
    }

    /// The newest flush ticket the store has made persist
    /// ([`SessionStore::flushed`]).
    pub fn store_flushed(&mut self) -> Result<u64, SessionError> {
        Ok(self.store.flushed()?)
    }

    /// Reads the store's numbers and messages again from where they
    /// persist ([`SessionStore::refresh`]): a driver does so before it
    /// runs a session whose store another engine may have written since
    /// (see [`crate::lease::Standing`]). Only while disconnected.
    pub fn refresh_store(&mut self) -> Result<(), SessionError> {
        debug_assert_eq!(self.phase, Phase::Disconnected);
        self.store.refresh()?;
        Ok(())
    }

    /// Whether both Logons have been exchanged.
    pub fn is_logged_on(&self) -> bool {
        matches!(self.phase, Phase::LoggedOn | Phase::LogoutSent(_))
    }

    /// Takes the outputs produced so far, oldest first.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Output> {
        self.out.drain(..)
    }

    fn log(&mut self, line: String) {
        self.out.push(Output::Log(line));
    }

    /// Resets the store (both numbers to 1, nothing kept) and says so.
    fn reset_store(&mut self) -> Result<(), SessionError> {
        self.store.reset()?;
        self.out.push(Output::Reset);
        Ok(())
    }

    /// A connection is up: an initiator sends its Logon, an acceptor waits
    /// for one.
    pub fn on_connect(&mut self, now: UtcTimestamp) -> Result<(), SessionError> {
        // A new window begun while disconnected resets the numbers and
        // the session goes on; outside any window an initiator does not
        // log on (an acceptor answers the Logon with a Logout, as QuickFIX
        // does).
        if !self.check_session_time(now)?
            && self.period.is_none()
            && self.cfg.role == Role::Initiator
        {
            self.log("Connection outside of session time".into());
            self.out.push(Output::Disconnect);
            return Ok(());
        }
        let t = now.unix_nanos;
        self.last_received = t;
        self.last_sent = t;
        self.test_requests = 0;
        self.received_logon = false;
        self.sent_logon = false;
        self.resend_range = None;
        self.queue.clear();
        self.resend = None;
        // An initiator outside its logon time waits, connected, and logs
        // on from a tick once the time comes (QuickFIX's next()).
        self.phase = Phase::AwaitingLogon;
        if self.cfg.role == Role::Initiator && self.is_logon_time(now) {
            self.initiate_logon(now)?;
        }
        Ok(())
    }

    /// An initiator's Logon, the first message of a connection.
    fn initiate_logon(&mut self, now: UtcTimestamp) -> Result<(), SessionError> {
        if self.cfg.refresh_on_logon {
            self.store.refresh()?;
        }
        if self.cfg.reset_on_logon {
            self.reset_store()?;
        }
        self.heart_bt_int = u64::from(self.cfg.heart_bt_int);
        // QuickFIX's shouldSendReset: from FIX 4.1, with any Reset*
        // setting, when both numbers stand at 1.
        let reset = self.cfg.begin_string >= BeginString::Fix41
            && (self.cfg.reset_on_logon
                || self.cfg.reset_on_logout
                || self.cfg.reset_on_disconnect)
            && self.store.next_sender_seq() == 1
            && self.store.next_target_seq() == 1;
        self.send_logon(reset, false, now)?;
        self.phase = Phase::LogonSent(now.unix_nanos);
        self.log("Initiated logon request".into());
        Ok(())
    }

    /// The connection is gone (closed by either side).
    pub fn on_disconnect(&mut self) -> Result<(), SessionError> {
        if self.phase != Phase::Disconnected {
            self.log("Disconnecting".into());
        }
        self.phase = Phase::Disconnected;
        self.received_logon = false;
        self.sent_logon = false;
        self.resend_range = None;
        self.queue.clear();
        self.resend = None;
        if self.cfg.reset_on_disconnect {
            self.reset_store()?;
        }
        Ok(())
    }

    fn disconnect(&mut self) -> Result<(), SessionError> {
        if self.phase == Phase::Disconnected {
            return Ok(());
        }
        self.out.push(Output::Disconnect);
        self.on_disconnect()
    }

    /// Time passes: heartbeats, test requests and timeouts.
    pub fn on_tick(&mut self, now: UtcTimestamp) -> Result<(), SessionError> {
        if !self.check_session_time(now)? {
            return Ok(());
        }
        // Outside the logon time a logged-on session logs out, and one not
        // logged on does nothing (QuickFIX's next()).
        if !self.is_logon_time(now) {
            match self.phase {
                Phase::LoggedOn => return self.logout(None, now),
                Phase::LogoutSent(_) => {}
                _ => return Ok(()),
            }
        }
        let t = now.unix_nanos;
        match self.phase {
            Phase::AwaitingLogon if self.cfg.role == Role::Initiator => {
                return self.initiate_logon(now);
            }
            Phase::Disconnected | Phase::AwaitingLogon => return Ok(()),
            Phase::LogonSent(at) => {
                if t - at >= i64::from(self.cfg.logon_timeout_secs) * NANOS {
                    self.log("Timed out waiting for logon response".into());
                    self.disconnect()?;
                }
                return Ok(());
            }
            Phase::LogoutSent(at) => {
                if t - at >= i64::from(self.cfg.logout_timeout_secs) * NANOS {
                    self.log("Timed out waiting for logout response".into());
                    self.disconnect()?;
                }
                return Ok(());
            }
            Phase::LoggedOn => {}
        }
        if self.heart_bt_int == 0 {
            return Ok(());
        }
        // HeartBtInt comes from the peer's Logon: any u64 must neither
        // overflow nor wrap here.
        let hb = i64::try_from(self.heart_bt_int)
            .unwrap_or(i64::MAX)
            .saturating_mul(NANOS);
        let quiet_in = t - self.last_received;
        let quiet_out = t - self.last_sent;
        if quiet_in < hb && quiet_out < hb {
            return Ok(());
        }
        // QuickFIX's timings: silent for 2.4 intervals is dead; a
        // TestRequest after 1.2 intervals (and 1.2 more for each
        // unanswered one).
        if quiet_in.saturating_mul(10) >= hb.saturating_mul(24) {
            self.log("Timed out waiting for heartbeat".into());
            return self.disconnect();
        }
        let patience = hb.saturating_mul(12 * (i64::from(self.test_requests) + 1));
        if quiet_in.saturating_mul(10) >= patience {
            self.send_admin(b"1", now, |b| {
                b.field_str(112, "TEST");
            })?;
            self.test_requests += 1;
            self.log("Sent test request TEST".into());
        } else if quiet_out >= hb && self.test_requests == 0 {
            self.send_admin(b"0", now, |_| {})?;
        }
        Ok(())
    }

    /// Sends an application message of type `msg_type` whose body `body`
    /// writes; the session adds the header. Refused (false) unless logged
    /// on.
    pub fn send_app(
        &mut self,
        msg_type: &[u8],
        now: UtcTimestamp,
        body: impl FnOnce(&mut MessageBuilder),
    ) -> Result<bool, SessionError> {
        if self.phase != Phase::LoggedOn {
            return Ok(false);
        }
        self.send_message(msg_type, now, body)?;
        Ok(true)
    }

    /// The occurrence of the session's window `now` (Unix nanos) falls
    /// in, `None` outside the window; `Some(0)` without one (see
    /// [`TimeWindow::instance`]).
    fn period_at(&self, now: i64) -> Option<i64> {
        match &self.cfg.session_time {
            Some(w) => w.instance(now.div_euclid(NANOS)),
            None => Some(0),
        }
    }

    /// How many session-level Rejects (35=3) the counterparty has sent
    /// in sequence since this session was made.
    pub fn rejects_received(&self) -> u64 {
        self.rejects_received
    }

    /// QuickFIX's isSessionTime: whether `now` is inside the session's
    /// StartTime/EndTime window (always, without one). An initiator
    /// connects only then, as QuickFIX's does.
    pub fn is_session_time(&self, now: UtcTimestamp) -> bool {
        self.period_at(now.unix_nanos).is_some()
    }

    /// QuickFIX's isLogonTime: whether a Logon may be sent or accepted at
    /// `now`.
    fn is_logon_time(&self, now: UtcTimestamp) -> bool {
        self.cfg
            .logon_time
            .as_ref()
            .is_none_or(|w| w.contains(now.unix_nanos.div_euclid(NANOS)))
    }

    /// QuickFIX's checkSessionTime: true while `now` is in the window the
    /// numbers belong to. Otherwise the session is reset (QuickFIX's
    /// Session::reset): a Logout if connected, the connection closed, both
    /// numbers back to 1; false.
    ///
    /// Inlined for the common session without a window: every message
    /// passes here, and the call cost ~100 instructions.
    #[inline(always)]
    fn check_session_time(&mut self, now: UtcTimestamp) -> Result<bool, SessionError> {
        if self.cfg.session_time.is_none() {
            return Ok(true);
        }
        self.check_session_window(now)
    }

    /// [`Self::check_session_time`] for a session with a window.
    fn check_session_window(&mut self, now: UtcTimestamp) -> Result<bool, SessionError> {
        let second = now.unix_nanos.div_euclid(NANOS);
        if self.window_checked == Some(second) {
            return Ok(true);
        }
        let current = self.period_at(now.unix_nanos);
        match (current, self.period) {
            (Some(c), Some(p)) if c == p => {
                self.window_checked = Some(second);
                return Ok(true);
            }
            // The store's numbers are taken to be this window's (their
            // creation time is not kept).
            (Some(c), None) => {
                self.period = Some(c);
                self.window_checked = Some(second);
                return Ok(true);
            }
            (None, None) if self.phase == Phase::Disconnected => return Ok(false),
            _ => {}
        }
        self.window_checked = None;
        if self.phase != Phase::Disconnected {
            self.log("Session time ended: logging out".into());
            self.send_logout(None, now)?;
            self.disconnect()?;
        }
        self.reset_store()?;
        self.period = current;
        Ok(false)
    }

    /// Starts the Logout handshake with an optional Text(58).
    pub fn logout(&mut self, text: Option<&str>, now: UtcTimestamp) -> Result<(), SessionError> {
        if !self.is_logged_on() {
            return self.disconnect();
        }
        self.send_logout(text, now)?;
        self.phase = Phase::LogoutSent(now.unix_nanos);
        self.log("Initiated logout request".into());
        Ok(())
    }
}
