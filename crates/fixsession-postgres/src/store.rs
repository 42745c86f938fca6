//! [`PostgresStore`]: the next sequence numbers in QuickFIX's `sessions`
//! table and every message sent in its `messages` table.
//!
//! The rows are QuickFIX's: `sessions` holds one row per session
//! (`incoming_seqnum` is the next number expected, `outgoing_seqnum` the
//! next to send, `creation_time` when the numbers last started at 1) and
//! `messages` one row per message sent, keyed by the session's four
//! columns and `msgseqnum`.
//!
//! The sequence columns are whatever type the tables were made with, as
//! shops make them with the scripts of the QuickFIX release they run:
//! `INTEGER` (QuickFIX 1.15.1's scripts, and the tables this store makes
//! when there are none), `BIGINT`, or `NUMERIC` (QuickFIX from 1.16 on,
//! whose sequence numbers are 64-bit). Numbers travel as `BIGINT` and the
//! database converts them to the column's type. The largest number the
//! store records ([`SessionStore::max_seq`]) follows the narrowest of the
//! three columns: 2^31 − 1 with any `INTEGER` column ([`MAX_SEQ`], also
//! the file store's), 2^63 − 1 otherwise ([`MAX_SEQ_WIDE`]; a `NUMERIC`
//! column could hold more, as QuickFIX's 64-bit unsigned numbers can, but
//! a session does not get there: past the store's largest number it
//! refuses to go on, as it does at the file store's). A number read back
//! that is above the store's largest (another engine's) is a typed error
//! naming its column, as is a column of any other type.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use fixsession::lease::{Holding, Standing};
use fixsession::settings::PostgresSettings;
use fixsession::store::{SessionStore, StoreError};
use postgres::types::Type;
use postgres::{Client, Config, Statement};

use crate::SessionKey;
use crate::conn::{self, KEY, key_params};
use crate::lease::LEASE_SCHEMA;

/// The largest sequence number the tables hold with `INTEGER` columns.
pub const MAX_SEQ: u64 = i32::MAX as u64;

/// The largest with `BIGINT` or `NUMERIC` columns only.
pub const MAX_SEQ_WIDE: u64 = i64::MAX as u64;

/// The sequence columns, as `table.column`.
const SEQ_COLUMNS: [(&str, &str); 3] = [
    ("sessions", "incoming_seqnum"),
    ("sessions", "outgoing_seqnum"),
    ("messages", "msgseqnum"),
];

/// How many messages a resend reads from the database at once: a resend
/// asks for numbers in order, so one query serves this many `load`s.
const READ_AHEAD: i64 = 256;

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

/// A round's flush: the messages (upserted, as QuickFIX's `set` replaces
/// a number stored again) and both numbers, in one statement, which
/// PostgreSQL runs as one transaction. The `UPDATE`'s row count says
/// whether the session's row is still there.
///
/// Fenced (see [`crate::lease`]), the statement first locks the session's
/// lease row for share, if it still holds epoch `$9`, and writes nothing
/// when it does not: a takeover raising the epoch waits for a write that
/// locked the row first, and a write that comes after it finds the new
/// epoch (PostgreSQL checks a row locked this way again in its newest
/// version). So the new holder's reading of the numbers follows every
/// write of the old holder's that landed, and none lands after it.
fn flush_sql(fenced: bool) -> String {
    let (lease, only) = if fenced {
        (
            format!(
                "l AS (SELECT 1 FROM perfkit_session_leases WHERE {KEY} AND epoch = $9::int8 \
                 FOR SHARE),"
            ),
            " AND EXISTS (SELECT 1 FROM l)",
        )
    } else {
        (String::new(), "")
    };
    format!(
        "WITH {lease} m AS (
           INSERT INTO messages (beginstring, sendercompid, targetcompid, session_qualifier,
                                 msgseqnum, message)
           SELECT $1::bpchar, $2::varchar, $3::varchar, $4::varchar, u.s, u.t
             FROM unnest($5::int8[], $6::text[]) AS u(s, t) WHERE true{only}
           ON CONFLICT (beginstring, sendercompid, targetcompid, session_qualifier, msgseqnum)
           DO UPDATE SET message = EXCLUDED.message
         )
         UPDATE sessions SET incoming_seqnum = $7::int8, outgoing_seqnum = $8::int8 \
         WHERE {KEY}{only}"
    )
}

/// An open connection and the statements prepared on it.
struct Conn {
    client: Client,
    flush: Statement,
    load: Statement,
    /// The largest number the tables' sequence columns hold.
    max_seq: u64,
}

impl Conn {
    /// Connects, creates the tables when missing (on every new
    /// connection: the database may be a new one behind the same
    /// address), checks their sequence columns' types, and prepares the
    /// statements (`fenced`: writes carry the lease's epoch).
    fn open(cfg: &Config, name: &str, fenced: bool) -> Result<Conn, StoreError> {
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
        let flush = prepare(&flush_sql(fenced))?;
        let load = prepare(&format!(
            "SELECT msgseqnum::text, message FROM messages WHERE {KEY} \
             AND msgseqnum >= $5::int8 AND msgseqnum < $6::int8 ORDER BY msgseqnum"
        ))?;
        Ok(Conn {
            client,
            flush,
            load,
            max_seq,
        })
    }
}

/// Whether the lease of `key` is still at `epoch`, locked for share
/// until the end of `c`'s transaction when it is.
fn holds(
    c: &mut impl postgres::GenericClient,
    key: &SessionKey,
    epoch: i64,
) -> Result<bool, postgres::Error> {
    let mut p = key_params(key).to_vec();
    p.push(&epoch);
    let row = c.query_opt(
        &format!("SELECT 1 FROM perfkit_session_leases WHERE {KEY} AND epoch = $5::int8 FOR SHARE"),
        &p,
    )?;
    Ok(row.is_some())
}

/// A sequence number as a column's text gives it (`INTEGER`, `BIGINT` or
/// `NUMERIC` alike), or why it is none: negative, zero, fractional, or
/// above `max`.
fn seq_of(text: &str, max: u64) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        Ok(n) if n > 0 => Err(format!(
            "{n}, above {max}, the largest sequence number this store records"
        )),
        _ => Err(format!("{text:?}, not a sequence number")),
    }
}

/// A session's store in PostgreSQL, in QuickFIX's tables (see the
/// [module docs](self)).
///
/// `save` and `set_seqs` only record in memory; [`SessionStore::flush`]
/// writes everything recorded since the last flush in one statement. When
/// that fails because the database is gone ([`StoreError::Unavailable`]),
/// nothing recorded is forgotten: the next flush opens a new connection
/// and writes it all. [`SessionStore::refresh`] reads the numbers again
/// (and forgets what was not flushed: it was never sent), which is how a
/// standby with `RefreshOnLogon=Y` takes over a session.
pub struct PostgresStore {
    /// `postgresql://user@host:port/db FIX.4.2:A->B`, for errors.
    name: String,
    cfg: Config,
    key: SessionKey,
    /// `None` after the connection was lost, until the next call opens
    /// one. In a `RefCell` because `load` takes `&self`.
    conn: RefCell<Option<Conn>>,
    sender: u64,
    target: u64,
    /// Messages saved since the last flush, in the order saved.
    pending: Vec<(i64, String)>,
    /// The largest number the tables hold, as the last connection found
    /// their columns.
    max_seq: u64,
    /// Whether the numbers changed since the last flush.
    seqs_dirty: bool,
    /// A reset not yet written: the next flush first deletes the
    /// session's messages and restarts its `creation_time`.
    reset_pending: bool,
    /// Messages read ahead for a resend.
    cache: RefCell<BTreeMap<u64, String>>,
    /// The session's lease, when engines share the store: every write
    /// carries the epoch held, and fails when another engine has taken
    /// the lease over.
    fence: Option<Arc<Holding>>,
    /// The epoch the numbers were last read under (0: none).
    read_at: u64,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("name", &self.name)
            .field("sender", &self.sender)
            .field("target", &self.target)
            .field("pending", &self.pending.len())
            .field("read_at", &self.read_at)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the database `db` names, creates QuickFIX's tables
    /// when missing and the session's row when it has none (numbers at
    /// 1), and reads its numbers.
    pub fn open(db: &PostgresSettings, key: SessionKey) -> Result<PostgresStore, StoreError> {
        PostgresStore::opened(db, key, None)
    }

    /// As [`open`](Self::open), for an engine that shares the database
    /// with others: the store writes only while `holding` holds the
    /// session's lease (a [`PostgresLease`](crate::PostgresLease)'s), in
    /// the same statement as each write, and says where it stands
    /// ([`SessionStore::standing`]). Its numbers are read again
    /// ([`SessionStore::refresh`]) once the lease is held.
    pub fn open_fenced(
        db: &PostgresSettings,
        key: SessionKey,
        holding: Arc<Holding>,
    ) -> Result<PostgresStore, StoreError> {
        PostgresStore::opened(db, key, Some(holding))
    }

    fn opened(
        db: &PostgresSettings,
        key: SessionKey,
        fence: Option<Arc<Holding>>,
    ) -> Result<PostgresStore, StoreError> {
        let name = format!("{} {}", conn::name(db), key.id());
        let mut store = PostgresStore {
            cfg: conn::config(db),
            name,
            key,
            conn: RefCell::new(None),
            sender: 1,
            target: 1,
            pending: Vec::new(),
            max_seq: MAX_SEQ,
            seqs_dirty: false,
            reset_pending: false,
            cache: RefCell::new(BTreeMap::new()),
            fence,
            read_at: 0,
        };
        store.read_seqs()?;
        Ok(store)
    }

    /// The session this store keeps.
    pub fn key(&self) -> &SessionKey {
        &self.key
    }

    /// How many messages wait for the next flush.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Runs `f` on the connection, opening one first when there is none;
    /// a failure is classified, and a lost connection dropped. A
    /// connection kept from earlier that turns out lost (a standby's,
    /// idle for hours, that a server restart or a firewall ended) gets
    /// one more try on a new one at once: every statement here is
    /// idempotent (reads, upserts, absolute numbers), so running one
    /// twice, even after a commit whose answer was lost, changes nothing.
    fn with_conn<T>(
        &self,
        doing: &str,
        f: impl Fn(&mut Conn, &PostgresStore) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut slot = self.conn.borrow_mut();
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

    /// Reads the session's numbers, making its row (at 1, 1) when it has
    /// none, as QuickFIX's store does when it opens.
    fn read_seqs(&mut self) -> Result<(), StoreError> {
        // The epoch before the reading: a takeover after it shows as a
        // mismatch at the next write, which then refuses.
        let epoch = self.fence.as_ref().and_then(|h| h.epoch()).unwrap_or(0);
        let (target, sender, max) = self.with_conn("reading the sequence numbers", |c, s| {
            let k = key_params(&s.key);
            c.client.execute(
                "INSERT INTO sessions (beginstring, sendercompid, targetcompid, \
                 session_qualifier, creation_time, incoming_seqnum, outgoing_seqnum) \
                 VALUES ($1::bpchar, $2::varchar, $3::varchar, $4::varchar, \
                 now() AT TIME ZONE 'UTC', 1, 1) ON CONFLICT DO NOTHING",
                &k,
            )?;
            let row = c.client.query_one(
                &format!(
                    "SELECT incoming_seqnum::text, outgoing_seqnum::text FROM sessions WHERE {KEY}"
                ),
                &k,
            )?;
            Ok((
                row.try_get::<_, String>(0)?,
                row.try_get::<_, String>(1)?,
                c.max_seq,
            ))
        })?;
        let number = |text: &str, column: &str| {
            seq_of(text, max).map_err(|why| StoreError::Backend {
                store: self.name.clone(),
                why: format!("sessions.{column} is {why}"),
            })
        };
        self.target = number(&target, "incoming_seqnum")?;
        self.sender = number(&sender, "outgoing_seqnum")?;
        self.max_seq = max;
        self.seqs_dirty = false;
        self.read_at = epoch;
        Ok(())
    }

    /// The epoch a write carries: the one the numbers were read under,
    /// while it is still held. `Ok(None)` for a store of one engine.
    fn write_epoch(&self) -> Result<Option<i64>, StoreError> {
        let Some(h) = &self.fence else {
            return Ok(None);
        };
        match h.epoch() {
            Some(e) if e == self.read_at => Ok(Some(e as i64)),
            Some(e) => Err(self.fenced(format!(
                "the numbers were read under epoch {} and the lease is held under epoch {e}: \
                 they must be read again first",
                self.read_at
            ))),
            None => Err(self.fenced(format!(
                "the lease read under epoch {} is not held",
                self.read_at
            ))),
        }
    }

    fn fenced(&self, why: String) -> StoreError {
        StoreError::Fenced {
            store: self.name.clone(),
            why,
        }
    }

    /// `seq` as a parameter for the sequence columns.
    fn column(&self, seq: u64) -> Result<i64, StoreError> {
        if seq > self.max_seq {
            return Err(StoreError::OutOfRange { seq });
        }
        i64::try_from(seq).map_err(|_| StoreError::OutOfRange { seq })
    }
}

impl SessionStore for PostgresStore {
    fn next_sender_seq(&self) -> u64 {
        self.sender
    }

    fn next_target_seq(&self) -> u64 {
        self.target
    }

    fn set_seqs(&mut self, sender: u64, target: u64) -> Result<(), StoreError> {
        self.column(sender)?;
        self.column(target)?;
        self.sender = sender;
        self.target = target;
        self.seqs_dirty = true;
        Ok(())
    }

    fn save(&mut self, seq: u64, msg: &[u8]) -> Result<(), StoreError> {
        let n = self.column(seq)?;
        // The column is TEXT, as QuickFIX made it: PostgreSQL keeps text
        // in the database's encoding, and FIX's bytes are ASCII but for
        // raw data fields.
        let text = std::str::from_utf8(msg).map_err(|e| StoreError::Backend {
            store: self.name.clone(),
            why: format!(
                "message {seq} is not UTF-8 (byte {}), which QuickFIX's TEXT column cannot hold",
                e.valid_up_to()
            ),
        })?;
        self.cache.get_mut().remove(&seq);
        self.pending.push((n, text.to_owned()));
        Ok(())
    }

    fn load(&self, seq: u64, out: &mut Vec<u8>) -> Result<bool, StoreError> {
        let Ok(n) = self.column(seq) else {
            return Ok(false);
        };
        // What is not flushed yet is the newest copy.
        if let Some((_, m)) = self.pending.iter().rev().find(|(s, _)| *s == n) {
            out.extend_from_slice(m.as_bytes());
            return Ok(true);
        }
        if self.reset_pending {
            // The database still holds what the reset forgot.
            return Ok(false);
        }
        if let Some(m) = self.cache.borrow_mut().remove(&seq) {
            out.extend_from_slice(m.as_bytes());
            return Ok(true);
        }
        let rows = self.with_conn("reading sent messages", |c, s| {
            let mut p = key_params(&s.key).to_vec();
            let end = n.saturating_add(READ_AHEAD);
            p.push(&n);
            p.push(&end);
            c.client.query(&c.load, &p)
        })?;
        let mut cache = self.cache.borrow_mut();
        cache.clear();
        let mut found = false;
        let bad = |why: String| StoreError::Backend {
            store: self.name.clone(),
            why,
        };
        for row in rows {
            let (s, m): (String, String) = match (row.try_get(0), row.try_get(1)) {
                (Ok(s), Ok(m)) => (s, m),
                (Err(e), _) | (_, Err(e)) => {
                    return Err(bad(format!("reading messages: {}", conn::full(&e))));
                }
            };
            let s = seq_of(&s, self.max_seq)
                .map_err(|why| bad(format!("messages.msgseqnum is {why}")))?;
            if s == seq {
                out.extend_from_slice(m.as_bytes());
                found = true;
            } else {
                cache.insert(s, m);
            }
        }
        Ok(found)
    }

    fn reset(&mut self) -> Result<(), StoreError> {
        self.sender = 1;
        self.target = 1;
        self.pending.clear();
        self.cache.get_mut().clear();
        self.seqs_dirty = true;
        self.reset_pending = true;
        Ok(())
    }

    fn refresh(&mut self) -> Result<(), StoreError> {
        // Whatever was recorded and not flushed was never sent (a message
        // goes out only once flushed), and inbound numbers not flushed are
        // asked for again: the database is the truth.
        self.pending.clear();
        self.cache.get_mut().clear();
        self.reset_pending = false;
        self.read_seqs()
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() && !self.seqs_dirty && !self.reset_pending {
            return Ok(());
        }
        let epoch = self.write_epoch()?;
        let seqs: Vec<i64> = self.pending.iter().map(|(s, _)| *s).collect();
        let texts: Vec<&str> = self.pending.iter().map(|(_, t)| t.as_str()).collect();
        let target = self.column(self.target)?;
        let sender = self.column(self.sender)?;
        let reset = self.reset_pending;
        let (updated, fenced) = self.with_conn("writing the round", |c, s| {
            let k = key_params(&s.key);
            let mut p = k.to_vec();
            p.extend_from_slice(&[&seqs, &texts, &target, &sender]);
            if let Some(e) = &epoch {
                p.push(e);
            }
            let n = if !reset {
                c.client.execute(&c.flush, &p)?
            } else {
                let mut tx = c.client.transaction()?;
                // The reset's deletes are fenced as the flush is: the
                // lease row locked first, or nothing at all.
                if let Some(e) = epoch
                    && !holds(&mut tx, &s.key, e)?
                {
                    return Ok((0, true));
                }
                tx.execute(&format!("DELETE FROM messages WHERE {KEY}"), &k)?;
                tx.execute(
                    &format!(
                        "UPDATE sessions SET creation_time = now() AT TIME ZONE 'UTC' WHERE {KEY}"
                    ),
                    &k,
                )?;
                let n = tx.execute(&c.flush, &p)?;
                tx.commit()?;
                n
            };
            if n == 1 || epoch.is_none() {
                return Ok((n, false));
            }
            // Nothing written: the lease moved on, or the row is gone.
            let e = epoch.expect("checked above");
            Ok((n, !holds(&mut c.client, &s.key, e)?))
        })?;
        if fenced {
            if let (Some(h), Some(e)) = (&self.fence, epoch) {
                h.lose(e as u64);
            }
            return Err(self.fenced(format!(
                "epoch {} is no longer this engine's: another engine has taken the session's \
                 lease over, and nothing was written",
                self.read_at
            )));
        }
        if updated != 1 {
            return Err(StoreError::Backend {
                store: self.name.clone(),
                why: format!("the session's row in sessions is gone ({updated} rows updated)"),
            });
        }
        self.pending.clear();
        self.seqs_dirty = false;
        self.reset_pending = false;
        Ok(())
    }

    fn max_seq(&self) -> u64 {
        self.max_seq
    }

    fn standing(&self) -> Standing {
        match &self.fence {
            None => Standing::Unshared,
            Some(h) => Standing::of(h, self.read_at),
        }
    }
}
