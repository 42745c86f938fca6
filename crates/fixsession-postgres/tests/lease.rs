//! Session leases against a real PostgreSQL server: one holder at a
//! time, a dead holder's lease taken at once, a hung holder's after its
//! expiry, and no write of a fenced holder landing after the new holder
//! read the numbers.

mod db;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use db::settings;
use fixsession::lease::{Acquired, SessionLease, Standing, Vacancy};
use fixsession::settings::PostgresSettings;
use fixsession::store::SessionStore;
use fixsession_postgres::{PostgresLease, PostgresStore, SessionKey};
use perfkit_testkit::postgres::{DATABASE, Postgres};

fn key() -> SessionKey {
    SessionKey::new("FIX.4.4", "EXEC", "BANZAI", "")
}

fn msg(seq: u64) -> Vec<u8> {
    format!("8=FIX.4.4\x0135=8\x0134={seq}\x0149=EXEC\x0156=BANZAI\x0110=000\x01").into_bytes()
}

/// A lease and the fenced store that writes under it: one engine.
struct Engine {
    lease: PostgresLease,
    store: PostgresStore,
}

fn engine(db: &PostgresSettings, timeout: Duration) -> Engine {
    let lease = PostgresLease::new(db, key(), timeout);
    let store = PostgresStore::open_fenced(db, key(), lease.holding().clone()).unwrap();
    Engine { lease, store }
}

/// Whether `lease` is taken now.
fn taken(lease: &mut PostgresLease) -> bool {
    lease.acquire().unwrap() == Acquired::Taken
}

/// Sends one message: saved, numbers advanced, flushed.
fn send(store: &mut PostgresStore) -> Result<(), fixsession::store::StoreError> {
    let seq = store.next_sender_seq();
    store.save(seq, &msg(seq))?;
    store.set_seqs(seq + 1, store.next_target_seq())?;
    store.flush()
}

fn db_outgoing(pg: &Postgres) -> u64 {
    pg.psql(
        DATABASE,
        "SELECT outgoing_seqnum FROM sessions WHERE sendercompid = 'EXEC'",
    )
    .trim()
    .parse()
    .unwrap()
}

/// The lease's life: the first engine takes it; the second cannot while
/// the first lives; the first dies (its connections close, as at kill -9)
/// and the second takes it at once, long before the expiry; the second
/// hangs (holds its connection, renews nothing) and a third takes it
/// after the expiry; each old holder's writes are refused and land
/// nothing; each new holder starts from the numbers the old one wrote.
#[test]
fn one_holder_at_a_time_and_stale_holders_are_fenced() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    let long = Duration::from_secs(60);
    let mut a = engine(&db, long);
    let mut b = engine(&db, long);
    assert_eq!(a.store.standing(), Standing::NotHeld(Vacancy::Unlooked));
    // Not held: nothing is written.
    let e = send(&mut a.store).unwrap_err();
    assert!(e.is_fenced(), "{e}");
    assert!(taken(&mut a.lease));
    assert!(!taken(&mut b.lease));
    assert_eq!(a.store.standing(), Standing::Held { current: false });
    a.store.refresh().unwrap();
    assert_eq!(a.store.standing(), Standing::Held { current: true });
    for _ in 0..5 {
        send(&mut a.store).unwrap();
    }
    assert!(a.lease.renew().unwrap());
    assert_eq!(db_outgoing(&pg), 6);

    // A dies: its lease connection closes; its store's stays open here,
    // as a hung process's would, so fencing alone must stop it.
    let Engine {
        lease: dead,
        store: mut stale,
    } = a;
    let holding = dead.holding().clone();
    drop(dead);
    // The server releases the dead connection's advisory lock once its
    // backend has ended, which may be a moment after the close: a
    // standby polls (the engine's keeper every 100 ms), far inside the
    // expiry.
    let t = Instant::now();
    while !taken(&mut b.lease) {
        assert!(t.elapsed() < long / 2, "not taken after {:?}", t.elapsed());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "taken only after {:?}",
        t.elapsed()
    );
    // The dead engine's holding still says epoch 1 (nobody told it);
    // its write finds epoch 2 in the database and lands nothing.
    assert_eq!(holding.epoch(), Some(1));
    let e = send(&mut stale).unwrap_err();
    assert!(e.is_fenced(), "{e}");
    assert_eq!(holding.epoch(), None, "a fenced write clears the holding");
    assert_eq!(db_outgoing(&pg), 6);
    b.store.refresh().unwrap();
    assert_eq!(b.store.next_sender_seq(), 6);
    send(&mut b.store).unwrap();
    assert_eq!(db_outgoing(&pg), 7);

    // B hangs with its connection open: C waits for the expiry.
    let short = Duration::from_secs(1);
    let mut c = engine(&db, short);
    assert!(!taken(&mut c.lease));
    pg.psql(
        DATABASE,
        "UPDATE perfkit_session_leases SET expires_at = now() + interval '1 second'",
    );
    let t = Instant::now();
    while !taken(&mut c.lease) {
        assert!(t.elapsed() < Duration::from_secs(10), "never taken over");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        t.elapsed() >= Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    // B resumes: its renewal says it lost the lease; its write is fenced.
    assert!(!b.lease.renew().unwrap());
    assert_eq!(b.store.standing(), Standing::NotHeld(Vacancy::Busy));
    assert!(send(&mut b.store).unwrap_err().is_fenced());
    c.store.refresh().unwrap();
    assert_eq!(c.store.next_sender_seq(), 7);
    send(&mut c.store).unwrap();
    // A released lease is free at once.
    c.lease.release();
    assert!(taken(&mut b.lease));
    assert_eq!(
        pg.psql(DATABASE, "SELECT epoch FROM perfkit_session_leases"),
        "4\n"
    );
}

/// A holder writes as fast as it can while another engine takes its
/// lease over (its lease connection dropped, as at a kill): the writes
/// stop at a fenced one, and none lands after the new holder read the
/// numbers. Twenty times.
#[test]
fn no_write_lands_after_the_takeover() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    let long = Duration::from_secs(60);
    let mut next = engine(&db, long);
    assert!(taken(&mut next.lease));
    next.store.refresh().unwrap();
    for round in 0..20u64 {
        let Engine { lease, mut store } = next;
        let started = Arc::new(AtomicBool::new(false));
        let writer = {
            let started = started.clone();
            std::thread::spawn(move || {
                let mut sent = 0u64;
                loop {
                    match send(&mut store) {
                        Ok(()) => sent += 1,
                        Err(e) if e.is_fenced() => return sent,
                        Err(e) => panic!("{e}"),
                    }
                    started.store(true, Ordering::Relaxed);
                }
            })
        };
        while !started.load(Ordering::Relaxed) {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(round % 7));
        next = engine(&db, long);
        drop(lease);
        let t = Instant::now();
        while !taken(&mut next.lease) {
            assert!(t.elapsed() < Duration::from_secs(10), "never taken over");
        }
        next.store.refresh().unwrap();
        let read = next.store.next_sender_seq();
        let sent = writer.join().unwrap();
        assert!(sent > 0);
        assert_eq!(
            db_outgoing(&pg),
            read,
            "round {round}: a fenced write landed after the new holder read the numbers"
        );
        send(&mut next.store).unwrap();
    }
}

/// The race the fencing statement is built for, made to happen: the old
/// holder's write has read its epoch and waits (a third client holds the
/// session's row) when the new holder takes the lease over and reads the
/// numbers. The takeover must wait for that write to end, so the new
/// holder reads what it wrote; a fence that only compared epochs would
/// let the takeover through and the write land after the reading.
#[test]
fn a_takeover_waits_for_the_write_in_flight() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    let long = Duration::from_secs(60);
    let mut old = engine(&db, long);
    assert!(taken(&mut old.lease));
    old.store.refresh().unwrap();
    send(&mut old.store).unwrap();
    let url = format!(
        "host=127.0.0.1 port={} user=postgres dbname={DATABASE}",
        pg.port
    );
    let mut blocker = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut watcher = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut waiting = || -> i64 {
        watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
                &[],
            )
            .unwrap()
            .get(0)
    };
    let mut tx = blocker.transaction().unwrap();
    tx.execute("SELECT 1 FROM sessions FOR UPDATE", &[])
        .unwrap();
    let Engine {
        lease: old_lease,
        store: mut old_store,
    } = old;
    let writer = std::thread::spawn(move || send(&mut old_store).map_err(|e| e.to_string()));
    let t = Instant::now();
    while waiting() < 1 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the write never waited"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(old_lease);
    let taker = std::thread::spawn(move || {
        let mut new = engine(&db, long);
        let t = Instant::now();
        while !taken(&mut new.lease) {
            assert!(t.elapsed() < Duration::from_secs(10), "never taken over");
        }
        new.store.refresh().unwrap();
        new.store.next_sender_seq()
    });
    // The takeover waits behind the write (two waiting), or, were the
    // fence broken, ends at once.
    let t = Instant::now();
    while waiting() < 2 && !taker.is_finished() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    tx.commit().unwrap();
    let wrote = writer.join().unwrap();
    let read = taker.join().unwrap();
    assert_eq!(wrote, Ok(()), "the write that came first lands");
    assert_eq!(
        read, 3,
        "the new holder read the numbers before the write landed"
    );
    assert_eq!(db_outgoing(&pg), 3);
}

/// Whatever epoch a hand edit leaves in the row, and whether its expiry
/// is past or an hour ahead, a take-over raises it to max(epoch, 0) + 1
/// and the store then writes under it; at `i64::MAX`, which cannot be
/// raised, the take-over is refused with a sentence naming the row, and
/// the row and the store's numbers stay as they were.
#[test]
fn a_hand_set_epoch_is_taken_over_or_refused_naming_the_row() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    let long = Duration::from_secs(60);
    // The table and the row, made by a first holder that then lets go.
    let mut first = engine(&db, long);
    assert!(taken(&mut first.lease));
    first.lease.release();
    let row = || pg.psql(DATABASE, "SELECT epoch FROM perfkit_session_leases");
    let past = "now() - interval '1 hour'";
    let ahead = "now() + interval '1 hour'";
    for (epoch, expiry, want) in [
        (0, ahead, Some(1)),
        (-5, ahead, Some(1)),
        (i64::MIN, past, Some(1)),
        (0, past, Some(1)),
        (41, past, Some(42)),
        (i64::MAX - 1, past, Some(i64::MAX)),
        (i64::MAX, past, None),
        (i64::MAX, ahead, None),
    ] {
        pg.psql(
            DATABASE,
            &format!(
                "UPDATE perfkit_session_leases SET epoch = {epoch}, expires_at = {expiry}, \
                 holder = 'by hand'"
            ),
        );
        let mut e = engine(&db, long);
        let case = format!("epoch {epoch}, expiry {expiry}");
        let found = e.lease.acquire().unwrap();
        match want {
            Some(next) => {
                assert_eq!(found, Acquired::Taken, "{case}");
                assert_eq!(
                    e.lease.holding().epoch(),
                    u64::try_from(next).ok(),
                    "{case}"
                );
                assert_eq!(row(), format!("{next}\n"), "{case}");
                e.store.refresh().unwrap();
                let before = e.store.next_sender_seq();
                send(&mut e.store).unwrap();
                assert_eq!(db_outgoing(&pg), before + 1, "{case}");
                e.lease.release();
            }
            None => {
                let Acquired::Unusable(why) = found else {
                    panic!("{case}: {found:?}");
                };
                for part in [
                    "perfkit_session_leases",
                    "FIX.4.4:EXEC->BANZAI",
                    "9223372036854775807",
                    "postgresql://",
                ] {
                    assert!(why.contains(part), "{case}: {why}");
                }
                assert!(!why.contains('\n'), "{why}");
                assert_eq!(e.lease.holding().epoch(), None, "{case}");
                assert_eq!(row(), format!("{epoch}\n"), "{case}");
                let before = db_outgoing(&pg);
                assert!(send(&mut e.store).unwrap_err().is_fenced(), "{case}");
                assert_eq!(db_outgoing(&pg), before, "{case}");
            }
        }
    }
}

/// A row set back by hand below the epoch a live (or hung) engine still
/// holds: the take-over's next epoch is that engine's, whose advisory
/// lock it keeps. The standby finds it blocked, as for a race, and once
/// it stays so says it in a sentence naming the row; when the old
/// holder's renewal finds the row changed it lets the lock go, and the
/// standby takes the lease at max(epoch, 0) + 1.
#[test]
fn a_row_set_back_under_a_live_holder_is_named_then_taken() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    let long = Duration::from_secs(60);
    let mut old = engine(&db, long);
    assert!(taken(&mut old.lease));
    pg.psql(DATABASE, "UPDATE perfkit_session_leases SET epoch = 0");
    let mut new = engine(&db, long);
    assert_eq!(new.lease.acquire().unwrap(), Acquired::Busy);
    let t = Instant::now();
    let why = loop {
        match new.lease.acquire().unwrap() {
            Acquired::Unusable(why) => break why,
            Acquired::Busy => {}
            Acquired::Taken => panic!("taken while the old holder kept epoch 1's lock"),
        }
        assert!(t.elapsed() < Duration::from_secs(10), "never said");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(t.elapsed() >= Duration::from_secs(1), "{:?}", t.elapsed());
    for part in ["perfkit_session_leases", "FIX.4.4:EXEC->BANZAI", "epoch 0"] {
        assert!(why.contains(part), "{why}");
    }
    // The old holder's renewal finds epoch 0: it lets go.
    assert!(!old.lease.renew().unwrap());
    assert!(taken(&mut new.lease));
    assert_eq!(
        pg.psql(DATABASE, "SELECT epoch FROM perfkit_session_leases"),
        "1\n"
    );
    new.store.refresh().unwrap();
    send(&mut new.store).unwrap();
    assert!(send(&mut old.store).unwrap_err().is_fenced());
}

/// A row deleted by hand twice over: the first engine takes the lease
/// at epoch 1 and writes; it loses the row, a second engine takes epoch 1
/// in turn and writes; the row goes again and the first engine takes
/// epoch 1 once more. Its numbers were read under epoch 1 too, but under
/// an earlier taking: it must read them again before it writes, and its
/// next number is the second engine's, not its own stale one.
#[test]
fn a_lease_taken_again_at_the_same_epoch_reads_the_numbers_again() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    let long = Duration::from_secs(60);
    let mut a = engine(&db, long);
    assert!(taken(&mut a.lease));
    a.store.refresh().unwrap();
    send(&mut a.store).unwrap();
    pg.psql(DATABASE, "DELETE FROM perfkit_session_leases");
    assert!(!a.lease.renew().unwrap());
    let mut b = engine(&db, long);
    assert!(taken(&mut b.lease));
    b.store.refresh().unwrap();
    for _ in 0..3 {
        send(&mut b.store).unwrap();
    }
    assert_eq!(db_outgoing(&pg), 5);
    pg.psql(DATABASE, "DELETE FROM perfkit_session_leases");
    assert!(!b.lease.renew().unwrap());
    assert!(taken(&mut a.lease));
    assert_eq!(a.lease.holding().epoch(), Some(1));
    assert_eq!(a.store.standing(), Standing::Held { current: false });
    let e = send(&mut a.store).unwrap_err();
    assert!(e.is_fenced(), "{e}");
    assert_eq!(db_outgoing(&pg), 5, "a stale number was written");
    a.store.refresh().unwrap();
    assert_eq!(a.store.next_sender_seq(), 5);
    send(&mut a.store).unwrap();
    assert_eq!(db_outgoing(&pg), 6);
}

/// An engine whose write was fenced (its row set back to 0 by hand)
/// takes the lease again at epoch 1 with the advisory lock it still had;
/// once it loses that taking too, the lock must be free: a standby takes
/// the lease at once instead of finding epoch 1's lock still held (it
/// was taken twice and let go once).
#[test]
fn a_lease_taken_again_with_its_own_lock_leaves_no_lock_behind() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    let long = Duration::from_secs(60);
    let mut a = engine(&db, long);
    assert!(taken(&mut a.lease));
    a.store.refresh().unwrap();
    let back = "UPDATE perfkit_session_leases SET epoch = 0";
    pg.psql(DATABASE, back);
    assert!(send(&mut a.store).unwrap_err().is_fenced());
    assert!(taken(&mut a.lease));
    assert_eq!(a.lease.holding().epoch(), Some(1));
    pg.psql(DATABASE, back);
    assert!(!a.lease.renew().unwrap());
    let mut b = engine(&db, long);
    assert_eq!(b.lease.acquire().unwrap(), Acquired::Taken);
    assert_eq!(b.lease.holding().epoch(), Some(1));
}
