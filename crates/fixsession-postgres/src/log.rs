//! [`PostgresLog`]: a session's messages and events in QuickFIX's log
//! tables (`messages_log` for both directions and `event_log` unless the
//! `PostgreSQLLog*Table` keys name others), one row per line with the
//! time, the session's four columns and the text.
//!
//! A log is the record, not the session: the rows are written by a
//! thread of the log's own, so the session never waits on the database
//! for them (the store's writes are the only ones a round waits for). A
//! database that is away delays the rows (kept in memory up to
//! [`MAX_HELD`], the oldest dropped past it and counted); it never stops
//! the session.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use fixcore::value::UtcTimestamp;
use fixsession::log::Log;
use fixsession::settings::PostgresLogSettings;
use fixsession::store::StoreError;
use postgres::Client;

use crate::SessionKey;
use crate::conn;

/// Most rows kept while the database is away.
pub const MAX_HELD: usize = 100_000;

/// The first pause after a failed write; each further failure doubles
/// it, up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(200);
/// The longest pause between two attempts.
const RETRY_MAX: Duration = Duration::from_secs(10);

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

/// What the session's side and the writer share.
#[derive(Default)]
struct Shared {
    /// Rows handed over and not yet written, oldest first.
    held: VecDeque<Row>,
    /// Rows the writer has taken and is writing now.
    writing: usize,
    /// Rows dropped because [`MAX_HELD`] waited.
    dropped: u64,
    /// A failure not yet taken by [`PostgresLog::take_failure`].
    failure: Option<StoreError>,
    /// Set when the log is dropped: the writer tries once more and ends.
    closing: bool,
}

/// Where a writer connects and what it writes into.
struct Target {
    name: String,
    cfg: postgres::Config,
    key: SessionKey,
    tables: [String; 3],
}

/// A session's log in PostgreSQL (see the [module docs](self)).
pub struct PostgresLog {
    name: String,
    /// Rows of the round so far, handed over at [`Log::flush`].
    round: Vec<Row>,
    shared: Arc<(Mutex<Shared>, Condvar)>,
    writer: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for PostgresLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLog")
            .field("name", &self.name)
            .field("round", &self.round.len())
            .finish_non_exhaustive()
    }
}

fn lock(shared: &(Mutex<Shared>, Condvar)) -> MutexGuard<'_, Shared> {
    shared.0.lock().unwrap_or_else(|p| p.into_inner())
}

impl PostgresLog {
    /// Connects as `s` says and creates the log tables when missing
    /// (with QuickFIX's columns, each `id` from a sequence named after its
    /// table, as its `messages_log_table.sql` and `event_log_table.sql`
    /// do), then starts the writer. Failing to connect here is an error:
    /// settings that cannot work should stop the start.
    pub fn open(s: &PostgresLogSettings, key: SessionKey) -> Result<PostgresLog, StoreError> {
        let name = format!("{} log of {}", conn::name(&s.connect), key.id());
        let cfg = conn::config(&s.connect);
        let mut client = conn::connect(&cfg, &name)?;
        let mut tables: Vec<&str> = vec![&s.incoming_table, &s.outgoing_table, &s.event_table];
        tables.dedup();
        let mut ddl = String::new();
        for t in tables {
            // Table names come from settings that admit only identifiers
            // (fixsession's settings resolve), so they can go into SQL text.
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
        conn::create_tables(&mut client, &[&ddl], &name, "creating the log tables")?;
        let target = Target {
            name: name.clone(),
            cfg,
            key,
            tables: [
                s.incoming_table.clone(),
                s.outgoing_table.clone(),
                s.event_table.clone(),
            ],
        };
        let shared = Arc::new((Mutex::new(Shared::default()), Condvar::new()));
        let theirs = shared.clone();
        let writer = std::thread::Builder::new()
            .name("postgres-log".into())
            .spawn(move || writer(target, Some(client), &theirs))
            .map_err(|e| StoreError::Backend {
                store: name.clone(),
                why: format!("starting the log's writer thread: {e}"),
            })?;
        Ok(PostgresLog {
            name,
            round: Vec::new(),
            shared,
            writer: Some(writer),
        })
    }

    /// The failure of a write, once per outage (the first write that
    /// failed after one that succeeded), for the caller to report.
    pub fn take_failure(&mut self) -> Option<StoreError> {
        lock(&self.shared).failure.take()
    }

    /// Rows not yet written.
    pub fn held(&self) -> usize {
        let s = lock(&self.shared);
        self.round.len() + s.held.len() + s.writing
    }

    /// Rows dropped, since the log opened, because [`MAX_HELD`] waited.
    pub fn dropped(&self) -> u64 {
        lock(&self.shared).dropped
    }

    /// Hands the round's rows to the writer and waits up to `limit` for
    /// every row to be written; whether they were.
    pub fn sync(&mut self, limit: Duration) -> bool {
        self.flush();
        let until = Instant::now() + limit;
        let mut s = lock(&self.shared);
        while !s.held.is_empty() || s.writing > 0 {
            let now = Instant::now();
            if now >= until {
                return false;
            }
            s = self
                .shared
                .1
                .wait_timeout(s, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }

    fn push(&mut self, kind: Kind, now: UtcTimestamp, text: String) {
        let time = if now.unix_nanos >= 0 {
            SystemTime::UNIX_EPOCH + Duration::from_nanos(now.unix_nanos as u64)
        } else {
            SystemTime::UNIX_EPOCH - Duration::from_nanos(now.unix_nanos.unsigned_abs())
        };
        self.round.push(Row { kind, time, text });
    }
}

/// The writer: waits for rows, writes all it has in one transaction,
/// keeps them and pauses (doubling) when that fails, until the log is
/// dropped (then it tries once more).
fn writer(t: Target, mut client: Option<Client>, shared: &(Mutex<Shared>, Condvar)) {
    let mut pause = RETRY_FIRST;
    let mut failing = false;
    loop {
        let rows: Vec<Row> = {
            let mut s = lock(shared);
            while s.held.is_empty() && !s.closing {
                s = shared.1.wait(s).unwrap_or_else(|p| p.into_inner());
            }
            if s.held.is_empty() {
                return;
            }
            let rows: Vec<Row> = s.held.drain(..).collect();
            s.writing = rows.len();
            rows
        };
        let res = write(&t, &mut client, &rows);
        let mut s = lock(shared);
        s.writing = 0;
        match res {
            Ok(()) => {
                pause = RETRY_FIRST;
                failing = false;
                shared.1.notify_all();
            }
            Err(e) => {
                if !failing {
                    failing = true;
                    s.failure = Some(e);
                }
                // Back in front of what came meanwhile, in order; the
                // oldest go first when too many wait.
                for row in rows.into_iter().rev() {
                    s.held.push_front(row);
                }
                while s.held.len() > MAX_HELD {
                    s.held.pop_front();
                    s.dropped += 1;
                }
                if s.closing {
                    return;
                }
                let until = Instant::now() + pause;
                pause = (pause * 2).min(RETRY_MAX);
                while !s.closing && Instant::now() < until {
                    let left = until.saturating_duration_since(Instant::now());
                    s = shared
                        .1
                        .wait_timeout(s, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        }
    }
}

/// Writes `rows`, one statement per table, in one transaction, opening
/// a connection first when there is none.
fn write(t: &Target, client: &mut Option<Client>, rows: &[Row]) -> Result<(), StoreError> {
    if client.as_ref().is_none_or(|c| c.is_closed()) {
        *client = Some(conn::connect(&t.cfg, &t.name)?);
    }
    let c = client.as_mut().expect("connected above");
    // QuickFIX's log writes NULL, not '', for a session without a
    // qualifier.
    let qualifier: Option<&str> = Some(t.key.session_qualifier.as_str()).filter(|q| !q.is_empty());
    let k = &t.key;
    let res = (|| {
        let mut tx = c.transaction()?;
        let mut done: Vec<&str> = Vec::new();
        for table in &t.tables {
            if done.contains(&table.as_str()) {
                continue;
            }
            done.push(table);
            // Every kind whose table this is (incoming and outgoing
            // share one by default).
            let kinds: Vec<Kind> = [Kind::Incoming, Kind::Outgoing, Kind::Event]
                .into_iter()
                .enumerate()
                .filter(|&(j, _)| t.tables[j] == *table)
                .map(|(_, kind)| kind)
                .collect();
            let mine: Vec<&Row> = rows.iter().filter(|r| kinds.contains(&r.kind)).collect();
            if mine.is_empty() {
                continue;
            }
            let times: Vec<SystemTime> = mine.iter().map(|r| r.time).collect();
            let texts: Vec<&str> = mine.iter().map(|r| r.text.as_str()).collect();
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
    res.map_err(|e| {
        let (err, drop) = conn::classify(&e, &t.name, "writing log rows");
        if drop {
            *client = None;
        }
        err
    })
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
        if self.round.is_empty() {
            return;
        }
        let mut s = lock(&self.shared);
        s.held.extend(self.round.drain(..));
        while s.held.len() > MAX_HELD {
            s.held.pop_front();
            s.dropped += 1;
        }
        self.shared.1.notify_all();
    }

    // QuickFIX's PostgreSQL log keeps its rows across a sequence reset
    // (its `backup` does nothing): the default `reset` does the same.
}

impl Drop for PostgresLog {
    /// Hands over the last rows and lets the writer try them once more
    /// (a connection attempt is bounded), then ends it.
    fn drop(&mut self) {
        self.flush();
        lock(&self.shared).closing = true;
        self.shared.1.notify_all();
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
    }
}
