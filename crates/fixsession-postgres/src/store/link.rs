//! A store's connection: the tables it needs, the statements it
//! prepares, and [`Link`], what the store's thread and its writer share.

use std::sync::{Arc, Mutex};

use fixsession::lease::Holding;
use fixsession::store::StoreError;
use postgres::types::Type;
use postgres::{Client, Config, Statement};

use super::{MAX_SEQ, MAX_SEQ_WIDE, round};
use crate::SessionKey;
use crate::conn::{self, KEY};
use crate::lease::LEASE_SCHEMA;

/// The sequence columns, as `table.column`.
const SEQ_COLUMNS: [(&str, &str); 3] = [
    ("sessions", "incoming_seqnum"),
    ("sessions", "outgoing_seqnum"),
    ("messages", "msgseqnum"),
];

/// QuickFIX's `sessions` and `messages` tables (its
/// `sessions_table.sql` and `messages_table.sql`), created when missing.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
  beginstring CHAR(8) NOT NULL,
  sendercompid VARCHAR(64) NOT NULL,
  targetcompid VARCHAR(64) NOT NULL,
  session_qualifier VARCHAR(64) NOT NULL,
  creation_time TIMESTAMP NOT NULL,
  incoming_seqnum INTEGER NOT NULL,
  outgoing_seqnum INTEGER NOT NULL,
  PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier)
);
CREATE TABLE IF NOT EXISTS messages (
  beginstring CHAR(8) NOT NULL,
  sendercompid VARCHAR(64) NOT NULL,
  targetcompid VARCHAR(64) NOT NULL,
  session_qualifier VARCHAR(64) NOT NULL,
  msgseqnum INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier, msgseqnum)
);";

/// An open connection and the statements prepared on it.
pub(super) struct Conn {
    pub(super) client: Client,
    /// The round's statement with plain inserts ([`round::flush_sql`]).
    pub(super) flush: Statement,
    /// The same, replacing messages stored already.
    pub(super) flush_upsert: Statement,
    pub(super) load: Statement,
    /// The largest number the tables' sequence columns hold.
    pub(super) max_seq: u64,
}

impl Conn {
    /// Connects, creates the tables when missing (on every new
    /// connection: the database may be a new one behind the same
    /// address), checks their sequence columns' types, and prepares the
    /// statements (`fenced`: writes carry the lease's epoch).
    pub(super) fn open(cfg: &Config, name: &str, fenced: bool) -> Result<Conn, StoreError> {
        let mut client = conn::connect(cfg, name)?;
        let ddl: &[&str] = if fenced {
            &[SCHEMA, LEASE_SCHEMA]
        } else {
            &[SCHEMA]
        };
        conn::create_tables(&mut client, ddl, name, "creating the tables")?;
        let mut prepare = |sql: &str| {
            client
                .prepare(sql)
                .map_err(|e| conn::classify(&e, name, "preparing a statement").0)
        };
        let mut max_seq = MAX_SEQ_WIDE;
        for (table, column) in SEQ_COLUMNS {
            let probe = prepare(&format!("SELECT {column} FROM {table} WHERE false"))?;
            let ty = probe.columns()[0].type_();
            let type_max = match *ty {
                Type::INT4 => MAX_SEQ,
                Type::INT8 | Type::NUMERIC => MAX_SEQ_WIDE,
                _ => {
                    return Err(StoreError::Backend {
                        store: name.to_string(),
                        why: format!(
                            "column {table}.{column} is of type {ty}; perfkit reads sequence \
                             numbers from INTEGER (QuickFIX 1.15.1), BIGINT or NUMERIC \
                             (QuickFIX 1.16 on) columns"
                        ),
                    });
                }
            };
            max_seq = max_seq.min(type_max);
        }
        let flush = prepare(&round::flush_sql(fenced, false))?;
        let flush_upsert = prepare(&round::flush_sql(fenced, true))?;
        let load = prepare(&format!(
            "SELECT msgseqnum::text, message FROM messages WHERE {KEY} \
             AND msgseqnum >= $5::int8 AND msgseqnum < $6::int8 ORDER BY msgseqnum"
        ))?;
        Ok(Conn {
            client,
            flush,
            flush_upsert,
            load,
            max_seq,
        })
    }
}

/// Who a store is and its connection: what its thread and its
/// background writer share.
pub(super) struct Link {
    /// `postgresql://user@host:port/db FIX.4.2:A->B`, for errors.
    pub(super) name: String,
    pub(super) cfg: Config,
    pub(super) key: SessionKey,
    /// The session's lease, when engines share the store: every write
    /// carries the epoch held, and fails when another engine has taken
    /// the lease over.
    pub(super) fence: Option<Arc<Holding>>,
    /// `None` after the connection was lost, until the next use opens
    /// one. Locked by one statement's user at a time: the writer's
    /// rounds and the store's reads take turns on it.
    pub(super) conn: Mutex<Option<Conn>>,
}

impl Link {
    /// Runs `f` on the connection, opening one first when there is none;
    /// a failure is classified, and a lost connection dropped. A
    /// connection kept from earlier that turns out lost (a standby's,
    /// idle for hours, that a server restart or a firewall ended) gets
    /// one more try on a new one at once: every statement here is
    /// idempotent (reads, upserts, absolute numbers), so running one
    /// twice, even after a commit whose answer was lost, changes nothing.
    pub(super) fn with_conn<T>(
        &self,
        doing: &str,
        f: impl Fn(&mut Conn, &Link) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut slot = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_some_and(|c| c.client.is_closed()) {
            *slot = None;
        }
        let mut reused = slot.is_some();
        loop {
            if slot.is_none() {
                *slot = Some(Conn::open(&self.cfg, &self.name, self.fence.is_some())?);
            }
            let c = slot.as_mut().expect("opened above");
            match f(c, self) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    let (err, drop) = conn::classify(&e, &self.name, doing);
                    if drop || c.client.is_closed() {
                        *slot = None;
                        if std::mem::take(&mut reused) {
                            continue;
                        }
                    }
                    return Err(err);
                }
            }
        }
    }

    pub(super) fn fenced(&self, why: String) -> StoreError {
        StoreError::Fenced {
            store: self.name.clone(),
            why,
        }
    }
}
