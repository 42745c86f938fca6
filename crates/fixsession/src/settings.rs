//! QuickFIX session settings files: `[DEFAULT]` and `[SESSION]` sections of
//! `Key=Value` lines.
//!
//! Every key QuickFIX/C++ or QuickFIX/J knows is known here ([`KEYS`],
//! with where the names come from); each is either acted on or accepted
//! with a [`SettingsWarning`] that says why it has no effect, so a
//! QuickFIX shop's file starts. Any other key is refused with its line
//! number and the closest known name, because a silently ignored
//! misspelling (`HeartbtInt`) would run a session with a setting its
//! owner did not ask for. Each `[SESSION]` inherits every key of
//! `[DEFAULT]` and may override it. Text is never printed here; the
//! caller prefixes errors and warnings with the file name.

use crate::file_log::FileLogSettings;
use crate::schedule::TimeWindow;
use crate::schedule::{TimeOfDay, Weekday};
use fixcore::build::TimePrecision;
use fixcore::dictionary::validate::Validation;
use fixcore::version::BeginString;

mod bounds;
mod error;
mod files;
pub mod keys;
mod parse;
mod resolve;
pub mod tls;

pub use error::SettingsError;
pub use files::{SessionFiles, SharedFiles};
pub use keys::{KEYS, Key, Treatment};
use parse::Entries;
pub use tls::TlsSettings;

/// A known key that perfkit accepts but does not act on: one per key
/// name, however many lines and sections set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsWarning {
    /// The first line that sets it.
    pub line: usize,
    /// The other lines that set it, in file order.
    pub more_lines: Vec<usize>,
    /// The key as written.
    pub key: String,
    /// Why it does nothing: [`Treatment::NoEffect`] or
    /// [`Treatment::NotYet`], never [`Treatment::Honoured`].
    pub treatment: Treatment,
}

impl std::fmt::Display for SettingsWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, why) = match self.treatment {
            Treatment::NoEffect(why) => ("has no effect", why),
            Treatment::NotYet(why) => ("is not supported yet", why),
            Treatment::Honoured => ("is honoured", ""),
        };
        write!(f, "line {}: {} {what}: {why}", self.line, self.key)?;
        if !self.more_lines.is_empty() {
            let lines: Vec<String> = self.more_lines.iter().map(usize::to_string).collect();
            write!(f, " (also set on line {})", lines.join(", "))?;
        }
        Ok(())
    }
}

/// Which side opens the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionType {
    /// Listens on `SocketAcceptPort`.
    Acceptor,
    /// Connects to `SocketConnectHost:SocketConnectPort`.
    Initiator,
}

/// Application version under FIXT.1.1 (ApplVerID(1128) values 7, 8, 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ApplVerId {
    /// `FIX.5.0`, ApplVerID 7.
    Fix50,
    /// `FIX.5.0SP1`, ApplVerID 8.
    Fix50Sp1,
    /// `FIX.5.0SP2`, ApplVerID 9.
    Fix50Sp2,
}

impl ApplVerId {
    /// Reads either spelling QuickFIX accepts: the version name
    /// (`FIX.5.0SP2`) or the ApplVerID(1128) enum value (`9`).
    pub fn parse(s: &str) -> Option<ApplVerId> {
        Some(match s {
            "FIX.5.0" | "7" => ApplVerId::Fix50,
            "FIX.5.0SP1" | "8" => ApplVerId::Fix50Sp1,
            "FIX.5.0SP2" | "9" => ApplVerId::Fix50Sp2,
            _ => return None,
        })
    }

    /// The ApplVerID(1128) wire value.
    pub fn wire(self) -> &'static str {
        match self {
            ApplVerId::Fix50 => "7",
            ApplVerId::Fix50Sp1 => "8",
            ApplVerId::Fix50Sp2 => "9",
        }
    }

    /// The version's name (`FIX.5.0SP2`), as settings write it.
    pub fn name(self) -> &'static str {
        match self {
            ApplVerId::Fix50 => "FIX.5.0",
            ApplVerId::Fix50Sp1 => "FIX.5.0SP1",
            ApplVerId::Fix50Sp2 => "FIX.5.0SP2",
        }
    }
}

/// One `[SESSION]` with `[DEFAULT]` applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSettings {
    /// Line of the `[SESSION]` header.
    pub line: usize,
    /// Acceptor or initiator.
    pub connection_type: ConnectionType,
    /// Session protocol.
    pub begin_string: BeginString,
    /// Our CompID.
    pub sender_comp_id: String,
    /// The counterparty's CompID.
    pub target_comp_id: String,
    /// Distinguishes sessions with the same CompIDs (may be empty).
    pub session_qualifier: String,
    /// Application version; set exactly when `begin_string` is FIXT.1.1.
    pub default_appl_ver_id: Option<ApplVerId>,
    /// Acceptor port.
    pub socket_accept_port: Option<u16>,
    /// Initiator target host.
    pub socket_connect_host: Option<String>,
    /// Initiator target port.
    pub socket_connect_port: Option<u16>,
    /// Heartbeat interval an initiator proposes (seconds).
    pub heart_bt_int: Option<u32>,
    /// Initiator reconnect delay in seconds (QuickFIX default 30).
    pub reconnect_interval: u32,
    /// Whether messages are validated against a dictionary (default on).
    pub use_data_dictionary: bool,
    /// Dictionary for FIX.4.x sessions.
    pub data_dictionary: Option<String>,
    /// FIXT.1.1 session-layer dictionary.
    pub transport_data_dictionary: Option<String>,
    /// FIXT.1.1 application dictionary: `AppDataDictionary`, else
    /// `AppDataDictionary.<DefaultApplVerID>` (QuickFIX's per-version
    /// form; another version's is not used, as perfkit validates a
    /// session's application messages by its default version).
    pub app_data_dictionary: Option<String>,
    /// Directory of the file store; `None` means the in-memory store
    /// (or the PostgreSQL store, when `postgres_store` is set).
    pub file_store_path: Option<String>,
    /// The PostgreSQL store (`PostgreSQLStoreDatabase`, `…User`,
    /// `…Password`, `…Host`, `…Port`): set when any of them is, the rest
    /// taking QuickFIX's defaults. Never set together with
    /// `file_store_path` (the file is refused).
    pub postgres_store: Option<PostgresSettings>,
    /// How long the session's lease lasts without a renewal
    /// (`PerfkitSessionLeaseTimeout`, seconds; perfkit's own key), for a
    /// store engines share: `None` is
    /// [`default_timeout`](crate::lease::default_timeout) of the
    /// heartbeat interval.
    pub lease_timeout: Option<u32>,
    /// How many of the last messages sent a session kept in memory (no
    /// `FileStorePath`, no PostgreSQL store) keeps for resending
    /// (`PerfkitMemoryStoreWindow`; perfkit's own key): `None` keeps
    /// every one, as QuickFIX's MemoryStore does; a number keeps at least
    /// that many on fixcore's resend ring, with memory flat however long
    /// the session runs (see `store::MemoryStore::window`).
    pub memory_store_window: Option<u32>,
    /// The cores the session's connection thread runs on
    /// (`PerfkitCpuAffinity`, e.g. `2,3` or `0-3`; perfkit's own key):
    /// `None` leaves it where the engine's threads run. The engine checks
    /// at start-up that the process may use each core.
    pub cpu_affinity: Option<fixcore::affinity::CoreSet>,
    /// The PostgreSQL log (`PostgreSQLLog*`): set when any of its keys
    /// is; it writes beside the file and screen logs.
    pub postgres_log: Option<PostgresLogSettings>,
    /// Reset sequence numbers at every Logon.
    pub reset_on_logon: bool,
    /// Reset sequence numbers after a Logout.
    pub reset_on_logout: bool,
    /// Reset sequence numbers when the connection drops.
    pub reset_on_disconnect: bool,
    /// Daily session start (UTC); `None` means always in session.
    pub start_time: Option<TimeOfDay>,
    /// Daily session end (UTC).
    pub end_time: Option<TimeOfDay>,
    /// First day of a weekly session (with `end_day`); `None`: daily.
    pub start_day: Option<Weekday>,
    /// Last day of a weekly session.
    pub end_day: Option<Weekday>,
    /// When logons are accepted or sent (within the session time);
    /// `None`: StartTime.
    pub logon_time: Option<TimeOfDay>,
    /// When a logged-on session logs out; `None`: EndTime.
    pub logout_time: Option<TimeOfDay>,
    /// First day of the weekly logon window; `None`: StartDay.
    pub logon_day: Option<Weekday>,
    /// Last day of the weekly logon window; `None`: EndDay.
    pub logout_day: Option<Weekday>,
    /// Read every time and day above in the machine's local time instead
    /// of UTC.
    pub use_local_time: bool,
    /// Read them in this zone instead (QuickFIX/J's `TimeZone`, or a
    /// zone named after StartTime or EndTime).
    pub time_zone: Option<jiff::tz::TimeZone>,
    /// Reload the store from disk at every Logon (a standby engine taking
    /// over a session another process wrote).
    pub refresh_on_logon: bool,
    /// A template, not a session (QuickFIX/J's `AcceptorTemplate=Y`): a
    /// Logon that no session takes but whose CompIDs match this one's
    /// (`*` matches any) gets a session of its own made from it, with its
    /// own store. Acceptors only.
    pub acceptor_template: bool,
    /// Digits of SendingTime from FIX 4.2 on (`TimestampPrecision` 0, 3,
    /// 6 or 9, or `MillisecondsInTimeStamp`); `None`: milliseconds.
    pub timestamp_precision: Option<TimePrecision>,
    /// Dictionary validation switches.
    pub validation: Validation,
    /// Check the counterparty's CompIDs on every message (default on).
    pub check_comp_id: bool,
    /// Send NextExpectedMsgSeqNum(789) on Logon (default off).
    pub enable_next_expected_msg_seq_num: bool,
    /// Seconds to wait for the Logon reply (default 10).
    pub logon_timeout: u32,
    /// Seconds to wait for the Logout reply (default 2).
    pub logout_timeout: u32,
    /// TCP_NODELAY on the session's socket (`SocketNodelay`). Default on,
    /// unlike QuickFIX's off: an engine measured by its round trip should
    /// not wait on Nagle's algorithm unless its user asks it to.
    pub socket_nodelay: bool,
    /// What a session shows on the screen (the binary's stderr).
    pub screen_log: ScreenLog,
    /// The session's message and event logs in QuickFIX's file layout
    /// (`FileLogPath`, `FileLogBackupPath`, `FileLogHeartbeats`); `None`
    /// without `FileLogPath`.
    pub file_log: Option<FileLogSettings>,
    /// SO_REUSEADDR on an acceptor's listening socket (default on, as
    /// in QuickFIX): a restarted acceptor can listen again while
    /// connections of the last run linger in TIME_WAIT.
    pub socket_reuse_address: bool,
    /// Send a ResendRequest for every gap seen, even one an outstanding
    /// request already covers (`SendRedundantResendRequests`, default N).
    pub send_redundant_resend_requests: bool,
    /// Keep sent messages for resending (`PersistMessages`, default Y);
    /// without them a ResendRequest is answered with one gap fill.
    pub persist_messages: bool,
    /// `Username`: sent as Username(553) on an initiator's Logon,
    /// required on the Logon an acceptor receives.
    pub username: Option<String>,
    /// `Password`: Password(554), as `Username`.
    pub password: Option<String>,
    /// `SocketAcceptAddress`: the host name or address an acceptor
    /// listens on; `None`: every IPv4 address.
    pub socket_accept_address: Option<String>,
    /// `SocketSendBufferSize`: SO_SNDBUF in bytes; `None` (or 0, as in
    /// QuickFIX): the system's default.
    pub socket_send_buffer_size: Option<u32>,
    /// `SocketReceiveBufferSize`: SO_RCVBUF in bytes, as above.
    pub socket_receive_buffer_size: Option<u32>,
    /// `AllowedRemoteAddresses`: the host names or addresses an acceptor
    /// session takes a connection from; empty: any.
    pub allowed_remote_addresses: Vec<String>,
    /// `ValidateLengthAndChecksum` (default Y): `N` takes a message whose
    /// BodyLength or CheckSum is wrong instead of dropping it as garbled.
    pub validate_length_and_checksum: bool,
    /// QuickFIX/J's `ValidateChecksum` (default Y): `N` takes a message
    /// whose CheckSum alone is wrong.
    pub validate_checksum: bool,
    /// Where an initiator connects: `SocketConnectHost`/`Port` first,
    /// then `SocketConnectHost1`/`Port1`, 2... (each with its source
    /// address, if one is given); empty for an acceptor.
    pub connect_targets: Vec<ConnectTarget>,
    /// `HostSelectionPolicy`: the order an initiator tries its targets in.
    pub host_selection: HostSelection,
    /// `FileStoreSync` (default N): `Y` makes the file store fsync what
    /// each flush wrote before the session goes on.
    pub file_store_sync: bool,
    /// `SocketUseSSL` and QuickFIX/C++'s certificate keys.
    pub tls: TlsSettings,
}

/// One place an initiator connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectTarget {
    /// `SocketConnectHost<n>`: a host name or address.
    pub host: String,
    /// `SocketConnectPort<n>`.
    pub port: u16,
    /// `SocketConnectSourceHost<n>` (QuickFIX/J: `SocketLocalHost`): the
    /// local address to connect from; `None`: the system's choice.
    pub source_host: Option<String>,
    /// `SocketConnectSourcePort<n>` (QuickFIX/J: `SocketLocalPort`): the
    /// local port to connect from; `None`: the system's choice.
    pub source_port: Option<u16>,
}

/// The order an initiator tries its [`ConnectTarget`]s in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostSelection {
    /// QuickFIX's default: each attempt takes the next target, back to the
    /// first after the last.
    InTurn,
    /// `HostSelectionPolicy=PRIORITY`: as `InTurn`, but an attempt that
    /// comes `start_over_secs` or more after the one before starts again
    /// from the first target
    /// (`HostSelectionPolicyPriorityStartOverInterval`, default 120):
    /// after a connection that lasted, the primary is tried first.
    Priority {
        /// Seconds between attempts after which the first target is
        /// tried again.
        start_over_secs: u32,
    },
}

/// Where a PostgreSQL store or log connects, as QuickFIX's
/// `PostgreSQLStore*`/`PostgreSQLLog*` keys say; an unset key takes
/// QuickFIX's default (database `quickfix`, user `postgres`, no password,
/// host `localhost`, the server's default port).
///
/// `…Host` and `…Port` take libpq's lists too (`db1,db2` and
/// `5432,5433`): the hosts are tried in turn until one accepts the
/// connection (and, with [`TargetSessionAttrs::ReadWrite`], takes writes),
/// so a standby database promoted after its primary failed is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresSettings {
    /// `…Database`.
    pub database: String,
    /// `…User`.
    pub user: String,
    /// `…Password` (empty: none).
    pub password: String,
    /// `…Host`: names, addresses, or directories holding a server's Unix
    /// socket (as libpq reads them), in the order tried; at least one.
    pub hosts: Vec<String>,
    /// `…Port`: none (unset, or 0 as QuickFIX writes it) is the server's
    /// default, 5432, for every host; one is every host's; otherwise one
    /// per host.
    pub ports: Vec<u16>,
    /// perfkit's `Perfkit…TargetSessionAttrs`: which server of
    /// [`hosts`](Self::hosts) a connection settles on.
    pub target_session_attrs: TargetSessionAttrs,
}

impl Default for PostgresSettings {
    fn default() -> Self {
        PostgresSettings {
            database: "quickfix".into(),
            user: "postgres".into(),
            password: String::new(),
            hosts: vec!["localhost".into()],
            ports: Vec::new(),
            target_session_attrs: TargetSessionAttrs::Any,
        }
    }
}

impl PostgresSettings {
    /// Each host with its port, in the order tried. The settings file's
    /// reader gives one port or one per host; settings made by hand with
    /// fewer ports than hosts give the rest the default, 5432, rather than
    /// fail.
    pub fn addresses(&self) -> impl Iterator<Item = (&str, u16)> {
        self.hosts.iter().enumerate().map(|(i, h)| {
            let port = match self.ports[..] {
                [p] => p,
                ref ps => ps.get(i).copied().unwrap_or(5432),
            };
            (h.as_str(), port)
        })
    }
}

/// Which server a PostgreSQL connection settles on among its hosts
/// (libpq's `target_session_attrs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TargetSessionAttrs {
    /// `any`: the first that accepts the connection.
    #[default]
    Any,
    /// `read-write`: the first that takes writes (a primary, not a hot
    /// standby), so that after a database failover the promoted server
    /// is used.
    ReadWrite,
}

/// A session's PostgreSQL log: where it connects and the tables of
/// QuickFIX's `PostgreSQLLog*` keys (defaults `messages_log` for both
/// directions and `event_log`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresLogSettings {
    /// The connection.
    pub connect: PostgresSettings,
    /// `PostgreSQLLogIncomingTable`.
    pub incoming_table: String,
    /// `PostgreSQLLogOutgoingTable`.
    pub outgoing_table: String,
    /// `PostgreSQLLogEventTable`.
    pub event_table: String,
}

impl Default for PostgresLogSettings {
    fn default() -> Self {
        PostgresLogSettings {
            connect: PostgresSettings::default(),
            incoming_table: "messages_log".into(),
            outgoing_table: "messages_log".into(),
            event_table: "event_log".into(),
        }
    }
}

impl SessionSettings {
    /// How far the file store's flushes go (`FileStoreSync`): to the
    /// disk, or into the kernel.
    pub fn store_durability(&self) -> crate::store::Durability {
        if self.file_store_sync {
            crate::store::Durability::Fsync
        } else {
            crate::store::Durability::Process
        }
    }

    /// The window the session runs in (StartTime/EndTime, weekly with
    /// StartDay/EndDay, local with UseLocalTime); `None`: always.
    pub fn session_window(&self) -> Option<TimeWindow> {
        self.window(self.start_time, self.end_time, self.start_day, self.end_day)
    }

    /// The window Logons are sent and accepted in: LogonTime/LogoutTime
    /// and LogonDay/LogoutDay, each defaulting to the session's.
    pub fn logon_window(&self) -> Option<TimeWindow> {
        self.window(
            self.logon_time.or(self.start_time),
            self.logout_time.or(self.end_time),
            self.logon_day.or(self.start_day),
            self.logout_day.or(self.end_day),
        )
    }

    fn window(
        &self,
        start: Option<TimeOfDay>,
        end: Option<TimeOfDay>,
        start_day: Option<Weekday>,
        end_day: Option<Weekday>,
    ) -> Option<TimeWindow> {
        let (start, end) = start.zip(end)?;
        let w = TimeWindow::new(start, end, start_day.zip(end_day));
        Some(match &self.time_zone {
            Some(zone) => w.in_zone(zone.clone()),
            None if self.use_local_time => w.in_local_time(),
            None => w,
        })
    }

    /// `BeginString:SenderCompID->TargetCompID[:Qualifier]`, QuickFIX's
    /// notation for a session identity.
    pub fn id(&self) -> String {
        let mut s = format!(
            "{}:{}->{}",
            self.begin_string.as_str(),
            self.sender_comp_id,
            self.target_comp_id
        );
        if !self.session_qualifier.is_empty() {
            s.push(':');
            s.push_str(&self.session_qualifier);
        }
        s
    }

    /// Where the session's store files and its log files lie: each as
    /// (what, the key choosing its directory, the prefix every file's
    /// name starts with); nothing for a store or log kept elsewhere.
    pub fn file_prefixes(&self) -> Vec<(&'static str, &'static str, std::path::PathBuf)> {
        let name = crate::id::SessionId::of(self).file_name();
        let mut v = Vec::new();
        if let Some(dir) = &self.file_store_path {
            v.push((
                "store",
                "FileStorePath",
                std::path::Path::new(dir).join(&name),
            ));
        }
        if let Some(log) = &self.file_log {
            v.push(("log", "FileLogPath", log.path.join(&name)));
        }
        v
    }

    /// `BeginString-SenderCompID-TargetCompID[-Qualifier]`, what the
    /// names of the session's store and log files start with, as in
    /// QuickFIX.
    pub fn file_prefix(&self) -> String {
        let dir = crate::store::FileStore::prefix_in(
            std::path::Path::new(""),
            self.begin_string.as_str(),
            &self.sender_comp_id,
            &self.target_comp_id,
            &self.session_qualifier,
        );
        dir.to_string_lossy().into_owned()
    }
}

/// What a session shows on the screen, QuickFIX's `ScreenLogShow*` keys.
/// perfkit's stderr is its screen log; unlike a QuickFIX application that
/// picks a `ScreenLogFactory`, it shows only events unless messages are
/// asked for, since every message on a terminal would slow a busy session
/// to the terminal's pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenLog {
    /// Messages received (`ScreenLogShowIncoming`, default `N`).
    pub incoming: bool,
    /// Messages sent (`ScreenLogShowOutgoing`, default `N`).
    pub outgoing: bool,
    /// Session events: logons, resends, disconnects
    /// (`ScreenLogShowEvents`, default `Y`).
    pub events: bool,
    /// Heartbeats among the messages shown (QuickFIX/J's
    /// `ScreenLogShowHeartBeats`, default `Y`).
    pub heartbeats: bool,
}

impl Default for ScreenLog {
    fn default() -> ScreenLog {
        ScreenLog {
            incoming: false,
            outgoing: false,
            events: true,
            heartbeats: true,
        }
    }
}

impl ScreenLog {
    /// Whether a message (whole, as on the wire) is shown.
    pub fn shows(&self, incoming: bool, message: &[u8]) -> bool {
        let wanted = if incoming {
            self.incoming
        } else {
            self.outgoing
        };
        wanted && (self.heartbeats || !is_heartbeat(message))
    }
}

/// Whether a whole message is a Heartbeat: its MsgType(35), the first
/// field after BeginString and BodyLength, is `0`. Only the first `35=` is
/// looked at, so a data field that happens to hold those bytes later in
/// the body cannot make an order look like a heartbeat.
fn is_heartbeat(message: &[u8]) -> bool {
    message
        .windows(4)
        .position(|w| w == b"\x0135=")
        .is_some_and(|at| message[at + 4..].starts_with(b"0\x01"))
}

/// A whole settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The sessions, in file order.
    pub sessions: Vec<SessionSettings>,
    /// The known keys the file sets that perfkit does not act on, one per
    /// key, in the order of their first line: a caller shows each at
    /// start-up.
    pub warnings: Vec<SettingsWarning>,
    /// The engine's own log, of what belongs to no session (a connection
    /// refused before its Logon), when the `[DEFAULT]` section has a
    /// `FileLogPath`: QuickFIX's `GLOBAL.event.current.log` and
    /// `GLOBAL.messages.current.log` there.
    pub global_log: Option<FileLogSettings>,
}

#[cfg(test)]
mod tests;
