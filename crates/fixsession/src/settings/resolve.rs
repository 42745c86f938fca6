//! One `[SESSION]`'s entries, `[DEFAULT]`'s merged in, read into a typed
//! [`SessionSettings`]: required keys, Y/N flags, numbers, ports, days
//! and times, each refused with its key, value and line.

use super::tls::{Protocols, TlsSettings};
use super::{
    ApplVerId, BeginString, ConnectTarget, ConnectionType, Entries, HostSelection,
    PostgresLogSettings, PostgresSettings, ScreenLog, SessionSettings, SettingsError,
    TargetSessionAttrs, TimeOfDay, Validation, Weekday,
};
use crate::file_log::FileLogSettings;
use fixcore::affinity::{CoreSet, CoreSetError};
use fixcore::build::TimePrecision;
use jiff::tz::TimeZone;

/// Typed reads of one session's merged entries.
mod times;

use times::{Times, times};

struct Reader<'a> {
    header: usize,
    e: &'a Entries,
}

impl Reader<'_> {
    fn raw(&self, key: &str) -> Option<(&str, usize)> {
        self.e.get(key).map(|(v, l)| (v.as_str(), *l))
    }

    fn bad(key: &str, v: &str, line: usize, why: &'static str) -> SettingsError {
        SettingsError::BadValue {
            line,
            key: key.to_string(),
            value: v.to_string(),
            why,
        }
    }

    fn required(&self, key: &str) -> Result<(&str, usize), SettingsError> {
        match self.raw(key) {
            Some((v, l)) if !v.is_empty() => Ok((v, l)),
            Some((v, l)) => Err(Self::bad(key, v, l, "must not be empty")),
            None => Err(SettingsError::Missing {
                line: self.header,
                key: key.to_string(),
            }),
        }
    }

    /// `SocketUseSSL` and the certificate keys (see [`TlsSettings`]).
    fn tls(&self) -> Result<TlsSettings, SettingsError> {
        let verify_level = match self.raw("CertificateVerifyLevel") {
            None => None,
            Some((v, l)) => Some(TlsSettings::parse_verify_level(v).ok_or_else(|| {
                Self::bad("CertificateVerifyLevel", v, l, "expected 0, 1, 2 or 3")
            })?),
        };
        let protocols = match self.raw("SSLProtocol") {
            None => None,
            Some((v, l)) => Some((
                Protocols::parse(v).ok_or_else(|| {
                    Self::bad(
                        "SSLProtocol",
                        v,
                        l,
                        "expected words such as all, -SSLv3, +TLSv1_2 (SSLv2, SSLv3, TLSv1, \
                         TLSv1_1, TLSv1_2, TLSv1_3, all)",
                    )
                })?,
                l,
            )),
        };
        let lined = |key: &str| self.raw(key).map(|(v, l)| (v.to_string(), l));
        Ok(TlsSettings {
            enabled: self.bool("SocketUseSSL", false)?,
            server_certificate_file: self.string("ServerCertificateFile"),
            server_certificate_key_file: self.string("ServerCertificateKeyFile"),
            client_certificate_file: self.string("ClientCertificateFile"),
            client_certificate_key_file: self.string("ClientCertificateKeyFile"),
            ca_file: self.string("CertificationAuthoritiesFile"),
            ca_directory: self.string("CertificationAuthoritiesDirectory"),
            crl_file: self.string("CertificateRevocationListFile"),
            crl_directory: self.string("CertificateRevocationListDirectory"),
            verify_level,
            protocols,
            cipher_suite: lined("SSLCipherSuite"),
            tls13_cipher_suites: lined("TLSCipherSuites"),
        })
    }

    /// The PostgreSQL connection of the keys named `{prefix}Database`,
    /// `{prefix}User`... (`PostgreSQLStore`, `PostgreSQLLog`) and
    /// `Perfkit{prefix}TargetSessionAttrs`; `None` when none of them is
    /// set.
    fn postgres(&self, prefix: &str) -> Result<Option<PostgresSettings>, SettingsError> {
        let key = |k: &str| format!("{prefix}{k}");
        let names = ["Database", "User", "Password", "Host", "Port"].map(key);
        let attrs = format!("Perfkit{prefix}TargetSessionAttrs");
        if names.iter().chain([&attrs]).all(|k| self.raw(k).is_none()) {
            return Ok(None);
        }
        let d = PostgresSettings::default();
        let hosts = match self.raw(&names[3]) {
            None => d.hosts,
            Some((v, l)) => {
                let hosts: Vec<String> = v.split(',').map(|h| h.trim().to_string()).collect();
                if hosts.iter().any(String::is_empty) {
                    return Err(Self::bad(
                        &names[3],
                        v,
                        l,
                        "expected a host, or hosts separated by commas",
                    ));
                }
                hosts
            }
        };
        // QuickFIX reads the port as an int and passes 0 on as "the
        // default"; so does this, and libpq's list takes one per host.
        let ports = match self.raw(&names[4]) {
            None => Vec::new(),
            Some((v, l)) => {
                let bad = || {
                    Self::bad(
                        &names[4],
                        v,
                        l,
                        "expected a port 1-65535 (or 0: the default), or one per host \
                         separated by commas",
                    )
                };
                let ports = v
                    .split(',')
                    .map(|p| p.trim().parse::<u16>().map_err(|_| bad()))
                    .collect::<Result<Vec<u16>, _>>()?;
                match ports[..] {
                    [0] => Vec::new(),
                    [_] => ports,
                    _ if ports.len() != hosts.len() || ports.contains(&0) => return Err(bad()),
                    _ => ports,
                }
            }
        };
        let target_session_attrs = match self.raw(&attrs) {
            None | Some(("any", _)) => TargetSessionAttrs::Any,
            Some(("read-write", _)) => TargetSessionAttrs::ReadWrite,
            Some((v, l)) => return Err(Self::bad(&attrs, v, l, "expected any or read-write")),
        };
        Ok(Some(PostgresSettings {
            database: self.string(&names[0]).unwrap_or(d.database),
            user: self.string(&names[1]).unwrap_or(d.user),
            password: self.string(&names[2]).unwrap_or(d.password),
            hosts,
            ports,
            target_session_attrs,
        }))
    }

    /// The PostgreSQL log's settings; `None` when no `PostgreSQLLog*`
    /// key is set.
    fn postgres_log(&self) -> Result<Option<PostgresLogSettings>, SettingsError> {
        let tables = [
            "PostgreSQLLogIncomingTable",
            "PostgreSQLLogOutgoingTable",
            "PostgreSQLLogEventTable",
        ];
        let connect = self.postgres("PostgreSQLLog")?;
        if connect.is_none() && tables.iter().all(|k| self.raw(k).is_none()) {
            return Ok(None);
        }
        let d = PostgresLogSettings::default();
        // The names go into SQL text (a table cannot be a parameter), so
        // only plain identifiers, optionally schema-qualified, pass.
        let table = |key: &str, default: String| -> Result<String, SettingsError> {
            match self.raw(key) {
                None => Ok(default),
                Some((v, l)) => {
                    let plain = v.split('.').all(|part| {
                        part.chars()
                            .next()
                            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    });
                    if plain && v.split('.').count() <= 2 {
                        Ok(v.to_string())
                    } else {
                        Err(Self::bad(
                            key,
                            v,
                            l,
                            "expected a table name (letters, digits and _, optionally schema.table)",
                        ))
                    }
                }
            }
        };
        Ok(Some(PostgresLogSettings {
            connect: connect.unwrap_or_default(),
            incoming_table: table(tables[0], d.incoming_table)?,
            outgoing_table: table(tables[1], d.outgoing_table)?,
            event_table: table(tables[2], d.event_table)?,
        }))
    }

    fn string(&self, key: &str) -> Option<String> {
        self.raw(key).map(|(v, _)| v.to_string())
    }

    fn bool(&self, key: &str, default: bool) -> Result<bool, SettingsError> {
        match self.raw(key) {
            None => Ok(default),
            // QuickFIX's BoolConvertor: exactly one character, Y or N.
            Some(("Y", _)) => Ok(true),
            Some(("N", _)) => Ok(false),
            Some((v, l)) => Err(Self::bad(key, v, l, "expected Y or N")),
        }
    }

    fn uint(&self, key: &str) -> Result<Option<u32>, SettingsError> {
        match self.raw(key) {
            None => Ok(None),
            Some((v, l)) => {
                if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(Self::bad(key, v, l, "expected a non-negative integer"));
                }
                v.parse()
                    .map(Some)
                    .map_err(|_| Self::bad(key, v, l, "number too large"))
            }
        }
    }

    fn port(&self, key: &str) -> Result<Option<u16>, SettingsError> {
        match self.uint(key)? {
            None => Ok(None),
            Some(p) => match u16::try_from(p) {
                Ok(p) if p > 0 => Ok(Some(p)),
                _ => {
                    let (v, l) = self.raw(key).unwrap_or(("", self.header));
                    Err(Self::bad(key, v, l, "expected a port 1-65535"))
                }
            },
        }
    }

    /// A flag QuickFIX/C++ and QuickFIX/J spell differently: either name
    /// sets it, and both may only if they agree.
    fn bool_either(
        &self,
        ours: &'static str,
        theirs: &'static str,
        default: bool,
        disagree: &'static str,
    ) -> Result<bool, SettingsError> {
        let a = self.bool(ours, default)?;
        let b = self.bool(theirs, default)?;
        match (self.raw(ours).is_some(), self.raw(theirs).is_some()) {
            (true, true) if a != b => Err(SettingsError::Inconsistent {
                line: self.header,
                why: disagree,
            }),
            (false, true) => Ok(b),
            _ => Ok(a),
        }
    }

    /// QuickFIX/C++ reads MillisecondsInTimeStamp, then lets
    /// TimestampPrecision override it; QuickFIX/J spells the latter
    /// TimeStampPrecision, with names for values.
    fn timestamp_precision(&self) -> Result<Option<TimePrecision>, SettingsError> {
        let cpp = match self.raw("TimestampPrecision") {
            None => None,
            Some((v, l)) => Some(match v {
                "0" => TimePrecision::Seconds,
                "3" => TimePrecision::Millis,
                "6" => TimePrecision::Micros,
                "9" => TimePrecision::Nanos,
                _ => {
                    return Err(Self::bad(
                        "TimestampPrecision",
                        v,
                        l,
                        "expected 0, 3, 6 or 9",
                    ));
                }
            }),
        };
        let java = match self.raw("TimeStampPrecision") {
            None => None,
            Some((v, l)) => Some(match v {
                "SECONDS" => TimePrecision::Seconds,
                "MILLIS" => TimePrecision::Millis,
                "MICROS" => TimePrecision::Micros,
                "NANOS" => TimePrecision::Nanos,
                _ => {
                    return Err(Self::bad(
                        "TimeStampPrecision",
                        v,
                        l,
                        "expected SECONDS, MILLIS, MICROS or NANOS",
                    ));
                }
            }),
        };
        match (cpp, java) {
            (Some(a), Some(b)) if a != b => {
                return Err(SettingsError::Inconsistent {
                    line: self.header,
                    why: "TimestampPrecision and TimeStampPrecision disagree",
                });
            }
            (Some(p), _) | (None, Some(p)) => return Ok(Some(p)),
            (None, None) => {}
        }
        Ok(match self.raw("MillisecondsInTimeStamp") {
            None => None,
            Some(_) => Some(if self.bool("MillisecondsInTimeStamp", true)? {
                TimePrecision::Millis
            } else {
                TimePrecision::Seconds
            }),
        })
    }

    /// A string QuickFIX/C++ and QuickFIX/J name differently: either
    /// name, both only if they agree.
    fn string_either(
        &self,
        ours: &str,
        theirs: &str,
        disagree: &'static str,
    ) -> Result<Option<String>, SettingsError> {
        match (self.raw(ours), self.raw(theirs)) {
            (Some((a, _)), Some((b, _))) if a != b => Err(SettingsError::Inconsistent {
                line: self.header,
                why: disagree,
            }),
            (Some((v, _)), _) | (None, Some((v, _))) => Ok(Some(v.to_string())),
            (None, None) => Ok(None),
        }
    }

    /// A socket buffer size in bytes; 0 means the system's, as in
    /// QuickFIX.
    fn buffer_size(&self, key: &str) -> Result<Option<u32>, SettingsError> {
        let size = self.uint(key)?.filter(|&n| n > 0);
        match size {
            // setsockopt takes an int.
            Some(n) if n > i32::MAX as u32 => {
                let (v, l) = self.raw(key).unwrap_or(("", self.header));
                Err(Self::bad(key, v, l, "at most 2147483647 bytes"))
            }
            _ => Ok(size),
        }
    }

    /// A local port to connect from: 0 is the system's choice.
    fn source_port(&self, key: &str) -> Result<Option<u16>, SettingsError> {
        match self.uint(key)? {
            None | Some(0) => Ok(None),
            Some(p) => u16::try_from(p).map(Some).map_err(|_| {
                let (v, l) = self.raw(key).unwrap_or(("", self.header));
                Self::bad(key, v, l, "expected a port 0-65535")
            }),
        }
    }

    /// An initiator's targets: the unnumbered pair, then `<n>` = 1, 2...
    /// up to the first number neither host nor port has. A host without
    /// its port (or the reverse), or a number past a gap, is refused:
    /// such a target would never be tried.
    fn connect_targets(&self) -> Result<Vec<ConnectTarget>, SettingsError> {
        let mut out = Vec::new();
        let Some((host, _)) = self.raw("SocketConnectHost") else {
            return Ok(out);
        };
        let Some(port) = self.port("SocketConnectPort")? else {
            return Ok(out);
        };
        out.push(ConnectTarget {
            host: host.to_string(),
            port,
            source_host: self.string_either(
                "SocketConnectSourceHost",
                "SocketLocalHost",
                "SocketConnectSourceHost and SocketLocalHost disagree",
            )?,
            source_port: match (
                self.source_port("SocketConnectSourcePort")?,
                self.source_port("SocketLocalPort")?,
            ) {
                (Some(a), Some(b)) if a != b => {
                    return Err(SettingsError::Inconsistent {
                        line: self.header,
                        why: "SocketConnectSourcePort and SocketLocalPort disagree",
                    });
                }
                (a, b) => a.or(b),
            },
        });
        for n in 1.. {
            let host_key = format!("SocketConnectHost{n}");
            let port_key = format!("SocketConnectPort{n}");
            let (host, port) = match (self.raw(&host_key), self.port(&port_key)?) {
                (None, None) => break,
                (Some((h, _)), Some(p)) => (h.to_string(), p),
                (Some(_), None) => {
                    return Err(SettingsError::Missing {
                        line: self.header,
                        key: port_key,
                    });
                }
                (None, Some(_)) => {
                    return Err(SettingsError::Missing {
                        line: self.header,
                        key: host_key,
                    });
                }
            };
            out.push(ConnectTarget {
                host,
                port,
                source_host: self.string(&format!("SocketConnectSourceHost{n}")),
                source_port: self.source_port(&format!("SocketConnectSourcePort{n}"))?,
            });
        }
        let numbered = out.len() - 1;
        let stray = self.e.iter().find(|(k, _)| {
            [
                "SocketConnectHost",
                "SocketConnectPort",
                "SocketConnectSourceHost",
                "SocketConnectSourcePort",
            ]
            .iter()
            .any(|stem| {
                k.strip_prefix(stem)
                    .and_then(|n| n.parse::<usize>().ok())
                    .is_some_and(|n| n > numbered)
            })
        });
        if let Some((k, (_, l))) = stray {
            return Err(SettingsError::Inconsistent {
                line: *l,
                why: if k.contains("Source") {
                    "a SocketConnectSourceHost<n> or SocketConnectSourcePort<n> has no SocketConnectHost<n>"
                } else {
                    "SocketConnectHost<n> and SocketConnectPort<n> must be numbered 1, 2, 3... without a gap"
                },
            });
        }
        Ok(out)
    }

    fn host_selection(&self) -> Result<HostSelection, SettingsError> {
        let start_over_secs = self
            .uint("HostSelectionPolicyPriorityStartOverInterval")?
            .unwrap_or(120);
        match self.raw("HostSelectionPolicy") {
            None => Ok(HostSelection::InTurn),
            Some(("PRIORITY", _)) => Ok(HostSelection::Priority { start_over_secs }),
            Some((v, l)) => Err(Self::bad(
                "HostSelectionPolicy",
                v,
                l,
                "expected PRIORITY (leave it out to try the hosts in turn)",
            )),
        }
    }

    fn day(&self, key: &str) -> Result<Option<Weekday>, SettingsError> {
        match self.raw(key) {
            None => Ok(None),
            Some((v, l)) => Weekday::parse(v)
                .map(Some)
                .ok_or_else(|| Self::bad(key, v, l, "expected a day (su, mo, tu, we, th, fr, sa)")),
        }
    }

    /// A time of day that may name its zone after it, as QuickFIX/J
    /// allows on StartTime and EndTime (`09:00:00 America/New_York`).
    fn zoned_time(&self, key: &str) -> Result<Option<(TimeOfDay, Option<Zone>)>, SettingsError> {
        let Some((v, l)) = self.raw(key) else {
            return Ok(None);
        };
        let (time, zone) = match v.split_once(char::is_whitespace) {
            Some((t, z)) => (t, Some(zone(key, z.trim(), l)?)),
            None => (v, None),
        };
        let time =
            TimeOfDay::parse(time).ok_or_else(|| Self::bad(key, v, l, "expected HH:MM:SS"))?;
        Ok(Some((time, zone)))
    }

    fn time(&self, key: &str) -> Result<Option<TimeOfDay>, SettingsError> {
        match self.raw(key) {
            None => Ok(None),
            Some((v, l)) => TimeOfDay::parse(v)
                .map(Some)
                .ok_or_else(|| Self::bad(key, v, l, "expected HH:MM:SS")),
        }
    }
}

/// A time zone and the line that named it.
type Zone = (TimeZone, usize);

/// The IANA zone `name`, as `key` on `line` names it.
fn zone(key: &str, name: &str, line: usize) -> Result<Zone, SettingsError> {
    match TimeZone::get(name) {
        Ok(tz) => Ok((tz, line)),
        Err(_) => Err(Reader::bad(
            key,
            name,
            line,
            "not a time zone this machine knows (an IANA name such as America/New_York)",
        )),
    }
}

pub(super) fn resolve(header: usize, e: &Entries) -> Result<SessionSettings, SettingsError> {
    let r = Reader { header, e };
    let (connection_type, begin_string, default_appl_ver_id) = version(&r)?;
    let sender_comp_id = r.required("SenderCompID")?.0.to_string();
    let target_comp_id = r.required("TargetCompID")?.0.to_string();
    let socket_accept_port = r.port("SocketAcceptPort")?;
    let socket_connect_host = r.string("SocketConnectHost");
    let socket_connect_port = r.port("SocketConnectPort")?;
    let heart_bt_int = r.uint("HeartBtInt")?;
    let acceptor_template = r.bool("AcceptorTemplate", false)?;
    required_for_role(&r, connection_type, acceptor_template)?;
    let Times {
        start_time,
        end_time,
        start_day,
        end_day,
        logon_time,
        logout_time,
        logon_day,
        logout_day,
        use_local_time,
        time_zone,
    } = times(&r)?;
    let use_data_dictionary = r.bool("UseDataDictionary", true)?;
    let data_dictionary = r.string("DataDictionary");
    let transport_data_dictionary = r.string("TransportDataDictionary");
    let app_data_dictionary = r.string("AppDataDictionary").or_else(|| {
        default_appl_ver_id.and_then(|v| r.string(&format!("AppDataDictionary.{}", v.name())))
    });
    let validation = validation(&r)?;
    let s = SessionSettings {
        line: header,
        connection_type,
        begin_string,
        sender_comp_id,
        target_comp_id,
        session_qualifier: r.string("SessionQualifier").unwrap_or_default(),
        default_appl_ver_id,
        socket_accept_port,
        socket_connect_host,
        socket_connect_port,
        heart_bt_int,
        reconnect_interval: r.uint("ReconnectInterval")?.unwrap_or(30),
        use_data_dictionary,
        data_dictionary,
        transport_data_dictionary,
        app_data_dictionary,
        file_store_path: r.string("FileStorePath"),
        postgres_store: postgres_store(&r)?,
        lease_timeout: lease_timeout(&r)?,
        memory_store_window: r.uint("PerfkitMemoryStoreWindow")?,
        cpu_affinity: cpu_affinity(&r)?,
        postgres_log: r.postgres_log()?,
        reset_on_logon: r.bool("ResetOnLogon", false)?,
        reset_on_logout: r.bool("ResetOnLogout", false)?,
        reset_on_disconnect: r.bool("ResetOnDisconnect", false)?,
        start_time,
        end_time,
        start_day,
        end_day,
        logon_time,
        logout_time,
        logon_day,
        logout_day,
        use_local_time,
        time_zone,
        refresh_on_logon: r.bool("RefreshOnLogon", false)?,
        acceptor_template,
        timestamp_precision: r.timestamp_precision()?,
        validation,
        check_comp_id: r.bool("CheckCompID", true)?,
        enable_next_expected_msg_seq_num: r.bool_either(
            "EnableNextExpectedMsgSeqNum",
            "SendNextExpectedMsgSeqNum",
            false,
            "EnableNextExpectedMsgSeqNum and SendNextExpectedMsgSeqNum disagree",
        )?,
        logon_timeout: r.uint("LogonTimeout")?.unwrap_or(10),
        logout_timeout: r.uint("LogoutTimeout")?.unwrap_or(2),
        socket_nodelay: r.bool_either(
            "SocketNodelay",
            "SocketTcpNoDelay",
            true,
            "SocketNodelay and SocketTcpNoDelay disagree",
        )?,
        socket_reuse_address: r.bool("SocketReuseAddress", true)?,
        screen_log: screen_log(&r)?,
        file_log: file_log(&r)?,
        send_redundant_resend_requests: r.bool("SendRedundantResendRequests", false)?,
        persist_messages: r.bool("PersistMessages", true)?,
        username: r.string("Username"),
        password: r.string("Password"),
        socket_accept_address: r.string("SocketAcceptAddress"),
        socket_send_buffer_size: r.buffer_size("SocketSendBufferSize")?,
        socket_receive_buffer_size: r.buffer_size("SocketReceiveBufferSize")?,
        allowed_remote_addresses: allowed_remote_addresses(&r),
        validate_length_and_checksum: r.bool("ValidateLengthAndChecksum", true)?,
        validate_checksum: r.bool("ValidateChecksum", true)?,
        connect_targets: match connection_type {
            ConnectionType::Initiator => r.connect_targets()?,
            ConnectionType::Acceptor => Vec::new(),
        },
        host_selection: r.host_selection()?,
        file_store_sync: r.bool("FileStoreSync", false)?,
        tls: r.tls()?,
    };
    super::bounds::check(&s, e)?;
    Ok(s)
}

/// What the validating parser checks beyond the dictionary's messages.
fn validation(r: &Reader<'_>) -> Result<Validation, SettingsError> {
    let defaults = Validation::default();
    Ok(Validation {
        fields_out_of_order: r.bool("ValidateFieldsOutOfOrder", defaults.fields_out_of_order)?,
        fields_have_values: r.bool("ValidateFieldsHaveValues", defaults.fields_have_values)?,
        user_defined_fields: r.bool("ValidateUserDefinedFields", defaults.user_defined_fields)?,
        allow_unknown_msg_fields: r
            .bool("AllowUnknownMsgFields", defaults.allow_unknown_msg_fields)?,
        check_latency: r.bool("CheckLatency", defaults.check_latency)?,
        max_latency_secs: r.uint("MaxLatency")?.unwrap_or(defaults.max_latency_secs),
    })
}

/// The PostgreSQL store, if the `PostgreSQLStore*` keys choose it; with
/// `FileStorePath` too the choice is refused.
fn postgres_store(r: &Reader<'_>) -> Result<Option<PostgresSettings>, SettingsError> {
    match r.postgres("PostgreSQLStore")? {
        Some(_) if r.raw("FileStorePath").is_some() => Err(SettingsError::Inconsistent {
            line: r.header,
            why: "FileStorePath and PostgreSQLStore* keys both choose the session's \
                  store; keep one",
        }),
        pg => Ok(pg),
    }
}

/// `PerfkitSessionLeaseTimeout`: seconds, at least 1.
fn lease_timeout(r: &Reader<'_>) -> Result<Option<u32>, SettingsError> {
    match r.uint("PerfkitSessionLeaseTimeout")? {
        Some(0) => {
            let (v, l) = r
                .raw("PerfkitSessionLeaseTimeout")
                .unwrap_or(("0", r.header));
            Err(Reader::bad(
                "PerfkitSessionLeaseTimeout",
                v,
                l,
                "expected a number of seconds, at least 1",
            ))
        }
        t => Ok(t),
    }
}

/// `PerfkitCpuAffinity`: a list of cores (`2,3`, `0-3`).
fn cpu_affinity(r: &Reader<'_>) -> Result<Option<CoreSet>, SettingsError> {
    r.raw("PerfkitCpuAffinity")
        .map(|(v, l)| {
            v.parse()
                .map_err(|e: CoreSetError| Reader::bad("PerfkitCpuAffinity", v, l, e.reason()))
        })
        .transpose()
}

/// What the screen log shows.
fn screen_log(r: &Reader<'_>) -> Result<ScreenLog, SettingsError> {
    let shown = ScreenLog::default();
    Ok(ScreenLog {
        incoming: r.bool("ScreenLogShowIncoming", shown.incoming)?,
        outgoing: r.bool("ScreenLogShowOutgoing", shown.outgoing)?,
        events: r.bool("ScreenLogShowEvents", shown.events)?,
        heartbeats: r.bool("ScreenLogShowHeartBeats", shown.heartbeats)?,
    })
}

/// The session's own file log, if `FileLogPath` names one.
fn file_log(r: &Reader<'_>) -> Result<Option<FileLogSettings>, SettingsError> {
    match r.string("FileLogPath") {
        None => Ok(None),
        Some(path) => Ok(Some(FileLogSettings {
            path: path.into(),
            backup_path: r.string("FileLogBackupPath").map(Into::into),
            heartbeats: r.bool("FileLogHeartbeats", true)?,
        })),
    }
}

/// `AllowedRemoteAddresses`: a comma-separated list, blanks dropped.
fn allowed_remote_addresses(r: &Reader<'_>) -> Vec<String> {
    r.string("AllowedRemoteAddresses")
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The session's role and FIX version: ConnectionType, BeginString, and
/// DefaultApplVerID, which FIXT.1.1 needs and FIX.4.x has no use for.
fn version(
    r: &Reader<'_>,
) -> Result<(ConnectionType, BeginString, Option<ApplVerId>), SettingsError> {
    let (ct, l) = r.required("ConnectionType")?;
    let connection_type = match ct {
        "acceptor" => ConnectionType::Acceptor,
        "initiator" => ConnectionType::Initiator,
        _ => {
            return Err(Reader::bad(
                "ConnectionType",
                ct,
                l,
                "expected acceptor or initiator",
            ));
        }
    };
    let (bs, l) = r.required("BeginString")?;
    let begin_string = BeginString::from_wire(bs).ok_or_else(|| {
        Reader::bad(
            "BeginString",
            bs,
            l,
            "expected FIX.4.0 ... FIX.4.4 or FIXT.1.1",
        )
    })?;
    let default_appl_ver_id = match (begin_string, r.raw("DefaultApplVerID")) {
        (BeginString::Fixt11, None) => {
            return Err(SettingsError::Missing {
                line: r.header,
                key: "DefaultApplVerID".into(),
            });
        }
        (BeginString::Fixt11, Some((v, l))) => Some(ApplVerId::parse(v).ok_or_else(|| {
            Reader::bad(
                "DefaultApplVerID",
                v,
                l,
                "expected FIX.5.0, FIX.5.0SP1, FIX.5.0SP2 (or 7, 8, 9)",
            )
        })?),
        // FIX.4.x carries its application version in BeginString.
        (_, _) => None,
    };
    Ok((connection_type, begin_string, default_appl_ver_id))
}

/// The keys a role cannot go without: an acceptor's port; an initiator's
/// host, port and heartbeat (and no AcceptorTemplate).
fn required_for_role(
    r: &Reader<'_>,
    connection_type: ConnectionType,
    acceptor_template: bool,
) -> Result<(), SettingsError> {
    match connection_type {
        ConnectionType::Acceptor => {
            r.required("SocketAcceptPort")?;
        }
        ConnectionType::Initiator if acceptor_template => {
            return Err(SettingsError::Inconsistent {
                line: r.header,
                why: "AcceptorTemplate=Y makes acceptor sessions; this one is an initiator",
            });
        }
        ConnectionType::Initiator => {
            r.required("SocketConnectHost")?;
            r.required("SocketConnectPort")?;
            r.required("HeartBtInt")?;
        }
    }
    Ok(())
}
