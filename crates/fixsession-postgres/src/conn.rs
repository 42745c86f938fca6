//! Connecting as QuickFIX's keys say, and telling a lost database from a
//! refusal.

use std::time::Duration;

use fixsession::settings::{PostgresSettings, TargetSessionAttrs};
use fixsession::store::StoreError;
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls};

use crate::SessionKey;

/// The four key columns as the first four parameters. `beginstring` is
/// `CHAR(8)`: compared as `bpchar`, so its padding does not matter and
/// the primary key's index serves the lookups.
pub(crate) const KEY: &str = "beginstring = $1::bpchar AND sendercompid = $2::varchar \
                   AND targetcompid = $3::varchar AND session_qualifier = $4::varchar";

/// The four parameters [`KEY`] compares.
pub(crate) fn key_params(key: &SessionKey) -> [&(dyn ToSql + Sync); 4] {
    [
        &key.begin_string,
        &key.sender_comp_id,
        &key.target_comp_id,
        &key.session_qualifier,
    ]
}

/// Any number will do, as long as every engine uses the same one: it
/// serialises the `CREATE TABLE IF NOT EXISTS` of engines starting
/// together on an empty database (each would otherwise race the other's
/// catalog rows).
const SCHEMA_LOCK: i64 = 0x7065_7266_6b69_7401;

/// Runs each of `ddl` (`CREATE TABLE IF NOT EXISTS ...`) in one
/// transaction under [`SCHEMA_LOCK`]; `store` and `doing` name a failure.
pub(crate) fn create_tables(
    client: &mut Client,
    ddl: &[&str],
    store: &str,
    doing: &str,
) -> Result<(), StoreError> {
    let made = (|| {
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])?;
        for d in ddl {
            tx.batch_execute(d)?;
        }
        tx.commit()
    })();
    made.map_err(|e| classify(&e, store, doing).0)
}

/// How long one connection attempt may take: a host that does not answer
/// must not hold a session's thread for long (the driver retries).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The client configuration of `s`.
pub(crate) fn config(s: &PostgresSettings) -> Config {
    let mut c = Config::new();
    for (host, port) in s.addresses() {
        c.host(host).port(port);
    }
    c.target_session_attrs(match s.target_session_attrs {
        TargetSessionAttrs::Any => postgres::config::TargetSessionAttrs::Any,
        TargetSessionAttrs::ReadWrite => postgres::config::TargetSessionAttrs::ReadWrite,
    })
    .dbname(&s.database)
    .user(&s.user)
    .application_name("perfkit")
    .connect_timeout(CONNECT_TIMEOUT)
    // A database host that vanishes without closing the connection
    // is noticed by the kernel within about a minute.
    .keepalives(true)
    .keepalives_idle(Duration::from_secs(30));
    if !s.password.is_empty() {
        c.password(&s.password);
    }
    c
}

/// `postgresql://user@host:port,host:port/database`, libpq's URI for the
/// connection, naming it in errors (never with the password).
pub(crate) fn name(s: &PostgresSettings) -> String {
    let hosts: Vec<String> = s.addresses().map(|(h, p)| format!("{h}:{p}")).collect();
    format!("postgresql://{}@{}/{}", s.user, hosts.join(","), s.database)
}

/// Opens a connection; failing to is always [`StoreError::Unavailable`]:
/// a server that is down or restarting is the common cause, and a wrong
/// password is reported the same way, every retry, in its own words.
pub(crate) fn connect(cfg: &Config, store: &str) -> Result<Client, StoreError> {
    cfg.connect(NoTls).map_err(|e| StoreError::Unavailable {
        store: store.to_string(),
        why: format!("connecting: {}", full(&e)),
    })
}

/// Whether `e` means the connection is gone or the server cannot serve
/// now, rather than that it refused what was asked.
pub(crate) fn is_lost(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        // No SQLSTATE: lost when the socket failed underneath (a
        // conversion error, say, is not).
        None => {
            let mut src = std::error::Error::source(e);
            while let Some(c) = src {
                if c.is::<std::io::Error>() {
                    return true;
                }
                src = c.source();
            }
            false
        }
        Some(code) => {
            let c = code.code();
            // Class 08: connection exception; 57P01-03: the server is
            // shutting down or starting; 53300: too many connections;
            // 40001/40P01: a serialization failure or deadlock, which
            // trying again resolves.
            c.starts_with("08")
                || matches!(c, "57P01" | "57P02" | "57P03" | "53300" | "40001" | "40P01")
        }
    }
}

/// `e` with its causes, one after another: the client's own text is
/// often only "db error" or "error communicating with the server".
pub(crate) fn full(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

/// Whether `e` is the server declining now what it may do later, the
/// connection staying good: a statement cancelled by
/// `statement_timeout` or `lock_timeout` (57014, 55P03), or a want of
/// resources (class 53: disk full, out of memory, too many
/// connections...).
pub(crate) fn is_passing(e: &postgres::Error) -> bool {
    e.code().is_some_and(|code| {
        let c = code.code();
        c == "57014" || c == "55P03" || c.starts_with("53")
    })
}

/// [`StoreError::Unavailable`] or [`StoreError::Backend`] for `e`, met
/// while `doing`; true in the second place when the connection should be
/// dropped (and a new one opened next time).
pub(crate) fn classify(e: &postgres::Error, store: &str, doing: &str) -> (StoreError, bool) {
    let why = format!("{doing}: {}", full(e));
    if is_passing(e) && !is_lost(e) {
        // The statement failed whole (one statement is one transaction):
        // trying it again later is all there is to do.
        return (
            StoreError::Unavailable {
                store: store.to_string(),
                why,
            },
            false,
        );
    }
    if is_lost(e) {
        (
            StoreError::Unavailable {
                store: store.to_string(),
                why,
            },
            true,
        )
    } else {
        (
            StoreError::Backend {
                store: store.to_string(),
                why,
            },
            false,
        )
    }
}
