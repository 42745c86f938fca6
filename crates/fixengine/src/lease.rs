//! The lease keeper: one thread per engine that takes the leases of the
//! sessions it may serve and keeps them (see [`fixsession::lease`]). The
//! thread starts with the first lease: an engine whose stores lease
//! nothing runs no thread beside its sessions'.
//!
//! While a lease is not held the keeper tries to take it every
//! [`POLL`] (a standby, waiting for the holder to die or hang), from
//! [`STARTUP_GRACE`] after it was made; while it
//! is held, it renews it three times per timeout. A renewal that finds
//! the lease taken over, or no renewal succeeding for a whole timeout (a
//! database out of reach: the lease has expired by now, on the
//! database's clock, or will before this engine could write again),
//! clears the holding, and the session's connection ends without a
//! word ([`crate::connection::run`]); so does a store write the
//! database refused as fenced (the store clears the holding, and the
//! keeper finds it cleared at its next look). Each change is one line.
//!
//! Each look that does not take a lease tells the holding why
//! ([`Vacancy`]): another engine holds it, its record is unusable (said
//! in one line naming the record, once until it is mended), or its
//! database is out of reach. Until the first look a holding reads
//! [`Vacancy::Unlooked`], and the acceptor holds a Logon for the session
//! until then rather than refuse it.
//!
//! A session's store shares the lease's [`Holding`]; when the store is
//! dropped (a session made at a Logon, between connections) the keeper
//! gives the lease up and forgets it. [`Keeper::stop`] gives every lease
//! up, so a standby takes over at once rather than after the expiry.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fixsession::lease::{Acquired, Holding, SessionLease, Vacancy};

/// How often a lease not held is tried.
pub const POLL: Duration = Duration::from_millis(100);

/// How long a keeper just made waits before it tries any lease: an
/// engine restarted after a crash (by its supervisor, at once) must not
/// race the standby that has been waiting for that crash, or the
/// counterparty, which reconnects to the standby, is refused and loses
/// another `ReconnectInterval`.
pub const STARTUP_GRACE: Duration = Duration::from_millis(500);

/// Where the keeper's lines go: one line, without its newline.
pub type Events = Arc<dyn Fn(&str) + Send + Sync>;

/// A lease and what the keeper knows of it.
struct Entry {
    lease: Box<dyn SessionLease>,
    /// The last renewal (or taking) that succeeded.
    renewed: Instant,
    /// The database could not be reached since this time (said once).
    failing: Option<Instant>,
    /// The lease's record was found unusable, and said so, since the
    /// last look that found it usable.
    unusable: bool,
    /// The epoch held when the keeper last looked. Between two looks
    /// only a store can clear a holding (a write it found fenced), and
    /// the keeper then says so, as it says every other loss.
    held: Option<u64>,
}

/// The leases kept, shared with the keeper's thread.
struct Shared {
    entries: Mutex<Vec<Entry>>,
    /// When the keeper was made: the start-up grace runs from here, not
    /// from the thread's start (the first lease).
    made: Instant,
    stop: AtomicBool,
    events: Events,
}

/// The engine's lease keeper (see the [module docs](self)). Shared by
/// reference (or in an `Arc`) between the sessions' threads.
pub struct Keeper {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Keeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keeper").finish_non_exhaustive()
    }
}

impl Keeper {
    /// Makes the keeper, with no leases yet; its lines go to `events`.
    /// Its thread starts with the first lease.
    pub fn new(events: Events) -> Keeper {
        Keeper {
            shared: Arc::new(Shared {
                entries: Mutex::new(Vec::new()),
                made: Instant::now(),
                stop: AtomicBool::new(false),
                events,
            }),
            thread: Mutex::new(None),
        }
    }

    /// Keeps `lease` from now on: taken as soon as it is free, renewed
    /// while held.
    pub fn add(&self, lease: Box<dyn SessionLease>) {
        let held = lease.holding().epoch();
        lock(&self.shared.entries).push(Entry {
            lease,
            renewed: Instant::now(),
            failing: None,
            unusable: false,
            held,
        });
        let mut thread = lock(&self.thread);
        if thread.is_none() && !self.shared.stop.load(Ordering::Relaxed) {
            let run = Arc::clone(&self.shared);
            *thread = Some(
                std::thread::Builder::new()
                    .name("lease keeper".into())
                    .spawn(move || keep(&run))
                    .expect("spawning the lease keeper's thread"),
            );
        }
    }

    /// Tries to take `lease` now, on the caller's thread (a session made
    /// at a Logon, which must be held before its store is read): kept
    /// from then on when taken, dropped (with its connection) when not.
    pub fn take_now(&self, mut lease: Box<dyn SessionLease>) -> Result<Arc<Holding>, String> {
        match lease.acquire() {
            Ok(Acquired::Taken) => {
                let holding = Arc::clone(lease.holding());
                (self.shared.events)(&taken_line(&*lease));
                self.add(lease);
                Ok(holding)
            }
            Ok(Acquired::Busy) => Err("another engine holds the session's lease".into()),
            Ok(Acquired::Unusable(why)) => Err(format!("the session's lease: {why}")),
            Err(e) => Err(format!("taking the session's lease: {e}")),
        }
    }

    /// Ends the thread and gives every lease up (once the sessions have
    /// ended: they can write no more). Dropping the keeper does the same.
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
        for e in lock(&self.shared.entries).iter_mut() {
            e.lease.release();
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.stop();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn taken_line(lease: &dyn SessionLease) -> String {
    format!(
        "{}: lease taken (epoch {}): this engine serves the session",
        lease.session(),
        lease.holding().epoch().unwrap_or(0)
    )
}

/// The keeper's loop.
fn keep(shared: &Shared) {
    while !shared.stop.load(Ordering::Relaxed) && shared.made.elapsed() < STARTUP_GRACE {
        std::thread::sleep(POLL / 4);
    }
    while !shared.stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        // Tended outside the lock: the database calls may take a
        // connection timeout, and a Logon adding its lease
        // (`Keeper::take_now`) must not wait behind them.
        let mut tending = std::mem::take(&mut *lock(&shared.entries));
        tending.retain_mut(|e| {
            // Only the keeper holds the holding: the session's store is
            // gone.
            if Arc::strong_count(e.lease.holding()) == 1 {
                e.lease.release();
                return false;
            }
            tend(e, &*shared.events);
            e.held = e.lease.holding().epoch();
            true
        });
        // Leases added meanwhile stay, after the ones tended.
        let mut entries = lock(&shared.entries);
        tending.append(&mut entries);
        *entries = tending;
        drop(entries);
        if let Some(rest) = POLL.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
    }
}

/// One look at one lease: take it when free, renew it when due.
fn tend(e: &mut Entry, events: &(dyn Fn(&str) + Send + Sync)) {
    let timeout = e.lease.timeout();
    if let Some(epoch) = e.held
        && e.lease.holding().epoch().is_none()
    {
        events(&format!(
            "{}: lease lost: a store write found another engine holding the session \
             (epoch {epoch} is stale); this engine stops serving it",
            e.lease.session()
        ));
    }
    // Most looks find a lease held and not yet due: nothing to ask.
    let result = match e.lease.holding().epoch() {
        None => e.lease.acquire().map(|found| match found {
            Acquired::Taken => {
                e.renewed = Instant::now();
                e.unusable = false;
                events(&taken_line(&*e.lease));
            }
            Acquired::Busy => {
                e.unusable = false;
                e.lease.holding().vacant(Vacancy::Busy);
            }
            Acquired::Unusable(why) => {
                e.lease.holding().vacant(Vacancy::Unusable);
                // Once, until the record is mended: it is looked at
                // every POLL.
                if !std::mem::replace(&mut e.unusable, true) {
                    events(&format!(
                        "{}: lease: {why}; this engine tries again every {} ms",
                        e.lease.session(),
                        POLL.as_millis()
                    ));
                }
            }
        }),
        Some(epoch) if e.renewed.elapsed() >= timeout / 3 => match e.lease.renew() {
            Ok(true) => {
                e.renewed = Instant::now();
                Ok(())
            }
            Ok(false) => {
                e.lease.holding().vacant(Vacancy::Busy);
                events(&format!(
                    "{}: lease lost: another engine has taken the session over (epoch {epoch} \
                     is stale); this engine stops serving it",
                    e.lease.session()
                ));
                Ok(())
            }
            Err(err) => Err(err),
        },
        Some(_) => Ok(()),
    };
    let id = e.lease.session();
    match result {
        Ok(()) => {
            if let Some(since) = e.failing.take() {
                events(&format!(
                    "{id}: the lease's database answers again after {:.1} s",
                    since.elapsed().as_secs_f64()
                ));
            }
        }
        Err(err) => {
            if e.failing.is_none() {
                e.failing = Some(Instant::now());
                events(&format!("{id}: lease: {err}; trying again"));
            }
            match e.lease.holding().epoch() {
                None => e.lease.holding().vacant(Vacancy::Unreachable),
                Some(_) if e.renewed.elapsed() < timeout => {}
                Some(epoch) => {
                    e.lease.holding().lose(epoch);
                    e.lease.holding().vacant(Vacancy::Unreachable);
                    events(&format!(
                        "{id}: lease not renewed for {} s: a standby may have taken the \
                         session over; this engine stops serving it",
                        timeout.as_secs_f64()
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixsession::id::SessionId;
    use fixsession::store::StoreError;

    /// What the fake lease is told to answer, and what it was asked.
    #[derive(Debug, Default)]
    struct Script {
        free: bool,
        /// Why the record is unusable, when it is (and not free).
        unusable: Option<String>,
        renew: Option<bool>,
        released: u32,
    }

    #[derive(Debug)]
    struct Fake {
        id: SessionId,
        holding: Arc<Holding>,
        script: Arc<Mutex<Script>>,
        timeout: Duration,
    }

    impl SessionLease for Fake {
        fn session(&self) -> &SessionId {
            &self.id
        }
        fn holding(&self) -> &Arc<Holding> {
            &self.holding
        }
        fn timeout(&self) -> Duration {
            self.timeout
        }
        fn acquire(&mut self) -> Result<Acquired, StoreError> {
            let script = lock(&self.script);
            if script.free {
                self.holding.hold(7);
                return Ok(Acquired::Taken);
            }
            Ok(match &script.unusable {
                Some(why) => Acquired::Unusable(why.clone()),
                None => Acquired::Busy,
            })
        }
        fn renew(&mut self) -> Result<bool, StoreError> {
            match lock(&self.script).renew {
                Some(true) => Ok(true),
                Some(false) => {
                    self.holding.lose(7);
                    Ok(false)
                }
                None => Err(StoreError::Unavailable {
                    store: "fake".into(),
                    why: "down".into(),
                }),
            }
        }
        fn release(&mut self) {
            lock(&self.script).released += 1;
            self.holding.lose(7);
        }
    }

    fn wait_for(what: &str, ok: impl Fn() -> bool) {
        let until = Instant::now() + Duration::from_secs(10);
        while !ok() {
            assert!(Instant::now() < until, "never: {what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// No thread runs before the first lease; a free lease is taken
    /// after the start-up wait; one taken over is let go with a line;
    /// one whose database stays away for a whole timeout is let go too;
    /// one whose store is dropped is released and forgotten; one whose
    /// record is unusable is said once and its holding says so; and a
    /// keeper that stops releases what it holds.
    #[test]
    fn the_keeper_takes_keeps_and_lets_go() {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = Arc::clone(&lines);
        let started = Instant::now();
        let keeper = Keeper::new(Arc::new(move |l: &str| lock(&sink).push(l.to_string())));
        let fake = |free: bool, renew: Option<bool>| {
            let script = Arc::new(Mutex::new(Script {
                free,
                unusable: None,
                renew,
                released: 0,
            }));
            let lease = Fake {
                id: SessionId::new("FIX.4.4", "A", "B", ""),
                holding: Holding::new(),
                script: Arc::clone(&script),
                timeout: Duration::from_millis(300),
            };
            (lease, script)
        };
        let (lost, lost_script) = fake(true, Some(true));
        let lost_holding = Arc::clone(lost.holding());
        assert!(lock(&keeper.thread).is_none(), "a thread before any lease");
        keeper.add(Box::new(lost));
        assert!(lock(&keeper.thread).is_some(), "no thread for a lease");
        wait_for("taken", || lost_holding.epoch() == Some(7));
        assert!(started.elapsed() >= STARTUP_GRACE);
        // Taken over: the next renewal says so.
        lock(&lost_script).free = false;
        lock(&lost_script).renew = Some(false);
        wait_for("lost", || lost_holding.epoch().is_none());
        wait_for("the line", || {
            lock(&lines).iter().any(|l| l.contains("lease lost"))
        });

        // A store write found the lease taken over (the store clears the
        // holding): the keeper says so once, and takes it again when free.
        let (fenced, fenced_script) = fake(true, Some(true));
        let fenced_holding = Arc::clone(fenced.holding());
        keeper.add(Box::new(fenced));
        wait_for("taken", || fenced_holding.epoch() == Some(7));
        lock(&fenced_script).free = false;
        fenced_holding.lose(7);
        wait_for("the fenced write's line", || {
            lock(&lines)
                .iter()
                .any(|l| l.contains("lease lost: a store write"))
        });
        std::thread::sleep(POLL * 3);
        let fenced_lines = lock(&lines)
            .iter()
            .filter(|l| l.contains("lease lost: a store write"))
            .count();
        assert_eq!(fenced_lines, 1, "{:?}", lock(&lines));
        assert_eq!(fenced_holding.vacancy(), Vacancy::Busy);
        drop(fenced_holding);

        // The database away for longer than the timeout.
        let (away, away_script) = fake(true, None);
        let away_holding = Arc::clone(away.holding());
        keeper.add(Box::new(away));
        wait_for("taken", || away_holding.epoch() == Some(7));
        lock(&away_script).free = false;
        wait_for("given up", || away_holding.epoch().is_none());
        assert!(lock(&lines).iter().any(|l| l.contains("not renewed")));

        // The store dropped: released and forgotten.
        let (dropped, dropped_script) = fake(true, Some(true));
        let holding = Arc::clone(dropped.holding());
        keeper.add(Box::new(dropped));
        wait_for("taken", || holding.epoch() == Some(7));
        drop(holding);
        wait_for("released", || lock(&dropped_script).released == 1);

        // An unusable record: said once, however often looked at, and
        // the holding says why; then mended, and taken.
        let (stuck, stuck_script) = fake(false, Some(true));
        lock(&stuck_script).unusable = Some("the row is odd".into());
        let holding = Arc::clone(stuck.holding());
        assert_eq!(holding.vacancy(), Vacancy::Unlooked);
        keeper.add(Box::new(stuck));
        wait_for("looked", || holding.vacancy() == Vacancy::Unusable);
        std::thread::sleep(POLL * 3);
        let said = |what: &str| lock(&lines).iter().filter(|l| l.contains(what)).count();
        assert_eq!(said("the row is odd"), 1, "{:?}", lock(&lines));
        lock(&stuck_script).unusable = None;
        wait_for("busy", || holding.vacancy() == Vacancy::Busy);
        lock(&stuck_script).free = true;
        wait_for("taken", || holding.epoch() == Some(7));
        drop(holding);

        // Stopping releases the held.
        let (held, held_script) = fake(true, Some(true));
        let holding = Arc::clone(held.holding());
        keeper.add(Box::new(held));
        wait_for("taken", || holding.epoch() == Some(7));
        keeper.stop();
        assert_eq!(lock(&held_script).released, 1);
        assert_eq!(holding.epoch(), None);
    }
}
