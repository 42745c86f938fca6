//! Every settings key a QuickFIX shop may write, and what perfkit does
//! with each: [`KEYS`].
//!
//! The names are the union of three published lists, read from their
//! sources (names only; nothing else was taken from them):
//!
//! - QuickFIX/C++ 1.15.1, `src/C++/SessionSettings.h` at tag `v1.15.1`:
//!   107 names ([`Lists::CPP_1_15_1`]);
//! - QuickFIX/C++ master, the same file at commit `50787185808d` (May
//!   2026): 113 names, adding `SendNextExpectedMsgSeqNum`,
//!   `NonStopSession`, `HostSelectionPolicy`,
//!   `HostSelectionPolicyPriorityStartOverInterval`,
//!   `AllowedRemoteAddresses` and `TLSCipherSuites`
//!   ([`Lists::CPP_MASTER`]);
//! - QuickFIX/J 2.3 (tag `QFJ_RELEASE_2_3_3`), its settings documentation
//!   `quickfixj-core/src/main/doc/usermanual/usage/configuration.html`:
//!   139 names, three of them numbered families such as
//!   `SocketConnectHost<n>` ([`Lists::QFJ_2_3`]).
//!
//! Nine more are perfkit's own ([`Lists::PERFKIT`]): `Username` and
//! `Password`, which QuickFIX/C++ applications set in code;
//! `SocketConnectSourceHost<n>`/`SocketConnectSourcePort<n>`, which
//! QuickFIX/C++'s initiator reads beside `SocketConnectHost<n>` although
//! its header does not list them; and five that begin `Perfkit` because
//! no QuickFIX has them: `PerfkitSessionLeaseTimeout` (how long a session's
//! lease in a shared database store lasts, see `fixsession::lease`),
//! `PerfkitPostgreSQLStoreTargetSessionAttrs`/`…LogTargetSessionAttrs`
//! (libpq's `target_session_attrs`, `any` or `read-write`),
//! `PerfkitMemoryStoreWindow` (how many sent messages a session in memory
//! keeps, see `fixsession::store::MemoryStore::window`) and
//! `PerfkitCpuAffinity` (the cores a session's connection thread runs on,
//! see `fixcore::affinity::CoreSet`).
//!
//! Keys are read in any case, as QuickFIX/C++ reads them (its Dictionary
//! upper-cases every key): `socketacceptport` is `SocketAcceptPort`, and
//! [`canonical`] gives the table's spelling. A key outside the table is an
//! error (with the closest known name suggested: [`suggest`]); a key in
//! it that perfkit does not act on is accepted with one warning, so that
//! a QuickFIX file starts and its owner learns what is left undone.
//!
//! A name ending `<n>` stands for numbered keys (`SocketConnectHost2`).
//! `AppDataDictionary` is also read as `AppDataDictionary.<BeginString>`,
//! a FIXT session's dictionary of one application version
//! (`AppDataDictionary.FIX.5.0SP2`, in QuickFIX's documentation), whose
//! version is any BeginString or FIX.5.0 version name.

/// What perfkit does with a known key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Treatment {
    /// Read and acted on.
    Honoured,
    /// Accepted with a warning: it means nothing for perfkit (the text
    /// says why).
    NoEffect(&'static str),
    /// Accepted with a warning: it would mean something here, but perfkit
    /// does not act on it yet (the text says what happens instead).
    NotYet(&'static str),
}

/// Which published lists name a key: a set of [`Lists`] bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lists(u8);

impl Lists {
    /// QuickFIX/C++ 1.15.1's `SessionSettings.h`.
    pub const CPP_1_15_1: Lists = Lists(C);
    /// QuickFIX/C++ master's `SessionSettings.h`.
    pub const CPP_MASTER: Lists = Lists(M);
    /// QuickFIX/J 2.3's settings documentation.
    pub const QFJ_2_3: Lists = Lists(J);
    /// None of them: perfkit's own (see the module's documentation).
    pub const PERFKIT: Lists = Lists(P);

    /// Whether every list of `other` is in `self`.
    pub fn contains(self, other: Lists) -> bool {
        self.0 & other.0 == other.0
    }
}

const C: u8 = 1;
const M: u8 = 2;
const J: u8 = 4;
const P: u8 = 8;

/// One known key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The name as QuickFIX spells it. A name ending in `<n>` stands for
    /// a numbered family: `SocketConnectHost<n>` is `SocketConnectHost1`,
    /// `SocketConnectHost2`...
    pub name: &'static str,
    /// The lists that name it.
    pub lists: Lists,
    /// What perfkit does with it.
    pub treatment: Treatment,
}

impl Key {
    /// Whether `written` (a key as a file spells it) is this key: the name
    /// itself, or for a numbered family its stem and a number from 1 with
    /// no leading zero.
    pub fn matches(&self, written: &str) -> bool {
        self.canonical(written).is_some()
    }

    /// `written` in the table's spelling, if it is this key in any case:
    /// the name, or a family's stem in the table's case and its number or
    /// version as written.
    pub fn canonical(&self, written: &str) -> Option<String> {
        self.spelled(written, false)
    }

    /// [`canonical`](Self::canonical), the case compared too when
    /// `exact`.
    fn spelled(&self, written: &str, exact: bool) -> Option<String> {
        let prefix = |p: &str| {
            if exact {
                written.strip_prefix(p)
            } else {
                strip_prefix_ignoring_case(written, p)
            }
        };
        if let Some(stem) = self.name.strip_suffix("<n>") {
            let n = prefix(stem)?;
            let number =
                !n.is_empty() && !n.starts_with('0') && n.bytes().all(|b| b.is_ascii_digit());
            return number.then(|| format!("{stem}{n}"));
        }
        if prefix(self.name) == Some("") {
            return Some(self.name.to_string());
        }
        // `AppDataDictionary.<BeginString>`: the one key whose name may
        // carry a version (QuickFIX reads the prefix).
        let v = prefix(self.name)?.strip_prefix('.')?;
        (self.name == "AppDataDictionary" && APPLICATION_VERSIONS.contains(&v))
            .then(|| format!("{}.{v}", self.name))
    }
}

/// The versions an `AppDataDictionary.<BeginString>` key may name: the
/// BeginStrings before FIXT and FIX.5.0's ApplVerID names.
const APPLICATION_VERSIONS: [&str; 8] = [
    "FIX.4.0",
    "FIX.4.1",
    "FIX.4.2",
    "FIX.4.3",
    "FIX.4.4",
    "FIX.5.0",
    "FIX.5.0SP1",
    "FIX.5.0SP2",
];

/// `written` after `prefix`, the prefix compared in any case.
fn strip_prefix_ignoring_case<'a>(written: &'a str, prefix: &str) -> Option<&'a str> {
    let head = written.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &written[prefix.len()..])
}

const fn key(name: &'static str, lists: u8, treatment: Treatment) -> Key {
    Key {
        name,
        lists: Lists(lists),
        treatment,
    }
}

const HONOURED: Treatment = Treatment::Honoured;

// Why a key does nothing. Each is one clause that follows "KEY has no
// effect: " or "KEY is not supported yet: " in the warning.
const JAVA_TLS: Treatment = Treatment::NoEffect(
    "Java key stores and trust managers are QuickFIX/J's; perfkit reads QuickFIX/C++'s PEM \
     certificate keys (ServerCertificateFile, CertificationAuthoritiesFile...)",
);
const DATABASE: Treatment = Treatment::NoEffect(
    "of the database stores perfkit has PostgreSQL's (PostgreSQLStore*); otherwise a session \
     keeps its FileStorePath files, or memory",
);
const DATABASE_LOG: Treatment = Treatment::NoEffect(
    "of the database logs perfkit has PostgreSQL's (PostgreSQLLog*); FileLogPath writes \
     QuickFIX's file logs",
);
const OWN_CONNECTION: Treatment = Treatment::NoEffect(
    "each session's PostgreSQL store and log keep one connection of their own, opened again \
     when it is lost",
);
const SLF4J: Treatment = Treatment::NoEffect(
    "SLF4J is QuickFIX/J's Java logging; FileLogPath writes QuickFIX's file logs",
);
const QFJ_LOG_FORMAT: Treatment = Treatment::NoEffect(
    "the file log writes QuickFIX/C++'s lines, each with a nanosecond timestamp",
);
const SUB_IDS: Treatment = Treatment::NotYet(
    "sub and location IDs are neither sent nor checked, and do not tell sessions apart",
);
const PROXY: Treatment = Treatment::NotYet("an initiator connects directly, never through a proxy");
const DEFAULT_ONLY: Treatment =
    Treatment::NotYet("perfkit always behaves as this key's default says");
const HEARTBEAT_TIMING: Treatment = Treatment::NotYet(
    "as in QuickFIX/C++, a TestRequest follows 1.2 heartbeat intervals of silence and the \
     connection is dropped after 2.4",
);
const DYNAMIC_INITIATOR: Treatment = Treatment::NotYet(
    "initiator sessions come from the file; QuickFIX/J makes these from its API at run time",
);
const LOGON_TAG: Treatment =
    Treatment::NotYet("the Logon carries no extra fields (Username and Password are supported)");
const SOCKET_DEFAULT: Treatment = Treatment::NotYet("the socket keeps the system's default");
const MINA: Treatment = Treatment::NoEffect(
    "it tunes QuickFIX/J's write queue; perfkit writes from each session's thread and drops \
     a counterparty that does not read (--send-queue-limit)",
);
const VM_PIPE: Treatment =
    Treatment::NoEffect("VM_PIPE is a pipe inside one Java VM; perfkit always uses TCP");
const HTTP: Treatment = Treatment::NoEffect("perfkit serves no HTTP status page");
const URGENT: Treatment = Treatment::NoEffect("FIX never sends TCP urgent data");
const FIELD_ORDER: Treatment = Treatment::NoEffect(
    "messages are kept as the bytes received, so their field order is always preserved",
);
const UNREAD: Treatment = Treatment::NoEffect(
    "QuickFIX/C++ declares it but none of its code reads it (ResetOnLogon sends ResetSeqNumFlag)",
);
const CACHE: Treatment =
    Treatment::NoEffect("the file store caches no messages; a resend reads them from disk");
const WHOLE_FILE: Treatment =
    Treatment::NoEffect("a settings file with an error never starts: it is refused whole");
const BUILT_IN_APPS: Treatment = Treatment::NoEffect(
    "the applications are built in (--app), and an error in one ends the session",
);
const DAMAGED_STORE: Treatment = Treatment::NoEffect(
    "a damaged store stops its session; --recover-store cuts it at the last good entry instead",
);
const CLOSED_RESEND: Treatment =
    Treatment::NotYet("a ResendRequest always asks for everything from the gap on (EndSeqNo 0)");
const WEEKDAYS: Treatment = Treatment::NotYet(
    "a session window is daily, or weekly with StartDay and EndDay; not on chosen weekdays",
);

/// Every known key, in the order of the lists above: QuickFIX/C++
/// master's header (1.15.1's with six names added), then the names only
/// QuickFIX/J documents, then perfkit's own.
pub const KEYS: &[Key] = &[
    key("BeginString", C | M | J, HONOURED),
    key("SenderCompID", C | M | J, HONOURED),
    key("TargetCompID", C | M | J, HONOURED),
    key("SessionQualifier", C | M | J, HONOURED),
    key("DefaultApplVerID", C | M | J, HONOURED),
    key("ConnectionType", C | M | J, HONOURED),
    key("UseDataDictionary", C | M | J, HONOURED),
    key("SendResetSeqNumFlag", C | M, UNREAD),
    key("SendRedundantResendRequests", C | M | J, HONOURED),
    key("SendNextExpectedMsgSeqNum", M, HONOURED),
    key("DataDictionary", C | M | J, HONOURED),
    key("TransportDataDictionary", C | M | J, HONOURED),
    key("AppDataDictionary", C | M | J, HONOURED),
    key("UseLocalTime", C | M, HONOURED),
    key("StartTime", C | M | J, HONOURED),
    key("EndTime", C | M | J, HONOURED),
    key("StartDay", C | M | J, HONOURED),
    key("EndDay", C | M | J, HONOURED),
    key("NonStopSession", M | J, HONOURED),
    key("LogonTime", C | M, HONOURED),
    key("LogoutTime", C | M, HONOURED),
    key("LogonDay", C | M, HONOURED),
    key("LogoutDay", C | M, HONOURED),
    key("CheckCompID", C | M | J, HONOURED),
    key("CheckLatency", C | M | J, HONOURED),
    key("MaxLatency", C | M | J, HONOURED),
    key("HeartBtInt", C | M | J, HONOURED),
    key("SocketAcceptPort", C | M | J, HONOURED),
    key("SocketReuseAddress", C | M | J, HONOURED),
    key("SocketConnectHost", C | M | J, HONOURED),
    key("SocketConnectPort", C | M | J, HONOURED),
    key("SocketConnectSourceHost", C | M, HONOURED),
    key("SocketConnectSourcePort", C | M, HONOURED),
    key("SocketNodelay", C | M, HONOURED),
    key("SocketSendBufferSize", C | M | J, HONOURED),
    key("SocketReceiveBufferSize", C | M | J, HONOURED),
    key("HostSelectionPolicy", M, HONOURED),
    key("HostSelectionPolicyPriorityStartOverInterval", M, HONOURED),
    key("ReconnectInterval", C | M | J, HONOURED),
    key("ValidateLengthAndChecksum", C | M, HONOURED),
    key("ValidateFieldsOutOfOrder", C | M | J, HONOURED),
    key("ValidateFieldsHaveValues", C | M | J, HONOURED),
    key("ValidateUserDefinedFields", C | M | J, HONOURED),
    key("AllowUnknownMsgFields", C | M | J, HONOURED),
    key("PreserveMessageFieldsOrder", C | M, FIELD_ORDER),
    key("LogonTimeout", C | M | J, HONOURED),
    key("LogoutTimeout", C | M | J, HONOURED),
    key("FileStorePath", C | M | J, HONOURED),
    key("MySQLStoreUseConnectionPool", C | M, DATABASE),
    key("MySQLStoreDatabase", C | M, DATABASE),
    key("MySQLStoreUser", C | M, DATABASE),
    key("MySQLStorePassword", C | M, DATABASE),
    key("MySQLStoreHost", C | M, DATABASE),
    key("MySQLStorePort", C | M, DATABASE),
    key("PostgreSQLStoreUseConnectionPool", C | M, OWN_CONNECTION),
    key("PostgreSQLStoreDatabase", C | M, HONOURED),
    key("PostgreSQLStoreUser", C | M, HONOURED),
    key("PostgreSQLStorePassword", C | M, HONOURED),
    key("PostgreSQLStoreHost", C | M, HONOURED),
    key("PostgreSQLStorePort", C | M, HONOURED),
    key("OdbcStoreUser", C | M, DATABASE),
    key("OdbcStorePassword", C | M, DATABASE),
    key("OdbcStoreConnectionString", C | M, DATABASE),
    key("FileLogPath", C | M | J, HONOURED),
    key("FileLogBackupPath", C | M, HONOURED),
    key("ScreenLogShowIncoming", C | M | J, HONOURED),
    key("ScreenLogShowOutgoing", C | M | J, HONOURED),
    key("ScreenLogShowEvents", C | M | J, HONOURED),
    key("MySQLLogUseConnectionPool", C | M, DATABASE_LOG),
    key("MySQLLogDatabase", C | M, DATABASE_LOG),
    key("MySQLLogUser", C | M, DATABASE_LOG),
    key("MySQLLogPassword", C | M, DATABASE_LOG),
    key("MySQLLogHost", C | M, DATABASE_LOG),
    key("MySQLLogPort", C | M, DATABASE_LOG),
    key("MySQLLogIncomingTable", C | M, DATABASE_LOG),
    key("MySQLLogOutgoingTable", C | M, DATABASE_LOG),
    key("MySQLLogEventTable", C | M, DATABASE_LOG),
    key("PostgreSQLLogUseConnectionPool", C | M, OWN_CONNECTION),
    key("PostgreSQLLogDatabase", C | M, HONOURED),
    key("PostgreSQLLogUser", C | M, HONOURED),
    key("PostgreSQLLogPassword", C | M, HONOURED),
    key("PostgreSQLLogHost", C | M, HONOURED),
    key("PostgreSQLLogPort", C | M, HONOURED),
    key("PostgreSQLLogIncomingTable", C | M, HONOURED),
    key("PostgreSQLLogOutgoingTable", C | M, HONOURED),
    key("PostgreSQLLogEventTable", C | M, HONOURED),
    key("OdbcLogUser", C | M, DATABASE_LOG),
    key("OdbcLogPassword", C | M, DATABASE_LOG),
    key("OdbcLogConnectionString", C | M, DATABASE_LOG),
    key("OdbcLogIncomingTable", C | M, DATABASE_LOG),
    key("OdbcLogOutgoingTable", C | M, DATABASE_LOG),
    key("OdbcLogEventTable", C | M, DATABASE_LOG),
    key("ResetOnLogon", C | M | J, HONOURED),
    key("ResetOnLogout", C | M | J, HONOURED),
    key("ResetOnDisconnect", C | M | J, HONOURED),
    key("RefreshOnLogon", C | M | J, HONOURED),
    key("MillisecondsInTimeStamp", C | M, HONOURED),
    key("TimestampPrecision", C | M, HONOURED),
    key("HttpAcceptPort", C | M, HTTP),
    key("PersistMessages", C | M | J, HONOURED),
    key("ServerCertificateFile", C | M, HONOURED),
    key("ServerCertificateKeyFile", C | M, HONOURED),
    key("ClientCertificateFile", C | M, HONOURED),
    key("ClientCertificateKeyFile", C | M, HONOURED),
    key("CertificationAuthoritiesFile", C | M, HONOURED),
    key("CertificationAuthoritiesDirectory", C | M, HONOURED),
    key("CertificateRevocationListFile", C | M, HONOURED),
    key("CertificateRevocationListDirectory", C | M, HONOURED),
    key("CertificateVerifyLevel", C | M, HONOURED),
    key("AllowedRemoteAddresses", M | J, HONOURED),
    key("SSLProtocol", C | M, HONOURED),
    key("SSLCipherSuite", C | M, HONOURED),
    key("TLSCipherSuites", M, HONOURED),
    key("SenderSubID", J, SUB_IDS),
    key("SenderLocationID", J, SUB_IDS),
    key("TargetSubID", J, SUB_IDS),
    key("TargetLocationID", J, SUB_IDS),
    key("TimeZone", J, HONOURED),
    key("Weekdays", J, WEEKDAYS),
    key("TimeStampPrecision", J, HONOURED),
    key("ClosedResendInterval", J, CLOSED_RESEND),
    key("ValidateUnorderedGroupFields", J, DEFAULT_ONLY),
    key("ValidateIncomingMessage", J, DEFAULT_ONLY),
    key("ValidateSequenceNumbers", J, DEFAULT_ONLY),
    key("ValidateChecksum", J, HONOURED),
    key("RejectGarbledMessage", J, DEFAULT_ONLY),
    key("RejectInvalidMessage", J, DEFAULT_ONLY),
    key("RejectMessageOnUnhandledException", J, BUILT_IN_APPS),
    key("RequiresOrigSendingTime", J, DEFAULT_ONLY),
    key("SocketConnectProtocol", J, VM_PIPE),
    key("SocketConnectPort<n>", J, HONOURED),
    key("SocketConnectHost<n>", J, HONOURED),
    key("SocketLocalPort", J, HONOURED),
    key("SocketLocalHost", J, HONOURED),
    key("DynamicSession", J, DYNAMIC_INITIATOR),
    key("SocketAcceptAddress", J, HONOURED),
    key("SocketAcceptProtocol", J, VM_PIPE),
    key("AcceptorTemplate", J, HONOURED),
    key("SocketUseSSL", J, HONOURED),
    key("SocketKeyStore", J, JAVA_TLS),
    key("SocketKeyStorePassword", J, JAVA_TLS),
    key("KeyManagerFactoryAlgorithm", J, JAVA_TLS),
    key("KeyStoreType", J, JAVA_TLS),
    key("SocketTrustStore", J, JAVA_TLS),
    key("SocketTrustStorePassword", J, JAVA_TLS),
    key("TrustManagerFactoryAlgorithm", J, JAVA_TLS),
    key("TrustStoreType", J, JAVA_TLS),
    key("NeedClientAuth", J, JAVA_TLS),
    key("EnabledProtocols", J, JAVA_TLS),
    key("CipherSuites", J, JAVA_TLS),
    key("EndpointIdentificationAlgorithm", J, JAVA_TLS),
    key("UseSNI", J, JAVA_TLS),
    key("SNIHostName", J, JAVA_TLS),
    key("ProxyType", J, PROXY),
    key("ProxyVersion", J, PROXY),
    key("ProxyHost", J, PROXY),
    key("ProxyPort", J, PROXY),
    key("ProxyUser", J, PROXY),
    key("ProxyPassword", J, PROXY),
    key("ProxyDomain", J, PROXY),
    key("ProxyWorkstation", J, PROXY),
    key("SocketKeepAlive", J, SOCKET_DEFAULT),
    key("SocketOobInline", J, URGENT),
    key("SocketLinger", J, SOCKET_DEFAULT),
    key("SocketTcpNoDelay", J, HONOURED),
    key("SocketTrafficClass", J, SOCKET_DEFAULT),
    key("SocketSynchronousWrites", J, MINA),
    key("SocketSynchronousWriteTimeout", J, MINA),
    key("MaxScheduledWriteRequests", J, MINA),
    key("FileStoreMaxCachedMsgs", J, CACHE),
    key("FileStoreSync", J, HONOURED),
    key("JdbcDataSourceName", J, DATABASE),
    key("JdbcDriver", J, DATABASE),
    key("JdbcURL", J, DATABASE),
    key("JdbcUser", J, DATABASE),
    key("JdbcPassword", J, DATABASE),
    key("JdbcStoreMessagesTableName", J, DATABASE),
    key("JdbcStoreSessionsTableName", J, DATABASE),
    key("JdbcLogHeartBeats", J, DATABASE_LOG),
    key("JdbcLogIncomingTable", J, DATABASE_LOG),
    key("JdbcLogOutgoingTable", J, DATABASE_LOG),
    key("JdbcLogEventTable", J, DATABASE_LOG),
    key("JdbcSessionIdDefaultPropertyValue", J, DATABASE),
    key("JdbcMaxActiveConnection", J, DATABASE),
    key("JdbcMaxActiveTime", J, DATABASE),
    key("JdbcMaxConnectionLifeTime", J, DATABASE),
    key("JdbcSimultaneousBuildThrottle", J, DATABASE),
    key("FileLogHeartbeats", J, HONOURED),
    key("FileIncludeMilliseconds", J, QFJ_LOG_FORMAT),
    key("FileIncludeTimeStampForMessages", J, QFJ_LOG_FORMAT),
    key("SLF4JLogEventCategory", J, SLF4J),
    key("SLF4JLogIncomingMessageCategory", J, SLF4J),
    key("SLF4JLogOutgoingMessageCategory", J, SLF4J),
    key("SLF4JLogPrependSessionID", J, SLF4J),
    key("SLF4JLogHeartbeats", J, SLF4J),
    key("ScreenLogShowHeartBeats", J, HONOURED),
    key("LogonTag", J, LOGON_TAG),
    key("LogonTag<n>", J, LOGON_TAG),
    key("ResetOnError", J, DEFAULT_ONLY),
    key("DisconnectOnError", J, DEFAULT_ONLY),
    key("EnableLastMsgSeqNumProcessed", J, DEFAULT_ONLY),
    key("EnableNextExpectedMsgSeqNum", J, HONOURED),
    key("ResendRequestChunkSize", J, DEFAULT_ONLY),
    key("ContinueInitializationOnError", J, WHOLE_FILE),
    key("TestRequestDelayMultiplier", J, HEARTBEAT_TIMING),
    key("HeartBeatTimeoutMultiplier", J, HEARTBEAT_TIMING),
    key("DisableHeartBeatCheck", J, HEARTBEAT_TIMING),
    key("ForceResendWhenCorruptedStore", J, DAMAGED_STORE),
    key("Username", P, HONOURED),
    key("Password", P, HONOURED),
    key("SocketConnectSourceHost<n>", P, HONOURED),
    key("SocketConnectSourcePort<n>", P, HONOURED),
    key("PerfkitSessionLeaseTimeout", P, HONOURED),
    key("PerfkitMemoryStoreWindow", P, HONOURED),
    key("PerfkitCpuAffinity", P, HONOURED),
    key("PerfkitPostgreSQLStoreTargetSessionAttrs", P, HONOURED),
    key("PerfkitPostgreSQLLogTargetSessionAttrs", P, HONOURED),
];

/// The known key `written` is, numbered families included: the one
/// spelled so, else the one spelled so in another case (QuickFIX/C++'s
/// reading; where two keys differ only in case, as QuickFIX/J's
/// `TimeStampPrecision` and QuickFIX/C++'s `TimestampPrecision`, the
/// QuickFIX/C++ key).
pub fn find(written: &str) -> Option<&'static Key> {
    KEYS.iter()
        .find(|k| k.spelled(written, true).is_some())
        .or_else(|| {
            let mut any_case = KEYS.iter().filter(|k| k.matches(written));
            let first = any_case.next()?;
            Some(
                std::iter::once(first)
                    .chain(any_case)
                    .find(|k| k.lists.contains(Lists::CPP_MASTER))
                    .unwrap_or(first),
            )
        })
}

/// `written` in the table's spelling (`socketacceptport` →
/// `SocketAcceptPort`), if it is a known key (see [`find`]).
pub fn canonical(written: &str) -> Option<String> {
    find(written)?.canonical(written)
}

/// The known key a misspelled `written` most likely meant, if one is
/// close enough: the same name in another case (`heartbtint`), else the
/// name fewest edits away (Damerau-Levenshtein, case ignored) when those
/// edits are few for its length (at most 1 + len/6: two for `FileLogPth`,
/// three for a 20-letter name). A numbered family keeps the number
/// written (`SocketConectHost2` → `SocketConnectHost2`).
pub fn suggest(written: &str) -> Option<String> {
    let lower = written.to_ascii_lowercase();
    // The number a family member carries, and the stem before it.
    let digits = lower.len() - lower.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, number) = lower.split_at(lower.len() - digits);
    let mut best: Option<(usize, String)> = None;
    for k in KEYS {
        let candidate = match k.name.strip_suffix("<n>") {
            // A family's members are numbered from 1, never 0 or 01.
            Some(family) if !number.is_empty() && !number.starts_with('0') => {
                (family.to_ascii_lowercase(), format!("{family}{number}"))
            }
            Some(_) => continue,
            None => (k.name.to_ascii_lowercase(), k.name.to_string()),
        };
        let typed = if k.name.ends_with("<n>") {
            stem
        } else {
            &lower
        };
        let d = strsim::damerau_levenshtein(typed, &candidate.0);
        if best.as_ref().is_none_or(|(bd, _)| d < *bd) {
            best = Some((d, candidate.1));
        }
    }
    let (d, name) = best?;
    (d <= 1 + written.len() / 6 && name != written).then_some(name)
}

#[cfg(test)]
mod tests;
