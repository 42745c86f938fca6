//! [`PostgresLog`]: a session's messages and events in QuickFIX's log
//! tables (`messages_log` for both directions and `event_log` unless the
//! `PostgreSQLLog*Table` keys name others), one row per line with the
//! time, the session's four columns and the text.
//!
//! A log is the record, not the session: a database that is away delays
//! the rows (kept in memory up to [`MAX_HELD`], the oldest dropped past
//! it and counted), it never stops the session.

use std::collections::VecDeque;
use std::time::{Duration, Instant, SystemTime};

use fixcore::session::app::Log;
use fixcore::session::store::StoreError;
use fixcore::settings::PostgresLogSettings;
use fixcore::value::UtcTimestamp;
use postgres::Client;

use crate::SessionKey;
use crate::conn;

/// Most rows kept while the database is away.
pub const MAX_HELD: usize = 100_000;

/// The first pause after a failed write; each further failure doubles
/// it, up to [`RETRY_MAX`]. Writes are tried at round ends only, so a
/// database that is down costs a round one connection attempt per pause,
/// not one per round.
const RETRY_FIRST: Duration = Duration::from_millis(500);
/// The longest pause between two attempts.
const RETRY_MAX: Duration = Duration::from_secs(30);

/// Which table a row goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Incoming,
    Outgoing,
    Event,
}

/// One line to write.
#[derive(Debug)]
struct Row {
    kind: Kind,
    time: SystemTime,
    text: String,
}

/// A session's log in PostgreSQL (see the [module docs](self)).
pub struct PostgresLog {
    name: String,
    cfg: postgres::Config,
    key: SessionKey,
    tables: [String; 3],
    client: Option<Client>,
    /// Rows not yet written, oldest first.
    held: VecDeque<Row>,
    /// No attempt before this instant (after a failure).
    retry_at: Option<Instant>,
    backoff: Duration,
    /// Rows dropped because [`MAX_HELD`] were waiting.
    dropped: u64,
    /// A failure not yet taken by [`PostgresLog::take_failure`].
    failure: Option<StoreError>,
    /// Whether the last write failed (one failure reported per outage).
    failing: bool,
}

impl std::fmt::Debug for PostgresLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLog")
            .field("name", &self.name)
            .field("held", &self.held.len())
            .field("dropped", &self.dropped)
            .finish_non_exhaustive()
    }
}

impl PostgresLog {
    /// Connects as `s` says and creates the log tables when missing
    /// (with QuickFIX's columns, each `id` from a sequence named after its
    /// table, as its `messages_log_table.sql` and `event_log_table.sql`
    /// do). Rows are buffered until [`Log::flush`].
    pub fn open(s: &PostgresLogSettings, key: SessionKey) -> Result<PostgresLog, StoreError> {
        let name = format!("{} log of {}", conn::name(&s.connect), key.id());
        let cfg = conn::config(&s.connect);
        let mut client = conn::connect(&cfg, &name)?;
        let mut tables: Vec<&str> = vec![&s.incoming_table, &s.outgoing_table, &s.event_table];
        tables.dedup();
        let mut ddl = String::new();
        for t in tables {
            // Table names come from settings that admit only identifiers
            // (fixcore's resolve), so they can go into SQL text.
            ddl.push_str(&format!(
                "CREATE SEQUENCE IF NOT EXISTS {t}_sequence;
                 CREATE TABLE IF NOT EXISTS {t} (
                   id INTEGER DEFAULT NEXTVAL('{t}_sequence'),
                   time TIMESTAMP NOT NULL,
                   beginstring CHAR(8),
                   sendercompid VARCHAR(64),
                   targetcompid VARCHAR(64),
                   session_qualifier VARCHAR(64),
                   text TEXT NOT NULL,
                   PRIMARY KEY (id)
                 );"
            ));
        }
        let made = (|| {
            let mut tx = client.transaction()?;
            tx.execute(
                "SELECT pg_advisory_xact_lock($1)",
                &[&crate::store::SCHEMA_LOCK],
            )?;
            tx.batch_execute(&ddl)?;
            tx.commit()
        })();
        made.map_err(|e| conn::classify(&e, &name, "creating the log tables").0)?;
        Ok(PostgresLog {
            name,
            cfg,
            key,
            tables: [
                s.incoming_table.clone(),
                s.outgoing_table.clone(),
                s.event_table.clone(),
            ],
            client: Some(client),
            held: VecDeque::new(),
            retry_at: None,
            backoff: RETRY_FIRST,
            dropped: 0,
            failure: None,
            failing: false,
        })
    }

    /// The failure of the last write, once per outage (the first write
    /// that failed after one that succeeded), for the caller to report.
    pub fn take_failure(&mut self) -> Option<StoreError> {
        self.failure.take()
    }

    /// Rows waiting to be written.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Rows dropped, since the log opened, because [`MAX_HELD`] waited.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    fn push(&mut self, kind: Kind, now: UtcTimestamp, text: String) {
        if self.held.len() >= MAX_HELD {
            self.held.pop_front();
            self.dropped += 1;
        }
        let time = if now.unix_nanos >= 0 {
            SystemTime::UNIX_EPOCH + Duration::from_nanos(now.unix_nanos as u64)
        } else {
            SystemTime::UNIX_EPOCH - Duration::from_nanos(now.unix_nanos.unsigned_abs())
        };
        self.held.push_back(Row { kind, time, text });
    }

    /// Writes every held row, one statement per table, in one
    /// transaction.
    pub fn write(&mut self) -> Result<(), StoreError> {
        if self.held.is_empty() {
            return Ok(());
        }
        if self.client.as_ref().is_none_or(|c| c.is_closed()) {
            self.client = Some(conn::connect(&self.cfg, &self.name)?);
        }
        let client = self.client.as_mut().expect("connected above");
        // QuickFIX's log writes NULL, not '', for a session without a
        // qualifier.
        let qualifier: Option<&str> =
            Some(self.key.session_qualifier.as_str()).filter(|q| !q.is_empty());
        let k = &self.key;
        let held = &self.held;
        let tables = &self.tables;
        let res = (|| {
            let mut tx = client.transaction()?;
            let mut done: Vec<&str> = Vec::new();
            for table in tables.iter() {
                if done.contains(&table.as_str()) {
                    continue;
                }
                done.push(table);
                // Every kind whose table this is (incoming and outgoing
                // share one by default).
                let kinds: Vec<Kind> = [Kind::Incoming, Kind::Outgoing, Kind::Event]
                    .into_iter()
                    .enumerate()
                    .filter(|&(j, _)| tables[j] == *table)
                    .map(|(_, kind)| kind)
                    .collect();
                let rows: Vec<&Row> = held.iter().filter(|r| kinds.contains(&r.kind)).collect();
                if rows.is_empty() {
                    continue;
                }
                let times: Vec<SystemTime> = rows.iter().map(|r| r.time).collect();
                let texts: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
                tx.execute(
                    &format!(
                        "INSERT INTO {table} (time, beginstring, sendercompid, targetcompid, \
                         session_qualifier, text) \
                         SELECT u.tm, $1::bpchar, $2::varchar, $3::varchar, $4::varchar, u.tx \
                         FROM unnest($5::timestamp[], $6::text[]) WITH ORDINALITY AS u(tm, tx, n) \
                         ORDER BY u.n"
                    ),
                    &[
                        &k.begin_string,
                        &k.sender_comp_id,
                        &k.target_comp_id,
                        &qualifier,
                        &times,
                        &texts,
                    ],
                )?;
            }
            tx.commit()
        })();
        match res {
            Ok(()) => {
                self.held.clear();
                Ok(())
            }
            Err(e) => {
                let (err, drop) = conn::classify(&e, &self.name, "writing log rows");
                if drop {
                    self.client = None;
                }
                Err(err)
            }
        }
    }
}

impl Log for PostgresLog {
    fn message(&mut self, now: UtcTimestamp, incoming: bool, msg: &[u8]) {
        let kind = if incoming {
            Kind::Incoming
        } else {
            Kind::Outgoing
        };
        // A byte that is not UTF-8 (a raw data field) is written as
        // U+FFFD: a log line is for reading, and TEXT holds no other.
        self.push(kind, now, String::from_utf8_lossy(msg).into_owned());
    }

    fn event(&mut self, now: UtcTimestamp, text: &str) {
        self.push(Kind::Event, now, text.to_string());
    }

    fn flush(&mut self) {
        if self.retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        match self.write() {
            Ok(()) => {
                self.retry_at = None;
                self.backoff = RETRY_FIRST;
                self.failing = false;
            }
            Err(e) => {
                self.retry_at = Some(Instant::now() + self.backoff);
                self.backoff = (self.backoff * 2).min(RETRY_MAX);
                if !self.failing {
                    self.failing = true;
                    self.failure = Some(e);
                }
            }
        }
    }

    // QuickFIX's PostgreSQL log keeps its rows across a sequence reset
    // (its `backup` does nothing): the default `reset` does the same.
}
