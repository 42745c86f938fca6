//! [`PostgresLease`]: a session's lease in the `perfkit_session_leases`
//! table, which only perfkit reads (QuickFIX's tables stay as QuickFIX
//! makes them).
//!
//! One row per session, keyed by QuickFIX's four columns: the `epoch`
//! (the fencing token; each taking raises it by one, or to 1 from an
//! epoch of 0 or below, which no engine holds; an epoch at `i64::MAX`
//! cannot be raised, and taking it is refused with a sentence naming
//! the row), the `holder` (host
//! and process, for the operator) and `expires_at`, on the database's
//! clock, so engines whose clocks disagree still agree on it.
//!
//! The holder of epoch E also holds the advisory lock (session, E) on
//! its lease connection. The lock ends with that connection, which
//! ends with the process: a standby that can take the lock knows at once
//! that the holder died (`kill -9`), without waiting for the expiry. A
//! holder that hangs keeps its connection, and its lock, open; then the
//! expiry decides. A newcomer takes the lock of the next epoch before it
//! raises the epoch, so a third engine can never find the new holder's
//! lock free.
//!
//! Safety rests on the epoch alone: the store writes only with the
//! epoch held ([`crate::PostgresStore::open_fenced`]), in the same
//! statement. The advisory lock and the expiry decide only how soon a
//! standby takes over.

use std::sync::Arc;
use std::time::{Duration, Instant};

use fixsession::id::SessionId;
use fixsession::lease::{Acquired, Holding, SessionLease};
use fixsession::settings::PostgresSettings;
use fixsession::store::StoreError;
use postgres::{Client, Config};

use crate::SessionKey;
use crate::conn::{self, KEY, key_params};

/// The lease table, made when missing.
pub(crate) const LEASE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS perfkit_session_leases (
  beginstring CHAR(8) NOT NULL,
  sendercompid VARCHAR(64) NOT NULL,
  targetcompid VARCHAR(64) NOT NULL,
  session_qualifier VARCHAR(64) NOT NULL,
  epoch BIGINT NOT NULL,
  holder TEXT NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier)
);";

/// A session's lease in PostgreSQL (see the [module docs](self)).
pub struct PostgresLease {
    /// `postgresql://... FIX.4.2:A->B`, for errors.
    name: String,
    /// `postgresql://user@host:port/database`, naming the row's table.
    db: String,
    cfg: Config,
    key: SessionKey,
    timeout: Duration,
    holding: Arc<Holding>,
    /// This engine, as the `holder` column names it.
    me: String,
    /// The lease connection: the holder's advisory lock lives as long
    /// as it. `None` until opened, and after it was lost.
    conn: Option<Client>,
    /// The epoch whose advisory lock this connection holds.
    locked: Option<u64>,
    /// The row's epoch and since when a take-over of it has found the
    /// next epoch's lock held by another connection.
    blocked: Option<(Option<i64>, Instant)>,
    /// The first half of every advisory lock key of the session.
    lock_key: i32,
}

impl std::fmt::Debug for PostgresLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLease")
            .field("name", &self.name)
            .field("epoch", &self.holding.epoch())
            .finish_non_exhaustive()
    }
}

impl PostgresLease {
    /// The lease of session `key` in the database `db`, lasting
    /// `timeout` without a renewal, not held yet; nothing is read until
    /// the first [`SessionLease::acquire`].
    pub fn new(db: &PostgresSettings, key: SessionKey, timeout: Duration) -> PostgresLease {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default();
        PostgresLease {
            name: format!("{} {} (lease)", conn::name(db), key.id()),
            db: conn::name(db),
            cfg: conn::config(db),
            lock_key: lock_key(&key),
            key,
            timeout,
            holding: Holding::new(),
            me: format!("{host} pid {}", std::process::id()),
            conn: None,
            locked: None,
            blocked: None,
        }
    }

    /// Runs `f` on the lease connection, opening it (and the table) when
    /// there is none; a lost connection is dropped, with the advisory
    /// lock it held.
    fn with_conn<T>(
        &mut self,
        doing: &str,
        f: impl FnOnce(&mut Client, &Self) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        if self.conn.as_ref().is_some_and(Client::is_closed) {
            self.conn = None;
        }
        let mut client = match self.conn.take() {
            Some(c) => c,
            None => {
                self.locked = None;
                let mut c = conn::connect(&self.cfg, &self.name)?;
                conn::create_tables(
                    &mut c,
                    &[LEASE_SCHEMA],
                    &self.name,
                    "creating the lease table",
                )?;
                c
            }
        };
        let r = f(&mut client, self);
        match r {
            Ok(v) => {
                self.conn = Some(client);
                Ok(v)
            }
            Err(e) => {
                let (err, drop) = conn::classify(&e, &self.name, doing);
                if drop || client.is_closed() {
                    self.locked = None;
                } else {
                    self.conn = Some(client);
                }
                Err(err)
            }
        }
    }
}

/// The first half of the session's advisory lock keys: a hash of its
/// identity (two sessions that share it only make a standby wait for the
/// expiry now and then; the epoch still fences).
fn lock_key(key: &SessionKey) -> i32 {
    // FNV-1a: stable across builds and processes, unlike std's hasher.
    let mut h: u32 = 0x811c_9dc5;
    for b in key.id().bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h as i32
}

/// The second half: the epoch, folded into an `int4`.
fn lock_epoch(epoch: u64) -> i32 {
    (epoch & 0x7fff_ffff) as i32
}

/// `SELECT pg_try_advisory_lock(k, e)`.
fn try_lock(c: &mut Client, k: i32, epoch: u64) -> Result<bool, postgres::Error> {
    c.query_one(
        "SELECT pg_try_advisory_lock($1, $2)",
        &[&k, &lock_epoch(epoch)],
    )?
    .try_get(0)
}

/// `SELECT pg_advisory_unlock(k, e)`.
fn unlock(c: &mut Client, k: i32, epoch: u64) -> Result<(), postgres::Error> {
    c.execute(
        "SELECT pg_advisory_unlock($1, $2)",
        &[&k, &lock_epoch(epoch)],
    )?;
    Ok(())
}

/// What taking the lease found.
enum Taken {
    /// Held now, under this epoch.
    Held(u64),
    /// Another engine holds it.
    Busy,
    /// No engine holds the row's epoch (`.0`), but another connection
    /// holds the advisory lock of the next one: a racing standby, for a
    /// moment, or for as long as it lives an engine that held that epoch
    /// before the row was set back by hand.
    NextLocked(Option<i64>),
    /// The row's epoch can be raised no further.
    Exhausted,
}

/// How long the next epoch's lock may stay held by another connection,
/// with the row's own epoch free, before a take-over is reported as
/// blocked: a standby that won a race has raised the row by then.
const BLOCKED_AFTER: Duration = Duration::from_secs(2);

/// The epoch a take-over of a row at `epoch` raises it to: one above
/// the epoch, or 1 from an epoch no engine can hold (0 or below, set by
/// hand), as [`Holding`] counts from 1; `None` at `i64::MAX`, which
/// cannot be raised.
pub fn next_epoch(epoch: i64) -> Option<i64> {
    epoch.max(0).checked_add(1)
}

impl SessionLease for PostgresLease {
    fn session(&self) -> &SessionId {
        &self.key
    }

    fn holding(&self) -> &Arc<Holding> {
        &self.holding
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn acquire(&mut self) -> Result<Acquired, StoreError> {
        let secs = self.timeout.as_secs_f64();
        let taken = self.with_conn("taking the session's lease", |c, l| {
            // An advisory lock this connection kept from a taking since
            // lost (a fenced write, a renewal that failed for a whole
            // timeout) is stale: let go first, or taking the same epoch
            // again would lock it twice and a later unlock leave it held.
            if let Some(stale) = l.locked {
                unlock(c, l.lock_key, stale)?;
            }
            let k = key_params(&l.key);
            let row = c.query_opt(
                &format!(
                    "SELECT epoch, expires_at < now() FROM perfkit_session_leases WHERE {KEY}"
                ),
                &k,
            )?;
            // A NULL (the columns made NOT NULL by hand no longer) reads
            // as an epoch no engine holds, and an expiry passed.
            let (epoch, expired, exists): (Option<i64>, bool, bool) = match row {
                Some(r) => (
                    r.try_get(0)?,
                    r.try_get::<_, Option<bool>>(1)?.unwrap_or(true),
                    true,
                ),
                None => (None, true, false),
            };
            // An epoch of 0 or below (a hand edit) is no engine's:
            // `Holding` counts from 1.
            let held_by = epoch.filter(|&e| e > 0).and_then(|e| u64::try_from(e).ok());
            // The holder of `epoch` is gone when its lock is free (its
            // connection ended); with no row, or an epoch nobody can
            // hold, there is no holder.
            let took_old = match held_by {
                Some(e) if !expired => {
                    if !try_lock(c, l.lock_key, e)? {
                        return Ok(Taken::Busy);
                    }
                    Some(e)
                }
                _ => None,
            };
            // Raised in checked arithmetic: an epoch at i64::MAX would
            // wrap to one a stale engine may hold.
            let Some((next, next_u)) =
                next_epoch(epoch.unwrap_or(0)).and_then(|n| Some((n, u64::try_from(n).ok()?)))
            else {
                if let Some(old) = took_old {
                    unlock(c, l.lock_key, old)?;
                }
                return Ok(Taken::Exhausted);
            };
            // The next epoch's lock first: once the row says `next`, a
            // third engine must find its lock taken.
            if !try_lock(c, l.lock_key, next_u)? {
                if let Some(old) = took_old {
                    unlock(c, l.lock_key, old)?;
                }
                return Ok(Taken::NextLocked(epoch));
            }
            let mut p = k.to_vec();
            p.extend_from_slice(&[&epoch, &next, &l.me, &secs]);
            let n = if exists {
                // Compared as it was read: whichever engine raises it
                // first wins, the others change nothing.
                c.execute(
                    &format!(
                        "UPDATE perfkit_session_leases SET epoch = $6::int8, holder = $7, \
                         expires_at = now() + make_interval(secs => $8) \
                         WHERE {KEY} AND epoch IS NOT DISTINCT FROM $5::int8"
                    ),
                    &p,
                )?
            } else {
                c.execute(
                    "INSERT INTO perfkit_session_leases (beginstring, sendercompid, \
                     targetcompid, session_qualifier, epoch, holder, expires_at) \
                     SELECT $1::bpchar, $2::varchar, $3::varchar, $4::varchar, $6::int8, $7, \
                     now() + make_interval(secs => $8) WHERE $5::int8 IS NULL \
                     ON CONFLICT DO NOTHING",
                    &p,
                )?
            };
            if let Some(old) = took_old {
                unlock(c, l.lock_key, old)?;
            }
            if n == 1 {
                Ok(Taken::Held(next_u))
            } else {
                // Another engine raised the epoch (or made the row)
                // first.
                unlock(c, l.lock_key, next_u)?;
                Ok(Taken::Busy)
            }
        });
        // Whatever happened, the stale lock is gone or its connection is.
        self.locked = None;
        let taken = taken?;
        let blocked = match &taken {
            Taken::NextLocked(epoch) => Some(*epoch),
            _ => None,
        };
        // The same row blocked since when (a new epoch starts the clock
        // again).
        let since = match (self.blocked.take(), blocked) {
            (Some((e, t)), Some(now)) if e == now => Some((e, t)),
            (_, Some(now)) => Some((now, Instant::now())),
            (_, None) => None,
        };
        self.blocked = since;
        match taken {
            Taken::Held(epoch) => {
                self.locked = Some(epoch);
                self.holding.hold(epoch);
                Ok(Acquired::Taken)
            }
            Taken::Busy => Ok(Acquired::Busy),
            Taken::NextLocked(epoch) => match since {
                Some((_, t)) if t.elapsed() >= BLOCKED_AFTER => {
                    let epoch = epoch.map_or("NULL".to_string(), |e| e.to_string());
                    Ok(Acquired::Unusable(format!(
                        "the row of {} in perfkit_session_leases ({}) has epoch {epoch}, whose \
                         holder is gone or expired, but for {} s another connection has held \
                         the advisory lock of the epoch a take-over raises it to (an engine \
                         that held that epoch before the row was set back by hand, alive or \
                         hung): no engine serves the session until that connection ends or \
                         the epoch is set above every epoch used",
                        self.key.id(),
                        self.db,
                        t.elapsed().as_secs()
                    )))
                }
                _ => Ok(Acquired::Busy),
            },
            Taken::Exhausted => Ok(Acquired::Unusable(format!(
                "the row of {} in perfkit_session_leases ({}) has epoch {}, the largest a \
                 BIGINT holds: no take-over can raise it, and no engine serves the session \
                 until its epoch is set lower by hand (to 0, say)",
                self.key.id(),
                self.db,
                i64::MAX
            ))),
        }
    }

    fn renew(&mut self) -> Result<bool, StoreError> {
        let Some(epoch) = self.holding.epoch() else {
            return Ok(false);
        };
        let secs = self.timeout.as_secs_f64();
        // Every epoch held came from the BIGINT column.
        let Ok(e) = i64::try_from(epoch) else {
            self.holding.lose(epoch);
            return Ok(false);
        };
        let held = self.with_conn("renewing the session's lease", |c, l| {
            let mut p = key_params(&l.key).to_vec();
            p.extend_from_slice(&[&e, &secs]);
            let n = c.execute(
                &format!(
                    "UPDATE perfkit_session_leases \
                     SET expires_at = now() + make_interval(secs => $6) \
                     WHERE {KEY} AND epoch = $5::int8"
                ),
                &p,
            )?;
            // A new connection (the old one was lost) takes the lock
            // again; a standby that found it free meanwhile may take the
            // lease over, which the epoch fences.
            if n == 1 && l.locked != Some(epoch) {
                try_lock(c, l.lock_key, epoch)?;
            }
            // Taken over: the old epoch's lock goes, so that this engine
            // waiting as a standby never mistakes it for the new
            // holder's.
            if n == 0 && l.locked == Some(epoch) {
                unlock(c, l.lock_key, epoch)?;
            }
            Ok(n == 1)
        })?;
        if held {
            self.locked = Some(epoch);
        } else {
            self.locked = None;
            self.holding.lose(epoch);
        }
        Ok(held)
    }

    fn release(&mut self) {
        let Some(epoch) = self.holding.epoch() else {
            return;
        };
        self.holding.lose(epoch);
        let Ok(e) = i64::try_from(epoch) else {
            return;
        };
        let _ = self.with_conn("giving the session's lease up", |c, l| {
            let mut p = key_params(&l.key).to_vec();
            p.push(&e);
            c.execute(
                &format!(
                    "UPDATE perfkit_session_leases SET expires_at = now() - interval '1 second' \
                     WHERE {KEY} AND epoch = $5::int8"
                ),
                &p,
            )?;
            unlock(c, l.lock_key, epoch)
        });
        self.locked = None;
    }
}
