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

use std::collections::BTreeMap;
use std::sync::Arc;

use super::reject::{self, Reason};
use super::store::{SessionStore, StoreError};
use crate::Error;
use crate::build::{FixVersion, MessageBuilder, TimePrecision};
use crate::dictionary::validate::Validator;
use crate::parse::Parser;
use crate::settings::{ApplVerId, BeginString, ConnectionType, SessionSettings};
use crate::value::UtcTimestamp;
use crate::window::TimeWindow;

const NANOS: i64 = 1_000_000_000;
/// EndSeqNo(16) meaning "everything after BeginSeqNo" before FIX 4.2.
const INFINITY_41: u64 = 999_999;

/// Which side of the connection a session is.
pub type Role = ConnectionType;

/// What a session needs to know of its configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Acceptor or initiator.
    pub role: Role,
    /// The session protocol.
    pub begin_string: BeginString,
    /// Our CompID (SenderCompID on what we send).
    pub sender_comp_id: String,
    /// The counterparty's CompID.
    pub target_comp_id: String,
    /// Heartbeat interval an initiator proposes, in seconds (an acceptor
    /// takes the Logon's).
    pub heart_bt_int: u32,
    /// Reset both sequence numbers at every Logon.
    pub reset_on_logon: bool,
    /// Reset them after a Logout.
    pub reset_on_logout: bool,
    /// Reset them when the connection drops.
    pub reset_on_disconnect: bool,
    /// Check SenderCompID/TargetCompID on every message.
    pub check_comp_id: bool,
    /// Check SendingTime against our clock.
    pub check_latency: bool,
    /// SendingTime tolerance in seconds.
    pub max_latency_secs: u32,
    /// FIXT.1.1: DefaultApplVerID(1137) sent on Logon.
    pub default_appl_ver_id: Option<ApplVerId>,
    /// Send NextExpectedMsgSeqNum(789) on Logon.
    pub next_expected_msg_seq_num: bool,
    /// Seconds to wait for a Logon reply.
    pub logon_timeout_secs: u32,
    /// Seconds to wait for a Logout reply.
    pub logout_timeout_secs: u32,
    /// Ask for every gap seen, even one an outstanding ResendRequest
    /// covers (`SendRedundantResendRequests`).
    pub send_redundant_resend_requests: bool,
    /// Keep sent messages for resending (`PersistMessages`); without them
    /// a ResendRequest gets one SequenceReset-GapFill over the range.
    pub persist_messages: bool,
    /// `StartTime`/`EndTime` (and `StartDay`/`EndDay`): the daily or
    /// weekly window the session runs in. Outside it the session is
    /// logged out and its numbers reset, as they are when a new window
    /// begins; `None`: always.
    pub session_time: Option<TimeWindow>,
    /// `LogonTime`/`LogoutTime` (and `LogonDay`/`LogoutDay`): inside the
    /// session's window, when a Logon may be sent or accepted; a session
    /// logged on when it ends logs out. `None`: the session's window.
    pub logon_time: Option<TimeWindow>,
    /// `RefreshOnLogon`: reload the store (its numbers and messages) from
    /// where it persists them at every Logon, sent or received.
    pub refresh_on_logon: bool,
    /// SendingTime's (and OrigSendingTime's) digits from FIX 4.2 on
    /// (`TimestampPrecision`); earlier versions define whole seconds.
    pub timestamp_precision: TimePrecision,
    /// Validation of every incoming message against data dictionaries
    /// (`UseDataDictionary`); `None`: the session layer's own checks only.
    pub validator: Option<Arc<Validator>>,
    /// Username(553) and Password(554) (`Username`, `Password`): an
    /// initiator sends those given on its Logon; an acceptor refuses a
    /// Logon whose fields differ from those given, as a QuickFIX
    /// application does by throwing RejectLogon (a Logout with the
    /// reason, then the connection closed).
    pub credentials: Credentials,
}

/// The Username(553) and Password(554) of a session's Logon; see
/// [`Config::credentials`].
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    /// Username(553), when required or sent.
    pub username: Option<String>,
    /// Password(554), when required or sent.
    pub password: Option<String>,
}

impl std::fmt::Debug for Credentials {
    // Never the password itself: configurations end up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl Credentials {
    /// Whether a Logon carrying `username` and `password` passes: each
    /// field required here must be present and equal.
    fn accept(&self, username: Option<&[u8]>, password: Option<&[u8]>) -> bool {
        let ok = |want: &Option<String>, got: Option<&[u8]>| {
            want.as_ref().is_none_or(|w| got == Some(w.as_bytes()))
        };
        ok(&self.username, username) && ok(&self.password, password)
    }
}

impl Config {
    /// A session between `sender` (us) and `target` with QuickFIX's
    /// defaults for everything else: HeartBtInt 30, CompIDs and
    /// SendingTime checked (120 s), LogonTimeout 10, LogoutTimeout 2,
    /// messages persisted, no resets, no session time, no dictionary.
    pub fn new(role: Role, begin_string: BeginString, sender: &str, target: &str) -> Config {
        Config {
            role,
            begin_string,
            sender_comp_id: sender.into(),
            target_comp_id: target.into(),
            heart_bt_int: 30,
            reset_on_logon: false,
            reset_on_logout: false,
            reset_on_disconnect: false,
            check_comp_id: true,
            check_latency: true,
            max_latency_secs: 120,
            default_appl_ver_id: None,
            next_expected_msg_seq_num: false,
            logon_timeout_secs: 10,
            logout_timeout_secs: 2,
            send_redundant_resend_requests: false,
            persist_messages: true,
            session_time: None,
            logon_time: None,
            refresh_on_logon: false,
            timestamp_precision: TimePrecision::Millis,
            validator: None,
            credentials: Credentials::default(),
        }
    }

    /// The configuration a QuickFIX-style `[SESSION]` describes.
    pub fn from_settings(s: &SessionSettings) -> Config {
        Config {
            role: s.connection_type,
            begin_string: s.begin_string,
            sender_comp_id: s.sender_comp_id.clone(),
            target_comp_id: s.target_comp_id.clone(),
            heart_bt_int: s.heart_bt_int.unwrap_or(30),
            reset_on_logon: s.reset_on_logon,
            reset_on_logout: s.reset_on_logout,
            reset_on_disconnect: s.reset_on_disconnect,
            check_comp_id: s.check_comp_id,
            check_latency: s.validation.check_latency,
            max_latency_secs: s.validation.max_latency_secs,
            default_appl_ver_id: s.default_appl_ver_id,
            next_expected_msg_seq_num: s.enable_next_expected_msg_seq_num,
            logon_timeout_secs: s.logon_timeout,
            logout_timeout_secs: s.logout_timeout,
            send_redundant_resend_requests: s.send_redundant_resend_requests,
            persist_messages: s.persist_messages,
            session_time: s.session_window(),
            logon_time: s.logon_window(),
            refresh_on_logon: s.refresh_on_logon,
            timestamp_precision: s.timestamp_precision.unwrap_or(TimePrecision::Millis),
            // The dictionaries are files: the caller loads them.
            validator: None,
            credentials: Credentials {
                username: s.username.clone(),
                password: s.password.clone(),
            },
        }
    }
}

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

/// The header and session fields of a received message, read out of the
/// parser (values borrow the message, not the parser) so the session can
/// answer while holding them.
#[derive(Debug, Default)]
struct Inbound<'a> {
    msg_type: &'a [u8],
    seq: Option<u64>,
    /// SenderCompID and TargetCompID are the session's, reversed.
    comp_ids_ok: bool,
    sending_time: Option<UtcTimestamp>,
    poss_dup: bool,
    orig_sending_time: Option<UtcTimestamp>,
    /// Bad or missing required header field: (reason, tag).
    header_problem: Option<(Reason, u32)>,
    heart_bt_int: Option<u64>,
    reset_seq_num: bool,
    test_req_id: Option<&'a [u8]>,
    begin_seq_no: Option<u64>,
    end_seq_no: Option<u64>,
    new_seq_no: Option<u64>,
    gap_fill: bool,
    /// NextExpectedMsgSeqNum(789) of a Logon.
    next_expected: Option<u64>,
    /// BeginString is not the session's.
    wrong_begin_string: bool,
    /// The routing fields a Reject sends back reversed: (tag on the
    /// Reject, value), e.g. OnBehalfOfCompID(115) as DeliverToCompID(128).
    reverse_route: Vec<(u32, &'a [u8])>,
    /// The strict parser accepted the message (its parse is in the
    /// session's parser until the next one).
    parsed: bool,
    /// Username(553) and Password(554) of a Logon.
    username: Option<&'a [u8]>,
    password: Option<&'a [u8]>,
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

fn version(b: BeginString) -> FixVersion {
    match b {
        BeginString::Fix40 => FixVersion::Fix40,
        BeginString::Fix41 => FixVersion::Fix41,
        BeginString::Fix42 => FixVersion::Fix42,
        BeginString::Fix43 => FixVersion::Fix43,
        BeginString::Fix44 => FixVersion::Fix44,
        BeginString::Fixt11 => FixVersion::Fixt11,
    }
}

/// Whether `t` is an admin (session-level) message type.
fn is_admin(t: &[u8]) -> bool {
    matches!(t, b"0" | b"1" | b"2" | b"3" | b"4" | b"5" | b"A")
}

impl<S: SessionStore> Session<S> {
    /// A disconnected session over `store`.
    pub fn new(cfg: Config, store: S) -> Session<S> {
        Session {
            builder: MessageBuilder::new(version(cfg.begin_string)),
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
            sent_reset: false,
            received_logon: false,
            sent_logon: false,
            out: Vec::new(),
            scratch: Vec::new(),
            spare: Vec::new(),
            period: None,
            window_checked: None,
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
            self.store.reset()?;
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
        if self.cfg.reset_on_disconnect {
            self.store.reset()?;
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
        self.store.reset()?;
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

    /// SendingTime's precision: as configured from FIX 4.2 on (earlier
    /// versions define whole seconds only), as QuickFIX's
    /// insertSendingTime.
    fn precision(&self) -> TimePrecision {
        if self.cfg.begin_string >= BeginString::Fix42 {
            self.cfg.timestamp_precision
        } else {
            TimePrecision::Seconds
        }
    }

    fn header(&mut self, msg_type: &[u8], seq: u64, now: UtcTimestamp) {
        let precision = self.precision();
        let b = &mut self.builder;
        b.begin(msg_type);
        b.header_uint(34, seq)
            .header_str(49, &self.cfg.sender_comp_id)
            .header_timestamp(52, now, precision)
            .header_str(56, &self.cfg.target_comp_id);
    }

    /// Builds, stores and emits the next message.
    fn send_message(
        &mut self,
        msg_type: &[u8],
        now: UtcTimestamp,
        body: impl FnOnce(&mut MessageBuilder),
    ) -> Result<u64, SessionError> {
        let seq = self.store.next_sender_seq();
        self.header(msg_type, seq, now);
        body(&mut self.builder);
        let mut bytes = self.spare.pop().unwrap_or_default();
        match self.builder.finish() {
            Ok(b) => bytes.extend_from_slice(b),
            Err(e) => {
                // The caller's body was unencodable: nothing is sent and
                // no number is used.
                self.log(format!("Message not sent: {e}"));
                self.spare.push(bytes);
                return Ok(seq);
            }
        };
        if self.cfg.persist_messages {
            self.store.save(seq, &bytes)?;
        }
        let target = self.store.next_target_seq();
        self.store.set_seqs(seq.saturating_add(1), target)?;
        self.last_sent = now.unix_nanos;
        self.out.push(Output::Send(bytes));
        Ok(seq)
    }

    fn send_admin(
        &mut self,
        msg_type: &[u8],
        now: UtcTimestamp,
        body: impl FnOnce(&mut MessageBuilder),
    ) -> Result<(), SessionError> {
        self.send_message(msg_type, now, body).map(|_| ())
    }

    /// Our Logon: the initiator's request (`reply` false, which resets
    /// the store first when `reset`) or the acceptor's answer, whose
    /// NextExpectedMsgSeqNum counts the Logon being answered.
    fn send_logon(
        &mut self,
        reset: bool,
        reply: bool,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        if reset && !reply {
            self.store.reset()?;
            self.sent_reset = true;
        }
        let hb = self.heart_bt_int;
        let appl = self.cfg.default_appl_ver_id;
        let next = self.cfg.next_expected_msg_seq_num.then(|| {
            self.store
                .next_target_seq()
                .saturating_add(u64::from(reply))
        });
        // An initiator's request carries its credentials; an acceptor's
        // answer never echoes them.
        let creds = (!reply).then(|| self.cfg.credentials.clone());
        self.send_admin(b"A", now, |b| {
            b.field_uint(98, 0).field_uint(108, hb);
            if reset {
                b.field_char(141, b'Y');
            }
            if let Some(c) = &creds {
                if let Some(u) = &c.username {
                    b.field_str(553, u);
                }
                if let Some(p) = &c.password {
                    b.field_str(554, p);
                }
            }
            if let Some(n) = next {
                b.field_uint(789, n);
            }
            if let Some(a) = appl {
                b.field_str(1137, a.wire());
            }
        })?;
        self.sent_logon = true;
        Ok(())
    }

    fn send_logout(&mut self, text: Option<&str>, now: UtcTimestamp) -> Result<(), SessionError> {
        self.send_admin(b"5", now, |b| {
            if let Some(t) = text {
                b.field_str(58, t);
            }
        })
    }

    /// A ResendRequest for `begin..` (the gap before `received`).
    fn send_resend_request(
        &mut self,
        received: u64,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let begin = self.store.next_target_seq();
        let end_wire = if self.cfg.begin_string >= BeginString::Fix42 {
            0
        } else {
            INFINITY_41
        };
        self.send_admin(b"2", now, |b| {
            b.field_uint(7, begin).field_uint(16, end_wire);
        })?;
        self.log(format!("Sent ResendRequest FROM: {begin} TO: {}", end_wire));
        self.resend_range = Some((begin, received - 1));
        Ok(())
    }

    /// A session-level Reject(3) of `m`, QuickFIX's way: RefSeqNum,
    /// RefMsgType and SessionRejectReason where the version has them,
    /// RefTagID or the tag in the text; the rejected message's number is
    /// used up when it was the expected one. Before the peer's Logon
    /// nothing may be sent: the connection is dropped instead (false).
    fn reject(
        &mut self,
        m: &Inbound<'_>,
        reason: Reason,
        tag: i64,
        now: UtcTimestamp,
    ) -> Result<bool, SessionError> {
        let text = reason.text();
        let bs = self.cfg.begin_string;
        // 4.0 and 4.1 have no RefTagID: the tag goes in the text.
        let with_tag = text.is_some() && (tag != 0 || reason == Reason::INVALID_TAG_NUMBER);
        let shown = match text {
            Some(t) if with_tag && bs < BeginString::Fix42 => format!("{t} ({tag})"),
            Some(t) => t.to_string(),
            None => String::new(),
        };
        let line = match text {
            Some(t) if with_tag => format!("{t}:{tag}"),
            Some(t) => t.to_string(),
            None => String::new(),
        };
        let reason_field = (bs > BeginString::Fix42
            || (bs == BeginString::Fix42 && reason.0 <= Reason::INVALID_MSG_TYPE.0))
            .then_some(reason.0);
        let ref_tag = (with_tag && bs >= BeginString::Fix42).then_some(tag);
        self.send_reject(m, &shown, &line, ref_tag, reason_field, now)
    }

    /// Sends Reject(3) for `m` with Text `text` (none if empty), RefTagID
    /// and SessionRejectReason when given; fields in tag order, as QuickFIX
    /// writes them; `line` is the event log's reason.
    fn send_reject(
        &mut self,
        m: &Inbound<'_>,
        text: &str,
        line: &str,
        ref_tag: Option<i64>,
        reason: Option<u32>,
        now: UtcTimestamp,
    ) -> Result<bool, SessionError> {
        if !self.received_logon {
            self.log("Tried to send a reject while not logged on".into());
            self.disconnect()?;
            return Ok(false);
        }
        let seq = m.seq;
        let msg_type = (self.cfg.begin_string >= BeginString::Fix42 && !m.msg_type.is_empty())
            .then_some(m.msg_type);
        let route = &m.reverse_route;
        self.send_admin(b"3", now, |b| {
            for (tag, v) in route {
                b.header_bytes(*tag, v);
            }
            if let Some(s) = seq {
                b.field_uint(45, s);
            }
            if !text.is_empty() {
                b.field_str(58, text);
            }
            if let Some(t) = ref_tag {
                b.field_int(371, t);
            }
            if let Some(t) = &msg_type {
                b.field_bytes(372, t);
            }
            if let Some(r) = reason {
                b.field_uint(373, u64::from(r));
            }
        })?;
        let shown = seq.map(|s| s.to_string()).unwrap_or_default();
        self.log(if line.is_empty() {
            format!("Message {shown} Rejected")
        } else {
            format!("Message {shown} Rejected: {line}")
        });
        if !matches!(m.msg_type, b"A" | b"4") && seq == Some(self.store.next_target_seq()) {
            self.incr_target()?;
        }
        Ok(true)
    }

    /// A BusinessMessageReject(j) of `m` with `reason` (FIX 4.2 and
    /// later), fields in tag order.
    fn business_reject(
        &mut self,
        m: &Inbound<'_>,
        reason: u32,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let seq = m.seq;
        let msg_type = m.msg_type;
        let text = reject::business_text(reason);
        // FIXT.1.1: an application message names its version
        // (QuickFIX's generateBusinessReject adds DefaultApplVerID).
        let appl = self
            .cfg
            .default_appl_ver_id
            .filter(|_| self.cfg.begin_string == BeginString::Fixt11);
        self.send_admin(b"j", now, |b| {
            if let Some(s) = seq {
                b.field_uint(45, s);
            }
            if let Some(t) = text {
                b.field_str(58, t);
            }
            b.field_bytes(372, msg_type);
            b.field_uint(380, u64::from(reason));
            if let Some(a) = appl {
                b.field_str(1137, a.wire());
            }
        })?;
        let shown = seq.map(|s| s.to_string()).unwrap_or_default();
        self.log(format!(
            "Message {shown} Rejected: {}",
            text.unwrap_or("business reject")
        ));
        if seq == Some(self.store.next_target_seq()) {
            self.incr_target()?;
        }
        Ok(())
    }

    fn incr_target(&mut self) -> Result<(), SessionError> {
        let (s, t) = (self.store.next_sender_seq(), self.store.next_target_seq());
        // A peer's SequenceReset can set the number to u64::MAX.
        self.store.set_seqs(s, t.saturating_add(1))?;
        Ok(())
    }

    fn set_target(&mut self, next: u64) -> Result<(), SessionError> {
        let s = self.store.next_sender_seq();
        self.store.set_seqs(s, next)?;
        Ok(())
    }

    /// The application does not support delivered message `msg`'s type:
    /// a BusinessMessageReject(j) with UnsupportedMessageType (FIX 4.2 and
    /// later) or a Reject(3) "Unsupported message type" (FIX 4.0, 4.1), as
    /// QuickFIX answers an application's UnsupportedMessageType. The
    /// message's number was used when it was delivered.
    pub fn reject_unsupported(
        &mut self,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let Ok(m) = inspect(self.parser.get(), msg, &self.cfg) else {
            return Ok(());
        };
        if self.cfg.begin_string >= BeginString::Fix42 {
            self.business_reject(&m, reject::UNSUPPORTED_MESSAGE_TYPE, now)
        } else {
            let text = "Unsupported message type";
            self.send_reject(&m, text, text, None, None, now)
                .map(|_| ())
        }
    }

    /// One complete message from the connection (a frame as
    /// [`crate::frame::Framer`] cuts it).
    pub fn on_message(&mut self, msg: &[u8], now: UtcTimestamp) -> Result<(), SessionError> {
        if self.phase == Phase::Disconnected || !self.check_session_time(now)? {
            return Ok(());
        }
        self.process(msg, now, false)?;
        if self.phase != Phase::Disconnected {
            self.drain_queue(now)?;
        }
        Ok(())
    }

    /// Processes one message; `queued`: it comes from the gap queue.
    fn process(&mut self, msg: &[u8], now: UtcTimestamp, queued: bool) -> Result<(), SessionError> {
        let m = match inspect(self.parser.get(), msg, &self.cfg) {
            Ok(m) => m,
            Err(Garbled(why)) => {
                // Garbled: dropped, no number used, the peer will resend;
                // a garbled Logon ends the connection.
                self.log(format!("Invalid message: {why}"));
                if !self.received_logon && msg_type_of(msg) == Some(b"A") {
                    self.log("Logon message is not valid".into());
                    return self.disconnect();
                }
                return Ok(());
            }
        };
        if !self.valid_logon_state(m.msg_type, m.reset_seq_num) {
            let t = String::from_utf8_lossy(m.msg_type).into_owned();
            self.log(format!(
                "Logon state is not valid for message (MsgType={t})"
            ));
            return self.disconnect();
        }
        if m.wrong_begin_string {
            // A Logout is a Logout whatever its BeginString; anything else
            // is answered with one.
            if m.msg_type == b"5" && self.received_logon {
                return self.on_logout(&m, msg, now);
            }
            if !self.received_logon {
                self.log("Incorrect BeginString".into());
                return self.disconnect();
            }
            self.send_logout(Some("Incorrect BeginString"), now)?;
            self.phase = Phase::LogoutSent(now.unix_nanos);
            self.log("Incorrect BeginString".into());
            return self.incr_target();
        }
        if let Some((reason, tag)) = m.header_problem {
            if m.seq.is_none() {
                // QuickFIX cannot reply without MsgSeqNum: it logs and drops.
                self.log(format!(
                    "Invalid message: {} ({tag})",
                    reason.text().unwrap_or("bad header")
                ));
                return Ok(());
            }
            return self.reject(&m, reason, i64::from(tag), now).map(|_| ());
        }
        if self.cfg.begin_string == BeginString::Fixt11
            && m.msg_type == b"A"
            && !fields_have(msg, 1137)
        {
            self.log("Required field missing from logon: DefaultApplVerID(1137)".into());
            return self.disconnect();
        }
        if let Some(v) = &self.cfg.validator {
            // A tag QuickFIX reads as a number (zero, negative) that no
            // dictionary can define: the first field it would judge.
            if v.checks_unknown_tags()
                && let Some(tag) = non_positive_tag(msg)
            {
                return self
                    .reject(&m, Reason::INVALID_TAG_NUMBER, tag, now)
                    .map(|_| ());
            }
            if let Err(r) = v.check(&split_fields(msg)) {
                // QuickFIX validates before it looks at the sequence number.
                return self
                    .reject(&m, Reason(r.reason), i64::from(r.tag), now)
                    .map(|_| ());
            }
        }
        match m.msg_type {
            b"A" => self.on_logon(&m, msg, now),
            b"0" => self.on_counted(&m, msg, now, true),
            b"1" => self.on_test_request(&m, msg, now),
            b"2" => self.on_resend_request(&m, msg, now),
            b"3" => self.on_counted(&m, msg, now, false),
            b"4" => self.on_sequence_reset(&m, msg, now),
            b"5" => self.on_logout(&m, msg, now),
            _ => {
                if !self.verify(&m, msg, now, true, true, queued)? {
                    return Ok(());
                }
                self.incr_target()?;
                let owned = self.owned(msg);
                if m.parsed {
                    self.parser.mark_delivered(&owned);
                }
                self.out.push(Output::Deliver(owned));
                Ok(())
            }
        }
    }

    /// QuickFIX's `validLogonState`: which message types the session takes
    /// before, around and after the Logon exchange (a Logon with
    /// ResetSeqNumFlag=Y at any time: `reset`).
    fn valid_logon_state(&self, msg_type: &[u8], reset: bool) -> bool {
        let logon = msg_type == b"A";
        let logged_out = matches!(self.phase, Phase::LogoutSent(_));
        (logon && (self.sent_reset || reset || !self.received_logon))
            || (!logon && self.received_logon)
            || (msg_type == b"5" && self.sent_logon)
            || (msg_type != b"5" && logged_out)
            || msg_type == b"4"
            || msg_type == b"3"
    }

    /// Rejects `m` for `reason`, then logs out (a bad SendingTime or
    /// CompID); false either way, for `verify` to return.
    fn reject_and_logout(
        &mut self,
        m: &Inbound<'_>,
        reason: Reason,
        tag: i64,
        now: UtcTimestamp,
    ) -> Result<bool, SessionError> {
        if self.reject(m, reason, tag, now)? {
            self.send_logout(None, now)?;
            self.phase = Phase::LogoutSent(now.unix_nanos);
        }
        Ok(false)
    }

    /// QuickFIX's `verify`: SendingTime, CompIDs, then the sequence
    /// number; false when the message must not be processed further.
    fn verify(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
        check_high: bool,
        check_low: bool,
        queued: bool,
    ) -> Result<bool, SessionError> {
        let Some(seq) = m.seq else {
            self.log("Invalid message: MsgSeqNum(34) missing".into());
            return Ok(false);
        };
        if self.cfg.check_latency && !queued {
            // abs_diff: a SendingTime in 1677 is 1e19 ns away, past i64.
            let limit = u64::from(self.cfg.max_latency_secs) * NANOS as u64;
            let good = m
                .sending_time
                .is_some_and(|st| now.unix_nanos.abs_diff(st.unix_nanos) <= limit);
            if !good {
                return self.reject_and_logout(m, Reason::SENDING_TIME_ACCURACY, 0, now);
            }
        }
        if self.cfg.check_comp_id && !m.comp_ids_ok {
            return self.reject_and_logout(m, Reason::COMPID_PROBLEM, 0, now);
        }
        let expected = self.store.next_target_seq();
        if check_high && seq > expected {
            self.too_high(msg, seq, now)?;
            return Ok(false);
        }
        if check_low && seq < expected {
            self.too_low(m, seq, expected, now)?;
            return Ok(false);
        }
        // Only a message whose number was checked can satisfy the gap (a
        // ResendRequest or Logout far ahead must not end it).
        if (check_high || check_low)
            && let Some((_, last)) = self.resend_range
            && seq >= last
        {
            let (first, last) = self.resend_range.take().unwrap_or_default();
            self.log(format!(
                "ResendRequest for messages FROM: {first} TO: {last} has been satisfied."
            ));
        }
        self.last_received = now.unix_nanos;
        self.test_requests = 0;
        Ok(true)
    }

    /// A message ahead of the expected number: kept for later, and the gap
    /// asked for unless a request already covers it.
    fn too_high(&mut self, msg: &[u8], seq: u64, now: UtcTimestamp) -> Result<(), SessionError> {
        let expected = self.store.next_target_seq();
        self.log(format!(
            "MsgSeqNum too high, expecting {expected} but received {seq}"
        ));
        if !self.queue.insert(seq, msg) {
            // Full: the message is asked for again once the gap before it
            // is filled, so dropping it loses nothing but time.
            self.log(format!(
                "Queue of messages ahead of the gap is full; {seq} dropped"
            ));
        }
        self.last_received = now.unix_nanos;
        if let Some((first, last)) = self.resend_range
            && seq >= first
            && !self.cfg.send_redundant_resend_requests
        {
            self.log(format!(
                "Already sent ResendRequest FROM: {first} TO: {last}.  Not sending another."
            ));
            return Ok(());
        }
        self.send_resend_request(seq, now)
    }

    /// A message below the expected number: a PossDup resend is checked
    /// and ignored; anything else ends the session.
    fn too_low(
        &mut self,
        m: &Inbound<'_>,
        seq: u64,
        expected: u64,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        if !m.poss_dup {
            let text = format!("MsgSeqNum too low, expecting {expected} but received {seq}");
            self.send_logout(Some(&text), now)?;
            self.log(text);
            return self.disconnect();
        }
        if m.msg_type != b"4" {
            match m.orig_sending_time {
                None => {
                    self.reject(m, Reason::REQUIRED_TAG_MISSING, 122, now)?;
                    return Ok(());
                }
                Some(orig) if m.sending_time.is_some_and(|st| orig > st) => {
                    self.reject_and_logout(m, Reason::SENDING_TIME_ACCURACY, 0, now)?;
                    return Ok(());
                }
                Some(_) => {}
            }
        }
        // A duplicate of what arrived before: ignored.
        self.last_received = now.unix_nanos;
        self.test_requests = 0;
        Ok(())
    }

    fn on_logon(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        // QuickFIX's nextLogon begins with these two.
        if self.cfg.refresh_on_logon {
            self.store.refresh()?;
        }
        if !self.is_logon_time(now) {
            self.log("Received logon outside of valid logon time".into());
            return self.disconnect();
        }
        if self.received_logon && !m.reset_seq_num {
            // A second Logon on a live session (one with ResetSeqNumFlag=Y
            // is the peer resetting it, below).
            self.log("Received logon while already logged on".into());
            return self.disconnect();
        }
        if self.cfg.role == Role::Initiator && !self.sent_logon && !m.reset_seq_num {
            self.log("Received logon response before sending request".into());
            return self.disconnect();
        }
        if m.reset_seq_num {
            self.log("Logon contains ResetSeqNumFlag=Y, reseting sequence numbers to 1".into());
            if !self.sent_reset {
                self.store.reset()?;
                // Numbers start again: nothing asked for or kept under
                // the old ones still applies.
                self.resend_range = None;
                self.queue.clear();
            }
        } else if self.cfg.role == Role::Acceptor && self.cfg.reset_on_logon {
            self.store.reset()?;
        }
        // Who answers: an acceptor, or an initiator whose peer reset the
        // session without being asked (QuickFIX's nextLogon).
        let respond = self.cfg.role == Role::Acceptor || (m.reset_seq_num && !self.sent_reset);
        if respond {
            match m.heart_bt_int {
                Some(h) => self.heart_bt_int = h,
                None => {
                    self.reject(m, Reason::REQUIRED_TAG_MISSING, 108, now)?;
                    return self.disconnect();
                }
            }
        }
        let check_low = !m.reset_seq_num;
        if !self.verify(m, msg, now, false, check_low, false)? {
            return Ok(());
        }
        // Where QuickFIX hands the Logon to the application (the end of
        // verify), which may refuse it with RejectLogon: the reason goes
        // out in a Logout and the connection closes. Both fields get one
        // answer, so a guesser learns nothing of which was wrong.
        if self.cfg.role == Role::Acceptor && !self.cfg.credentials.accept(m.username, m.password) {
            let text = "Invalid username or password";
            self.log(format!("Logon rejected: {text}"));
            self.send_logout(Some(text), now)?;
            return self.disconnect();
        }
        self.received_logon = true;
        // The peer's NextExpectedMsgSeqNum(789) (QuickFIX after 1.15.1):
        // below our next number, what it missed is sent once logged on;
        // above it, the peer expects messages we never sent.
        let next_out = self.store.next_sender_seq();
        let mut retransmit_from = None;
        match m.next_expected {
            Some(n) if n < next_out => retransmit_from = Some(n),
            Some(n) if n > next_out => {
                let text = format!(
                    "NextExpectedMsgSeqNum too high, expecting {next_out} but received {n}"
                );
                self.log(text.clone());
                self.send_logout(Some(&text), now)?;
                return self.disconnect();
            }
            _ => {}
        }
        let seq = m.seq.unwrap_or(0);
        if respond {
            self.log("Received logon request".into());
            // The reset itself happened when the Logon arrived; the
            // reply says so only when the peer asked for it (QuickFIX's
            // generateLogon(aLogon)): ResetOnLogon alone resets silently.
            self.send_logon(m.reset_seq_num, true, now)?;
            self.log("Responding to logon request".into());
        } else {
            self.log("Received logon response".into());
        }
        self.sent_reset = false;
        self.phase = Phase::LoggedOn;
        self.out.push(Output::LoggedOn);
        let expected = self.store.next_target_seq();
        if seq > expected && !m.reset_seq_num {
            if self.cfg.next_expected_msg_seq_num {
                // Our Logon's 789 already told the peer where to start:
                // no ResendRequest, the gap is expected to fill itself.
                self.log(format!(
                    "Expecting retransmits FROM: {expected} TO: {}",
                    seq - 1
                ));
                self.queue.insert(seq, msg);
                self.resend_range = Some((expected, seq - 1));
            } else {
                self.too_high(msg, seq, now)?;
            }
        } else {
            self.incr_target()?;
        }
        if let Some(from) = retransmit_from {
            let last = self.store.next_sender_seq() - 1;
            self.log(format!(
                "Sending retransmits due to received NextExpectedMsgSeqNum is too low. FROM: {from} TO: {last}"
            ));
            self.retransmit(from, last, now)?;
        }
        Ok(())
    }

    /// A Heartbeat (`check_high`) or a Reject (not): checked, then only
    /// counted.
    fn on_counted(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
        check_high: bool,
    ) -> Result<(), SessionError> {
        if self.verify(m, msg, now, check_high, true, false)? {
            self.incr_target()?;
        }
        Ok(())
    }

    fn on_test_request(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        if !self.verify(m, msg, now, true, true, false)? {
            return Ok(());
        }
        let id = m.test_req_id;
        self.send_admin(b"0", now, |b| {
            // An empty TestReqID (a session with ValidateFieldsHaveValues=N
            // lets one through) comes back as it came.
            if let Some(id) = &id {
                b.field_bytes_or_empty(112, id);
            }
        })?;
        self.log("Received test request".into());
        self.incr_target()
    }

    fn on_logout(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        if !self.verify(m, msg, now, false, false, false)? {
            return Ok(());
        }
        if let Phase::LogoutSent(_) = self.phase {
            self.log("Received logout response".into());
        } else {
            self.send_logout(None, now)?;
            self.log("Received logout request".into());
            self.log("Sending logout response".into());
        }
        self.incr_target()?;
        if self.cfg.reset_on_logout {
            self.store.reset()?;
        }
        self.out.push(Output::LoggedOut);
        self.disconnect()
    }

    fn on_sequence_reset(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let gap_fill = m.gap_fill;
        // A reset (not a gap fill) is honoured whatever its own number.
        if !self.verify(m, msg, now, gap_fill, gap_fill, false)? {
            return Ok(());
        }
        let Some(new) = m.new_seq_no else {
            return self
                .reject(m, Reason::REQUIRED_TAG_MISSING, 36, now)
                .map(|_| ());
        };
        let expected = self.store.next_target_seq();
        self.log(format!("Received SequenceReset FROM: {expected} TO: {new}"));
        if new > expected {
            self.set_target(new)?;
        } else if new < expected {
            // QuickFIX names no tag here (no RefTagID).
            self.reject(m, Reason::VALUE_INCORRECT, 0, now)?;
        }
        Ok(())
    }

    /// Serves a ResendRequest: application messages again with
    /// PossDupFlag=Y and OrigSendingTime, runs of admin messages (and of
    /// numbers the store no longer has) as one SequenceReset-GapFill.
    fn on_resend_request(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        if !self.verify(m, msg, now, false, false, false)? {
            return Ok(());
        }
        let (Some(begin), Some(end)) = (m.begin_seq_no, m.end_seq_no) else {
            let tag = if m.begin_seq_no.is_none() { 7 } else { 16 };
            return self
                .reject(m, Reason::REQUIRED_TAG_MISSING, tag, now)
                .map(|_| ());
        };
        self.log(format!("Received ResendRequest FROM: {begin} TO: {end}"));
        let next_out = self.store.next_sender_seq();
        // QuickFIX takes 999999 as "no end" up to FIX 4.2, and 0 from 4.2.
        let bs = self.cfg.begin_string;
        let infinite = (end == 0 && bs >= BeginString::Fix42)
            || (end == INFINITY_41 && bs <= BeginString::Fix42);
        let last = if infinite || end >= next_out {
            next_out - 1
        } else {
            end
        };
        if self.cfg.persist_messages {
            self.retransmit(begin, last, now)?;
        } else {
            // Nothing kept to send: the whole range is skipped at once.
            self.send_gap_fill(begin, last + 1, now)?;
        }
        // Counted only when it was the expected number: QuickFIX serves
        // a request out of sequence without looking for a gap.
        if m.seq == Some(self.store.next_target_seq()) {
            self.incr_target()?;
        }
        Ok(())
    }

    /// Sends our messages `begin..=last` again: application messages with
    /// PossDupFlag=Y and OrigSendingTime, runs of admin messages (and of
    /// numbers the store no longer has) as one SequenceReset-GapFill.
    fn retransmit(&mut self, begin: u64, last: u64, now: UtcTimestamp) -> Result<(), SessionError> {
        let mut gap_from: Option<u64> = None;
        let mut seq = begin.max(1);
        let mut stored = Vec::new();
        while seq <= last {
            stored.clear();
            let resend = self.store.load(seq, &mut stored)? && self.prepare_resend(&stored, now);
            if resend {
                if let Some(from) = gap_from.take() {
                    self.send_gap_fill(from, seq, now)?;
                }
                let bytes = self.builder_bytes();
                self.last_sent = now.unix_nanos;
                self.out.push(Output::Send(bytes));
                self.log(format!("Resending Message: {seq}"));
            } else if gap_from.is_none() {
                gap_from = Some(seq);
            }
            seq += 1;
        }
        if let Some(from) = gap_from {
            self.send_gap_fill(from, last + 1, now)?;
        }
        Ok(())
    }

    fn builder_bytes(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.scratch)
    }

    /// Rebuilds stored message `stored` for a resend into `self.scratch`:
    /// false for an admin message (gap-filled instead) or one that no
    /// longer parses.
    fn prepare_resend(&mut self, stored: &[u8], now: UtcTimestamp) -> bool {
        let precision = self.precision();
        // What we sent may hold what the strict parser refuses but a lax
        // session let through and the application echoed (an empty
        // value, a repeated tag): read those fields as they are.
        let fields: Vec<(u32, &[u8])> = match self.parser.get().parse(stored) {
            Ok(msg) => msg.fields().map(|f| (f.tag, f.value)).collect(),
            Err(
                Error::DuplicateTag { .. }
                | Error::GroupCount { .. }
                | Error::GroupDelimiter { .. }
                | Error::EmptyValue { .. },
            ) => split_fields(stored),
            Err(_) => return false,
        };
        let msg_type = fields
            .iter()
            .find(|(t, _)| *t == 35)
            .map_or(&b""[..], |&(_, v)| v);
        if msg_type.is_empty() || is_admin(msg_type) {
            return false;
        }
        let b = &mut self.builder;
        b.begin(msg_type);
        let mut orig = None;
        for &(tag, value) in &fields {
            match tag {
                8 | 9 | 10 | 35 | 43 | 122 => {}
                52 => {
                    orig = Some(value);
                    b.header_timestamp(52, now, precision);
                }
                t if is_header_tag(t) => {
                    b.header_bytes(t, value);
                }
                t => {
                    b.field_bytes_or_empty(t, value);
                }
            }
        }
        b.header_bytes(43, b"Y");
        if let Some(o) = orig {
            b.header_bytes(122, o);
        }
        match b.finish() {
            Ok(bytes) => {
                self.scratch.clear();
                self.scratch.extend_from_slice(bytes);
                true
            }
            Err(_) => false,
        }
    }

    /// SequenceReset-GapFill under number `from` (PossDupFlag=Y) moving the
    /// peer on to `to`. Not stored: it stands in for stored messages.
    fn send_gap_fill(&mut self, from: u64, to: u64, now: UtcTimestamp) -> Result<(), SessionError> {
        let precision = self.precision();
        let b = &mut self.builder;
        b.begin(b"4");
        b.header_uint(34, from)
            .header_bytes(43, b"Y")
            .header_str(49, &self.cfg.sender_comp_id)
            .header_timestamp(52, now, precision)
            .header_str(56, &self.cfg.target_comp_id)
            .header_timestamp(122, now, precision);
        b.field_uint(36, to).field_char(123, b'Y');
        if let Ok(bytes) = b.finish() {
            let bytes = bytes.to_vec();
            self.last_sent = now.unix_nanos;
            self.out.push(Output::Send(bytes));
            self.log(format!("Sent SequenceReset TO: {to}"));
        }
        Ok(())
    }

    /// Processes queued messages that are now in sequence.
    fn drain_queue(&mut self, now: UtcTimestamp) -> Result<(), SessionError> {
        loop {
            let expected = self.store.next_target_seq();
            let Some(msg) = self.queue.take(expected) else {
                return Ok(());
            };
            self.log(format!("Processing QUEUED message: {expected}"));
            // QuickFIX does not act on a queued Logon or ResendRequest
            // again (both were handled when they arrived): it counts them.
            if msg_type_of(&msg).is_some_and(|t| t == b"A" || t == b"2") {
                self.incr_target()?;
                continue;
            }
            self.process(&msg, now, true)?;
            if self.phase == Phase::Disconnected {
                return Ok(());
            }
        }
    }
}

/// Whether a framed message has a field `tag`.
fn fields_have(msg: &[u8], tag: u32) -> bool {
    split_fields(msg).iter().any(|&(t, _)| t == tag)
}

/// Most bytes of messages kept ahead of a gap: beyond it a peer sending
/// far-ahead numbers could grow the queue without bound.
const MAX_QUEUED_BYTES: usize = 64 << 20;

/// Messages received ahead of the expected number, by number, within
/// [`MAX_QUEUED_BYTES`].
#[derive(Debug, Default)]
struct GapQueue {
    map: BTreeMap<u64, Vec<u8>>,
    bytes: usize,
}

impl GapQueue {
    /// Keeps `msg` under `seq`; false (not kept) when that would pass the
    /// byte budget.
    fn insert(&mut self, seq: u64, msg: &[u8]) -> bool {
        let old = self.map.get(&seq).map_or(0, Vec::len);
        if self.bytes - old + msg.len() > MAX_QUEUED_BYTES {
            return false;
        }
        self.bytes = self.bytes - old + msg.len();
        self.map.insert(seq, msg.to_vec());
        true
    }

    /// The message numbered `expected`, dropping older ones (they can no
    /// longer be processed).
    fn take(&mut self, expected: u64) -> Option<Vec<u8>> {
        while let Some(entry) = self.map.first_entry() {
            if *entry.key() >= expected {
                break;
            }
            self.bytes -= entry.remove().len();
        }
        let msg = self.map.remove(&expected)?;
        self.bytes -= msg.len();
        Some(msg)
    }

    fn clear(&mut self) {
        self.map.clear();
        self.bytes = 0;
    }
}

/// MsgType(35) of a framed message (the third field).
fn msg_type_of(msg: &[u8]) -> Option<&[u8]> {
    let mut fields = msg.split(|&b| b == 1);
    let third = fields.nth(2)?;
    third.strip_prefix(b"35=")
}

/// Tags QuickFIX places in the standard header.
pub(crate) fn is_header_tag(t: u32) -> bool {
    matches!(
        t,
        8 | 9
            | 35
            | 34
            | 43
            | 49
            | 50
            | 52
            | 56
            | 57
            | 90
            | 91
            | 97
            | 115
            | 116
            | 122
            | 128
            | 129
            | 142
            | 143
            | 144
            | 145
            | 212
            | 213
            | 347
            | 369
            | 370
            | 627
            | 628
            | 629
            | 630
            | 1128
            | 1129
            | 1156
    )
}

/// Why a message is dropped as garbled.
struct Garbled(String);

/// Reads what the session needs from `msg`; a message the parser refuses
/// for its framing (BeginString, BodyLength, CheckSum, the order of 8, 9
/// and 35) is garbled.
fn inspect<'m>(parser: &mut Parser, msg: &'m [u8], cfg: &Config) -> Result<Inbound<'m>, Garbled> {
    match parser.parse(msg) {
        // The values are re-sliced from `msg` so that the result borrows
        // the message alone and the parser is free again.
        Ok(m) => {
            fill(|t| m.get(t).map(|v| within(msg, v)), cfg).map(|i| Inbound { parsed: true, ..i })
        }
        // A repeated tag, a group the parser's table does not know, an
        // empty value: well framed, so the session layer goes on (QuickFIX
        // without a dictionary keeps such fields as they come); judging
        // them is the data dictionary's part.
        Err(
            Error::DuplicateTag { .. }
            | Error::GroupCount { .. }
            | Error::GroupDelimiter { .. }
            | Error::EmptyValue { .. }
            | Error::BadValue { .. },
        ) => tolerated(msg, cfg),
        // A tag of zero or below (or with leading zeros) is still a
        // number to QuickFIX, which frames and parses the message and
        // leaves the tag to the dictionary; any other bad tag is garbage.
        Err(Error::BadTag { .. })
            if checksum_ok(msg) && split_tags(msg).all(|t| signed_tag(t).is_some()) =>
        {
            tolerated(msg, cfg)
        }
        Err(e) => Err(Garbled(e.to_string())),
    }
}

/// The session's view of a well-framed message the strict parser refused.
fn tolerated<'m>(msg: &'m [u8], cfg: &Config) -> Result<Inbound<'m>, Garbled> {
    let fields = split_fields(msg);
    fill(
        |t| fields.iter().find(|(ft, _)| *ft == t).map(|&(_, v)| v),
        cfg,
    )
}

/// Whether a frame's CheckSum(10) is the sum of the bytes before it (the
/// parser's own check did not run when it stopped at an earlier field).
fn checksum_ok(msg: &[u8]) -> bool {
    let Some(body) = msg.strip_suffix(b"\x01") else {
        return false;
    };
    let at = body.iter().rposition(|&b| b == 1).map_or(0, |p| p + 1);
    let Some(sum) = body[at..].strip_prefix(b"10=") else {
        return false;
    };
    let want = msg[..at].iter().fold(0u32, |a, &b| a + u32::from(b)) % 256;
    crate::value::parse_uint(sum) == Some(u64::from(want))
}

/// The tag text of each field of a frame.
fn split_tags(msg: &[u8]) -> impl Iterator<Item = &[u8]> {
    msg.split(|&b| b == 1)
        .filter(|f| !f.is_empty())
        .map(|f| f.split(|&b| b == b'=').next().unwrap_or_default())
}

/// A tag as QuickFIX's integer conversion reads it: an optional minus
/// and 1-9 digits.
fn signed_tag(t: &[u8]) -> Option<i64> {
    let digits = t.strip_prefix(b"-").unwrap_or(t);
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(t).ok()?.parse().ok()
}

/// The first tag of `msg` that is a number no dictionary defines (zero
/// or negative).
fn non_positive_tag(msg: &[u8]) -> Option<i64> {
    split_tags(msg).find_map(|t| signed_tag(t).filter(|&n| n <= 0))
}

/// A frame's fields in order, read without validation.
pub(crate) fn split_fields(msg: &[u8]) -> Vec<(u32, &[u8])> {
    msg.split(|&b| b == 1)
        .filter_map(|f| {
            let eq = f.iter().position(|&b| b == b'=')?;
            let tag = std::str::from_utf8(&f[..eq]).ok()?.parse().ok()?;
            Some((tag, &f[eq + 1..]))
        })
        .collect()
}

/// `part`, a slice of `msg`'s bytes, as a slice of `msg` itself.
fn within<'m>(msg: &'m [u8], part: &[u8]) -> &'m [u8] {
    let at = (part.as_ptr() as usize).wrapping_sub(msg.as_ptr() as usize);
    &msg[at..at + part.len()]
}

/// The session's view of a message whose fields `get` looks up (the
/// first occurrence of a tag).
fn fill<'a>(get: impl Fn(u32) -> Option<&'a [u8]>, cfg: &Config) -> Result<Inbound<'a>, Garbled> {
    let uint = |t| get(t).and_then(crate::value::parse_uint);
    let msg_type = get(35).unwrap_or_default();
    let begin_string = get(8);
    let (seq_text, sending_text) = (get(34), get(52));
    let (sender, target) = (get(49), get(56));
    let mut i = Inbound {
        msg_type,
        seq: seq_text.and_then(crate::value::parse_uint),
        comp_ids_ok: sender == Some(cfg.target_comp_id.as_bytes())
            && target == Some(cfg.sender_comp_id.as_bytes()),
        sending_time: sending_text.and_then(UtcTimestamp::parse),
        poss_dup: get(43) == Some(b"Y"),
        orig_sending_time: get(122).and_then(UtcTimestamp::parse),
        wrong_begin_string: begin_string != Some(cfg.begin_string.as_str().as_bytes()),
        ..Inbound::default()
    };
    // The fields only session messages carry are read for those alone:
    // an order is most of the traffic and has none of them.
    if is_admin(msg_type) {
        i.heart_bt_int = uint(108);
        i.reset_seq_num = get(141) == Some(b"Y");
        i.test_req_id = get(112);
        i.begin_seq_no = uint(7);
        i.end_seq_no = uint(16);
        i.new_seq_no = uint(36);
        i.gap_fill = get(123) == Some(b"Y");
        i.next_expected = uint(789);
        i.username = get(553);
        i.password = get(554);
    }
    // QuickFIX's Message::reverseRoute: each non-empty routing field
    // comes back as its counterpart (the location ids from FIX 4.1 on).
    let with_location = begin_string.is_some_and(|b| b >= b"FIX.4.1".as_slice());
    for (from, to) in [
        (115, 128),
        (116, 129),
        (128, 115),
        (129, 116),
        (144, 145),
        (145, 144),
    ] {
        if from >= 144 && !with_location {
            continue;
        }
        if let Some(v) = get(from).filter(|v| !v.is_empty()) {
            i.reverse_route.push((to, v));
        }
    }
    // The header fields the session needs, in QuickFIX's order of checks.
    i.header_problem = if seq_text.is_some() && i.seq.is_none() {
        Some((Reason::INCORRECT_DATA_FORMAT, 34))
    } else if sending_text.is_none() {
        Some((Reason::REQUIRED_TAG_MISSING, 52))
    } else if i.sending_time.is_none() {
        Some((Reason::INCORRECT_DATA_FORMAT, 52))
    } else if sender.is_none() {
        Some((Reason::REQUIRED_TAG_MISSING, 49))
    } else if target.is_none() {
        Some((Reason::REQUIRED_TAG_MISSING, 56))
    } else {
        None
    };
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gap_queue_keeps_to_its_byte_budget() {
        let mut q = GapQueue::default();
        let big = vec![b'x'; 40 << 20];
        assert!(q.insert(5, &big));
        assert!(!q.insert(6, &big), "80 MiB is past the 64 MiB budget");
        // Replacing a number counts the new size only.
        assert!(q.insert(5, &big[..10 << 20]));
        assert!(q.insert(6, &big));
        assert_eq!(q.bytes, 50 << 20);
        // Older numbers go when a later one is taken.
        assert_eq!(q.take(6).map(|m| m.len()), Some(40 << 20));
        assert_eq!(q.bytes, 0);
        assert!(q.map.is_empty());
        assert!(q.take(7).is_none());
    }

    /// A message from the counterparty (BENCH -> EXCH, FIX.4.4).
    fn inbound(
        b: &mut MessageBuilder,
        msg_type: &[u8],
        seq: u64,
        body: &[(u32, &[u8])],
    ) -> Vec<u8> {
        b.begin(msg_type)
            .header_uint(34, seq)
            .header_str(49, "BENCH")
            .header_timestamp(52, T, TimePrecision::Millis)
            .header_str(56, "EXCH");
        for &(tag, v) in body {
            b.field_bytes(tag, v);
        }
        b.finish().unwrap().to_vec()
    }

    const T: UtcTimestamp = UtcTimestamp {
        unix_nanos: 1_700_000_000_000_000_000,
    };

    /// The session lends its parse only for the latest delivery that the
    /// strict parser accepted: two deliveries at once (a gap filled) lend
    /// the second alone, and the lent view reads what a fresh parse reads.
    #[test]
    fn a_parse_is_lent_for_the_latest_strict_delivery_only() {
        let cfg = Config {
            reset_on_logon: true,
            check_latency: false,
            ..Config::new(Role::Acceptor, BeginString::Fix44, "EXCH", "BENCH")
        };
        let mut s = Session::new(cfg, crate::session::store::MemoryStore::default());
        let mut b = MessageBuilder::new(FixVersion::Fix44);
        s.on_connect(T).unwrap();
        let logon = inbound(&mut b, b"A", 1, &[(98, b"0"), (108, b"30"), (141, b"Y")]);
        s.on_message(&logon, T).unwrap();
        let later = inbound(&mut b, b"D", 3, &[(11, b"third"), (55, b"X")]);
        s.on_message(&later, T).unwrap();
        let gap = inbound(&mut b, b"D", 2, &[(11, b"second"), (55, b"X")]);
        s.on_message(&gap, T).unwrap();
        let delivered: Vec<Vec<u8>> = s
            .drain()
            .filter_map(|o| match o {
                Output::Deliver(m) => Some(m),
                _ => None,
            })
            .collect();
        assert_eq!(delivered.len(), 2);
        assert!(s.lend_parser(&delivered[0]).is_none(), "not the latest");
        // A copy of the latest is not the delivered buffer either.
        assert!(s.lend_parser(&delivered[1].clone()).is_none());
        let parser = s.lend_parser(&delivered[1]).expect("the latest is lent");
        let view = parser.view(&delivered[1]);
        let mut fresh = Parser::new();
        let want = fresh.parse(&later).unwrap();
        assert_eq!(view.get(11), Some(&b"third"[..]));
        assert_eq!(
            view.fields().map(|f| (f.tag, f.value)).collect::<Vec<_>>(),
            want.fields().map(|f| (f.tag, f.value)).collect::<Vec<_>>()
        );
        s.give_back_parser(parser);
        assert!(s.lend_parser(&delivered[1]).is_none(), "lent once");
        // A repeated tag: delivered through the lenient reading, no parse.
        let dup = inbound(&mut b, b"D", 4, &[(11, b"a"), (58, b"x"), (58, b"y")]);
        s.on_message(&dup, T).unwrap();
        let lenient: Vec<Vec<u8>> = s
            .drain()
            .filter_map(|o| match o {
                Output::Deliver(m) => Some(m),
                _ => None,
            })
            .collect();
        assert_eq!(lenient.len(), 1);
        assert!(s.lend_parser(&lenient[0]).is_none());
    }
}
