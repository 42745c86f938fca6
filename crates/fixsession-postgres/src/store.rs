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

mod link;
mod round;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use fixsession::lease::{Holding, Standing, Taking};
use fixsession::settings::PostgresSettings;
use fixsession::store::{SessionStore, StoreError};

use crate::SessionKey;
use crate::conn::{self, KEY, key_params};
use link::Link;
use round::{Round, Writer};

/// The largest sequence number the tables hold with `INTEGER` columns.
pub const MAX_SEQ: u64 = i32::MAX as u64;

/// The largest with `BIGINT` or `NUMERIC` columns only.
pub const MAX_SEQ_WIDE: u64 = i64::MAX as u64;

/// How many messages a resend reads from the database at once: a resend
/// asks for numbers in order, so one query serves this many `load`s.
const READ_AHEAD: i64 = 256;

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

/// Rounds of fewer messages than this are written by the store's own
/// thread, waiting: handing one to the writer and taking its answer back
/// costs two thread wake-ups, more than a small round's overlap saves
/// (one order in flight: a round of two messages).
const BACKGROUND_FROM: usize = 8;

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
///
/// [`SessionStore::begin_flush`] writes a round of
/// `BACKGROUND_FROM` messages or more on a writer thread of the
/// store's own, one round at a time: rounds begun while one is being
/// written are written together after it. A background write that fails
/// puts its round back before what was recorded since, for the next
/// flush.
pub struct PostgresStore {
    link: Arc<Link>,
    sender: u64,
    target: u64,
    /// Messages saved since the last flush began, in the order saved.
    pending: Vec<(i64, String)>,
    /// The largest number the tables hold, as the last connection found
    /// their columns.
    max_seq: u64,
    /// Whether the numbers changed since the last flush began.
    seqs_dirty: bool,
    /// A reset not yet written: the next flush first deletes the
    /// session's messages and restarts its `creation_time`.
    reset_pending: bool,
    /// Messages read ahead for a resend.
    cache: RefCell<BTreeMap<u64, String>>,
    /// The lease's taking the numbers were last read under (none held:
    /// nothing read under a lease).
    read_at: Taking,
    /// Started at the first round written in the background.
    writer: Option<Writer>,
    /// The round the writer has, and the ticket it completes.
    writing: Option<(u64, Arc<Round>)>,
    /// The newest ticket given out by `begin_flush`.
    issued: u64,
    /// The newest ticket whose round has landed.
    landed: u64,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("name", &self.link.name)
            .field("sender", &self.sender)
            .field("target", &self.target)
            .field("pending", &self.pending.len())
            .field("read_at", &self.read_at)
            .field("issued", &self.issued)
            .field("landed", &self.landed)
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
            link: Arc::new(Link {
                cfg: conn::config(db),
                name,
                key,
                fence,
                conn: Mutex::new(None),
            }),
            sender: 1,
            target: 1,
            pending: Vec::new(),
            max_seq: MAX_SEQ,
            seqs_dirty: false,
            reset_pending: false,
            cache: RefCell::new(BTreeMap::new()),
            read_at: Taking::default(),
            writer: None,
            writing: None,
            issued: 0,
            landed: 0,
        };
        store.read_seqs()?;
        Ok(store)
    }

    /// The session this store keeps.
    pub fn key(&self) -> &SessionKey {
        &self.link.key
    }

    /// How many messages wait for the next flush.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Reads the session's numbers, making its row (at 1, 1) when it has
    /// none, as QuickFIX's store does when it opens.
    fn read_seqs(&mut self) -> Result<(), StoreError> {
        // The epoch before the reading: a takeover after it shows as a
        // mismatch at the next write, which then refuses.
        let taking = self
            .link
            .fence
            .as_ref()
            .map(|h| h.taking())
            .unwrap_or_default();
        let (target, sender, max) =
            self.link
                .with_conn("reading the sequence numbers", |c, s| {
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
                store: self.link.name.clone(),
                why: format!("sessions.{column} is {why}"),
            })
        };
        self.target = number(&target, "incoming_seqnum")?;
        self.sender = number(&sender, "outgoing_seqnum")?;
        self.max_seq = max;
        self.seqs_dirty = false;
        self.read_at = taking;
        Ok(())
    }

    /// The epoch a write carries: the one the numbers were read under,
    /// while it is still held. `Ok(None)` for a store of one engine.
    fn write_epoch(&self) -> Result<Option<i64>, StoreError> {
        let Some(h) = &self.link.fence else {
            return Ok(None);
        };
        let read = self.read_at.epoch().unwrap_or(0);
        match h.epoch() {
            // Every epoch held came from the BIGINT column.
            Some(e) if h.taking() == self.read_at => i64::try_from(e)
                .map(Some)
                .map_err(|_| self.link.fenced(format!("epoch {e} is not a BIGINT"))),
            Some(e) => Err(self.link.fenced(format!(
                "the numbers were read under epoch {read} and the lease has been taken since, \
                 now held under epoch {e}: they must be read again first"
            ))),
            None => Err(self
                .link
                .fenced(format!("the lease read under epoch {read} is not held"))),
        }
    }

    /// Whether anything was recorded since the last flush began.
    fn has_records(&self) -> bool {
        !self.pending.is_empty() || self.seqs_dirty || self.reset_pending
    }

    /// Takes what was recorded since the last flush began, as one round
    /// carrying the epoch held.
    fn take_round(&mut self) -> Result<Round, StoreError> {
        let epoch = self.write_epoch()?;
        let r = Round {
            target: self.column(self.target)?,
            sender: self.column(self.sender)?,
            reset: self.reset_pending,
            epoch,
            seqs: self.pending.iter().map(|(s, _)| *s).collect(),
            texts: self.pending.drain(..).map(|(_, t)| t).collect(),
        };
        self.seqs_dirty = false;
        self.reset_pending = false;
        Ok(r)
    }

    /// Puts a round that did not land back before what was recorded
    /// since, for the next flush: its messages first (unless a reset
    /// since forgot them), the numbers as they are now.
    fn put_back(&mut self, r: Round) {
        if !self.reset_pending {
            let mut back: Vec<(i64, String)> = r.seqs.into_iter().zip(r.texts).collect();
            back.retain(|(s, _)| !self.pending.iter().any(|(p, _)| p == s));
            back.append(&mut self.pending);
            self.pending = back;
            self.reset_pending = r.reset;
        }
        self.seqs_dirty = true;
    }

    /// Hands the recorded round to the writer as ticket `ticket`.
    fn send_round(&mut self, ticket: u64) -> Result<(), StoreError> {
        if self.writer.is_none() {
            self.writer = Some(Writer::start(Arc::clone(&self.link))?);
        }
        let r = Arc::new(self.take_round()?);
        self.writer
            .as_ref()
            .expect("started above")
            .send(Arc::clone(&r));
        self.writing = Some((ticket, r));
        Ok(())
    }

    /// Takes the writer's answer for the round it has, waiting for it
    /// when `wait`; once the round landed, the rounds begun meanwhile go
    /// to the writer together (unless `wait`: the caller writes them). A
    /// failed round is put back, and its error returned.
    fn settle(&mut self, wait: bool) -> Result<(), StoreError> {
        let Some((ticket, _)) = &self.writing else {
            return Ok(());
        };
        let ticket = *ticket;
        let writer = self.writer.as_mut().expect("a round is being written");
        let answer = if wait {
            writer.wait_answer()
        } else {
            match writer.try_answer() {
                Some(a) => Some(a),
                None => return Ok(()),
            }
        };
        let (_, round) = self.writing.take().expect("checked above");
        let failed = match answer {
            Some(Ok(())) => None,
            Some(Err(e)) => Some(e),
            None => Some(StoreError::Backend {
                store: self.link.name.clone(),
                why: "the store's writer thread ended".to_owned(),
            }),
        };
        if let Some(e) = failed {
            self.put_back(Arc::unwrap_or_clone(round));
            return Err(e);
        }
        self.landed = ticket;
        if self.issued > self.landed && !wait {
            if self.has_records() {
                self.send_round(self.issued)?;
            } else {
                self.landed = self.issued;
            }
        }
        Ok(())
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
            store: self.link.name.clone(),
            why: format!(
                "message {seq} is not UTF-8 (byte {}), which QuickFIX's TEXT column cannot hold",
                e.valid_up_to()
            ),
        })?;
        self.cache.get_mut().remove(&seq);
        match self.pending.last() {
            // Saved again before the flush (a session set back): one row
            // per number in a round, the newest copy, as a statement may
            // write each row once.
            Some((last, _)) if *last >= n => match self.pending.iter_mut().find(|(s, _)| *s == n) {
                Some(slot) => slot.1 = text.to_owned(),
                None => self.pending.push((n, text.to_owned())),
            },
            _ => self.pending.push((n, text.to_owned())),
        }
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
        // Then what the writer has, which may not have landed yet.
        if let Some(m) = self.writing.as_ref().and_then(|(_, r)| r.find(n)) {
            out.extend_from_slice(m.as_bytes());
            return Ok(true);
        }
        if let Some(m) = self.cache.borrow_mut().remove(&seq) {
            out.extend_from_slice(m.as_bytes());
            return Ok(true);
        }
        let rows = self.link.with_conn("reading sent messages", |c, s| {
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
            store: self.link.name.clone(),
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
            } else if self
                .writing
                .as_ref()
                .is_none_or(|(_, r)| r.find(s as i64).is_none())
            {
                // A copy the writer is replacing is not kept: once it
                // lands, the database's row is the newer one.
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
        // Read after the writer's round, whether it lands or not.
        let _ = self.settle(true);
        self.landed = self.issued;
        // Whatever was recorded and not flushed was never sent (a message
        // goes out only once flushed), and inbound numbers not flushed are
        // asked for again: the database is the truth.
        self.pending.clear();
        self.cache.get_mut().clear();
        self.reset_pending = false;
        self.read_seqs()
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        // The writer's round lands (or comes back) first: rounds land in
        // the order they were begun.
        self.settle(true)?;
        if self.has_records() {
            let r = self.take_round()?;
            if let Err(e) = round::write(&self.link, &r) {
                self.put_back(r);
                return Err(e);
            }
        }
        self.landed = self.issued;
        Ok(())
    }

    fn begin_flush(&mut self) -> Result<u64, StoreError> {
        self.settle(false)?;
        if !self.has_records() {
            return Ok(self.issued);
        }
        self.issued += 1;
        if self.writing.is_some() {
            // Goes to the writer with whatever else is begun before the
            // round it has lands (`settle`).
        } else if self.pending.len() < BACKGROUND_FROM {
            self.flush()?;
        } else {
            self.send_round(self.issued)?;
        }
        Ok(self.issued)
    }

    fn flushed(&mut self) -> Result<u64, StoreError> {
        self.settle(false)?;
        Ok(self.landed)
    }

    fn flush_signal(&self) -> Option<std::os::fd::RawFd> {
        self.writer.as_ref().map(Writer::fd)
    }

    fn max_seq(&self) -> u64 {
        self.max_seq
    }

    fn standing(&self) -> Standing {
        match &self.link.fence {
            None => Standing::Unshared,
            Some(h) => Standing::of(h, self.read_at),
        }
    }
}
