//! What a session needs to know of its configuration: [`Config`], from
//! code or from a settings file's `[SESSION]`, and the [`Credentials`]
//! of its Logon.

use std::sync::Arc;

use super::Role;
use crate::schedule::TimeWindow;
use crate::settings::{ApplVerId, SessionSettings};
use fixcore::build::TimePrecision;
use fixcore::dictionary::validate::Validator;
use fixcore::version::BeginString;

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
    /// Drop a message whose BodyLength or CheckSum is wrong as garbled
    /// (`ValidateLengthAndChecksum`, default on); off, it is processed.
    pub validate_length: bool,
    /// Drop a message whose CheckSum is wrong as garbled (off when
    /// `ValidateLengthAndChecksum` or QuickFIX/J's `ValidateChecksum` is
    /// N).
    pub validate_checksum: bool,
    /// SO_SNDBUF for the session's connections (`SocketSendBufferSize`);
    /// `None`: the system's.
    pub send_buffer_size: Option<u32>,
    /// SO_RCVBUF for the session's connections
    /// (`SocketReceiveBufferSize`); `None`: the system's.
    pub receive_buffer_size: Option<u32>,
    /// The addresses an acceptor session takes a connection from
    /// (`AllowedRemoteAddresses`, host names or IP addresses); empty:
    /// any.
    pub allowed_remote_addresses: Vec<String>,
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
    pub(super) fn accept(&self, username: Option<&[u8]>, password: Option<&[u8]>) -> bool {
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
            validate_length: true,
            validate_checksum: true,
            send_buffer_size: None,
            receive_buffer_size: None,
            allowed_remote_addresses: Vec::new(),
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
            validate_length: s.validate_length_and_checksum,
            validate_checksum: s.validate_length_and_checksum && s.validate_checksum,
            send_buffer_size: s.socket_send_buffer_size,
            receive_buffer_size: s.socket_receive_buffer_size,
            allowed_remote_addresses: s.allowed_remote_addresses.clone(),
        }
    }
}
