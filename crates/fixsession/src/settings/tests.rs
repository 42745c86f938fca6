use super::*;
use jiff::tz::TimeZone;

/// A file in the shape of QuickFIX's own examples: comments, blank lines,
/// spaces around '=', a DEFAULT inherited and overridden, three versions.
const FILE: &str = "\
# acceptor settings
[DEFAULT]
ConnectionType=acceptor
SocketAcceptPort = 5001
FileStorePath=store
StartTime=00:00:00
EndTime=23:59:59
HeartBtInt=30
ResetOnLogon=Y

[SESSION]
BeginString=FIX.4.2
SenderCompID=ISLD
TargetCompID=TW
DataDictionary=spec/FIX42.xml

[SESSION]
BeginString=FIX.4.4
SenderCompID=ISLD
TargetCompID=TW
ResetOnLogon=N
ValidateFieldsOutOfOrder=N
MaxLatency=5

[session]
ConnectionType=initiator
BeginString=FIXT.1.1
DefaultApplVerID=FIX.5.0SP2
SenderCompID=TW
TargetCompID=ISLD
SocketConnectHost=127.0.0.1
SocketConnectPort=5002
TransportDataDictionary=spec/FIXT11.xml
AppDataDictionary=spec/FIX50SP2.xml
";

#[test]
fn quickfix_file_reads_with_defaults_inherited() {
    let s = Settings::parse(FILE).unwrap();
    assert_eq!(s.sessions.len(), 3);
    let a = &s.sessions[0];
    assert_eq!(a.line, 11);
    assert_eq!(a.connection_type, ConnectionType::Acceptor);
    assert_eq!(a.begin_string, BeginString::Fix42);
    assert_eq!(a.id(), "FIX.4.2:ISLD->TW");
    assert_eq!(a.socket_accept_port, Some(5001));
    assert_eq!(a.heart_bt_int, Some(30));
    assert!(a.reset_on_logon);
    assert_eq!(a.start_time, Some(TimeOfDay(0)));
    assert_eq!(a.end_time.unwrap().to_string(), "23:59:59");
    assert_eq!(a.data_dictionary.as_deref(), Some("spec/FIX42.xml"));
    assert_eq!(a.file_store_path.as_deref(), Some("store"));
    assert_eq!(a.validation, Validation::default());
    assert_eq!(a.default_appl_ver_id, None);
    assert!(a.persist_messages && !a.send_redundant_resend_requests);

    let b = &s.sessions[1];
    assert_eq!(b.begin_string, BeginString::Fix44);
    assert!(!b.reset_on_logon, "a session overrides DEFAULT");
    assert!(!b.validation.fields_out_of_order);
    assert_eq!(b.validation.max_latency_secs, 5);
    assert_eq!(b.data_dictionary, None);

    let c = &s.sessions[2];
    assert_eq!(c.connection_type, ConnectionType::Initiator);
    assert_eq!(c.begin_string, BeginString::Fixt11);
    assert_eq!(c.default_appl_ver_id, Some(ApplVerId::Fix50Sp2));
    assert_eq!(c.socket_connect_host.as_deref(), Some("127.0.0.1"));
    assert_eq!(c.socket_connect_port, Some(5002));
    assert_eq!(c.reconnect_interval, 30);
    assert_eq!(c.app_data_dictionary.as_deref(), Some("spec/FIX50SP2.xml"));
}

fn err(text: &str) -> String {
    Settings::parse(text).unwrap_err().to_string()
}

const ACC: &str = "[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=A\nTargetCompID=B\nSocketAcceptPort=1\n";

#[test]
fn misspelled_key_is_named_with_its_line_and_the_key_meant() {
    let e = err(&format!("{ACC}HeartBtIn=30\n"));
    assert_eq!(
        e,
        "line 7: unknown settings key \"HeartBtIn\" (did you mean HeartBtInt?)"
    );
    let e = err(&format!("{ACC}resetonlogn=Y\n"));
    assert_eq!(
        e,
        "line 7: unknown settings key \"resetonlogn\" (did you mean ResetOnLogon?)"
    );
    let e = err(&format!("[DEFAULT]\nFileLogPth=log\n{ACC}"));
    assert_eq!(
        e,
        "line 2: unknown settings key \"FileLogPth\" (did you mean FileLogPath?)"
    );
    // Nothing near it: no guess.
    let e = err(&format!("{ACC}Colour=blue\n"));
    assert_eq!(e, "line 7: unknown settings key \"Colour\"");
}

/// Keys in any case, as QuickFIX/C++ reads them (its Dictionary
/// upper-cases keys): each means what the table's spelling means, and
/// two spellings of one key in a section are the key written twice.
#[test]
fn keys_are_read_in_any_case() {
    let s = Settings::parse(
        "[default]\nconnectiontype=acceptor\nSOCKETACCEPTPORT=5001\nheartbtint=30\n\
         resetonlogon=Y\n[session]\nbeginstring=FIX.4.4\nSenderCompId=A\ntargetcompid=B\n",
    )
    .unwrap();
    let a = &s.sessions[0];
    assert_eq!(a.socket_accept_port, Some(5001));
    assert_eq!(a.heart_bt_int, Some(30));
    assert!(a.reset_on_logon);
    assert_eq!(a.id(), "FIX.4.4:A->B");
    // Numbered families too, their stem in any case.
    let s = Settings::parse(
        "[SESSION]\nConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=A\n\
         TargetCompID=B\nsocketconnecthost=h1\nSocketConnectPort=1\n\
         SOCKETCONNECTHOST1=h2\nsocketconnectport1=2\nHeartBtInt=30\n",
    )
    .unwrap();
    assert_eq!(s.sessions[0].socket_connect_host.as_deref(), Some("h1"));
    let e = err(&format!("{ACC}heartbtint=30\nHeartBtInt=31\n"));
    assert!(e.contains("HeartBtInt") && e.contains("line 8"), "{e}");
}

/// `AppDataDictionary.<BeginString>`, QuickFIX's per-version form: the
/// one naming the session's DefaultApplVerID is its application
/// dictionary when plain `AppDataDictionary` is absent; one naming
/// another version is used by no session and says so (QuickFIX would
/// pick it for messages of that ApplVerID); a version that is none is an
/// unknown key.
#[test]
fn app_data_dictionary_per_version_is_read() {
    let text = "[SESSION]\nConnectionType=initiator\nBeginString=FIXT.1.1\n\
                DefaultApplVerID=FIX.5.0SP2\nSenderCompID=A\nTargetCompID=B\n\
                SocketConnectHost=h\nSocketConnectPort=1\nHeartBtInt=30\n\
                TransportDataDictionary=FIXT11.xml\nAppDataDictionary.FIX.4.4=FIX44.xml\n\
                AppDataDictionary.FIX.5.0SP2=FIX50SP2.xml\n";
    let s = Settings::parse(text).unwrap();
    assert_eq!(
        s.sessions[0].app_data_dictionary.as_deref(),
        Some("FIX50SP2.xml")
    );
    let lines: Vec<String> = s.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("line 11: AppDataDictionary.FIX.4.4 is not supported yet: ")
            && lines[0].contains("one dictionary"),
        "{lines:?}"
    );
    // Plain AppDataDictionary wins, so neither versioned key is used.
    let plain = Settings::parse(&format!("{text}AppDataDictionary=A.xml\n")).unwrap();
    assert_eq!(
        plain.sessions[0].app_data_dictionary.as_deref(),
        Some("A.xml")
    );
    assert_eq!(plain.warnings.len(), 2, "{:?}", plain.warnings);
    // A DEFAULT key one session uses is no warning, though another
    // session (FIX.4.4, which reads DataDictionary) ignores it.
    let shared = format!(
        "[DEFAULT]\nAppDataDictionary.FIX.5.0SP2=FIX50SP2.xml\n{}\
         [SESSION]\nConnectionType=acceptor\nSocketAcceptPort=2\nBeginString=FIX.4.4\n\
         SenderCompID=A\nTargetCompID=C\n",
        text.replace("AppDataDictionary.FIX.4.4=FIX44.xml\n", "")
            .replace("AppDataDictionary.FIX.5.0SP2=FIX50SP2.xml\n", "")
    );
    let shared = Settings::parse(&shared).unwrap();
    assert!(shared.warnings.is_empty(), "{:?}", shared.warnings);
    let alone = "[SESSION]\nConnectionType=acceptor\nSocketAcceptPort=2\nBeginString=FIX.4.4\n\
                 SenderCompID=A\nTargetCompID=C\nAppDataDictionary.FIX.4.4=FIX44.xml\n";
    let alone: Vec<String> = Settings::parse(alone)
        .unwrap()
        .warnings
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        alone.len() == 1 && alone[0].contains("has no effect: only a FIXT.1.1 session"),
        "{alone:?}"
    );
    let e = err(&text.replace("AppDataDictionary.FIX.4.4", "AppDataDictionary.FIX.9"));
    assert!(
        e.contains("unknown settings key \"AppDataDictionary.FIX.9\""),
        "{e}"
    );
}

/// A known key perfkit does not act on starts the session, with one
/// warning per key naming its first line, the others, and why.
#[test]
fn keys_without_effect_are_accepted_with_one_warning_each() {
    let text = format!(
        "[DEFAULT]\nMySQLStoreHost=db\nSocketKeyStore=ks\n{ACC}MySQLStoreHost=db2\n\
         {ACC}SessionQualifier=2\nMySQLStoreHost=db3\n"
    );
    let s = Settings::parse(&text).unwrap();
    assert_eq!(s.sessions.len(), 2);
    let lines: Vec<String> = s.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "line 2: MySQLStoreHost has no effect: of the database stores perfkit has \
             PostgreSQL's (PostgreSQLStore*); otherwise a session keeps its FileStorePath \
             files, or memory (also set on line 10, 18)",
            "line 3: SocketKeyStore has no effect: Java key stores and trust managers are \
             QuickFIX/J's; perfkit reads QuickFIX/C++'s PEM certificate keys \
             (ServerCertificateFile, CertificationAuthoritiesFile...)",
        ]
    );
    assert_eq!(s.warnings[0].more_lines, [10, 18]);
    // A file of honoured keys only warns of nothing.
    assert!(Settings::parse(FILE).unwrap().warnings.is_empty());
}

/// QuickFIX/J's names for settings QuickFIX/C++ spells otherwise set the
/// same thing; both may be given only when they agree.
#[test]
fn quickfix_j_spellings_are_read_too() {
    let s = |extra: &str| Settings::parse(&format!("{ACC}{extra}"));
    let one =
        s("SocketTcpNoDelay=N\nSendNextExpectedMsgSeqNum=Y\nTimeStampPrecision=MICROS\n").unwrap();
    let one = &one.sessions[0];
    assert!(!one.socket_nodelay && one.enable_next_expected_msg_seq_num);
    assert_eq!(one.timestamp_precision, Some(TimePrecision::Micros));
    let both =
        s("SocketNodelay=N\nSocketTcpNoDelay=N\nTimestampPrecision=9\nTimeStampPrecision=NANOS\n")
            .unwrap();
    assert!(!both.sessions[0].socket_nodelay);
    assert_eq!(
        both.sessions[0].timestamp_precision,
        Some(TimePrecision::Nanos)
    );
    for (extra, why) in [
        (
            "SocketNodelay=N\nSocketTcpNoDelay=Y\n",
            "line 1: SocketNodelay and SocketTcpNoDelay disagree",
        ),
        (
            "EnableNextExpectedMsgSeqNum=Y\nSendNextExpectedMsgSeqNum=N\n",
            "line 1: EnableNextExpectedMsgSeqNum and SendNextExpectedMsgSeqNum disagree",
        ),
        (
            "TimestampPrecision=3\nTimeStampPrecision=NANOS\n",
            "line 1: TimestampPrecision and TimeStampPrecision disagree",
        ),
        (
            "TimeStampPrecision=6\n",
            "line 7: bad value \"6\" for TimeStampPrecision: expected SECONDS, MILLIS, MICROS or NANOS",
        ),
    ] {
        assert_eq!(s(extra).unwrap_err().to_string(), why, "{extra}");
    }
}

#[test]
fn syntax_errors_name_the_line() {
    assert_eq!(
        err("[SESSION]\nConnectionType acceptor\n"),
        "line 2: expected '[SECTION]' or 'Key=Value', found \"ConnectionType acceptor\""
    );
    assert_eq!(
        err("[SESSION\n"),
        "line 1: expected '[SECTION]' or 'Key=Value', found \"[SESSION\""
    );
    assert_eq!(
        err("BeginString=FIX.4.4\n[SESSION]\n"),
        "line 1: key \"BeginString\" outside any section"
    );
    assert_eq!(
        err("[LOGGING]\n"),
        "line 1: unknown section [LOGGING] (expected [DEFAULT] or [SESSION])"
    );
    assert_eq!(
        err("[DEFAULT]\n[DEFAULT]\n"),
        "line 2: second [DEFAULT] section"
    );
    assert_eq!(err("# nothing\n[DEFAULT]\n"), "no [SESSION] section");
    assert_eq!(
        err("[SESSION]\n=x\n"),
        "line 2: expected '[SECTION]' or 'Key=Value', found \"=x\""
    );
}

#[test]
fn repeated_key_in_one_section_is_refused() {
    assert_eq!(
        err(&format!("{ACC}BeginString=FIX.4.2\n")),
        "line 7: key \"BeginString\" repeated in one section (first on line 3)"
    );
}

#[test]
fn bad_values_are_refused() {
    let cases = [
        (
            "ResetOnLogon=yes",
            "line 7: bad value \"yes\" for ResetOnLogon: expected Y or N",
        ),
        (
            "HeartBtInt=-1",
            "line 7: bad value \"-1\" for HeartBtInt: expected a non-negative integer",
        ),
        (
            "HeartBtInt=99999999999",
            "line 7: bad value \"99999999999\" for HeartBtInt: number too large",
        ),
        (
            "StartTime=25:00:00\nEndTime=00:00:00",
            "line 7: bad value \"25:00:00\" for StartTime: expected HH:MM:SS",
        ),
        (
            "StartTime=1:00:00\nEndTime=00:00:00",
            "line 7: bad value \"1:00:00\" for StartTime: expected HH:MM:SS",
        ),
        (
            "SocketConnectPort=70000",
            "line 7: bad value \"70000\" for SocketConnectPort: expected a port 1-65535",
        ),
    ];
    for (extra, want) in cases {
        assert_eq!(err(&format!("{ACC}{extra}\n")), want, "{extra}");
    }
    assert_eq!(
        err(&ACC.replace("acceptor", "server")),
        "line 2: bad value \"server\" for ConnectionType: expected acceptor or initiator"
    );
    assert_eq!(
        err(&ACC.replace("FIX.4.4", "FIX.4.5")),
        "line 3: bad value \"FIX.4.5\" for BeginString: expected FIX.4.0 ... FIX.4.4 or FIXT.1.1"
    );
    assert_eq!(
        err(&ACC.replace("SocketAcceptPort=1", "SocketAcceptPort=0")),
        "line 6: bad value \"0\" for SocketAcceptPort: expected a port 1-65535"
    );
}

#[test]
fn required_keys_are_named_with_the_session_line() {
    assert_eq!(
        err(&ACC.replace("SocketAcceptPort=1\n", "")),
        "line 1: [SESSION] has no SocketAcceptPort"
    );
    assert_eq!(
        err(&ACC.replace("TargetCompID=B\n", "")),
        "line 1: [SESSION] has no TargetCompID"
    );
    assert_eq!(
        err(&ACC.replace("TargetCompID=B", "TargetCompID=")),
        "line 5: bad value \"\" for TargetCompID: must not be empty"
    );
    assert_eq!(
        err(&ACC.replace("FIX.4.4", "FIXT.1.1")),
        "line 1: [SESSION] has no DefaultApplVerID"
    );
    assert_eq!(
        err(&format!("{ACC}StartTime=08:00:00\n")),
        "line 1: [SESSION] has no EndTime"
    );
    let init = "[SESSION]\nConnectionType=initiator\nBeginString=FIX.4.2\nSenderCompID=A\nTargetCompID=B\nSocketConnectHost=h\nSocketConnectPort=9\n";
    assert_eq!(err(init), "line 1: [SESSION] has no HeartBtInt");
    assert!(Settings::parse(&format!("{init}HeartBtInt=30\n")).is_ok());
}

#[test]
fn appl_ver_id_takes_both_spellings() {
    for (v, want) in [
        ("FIX.5.0", ApplVerId::Fix50),
        ("7", ApplVerId::Fix50),
        ("FIX.5.0SP1", ApplVerId::Fix50Sp1),
        ("8", ApplVerId::Fix50Sp1),
        ("9", ApplVerId::Fix50Sp2),
    ] {
        let text = format!(
            "{}DefaultApplVerID={v}\n",
            ACC.replace("FIX.4.4", "FIXT.1.1")
        );
        let s = Settings::parse(&text).unwrap();
        assert_eq!(s.sessions[0].default_appl_ver_id, Some(want), "{v}");
    }
    let text = format!(
        "{}DefaultApplVerID=FIX.4.4\n",
        ACC.replace("FIX.4.4", "FIXT.1.1")
    );
    assert!(err(&text).starts_with("line 7: bad value \"FIX.4.4\" for DefaultApplVerID"));
}

#[test]
fn duplicate_session_identity_is_refused() {
    let text = format!("{ACC}{ACC}");
    assert_eq!(
        err(&text),
        "line 7: session FIX.4.4:A->B already defined on line 1"
    );
    // A qualifier tells them apart.
    let text = format!("{ACC}{ACC}SessionQualifier=2\n");
    let s = Settings::parse(&text).unwrap();
    assert_eq!(s.sessions[1].id(), "FIX.4.4:A->B:2");
}

#[test]
fn every_known_key_is_accepted_and_the_honoured_ones_read() {
    // Each known key (a numbered family's first member), with a valid
    // value, in one acceptor session: the key table and the resolver must
    // agree, and each key not acted on warns once.
    let values = |k: &str| match k {
        "ConnectionType" => "acceptor",
        "BeginString" => "FIX.4.4",
        "DefaultApplVerID" => "9",
        "StartTime" | "EndTime" | "LogonTime" | "LogoutTime" => "01:02:03",
        "StartDay" | "EndDay" | "LogonDay" | "LogoutDay" => "Monday",
        "TimestampPrecision" => "6",
        "TimeStampPrecision" => "MICROS",
        "HostSelectionPolicy" => "PRIORITY",
        "FileStoreSync" => "Y",
        "AllowedRemoteAddresses" | "SocketAcceptAddress" => "127.0.0.1",
        "SocketNodelay" | "SocketTcpNoDelay" | "SocketReuseAddress" => "N",
        "ScreenLogShowIncoming" | "ScreenLogShowOutgoing" => "Y",
        "ScreenLogShowEvents" | "ScreenLogShowHeartBeats" | "FileLogHeartbeats" => "N",
        "FileLogPath" => "log",
        k if k.starts_with("PostgreSQLLog") && k.ends_with("Table") => "fix_log",
        "TimeZone" => "Europe/London",
        "FileLogBackupPath" => "log/old",
        "Username" => "trader1",
        "Password" => "s3cret",
        "SocketUseSSL" => "Y",
        "CertificateVerifyLevel" => "1",
        "SSLProtocol" => "-all +TLSv1_3",
        "SocketConnectHost"
        | "SenderCompID"
        | "TargetCompID"
        | "SessionQualifier"
        | "DataDictionary"
        | "TransportDataDictionary"
        | "AppDataDictionary"
        | "FileStorePath" => "x",
        k if k.starts_with("Reset")
            || k.starts_with("Validate")
            || k.starts_with("Allow")
            || k.starts_with("Use")
            || k.starts_with("Check")
            || k.starts_with("Enable")
            || k.starts_with("Send")
            || k.starts_with("Persist")
            || k.starts_with("Refresh")
            || k.starts_with("NonStop")
            || k.starts_with("Milliseconds")
            || k == "AcceptorTemplate" =>
        {
            "N"
        }
        k if k.ends_with("TargetSessionAttrs") => "read-write",
        _ => "7",
    };
    let mut text = String::from("[SESSION]\n");
    for k in KEYS {
        let name = k.name.replace("<n>", "1");
        // FileStorePath and the PostgreSQL store's keys exclude each
        // other (tested below); the file store is the one read here.
        if (name.starts_with("PostgreSQLStore") || name.starts_with("PerfkitPostgreSQLStore"))
            && k.treatment == Treatment::Honoured
        {
            continue;
        }
        text.push_str(&format!("{name}={}\n", values(&name)));
    }
    let s = Settings::parse(&text).unwrap();
    let unread = KEYS
        .iter()
        .filter(|k| k.treatment != Treatment::Honoured)
        .count();
    assert_eq!(s.warnings.len(), unread);
    let s = &s.sessions[0];
    assert_eq!(s.logon_timeout, 7);
    assert!(!s.check_comp_id && !s.use_data_dictionary);
    assert!(!s.validation.check_latency);
    assert!(!s.socket_nodelay && !s.socket_reuse_address);
    assert!(!s.persist_messages && !s.send_redundant_resend_requests);
    assert!(s.tls.enabled);
    assert_eq!(s.tls.verify_level, Some(super::tls::VerifyLevel::Require));
    assert_eq!(
        s.tls.protocols.map(|(p, _)| p),
        Some(super::tls::Protocols::TLSV1_3)
    );
    assert_eq!(s.tls.server_certificate_file.as_deref(), Some("7"));
    assert_eq!(s.username.as_deref(), Some("trader1"));
    assert_eq!(s.password.as_deref(), Some("s3cret"));
    assert_eq!(
        s.screen_log,
        crate::settings::ScreenLog {
            incoming: true,
            outgoing: true,
            events: false,
            heartbeats: false,
        }
    );
    assert_eq!(s.socket_accept_address.as_deref(), Some("127.0.0.1"));
    assert_eq!(s.allowed_remote_addresses, ["127.0.0.1"]);
    assert_eq!(s.socket_send_buffer_size, Some(7));
    assert!(!s.validate_length_and_checksum && !s.validate_checksum);
    assert_eq!(s.store_durability(), crate::store::Durability::Fsync);
    assert_eq!(
        s.file_log,
        Some(crate::file_log::FileLogSettings {
            path: "log".into(),
            backup_path: Some("log/old".into()),
            heartbeats: false,
        })
    );
}

const INI: &str = "[SESSION]\nConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=A\nTargetCompID=B\nHeartBtInt=30\nSocketConnectHost=h0\nSocketConnectPort=1000\n";

/// `SocketConnectHost<n>`/`SocketConnectPort<n>` with their source
/// addresses, in order; numbers must run 1, 2, 3... and come in pairs.
#[test]
fn an_initiators_targets_are_read_in_order() {
    let s = Settings::parse(&format!(
        "{INI}SocketLocalHost=10.0.0.9\nSocketConnectHost2=h2\nSocketConnectPort2=1002\n\
         SocketConnectHost1=h1\nSocketConnectPort1=1001\nSocketConnectSourcePort1=7001\n\
         HostSelectionPolicy=PRIORITY\n"
    ))
    .unwrap();
    let s = &s.sessions[0];
    let t: Vec<(&str, u16, Option<&str>, Option<u16>)> = s
        .connect_targets
        .iter()
        .map(|t| {
            (
                t.host.as_str(),
                t.port,
                t.source_host.as_deref(),
                t.source_port,
            )
        })
        .collect();
    assert_eq!(
        t,
        [
            ("h0", 1000, Some("10.0.0.9"), None),
            ("h1", 1001, None, Some(7001)),
            ("h2", 1002, None, None)
        ]
    );
    assert_eq!(
        s.host_selection,
        HostSelection::Priority {
            start_over_secs: 120
        }
    );
    for (extra, why) in [
        (
            "SocketConnectHost2=h2\nSocketConnectPort2=2\n",
            "line 9: SocketConnectHost<n> and SocketConnectPort<n> must be numbered 1, 2, 3... without a gap",
        ),
        (
            "SocketConnectHost1=h1\n",
            "line 1: [SESSION] has no SocketConnectPort1",
        ),
        (
            "HostSelectionPolicy=RANDOM\n",
            "line 9: bad value \"RANDOM\" for HostSelectionPolicy: expected PRIORITY (leave it out to try the hosts in turn)",
        ),
        (
            "SocketConnectSourceHost=a\nSocketLocalHost=b\n",
            "line 1: SocketConnectSourceHost and SocketLocalHost disagree",
        ),
        (
            "SocketSendBufferSize=4294967295\n",
            "line 9: bad value \"4294967295\" for SocketSendBufferSize: at most 2147483647 bytes",
        ),
    ] {
        assert_eq!(err(&format!("{INI}{extra}")), why, "{extra}");
    }
}

/// One listener serves a port's acceptor sessions: they must agree on
/// its address and buffers.
#[test]
fn acceptor_sessions_of_one_port_agree_on_its_socket() {
    let two = |a: &str, b: &str| format!("{ACC}{a}\n{ACC}SessionQualifier=2\n{b}\n");
    assert!(Settings::parse(&two("SocketAcceptAddress=h", "SocketAcceptAddress=h")).is_ok());
    for (a, b) in [
        ("SocketAcceptAddress=h", ""),
        ("SocketSendBufferSize=1000", "SocketSendBufferSize=2000"),
        ("", "SocketReceiveBufferSize=1000"),
        ("SocketUseSSL=Y", ""),
        ("ServerCertificateFile=a.pem", "ServerCertificateFile=b.pem"),
    ] {
        assert_eq!(
            err(&two(a, b)),
            "line 8: the acceptor sessions of one SocketAcceptPort must agree on \
             SocketAcceptAddress, SocketSendBufferSize, SocketReceiveBufferSize and their TLS \
             keys",
            "{a} / {b}"
        );
    }
    // 0 is the system's size, as when unset.
    assert!(Settings::parse(&two("SocketSendBufferSize=0", "")).is_ok());
}

/// Weekly sessions, logon windows and the rules QuickFIX's SessionFactory
/// enforces between them, with its texts.
#[test]
fn session_days_and_logon_windows_are_read_and_checked() {
    let week = "StartTime=08:00:00\nEndTime=17:00:00\nStartDay=mo\nEndDay=Friday\n";
    let s = Settings::parse(&format!(
        "{ACC}{week}LogonTime=09:00:00\nLogonDay=tu\nUseLocalTime=Y\nRefreshOnLogon=Y\n"
    ))
    .unwrap();
    let s = &s.sessions[0];
    assert_eq!((s.start_day, s.end_day), (Weekday::new(2), Weekday::new(6)));
    assert_eq!(
        (s.logon_time, s.logout_time),
        (Some(TimeOfDay(9 * 3600)), None)
    );
    assert_eq!((s.logon_day, s.logout_day), (Weekday::new(3), None));
    assert!(s.use_local_time && s.refresh_on_logon);
    // The windows the session runs by (in UTC without UseLocalTime):
    // Monday 2026-11-23 12:00 is in the week but before Tuesday's 09:00
    // logon time; Saturday is in neither.
    let s = Settings::parse(&format!("{ACC}{week}LogonTime=09:00:00\nLogonDay=tu\n")).unwrap();
    let s = &s.sessions[0];
    let (session, logon) = (s.session_window().unwrap(), s.logon_window().unwrap());
    let monday_noon = 1_795_435_200;
    for (at, in_session, in_logon) in [
        (monday_noon, true, false),
        (monday_noon + 86_400 - 3 * 3600 - 1, true, false),
        (monday_noon + 86_400 - 3 * 3600, true, true),
        (monday_noon + 4 * 86_400 + 5 * 3600, true, true),
        (monday_noon + 4 * 86_400 + 5 * 3600 + 1, false, false),
        (monday_noon + 5 * 86_400, false, false),
    ] {
        assert_eq!(
            (session.contains(at), logon.contains(at)),
            (in_session, in_logon),
            "{at}"
        );
    }
    assert_eq!(
        Settings::parse(ACC).unwrap().sessions[0].session_window(),
        None
    );
    for (extra, want) in [
        (
            "StartTime=08:00:00\nEndTime=17:00:00\nStartDay=mo\n",
            "line 1: StartDay used without EndDay",
        ),
        (
            "StartTime=08:00:00\nEndTime=17:00:00\nEndDay=mo\n",
            "line 1: EndDay used without StartDay",
        ),
        (
            "NonStopSession=Y\nStartTime=08:00:00\nEndTime=17:00:00\n",
            "line 1: NonStopSession used with StartTime/EndTime/StartDay/EndDay",
        ),
        (
            "StartTime=08:00:00\nEndTime=17:00:00\nLogonTime=07:59:59\n",
            "line 1: LogonTime must be between StartTime and EndTime",
        ),
        (
            "StartTime=22:00:00\nEndTime=06:00:00\nLogoutTime=12:00:00\n",
            "line 1: LogoutTime must be between StartTime and EndTime",
        ),
        // Saturday is outside a Monday-Friday week.
        (
            &format!("{week}LogonDay=sa\n"),
            "line 1: LogonTime must be between StartTime and EndTime",
        ),
        (
            "LogonTime=09:00:00\n",
            "line 1: LogonTime/LogoutTime/LogonDay/LogoutDay need StartTime and EndTime",
        ),
        (
            "StartTime=08:00:00\nEndTime=17:00:00\nLogonDay=mo\n",
            "line 1: LogonDay and LogoutDay go together (or with StartDay and EndDay)",
        ),
        (
            "StartDay=xx\n",
            "line 7: bad value \"xx\" for StartDay: expected a day (su, mo, tu, we, th, fr, sa)",
        ),
    ] {
        assert_eq!(err(&format!("{ACC}{extra}")), want, "{extra}");
    }
    // Inside an overnight window: 23:00 and 05:00 are; a NonStopSession
    // alone is the same as no hours.
    let ok = "StartTime=22:00:00\nEndTime=06:00:00\nLogonTime=23:00:00\nLogoutTime=05:00:00\n";
    assert!(Settings::parse(&format!("{ACC}{ok}")).is_ok());
    let s = Settings::parse(&format!("{ACC}NonStopSession=Y\n")).unwrap();
    assert_eq!(s.sessions[0].start_time, None);
}

/// TimestampPrecision overrides MillisecondsInTimeStamp, as in QuickFIX.
#[test]
fn timestamp_precision_is_read_as_quickfix_reads_it() {
    let p = |extra: &str| {
        Settings::parse(&format!("{ACC}{extra}")).map(|s| s.sessions[0].timestamp_precision)
    };
    assert_eq!(p("").unwrap(), None);
    assert_eq!(
        p("MillisecondsInTimeStamp=N\n").unwrap(),
        Some(TimePrecision::Seconds)
    );
    assert_eq!(
        p("MillisecondsInTimeStamp=Y\n").unwrap(),
        Some(TimePrecision::Millis)
    );
    assert_eq!(
        p("MillisecondsInTimeStamp=N\nTimestampPrecision=9\n").unwrap(),
        Some(TimePrecision::Nanos)
    );
    assert_eq!(
        err(&format!("{ACC}TimestampPrecision=4\n")),
        "line 7: bad value \"4\" for TimestampPrecision: expected 0, 3, 6 or 9"
    );
}

/// SocketNodelay defaults to on (QuickFIX's default is off; see the field).
#[test]
fn socket_nodelay_defaults_to_on() {
    let s = Settings::parse(FILE).unwrap();
    assert!(s.sessions.iter().all(|s| s.socket_nodelay));
}

#[test]
fn fuzz_body_over_seeds() {
    crate::fuzzing::settings_text(FILE.as_bytes());
    for cut in 0..FILE.len() {
        crate::fuzzing::settings_text(&FILE.as_bytes()[..cut]);
    }
    crate::fuzzing::settings_text(b"[SESSION]\n\xff\xfe=1\n");
}

#[test]
fn the_screen_log_shows_what_its_keys_ask() {
    use crate::settings::ScreenLog;
    let heartbeat = b"8=FIX.4.4\x019=5\x0135=0\x0110=000\x01";
    // An order whose data field holds a heartbeat's bytes is still an order.
    let order = b"8=FIX.4.4\x019=5\x0135=D\x0196=\x0135=0\x01\x0110=000\x01";
    let default = ScreenLog::default();
    assert!(default.events && !default.shows(true, order) && !default.shows(false, order));
    let incoming = ScreenLog {
        incoming: true,
        heartbeats: false,
        ..default
    };
    assert!(incoming.shows(true, order) && !incoming.shows(false, order));
    assert!(!incoming.shows(true, heartbeat));
    let all = ScreenLog {
        incoming: true,
        outgoing: true,
        ..default
    };
    assert!(all.shows(true, heartbeat) && all.shows(false, heartbeat));
}

#[test]
fn only_a_default_file_log_path_gives_the_global_log() {
    let session = INI;
    let s = Settings::parse(&format!("[DEFAULT]\nFileLogPath=log\n{session}")).unwrap();
    let global = s.global_log.expect("a GLOBAL log in log/");
    assert_eq!(global.path, std::path::Path::new("log"));
    assert_eq!(s.sessions[0].file_log.as_ref().unwrap().path, global.path);
    let s = Settings::parse(&format!("{session}FileLogPath=log\n")).unwrap();
    assert!(s.global_log.is_none() && s.sessions[0].file_log.is_some());
}

#[test]
fn time_zone_names_the_clock_of_the_session_times() {
    let with = |keys: &str| Settings::parse(&format!("{INI}StartTime=09:30:00\n{keys}"));
    // 13:45 UTC on a November Monday is 08:45 in New York: outside.
    let at = 1_795_392_000 + 13 * 3600 + 45 * 60;
    let s = with("EndTime=16:00:00\nTimeZone=America/New_York\n").unwrap();
    assert!(!s.sessions[0].session_window().unwrap().contains(at));
    assert!(
        with("EndTime=16:00:00\n").unwrap().sessions[0]
            .session_window()
            .unwrap()
            .contains(at)
    );
    // QuickFIX/J's other spelling: the zone after the time.
    let s = with("EndTime=16:00:00 America/New_York\n").unwrap();
    assert_eq!(
        s.sessions[0].time_zone,
        TimeZone::get("America/New_York").ok()
    );
    let e = with("EndTime=16:00:00\nTimeZone=Mars/Olympus\n").unwrap_err();
    assert!(e.to_string().contains("TimeZone"), "{e}");
    assert!(e.to_string().contains("Mars/Olympus"), "{e}");
    let e = with("EndTime=16:00:00 Europe/London\nTimeZone=America/New_York\n").unwrap_err();
    assert!(e.to_string().contains("different time zones"), "{e}");
    let e = with("EndTime=16:00:00\nTimeZone=UTC\nUseLocalTime=Y\n").unwrap_err();
    assert!(e.to_string().contains("UseLocalTime"), "{e}");
}

/// QuickFIX's SSLProtocol grammar: a bare word replaces the set, `+`
/// adds, `-` removes, `all` is every version; an unknown word is refused
/// with its line, as is a CertificateVerifyLevel outside 0-3.
#[test]
fn tls_protocol_words_and_verify_levels_read_as_quickfix_reads_them() {
    use super::tls::Protocols;
    let p = |t: &str| Protocols::parse(t);
    assert_eq!(p("TLSv1_2"), Some(Protocols::TLSV1_2));
    let modern = p("all -SSLv2 -SSLv3 -tlsv1 -TLSv1_1").unwrap();
    assert!(modern.contains(Protocols::TLSV1_2) && modern.contains(Protocols::TLSV1_3));
    assert!(!modern.contains(Protocols::TLSV1) && !modern.contains(Protocols::SSLV3));
    let d = Protocols::quickfix_default();
    assert!(d.contains(Protocols::SSLV3) && !d.contains(Protocols::SSLV2));
    assert_eq!(p("TLSv1 +TLSv1_1"), p("-all +TLSv1 +TLSv1_1"));
    assert_eq!(p("TLSv2"), None);
    assert_eq!(p("+"), None);
    assert_eq!(
        err(&format!("{INI}SSLProtocol=all -QUIC\n")),
        "line 9: bad value \"all -QUIC\" for SSLProtocol: expected words such as all, -SSLv3, \
         +TLSv1_2 (SSLv2, SSLv3, TLSv1, TLSv1_1, TLSv1_2, TLSv1_3, all)"
    );
    assert_eq!(
        err(&format!("{INI}CertificateVerifyLevel=4\n")),
        "line 9: bad value \"4\" for CertificateVerifyLevel: expected 0, 1, 2 or 3"
    );
}

/// Any PostgreSQLStore key chooses the database store, the others taking
/// QuickFIX's defaults; the log's keys likewise, with its table names
/// checked (they go into SQL text); FileStorePath beside the store's keys
/// is refused.
#[test]
fn postgresql_keys_choose_the_database_store_and_log() {
    use crate::settings::{PostgresLogSettings, PostgresSettings};
    let s = Settings::parse(ACC).unwrap();
    assert!(s.sessions[0].postgres_store.is_none() && s.sessions[0].postgres_log.is_none());
    let s = Settings::parse(&format!(
        "{ACC}PostgreSQLStoreHost=db1\nPostgreSQLStorePort=0\nPostgreSQLLogEventTable=fix.events\n"
    ))
    .unwrap();
    let s = &s.sessions[0];
    assert_eq!(
        s.postgres_store,
        Some(PostgresSettings {
            hosts: vec!["db1".into()],
            ..PostgresSettings::default()
        })
    );
    assert_eq!(
        s.postgres_store.as_ref().map(|p| (
            &*p.database,
            &*p.user,
            p.addresses().collect::<Vec<_>>()
        )),
        Some(("quickfix", "postgres", vec![("db1", 5432)]))
    );
    assert_eq!(
        s.postgres_log,
        Some(PostgresLogSettings {
            event_table: "fix.events".into(),
            ..PostgresLogSettings::default()
        })
    );
    let s = Settings::parse(&format!("{ACC}PostgreSQLStorePort=6543\n")).unwrap();
    assert_eq!(
        s.sessions[0].postgres_store.as_ref().unwrap().ports,
        vec![6543]
    );
    // libpq's lists: a port per host, or one for all; and perfkit's own
    // target_session_attrs.
    let pg = |text: &str| {
        Settings::parse(&format!("{ACC}{text}")).map(|s| s.sessions[0].postgres_store.clone())
    };
    let two = pg(
        "PostgreSQLStoreHost=db1, db2\nPostgreSQLStorePort=5432,6543\n\
                  PerfkitPostgreSQLStoreTargetSessionAttrs=read-write\n",
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        two.addresses().collect::<Vec<_>>(),
        [("db1", 5432), ("db2", 6543)]
    );
    assert_eq!(two.target_session_attrs, TargetSessionAttrs::ReadWrite);
    let one_port = pg("PostgreSQLStoreHost=db1,db2\nPostgreSQLStorePort=7000\n")
        .unwrap()
        .unwrap();
    assert_eq!(
        one_port.addresses().collect::<Vec<_>>(),
        [("db1", 7000), ("db2", 7000)]
    );
    // Made by hand with too few ports: the default, not a panic.
    let by_hand = PostgresSettings {
        hosts: vec!["a".into(), "b".into(), "c".into()],
        ports: vec![1, 2],
        ..PostgresSettings::default()
    };
    assert_eq!(
        by_hand.addresses().collect::<Vec<_>>(),
        [("a", 1), ("b", 2), ("c", 5432)]
    );
    for bad in [
        "PostgreSQLStoreHost=db1,db2\nPostgreSQLStorePort=1,2,3\n",
        "PostgreSQLStoreHost=db1,,db2\n",
        "PostgreSQLStorePort=5432,x\n",
        "PerfkitPostgreSQLStoreTargetSessionAttrs=primary\n",
        "PostgreSQLStoreHost=db\nPerfkitSessionLeaseTimeout=0\n",
    ] {
        assert!(pg(bad).is_err(), "{bad:?} accepted");
    }
    let lease = Settings::parse(&format!(
        "{ACC}PostgreSQLStoreHost=db\nPerfkitSessionLeaseTimeout=4\n"
    ))
    .unwrap();
    assert_eq!(lease.sessions[0].lease_timeout, Some(4));
    let e = |text: &str| Settings::parse(text).unwrap_err().to_string();
    assert_eq!(
        e(&format!(
            "{ACC}PostgreSQLLogIncomingTable=log; DROP TABLE x\n"
        )),
        "line 7: bad value \"log; DROP TABLE x\" for PostgreSQLLogIncomingTable: expected a \
         table name (letters, digits and _, optionally schema.table)"
    );
    assert!(e(&format!("{ACC}PostgreSQLStorePort=70000\n")).contains("PostgreSQLStorePort"));
    assert_eq!(
        e(&format!(
            "{ACC}FileStorePath=s\nPostgreSQLStoreDatabase=fix\n"
        )),
        "line 1: FileStorePath and PostgreSQLStore* keys both choose the session's store; keep one"
    );
}

/// Two sessions whose QuickFIX file names coincide are refused, naming
/// both sections, for the store and for the logs; apart (another
/// directory or a qualifier) they are not.
#[test]
fn sessions_sharing_files_are_refused_naming_both() {
    let two = |first: &str, second: &str, extra: &str| {
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort=1\nBeginString=FIX.4.4\n{extra}\n\
             [SESSION]\n{first}\n[SESSION]\n{second}\n"
        )
    };
    let store = "FileStorePath=store";
    let e = err(&two(
        "SenderCompID=ACC-X\nTargetCompID=Y",
        "SenderCompID=ACC\nTargetCompID=X-Y",
        store,
    ));
    assert!(
        e.starts_with("line 9: session FIX.4.4:ACC->X-Y's store files (")
            && e.contains(
                "store/FIX.4.4-ACC-X-Y.*) would be session FIX.4.4:ACC-X->Y's too (line 6)"
            )
            && e.contains("another FileStorePath or a SessionQualifier"),
        "{e}"
    );
    // A qualifier on one side, the same name through a CompID on the
    // other; and the log files alone.
    let e = err(&two(
        "SenderCompID=ACC\nTargetCompID=BANK\nSessionQualifier=UAT",
        "SenderCompID=ACC\nTargetCompID=BANK-UAT",
        store,
    ));
    assert!(e.contains("FIX.4.4-ACC-BANK-UAT.*"), "{e}");
    let e = err(&two(
        "SenderCompID=ACC-X\nTargetCompID=Y",
        "SenderCompID=ACC\nTargetCompID=X-Y",
        "FileLogPath=logs",
    ));
    assert!(
        e.contains("log files") && e.contains("another FileLogPath"),
        "{e}"
    );
    // `./store` and `store/` are the same directory.
    let e = err(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort=1\nBeginString=FIX.4.4\n\n\
         [SESSION]\nSenderCompID=ACC-X\nTargetCompID=Y\nFileStorePath=./store\n\
         [SESSION]\nSenderCompID=ACC\nTargetCompID=X-Y\nFileStorePath=store/\n",
    );
    assert!(e.contains("would be session"), "{e}");
    // Apart: another directory, or no files at all.
    for ok in [
        two(
            "SenderCompID=ACC-X\nTargetCompID=Y\nFileStorePath=a",
            "SenderCompID=ACC\nTargetCompID=X-Y\nFileStorePath=b",
            "",
        ),
        two(
            "SenderCompID=ACC-X\nTargetCompID=Y",
            "SenderCompID=ACC\nTargetCompID=X-Y",
            "",
        ),
        two(
            "SenderCompID=ACC\nTargetCompID=BANK\nSessionQualifier=UAT",
            "SenderCompID=ACC\nTargetCompID=BANK",
            store,
        ),
    ] {
        Settings::parse(&ok).unwrap_or_else(|e| panic!("{e}\n{ok}"));
    }
}

/// CompIDs and qualifiers that name files may not lead out of the
/// directory or hide what they are; without files they are left alone,
/// and a template's `*` waits for the Logon's CompID.
#[test]
fn comp_ids_that_cannot_name_files_are_refused() {
    for (line, at, key, why) in [
        ("SenderCompID=A/B", 6, "SenderCompID", "'/' or '\\'"),
        ("TargetCompID=..", 7, "TargetCompID", "'..'"),
        (
            "TargetCompID=B\u{202E}gpj",
            7,
            "TargetCompID",
            "bidirectional",
        ),
        (
            "SessionQualifier=Q\u{2066}",
            8,
            "SessionQualifier",
            "bidirectional",
        ),
        ("SessionQualifier=a..b", 8, "SessionQualifier", "'..'"),
    ] {
        let base = "[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSocketAcceptPort=1\n\
                    FileStorePath=store\n";
        let text = if line.starts_with("SenderCompID") {
            format!("{base}{line}\nTargetCompID=B\n")
        } else if line.starts_with("TargetCompID") {
            format!("{base}SenderCompID=A\n{line}\n")
        } else {
            format!("{base}SenderCompID=A\nTargetCompID=B\n{line}\n")
        };
        let e = err(&text);
        assert!(
            e.starts_with(&format!("line {at}: bad value")) && e.contains(key) && e.contains(why),
            "{line}: {e}"
        );
        // No files, nothing to name.
        let no_files = text.replace("FileStorePath=store\n", "");
        Settings::parse(&no_files).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
    let template = "[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSocketAcceptPort=1\n\
                    FileLogPath=logs\nSenderCompID=A\nTargetCompID=*\nAcceptorTemplate=Y\n";
    Settings::parse(template).unwrap();
}

/// Numbers whose meaning makes a session unusable are refused with
/// their line; what QuickFIX takes stays taken.
#[test]
fn deadly_numbers_are_refused() {
    let init = "[SESSION]\nConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=A\n\
                TargetCompID=B\nSocketConnectHost=h\nSocketConnectPort=1\n";
    for (extra, want) in [
        (
            format!("{ACC}LogonTimeout=0\n"),
            "line 7: bad value \"0\" for LogonTimeout: must be at least 1 second",
        ),
        (
            format!("{init}HeartBtInt=30\nLogonTimeout=0\n"),
            "line 9: bad value \"0\" for LogonTimeout",
        ),
        (
            format!("{init}HeartBtInt=0\n"),
            "line 8: bad value \"0\" for HeartBtInt: Heartbeat must be greater than zero",
        ),
        (
            format!("{ACC}MaxLatency=0\n"),
            "line 7: bad value \"0\" for MaxLatency: must be at least 1 second",
        ),
    ] {
        let e = err(&extra);
        assert!(e.starts_with(want), "{e}");
    }
    for ok in [
        format!("{ACC}LogonTimeout=1\n"),
        format!("{ACC}MaxLatency=0\nCheckLatency=N\n"),
        format!("{ACC}HeartBtInt=0\n"),
        format!("{ACC}LogoutTimeout=0\n"),
        format!("{init}HeartBtInt=30\nReconnectInterval=0\n"),
    ] {
        Settings::parse(&ok).unwrap_or_else(|e| panic!("{e}\n{ok}"));
    }
}

#[test]
fn a_memory_store_window_is_read_and_bounded() {
    let s = Settings::parse(&format!("{ACC}PerfkitMemoryStoreWindow=4096\n")).unwrap();
    assert_eq!(s.sessions[0].memory_store_window, Some(4096));
    assert_eq!(
        Settings::parse(ACC).unwrap().sessions[0].memory_store_window,
        None
    );
    for (value, why) in [
        (
            "0",
            "must be 1 to 1048576 messages (PersistMessages=N keeps none)",
        ),
        (
            "1048577",
            "must be 1 to 1048576 messages (PersistMessages=N keeps none)",
        ),
        ("many", "expected a non-negative integer"),
    ] {
        assert_eq!(
            err(&format!("{ACC}PerfkitMemoryStoreWindow={value}\n")),
            format!("line 7: bad value \"{value}\" for PerfkitMemoryStoreWindow: {why}")
        );
    }
    assert!(Settings::parse(&format!("{ACC}PerfkitMemoryStoreWindow=1048576\n")).is_ok());
}

#[test]
fn a_cpu_affinity_is_read_as_a_list_of_cores_per_session_or_from_default() {
    let s = Settings::parse(&format!("{ACC}PerfkitCpuAffinity=0-2,5\n")).unwrap();
    let cores = s.sessions[0].cpu_affinity.as_ref().map(|c| c.cores());
    assert_eq!(cores, Some(&[0, 1, 2, 5][..]));
    assert_eq!(Settings::parse(ACC).unwrap().sessions[0].cpu_affinity, None);
    let default = ACC.replacen("[SESSION]", "[DEFAULT]\nPerfkitCpuAffinity=1\n[SESSION]", 1);
    let s = Settings::parse(&default).unwrap();
    assert_eq!(
        s.sessions[0].cpu_affinity.as_ref().map(|c| c.cores()),
        Some(&[1][..])
    );
    for (value, why) in [
        ("", "expected core numbers or ranges, such as 2,3 or 0-3"),
        ("two", "expected core numbers or ranges, such as 2,3 or 0-3"),
        (
            "1,,2",
            "expected core numbers or ranges, such as 2,3 or 0-3",
        ),
        ("3-1", "a range of cores runs upwards, such as 0-3"),
        ("4096", "a core number is below 1024"),
    ] {
        assert_eq!(
            err(&format!("{ACC}PerfkitCpuAffinity={value}\n")),
            format!("line 7: bad value \"{value}\" for PerfkitCpuAffinity: {why}")
        );
    }
}
