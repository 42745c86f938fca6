//! A round's write: what one flush puts in the database, the statement
//! that does it, and the thread that runs it in the background.
//!
//! [`PostgresStore`](super::PostgresStore) writes a small round itself,
//! waiting for the commit; a larger one, or any round while a write is
//! under way, goes to its [`Writer`], so the connection that feeds the
//! store goes on reading and answering while the database works (see
//! [`SessionStore::begin_flush`](fixsession::store::SessionStore::begin_flush)).
//! One write runs at a time, in the order given, on the store's one
//! connection: what the writer commits is exactly what a wait at each
//! round would have.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use fixsession::store::StoreError;
use postgres::error::SqlState;

use super::{Link, holds};
use crate::conn::{KEY, key_params};

/// What one flush writes: the messages recorded since the last, in the
/// order saved (each number once), both numbers, whether the session was
/// reset first, and the lease epoch the write carries (fenced stores).
#[derive(Debug, Clone, Default)]
pub(super) struct Round {
    /// The messages' sequence numbers.
    pub seqs: Vec<i64>,
    /// The messages, as the `message` column holds them.
    pub texts: Vec<String>,
    /// `incoming_seqnum`.
    pub target: i64,
    /// `outgoing_seqnum`.
    pub sender: i64,
    /// Delete the session's messages and restart its `creation_time`
    /// first.
    pub reset: bool,
    /// The epoch held ([`crate::lease`]); `None` for an unshared store.
    pub epoch: Option<i64>,
}

impl Round {
    /// The message saved under `seq` in this round.
    pub fn find(&self, seq: i64) -> Option<&str> {
        let i = self.seqs.iter().rposition(|s| *s == seq)?;
        Some(&self.texts[i])
    }
}

/// A round's statement: the messages and both numbers, in one statement,
/// which PostgreSQL runs as one transaction. The `UPDATE`'s row count
/// says whether the session's row is still there.
///
/// `upsert`: a message whose number is stored already replaces it, as
/// QuickFIX's `set` does (an `INSERT`, then an `UPDATE` when that fails).
/// Without it the messages are plain inserts, and a number stored again
/// fails the whole statement, which [`write`] then runs again with
/// `upsert`. Plain is the common case (a session numbers each message
/// once) and halves the database's work per message: `ON CONFLICT` looks
/// every row's key up in the index before inserting it, a second walk of
/// a five-column key (measured with pgbench on 200-row rounds: 7.0 µs a
/// row with it, 3.6 µs without).
///
/// Fenced (see [`crate::lease`]), the statement first locks the session's
/// lease row for share, if it still holds epoch `$9`, and writes nothing
/// when it does not: a takeover raising the epoch waits for a write that
/// locked the row first, and a write that comes after it finds the new
/// epoch (PostgreSQL checks a row locked this way again in its newest
/// version). So the new holder's reading of the numbers follows every
/// write of the old holder's that landed, and none lands after it.
pub(super) fn flush_sql(fenced: bool, upsert: bool) -> String {
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
    let conflict = if upsert {
        "\n           ON CONFLICT (beginstring, sendercompid, targetcompid, session_qualifier, \
         msgseqnum) DO UPDATE SET message = EXCLUDED.message"
    } else {
        ""
    };
    format!(
        "WITH {lease} m AS (
           INSERT INTO messages (beginstring, sendercompid, targetcompid, session_qualifier,
                                 msgseqnum, message)
           SELECT $1::bpchar, $2::varchar, $3::varchar, $4::varchar, u.s, u.t
             FROM unnest($5::int8[], $6::text[]) AS u(s, t) WHERE true{only}{conflict}
         )
         UPDATE sessions SET incoming_seqnum = $7::int8, outgoing_seqnum = $8::int8 \
         WHERE {KEY}{only}"
    )
}

/// Writes `r` on `link`'s connection, waiting for the commit. A write
/// whose epoch is no longer held lands nothing and is
/// [`StoreError::Fenced`] (the lease is marked lost).
pub(super) fn write(link: &Link, r: &Round) -> Result<(), StoreError> {
    let (updated, fenced) = link.with_conn("writing the round", |c, l| {
        let k = key_params(&l.key);
        let mut p = k.to_vec();
        p.extend_from_slice(&[&r.seqs, &r.texts, &r.target, &r.sender]);
        if let Some(e) = &r.epoch {
            p.push(e);
        }
        let n = if !r.reset {
            match c.client.execute(&c.flush, &p) {
                // A number stored already (the session's numbers were
                // set back): nothing was written, so the round runs
                // again, replacing those messages.
                Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                    c.client.execute(&c.flush_upsert, &p)?
                }
                r => r?,
            }
        } else {
            let mut tx = c.client.transaction()?;
            // The reset's deletes are fenced as the flush is: the lease
            // row locked first, or nothing at all.
            if let Some(e) = r.epoch
                && !holds(&mut tx, &l.key, e)?
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
            // Upserts: a failed statement would end the transaction
            // (after the delete only the round's own numbers remain, so
            // this costs nothing more).
            let n = tx.execute(&c.flush_upsert, &p)?;
            tx.commit()?;
            n
        };
        match r.epoch {
            Some(e) if n != 1 => {
                // Nothing written: the lease moved on, or the row is gone.
                Ok((n, !holds(&mut c.client, &l.key, e)?))
            }
            _ => Ok((n, false)),
        }
    })?;
    if fenced {
        let e = r.epoch.unwrap_or_default();
        // The epoch came from the holding, as a u64 at least 1.
        if let (Some(h), Ok(held)) = (&link.fence, u64::try_from(e)) {
            h.lose(held);
        }
        return Err(link.fenced(format!(
            "epoch {e} is no longer this engine's: another engine has taken the session's \
             lease over, and nothing was written"
        )));
    }
    if updated != 1 {
        return Err(StoreError::Backend {
            store: link.name.clone(),
            why: format!("the session's row in sessions is gone ({updated} rows updated)"),
        });
    }
    Ok(())
}

/// The store's background writer: a thread that runs each round sent to
/// it with [`write`], in order, and answers each, one byte on a socket
/// pair saying an answer is ready.
#[derive(Debug)]
pub(super) struct Writer {
    /// `None` once dropping: the thread ends when it closes.
    work: Option<mpsc::Sender<Arc<Round>>>,
    answers: mpsc::Receiver<Result<(), StoreError>>,
    /// Readable when an answer is ready (non-blocking).
    signal: UnixStream,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts the thread, writing on `link`'s connection.
    pub fn start(link: Arc<Link>) -> Result<Writer, StoreError> {
        let failed = |e: std::io::Error| StoreError::Backend {
            store: link.name.clone(),
            why: format!("starting the store's writer thread: {e}"),
        };
        let (signal, ring) = UnixStream::pair().map_err(failed)?;
        signal.set_nonblocking(true).map_err(failed)?;
        let (work, rounds) = mpsc::channel::<Arc<Round>>();
        let (answer, answers) = mpsc::channel();
        let l = Arc::clone(&link);
        let thread = std::thread::Builder::new()
            .name("pg-store".into())
            .spawn(move || {
                let mut ring = ring;
                for r in rounds {
                    let result = write(&l, &r);
                    if answer.send(result).is_err() {
                        return;
                    }
                    // A full socket buffer already says "ready".
                    let _ = ring.write(&[1]);
                }
            })
            .map_err(failed)?;
        Ok(Writer {
            work: Some(work),
            answers,
            signal,
            thread: Some(thread),
        })
    }

    /// Queues `r` for writing.
    pub fn send(&self, r: Arc<Round>) {
        if let Some(w) = &self.work {
            // The thread ends only when `work` closes; a send that fails
            // (it panicked) shows as a missing answer.
            let _ = w.send(r);
        }
    }

    /// The next answer if one is ready, without waiting.
    pub fn try_answer(&mut self) -> Option<Result<(), StoreError>> {
        let mut sink = [0u8; 64];
        while matches!(self.signal.read(&mut sink), Ok(n) if n > 0) {}
        self.answers.try_recv().ok()
    }

    /// The next answer, waiting for it; `None` when the thread is gone.
    pub fn wait_answer(&mut self) -> Option<Result<(), StoreError>> {
        let a = self.answers.recv().ok();
        let mut sink = [0u8; 64];
        while matches!(self.signal.read(&mut sink), Ok(n) if n > 0) {}
        a
    }

    /// The descriptor readable when an answer is ready.
    pub fn fd(&self) -> RawFd {
        self.signal.as_raw_fd()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Whatever was queued is written before the thread ends: a store
        // made again for the session must read after it, not beside it.
        self.work = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
