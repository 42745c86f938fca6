//! The store and log against a real PostgreSQL server (started by
//! perfkit-testkit in a temporary cluster).

mod db;

use db::settings;
use fixcore::value::UtcTimestamp;
use fixsession::log::Log;
use fixsession::settings::PostgresLogSettings;
use fixsession::store::{SessionStore, StoreError};
use fixsession_postgres::{PostgresLog, PostgresStore, SessionKey};
use perfkit_testkit::postgres::{DATABASE, Postgres};
use std::time::Duration;

fn key() -> SessionKey {
    SessionKey::new("FIX.4.2", "ISLD", "TW", "")
}

fn msg(seq: u64) -> Vec<u8> {
    format!("8=FIX.4.2\x0135=8\x0134={seq}\x0149=ISLD\x0156=TW\x0110=000\x01").into_bytes()
}

/// The whole life of a store on one server: what is flushed is in
/// QuickFIX's rows, what is not is not; another store of the same
/// session (a standby) reads it; a reset empties it; a lost server is
/// `Unavailable` with nothing forgotten, and the store carries on once
/// the server is back.
#[test]
fn the_store_keeps_quickfixs_rows_and_survives_a_server_restart() {
    let Some(mut pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    let mut a = PostgresStore::open(&db, key()).unwrap();
    assert_eq!((a.next_sender_seq(), a.next_target_seq()), (1, 1));
    let row = |pg: &Postgres| {
        pg.psql(
            DATABASE,
            "SELECT beginstring, sendercompid, targetcompid, session_qualifier, \
             incoming_seqnum, outgoing_seqnum FROM sessions",
        )
    };
    assert_eq!(row(&pg), "FIX.4.2 |ISLD|TW||1|1\n");

    for seq in 1..=300 {
        a.save(seq, &msg(seq)).unwrap();
    }
    a.set_seqs(301, 7).unwrap();
    // Nothing reaches the database before the flush.
    assert_eq!(pg.psql(DATABASE, "SELECT count(*) FROM messages"), "0\n");
    a.flush().unwrap();
    assert_eq!(row(&pg), "FIX.4.2 |ISLD|TW||7|301\n");
    assert_eq!(pg.psql(DATABASE, "SELECT count(*) FROM messages"), "300\n");
    assert_eq!(
        pg.psql(
            DATABASE,
            "SELECT message FROM messages WHERE msgseqnum = 42"
        ),
        format!("{}\n", String::from_utf8(msg(42)).unwrap())
    );

    // A standby's store of the same session reads what was flushed, and
    // every message, across the read-ahead's boundary.
    let mut b = PostgresStore::open(&db, key()).unwrap();
    assert_eq!((b.next_sender_seq(), b.next_target_seq()), (301, 7));
    for seq in 1..=300 {
        let mut out = Vec::new();
        assert!(b.load(seq, &mut out).unwrap(), "{seq}");
        assert_eq!(out, msg(seq));
    }
    assert!(!b.load(301, &mut Vec::new()).unwrap());
    // A number saved again replaces the row, as QuickFIX's set does.
    b.save(5, b"8=FIX.4.2\x0135=4\x01").unwrap();
    b.flush().unwrap();
    let mut out = Vec::new();
    assert!(a.load(5, &mut out).unwrap());
    assert_eq!(out, b"8=FIX.4.2\x0135=4\x01");
    // A round of numbers stored already, one saved twice in it: each
    // row once, the newest copy.
    b.save(6, b"8=FIX.4.2\x0135=4\x0158=old\x01").unwrap();
    b.save(7, b"8=FIX.4.2\x0135=4\x0158=seven\x01").unwrap();
    b.save(6, b"8=FIX.4.2\x0135=4\x0158=new\x01").unwrap();
    b.flush().unwrap();
    assert_eq!(
        pg.psql(
            DATABASE,
            "SELECT msgseqnum, message FROM messages WHERE msgseqnum IN (6, 7) ORDER BY 1"
        ),
        "6|8=FIX.4.2\x0135=4\x0158=new\x01\n7|8=FIX.4.2\x0135=4\x0158=seven\x01\n"
    );

    // Refresh drops what was not flushed (never sent) for the database's
    // numbers.
    a.save(301, &msg(301)).unwrap();
    a.set_seqs(302, 8).unwrap();
    a.refresh().unwrap();
    assert_eq!((a.next_sender_seq(), a.next_target_seq()), (301, 7));
    assert!(!a.load(301, &mut Vec::new()).unwrap());

    // The server goes away: the flush says so, as transient, and keeps
    // the round; once the server is back, the same flush writes it.
    pg.stop(true);
    a.save(301, &msg(301)).unwrap();
    a.set_seqs(302, 8).unwrap();
    let e = a.flush().unwrap_err();
    assert!(
        matches!(e, StoreError::Unavailable { .. }) && e.is_transient(),
        "{e}"
    );
    assert!(a.flush().unwrap_err().is_transient());
    assert_eq!(a.pending(), 1);
    pg.restart();
    a.flush().unwrap();
    assert_eq!(row(&pg), "FIX.4.2 |ISLD|TW||8|302\n");
    // The standby's connection, idle across the restart, is replaced at
    // its first use: its refresh (at a Logon) works the first time.
    b.refresh().unwrap();
    assert_eq!((b.next_sender_seq(), b.next_target_seq()), (302, 8));
    assert_eq!(pg.psql(DATABASE, "SELECT count(*) FROM messages"), "301\n");

    // A reset forgets the messages and restarts the numbers, on flush.
    a.reset().unwrap();
    assert!(!a.load(3, &mut Vec::new()).unwrap());
    a.flush().unwrap();
    assert_eq!(row(&pg), "FIX.4.2 |ISLD|TW||1|1\n");
    assert_eq!(pg.psql(DATABASE, "SELECT count(*) FROM messages"), "0\n");

    // Numbers past QuickFIX's INTEGER columns are refused, not wrapped.
    assert_eq!(a.max_seq(), i32::MAX as u64);
    assert!(matches!(
        a.save(1 << 31, b"x"),
        Err(StoreError::OutOfRange { .. })
    ));
}

/// Two sessions on one database, one with a qualifier: their rows do not
/// mix, and a table QuickFIX's script made (here by psql, before the
/// store opens) is used as it is.
#[test]
fn sessions_are_keyed_by_quickfixs_four_columns() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    pg.psql(
        DATABASE,
        "CREATE TABLE sessions (beginstring CHAR(8) NOT NULL, sendercompid VARCHAR(64) NOT NULL, \
         targetcompid VARCHAR(64) NOT NULL, session_qualifier VARCHAR(64) NOT NULL, \
         creation_time TIMESTAMP NOT NULL, incoming_seqnum INTEGER NOT NULL, \
         outgoing_seqnum INTEGER NOT NULL, \
         PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier)); \
         INSERT INTO sessions VALUES ('FIX.4.4', 'A', 'B', 'q', now(), 40, 50)",
    );
    let db = settings(&pg);
    let mut q = PostgresStore::open(&db, SessionKey::new("FIX.4.4", "A", "B", "q")).unwrap();
    let mut plain = PostgresStore::open(&db, SessionKey::new("FIX.4.4", "A", "B", "")).unwrap();
    assert_eq!((q.next_sender_seq(), q.next_target_seq()), (50, 40));
    assert_eq!((plain.next_sender_seq(), plain.next_target_seq()), (1, 1));
    q.save(50, b"qualified").unwrap();
    q.set_seqs(51, 40).unwrap();
    plain.save(1, b"plain").unwrap();
    plain.set_seqs(2, 1).unwrap();
    q.flush().unwrap();
    plain.flush().unwrap();
    let mut out = Vec::new();
    assert!(!plain.load(50, &mut out).unwrap());
    assert!(q.load(50, &mut out).unwrap());
    assert_eq!(out, b"qualified");
}

/// The log writes QuickFIX's log rows (NULL qualifier for a session
/// without one) at flush, to the tables its keys name, and keeps them
/// while the server is away.
#[test]
fn the_log_writes_quickfixs_log_rows() {
    let Some(mut pg) = Postgres::start(false) else {
        return;
    };
    let s = PostgresLogSettings {
        connect: settings(&pg),
        incoming_table: "fix_in".into(),
        ..PostgresLogSettings::default()
    };
    let mut log = PostgresLog::open(&s, key()).unwrap();
    let now = UtcTimestamp::now();
    log.message(now, true, b"8=FIX.4.2\x0135=A\x01");
    log.message(now, false, b"8=FIX.4.2\x0135=A\x01x");
    log.event(now, "Logon complete");
    assert_eq!(pg.psql(DATABASE, "SELECT count(*) FROM fix_in"), "0\n");
    // Written by the log's own thread, once handed over.
    assert!(log.sync(Duration::from_secs(10)));
    assert!(log.take_failure().is_none());
    let rows = |pg: &Postgres, t: &str| {
        pg.psql(
            DATABASE,
            &format!(
                "SELECT beginstring, sendercompid, targetcompid, \
                 coalesce(session_qualifier, 'NULL'), text FROM {t} ORDER BY id"
            ),
        )
    };
    assert_eq!(
        rows(&pg, "fix_in"),
        "FIX.4.2 |ISLD|TW|NULL|8=FIX.4.2\x0135=A\x01\n"
    );
    assert_eq!(
        rows(&pg, "messages_log"),
        "FIX.4.2 |ISLD|TW|NULL|8=FIX.4.2\x0135=A\x01x\n"
    );
    assert_eq!(
        rows(&pg, "event_log"),
        "FIX.4.2 |ISLD|TW|NULL|Logon complete\n"
    );

    // Away: the rows wait, the failure is reported once; back: written.
    pg.stop(false);
    log.event(now, "while away");
    assert!(!log.sync(Duration::from_millis(500)));
    assert!(log.take_failure().is_some_and(|e| e.is_transient()));
    log.event(now, "still away");
    assert!(!log.sync(Duration::from_millis(300)));
    assert!(log.take_failure().is_none(), "one failure per outage");
    assert_eq!(log.held(), 2);
    pg.restart();
    assert!(
        log.sync(Duration::from_secs(20)),
        "{:?}",
        log.take_failure()
    );
    assert!(
        rows(&pg, "event_log").ends_with("|while away\nFIX.4.2 |ISLD|TW|NULL|still away\n"),
        "{}",
        rows(&pg, "event_log")
    );
    // Dropping the log writes what the last round left.
    log.event(now, "last words");
    drop(log);
    assert!(rows(&pg, "event_log").ends_with("|last words\n"));
}

/// QuickFIX's tables as each release's scripts make them: 1.15.1's
/// `INTEGER` sequence columns, `BIGINT`, and `NUMERIC` (QuickFIX 1.16 on,
/// 64-bit numbers). Each is read and written, its numbers bounded by its
/// type; a value no store of ours could have written, and a column of
/// another type, are typed errors naming the column.
#[test]
fn every_sequence_column_type_quickfix_uses_is_read_and_written() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    for (ty, max) in [
        ("INTEGER", i32::MAX as u64),
        ("BIGINT", i64::MAX as u64),
        ("NUMERIC", i64::MAX as u64),
    ] {
        pg.psql(
            DATABASE,
            &format!(
                "DROP TABLE IF EXISTS sessions, messages; \
                 CREATE TABLE sessions (beginstring CHAR(8) NOT NULL, \
                 sendercompid VARCHAR(64) NOT NULL, targetcompid VARCHAR(64) NOT NULL, \
                 session_qualifier VARCHAR(64) NOT NULL, creation_time TIMESTAMP NOT NULL, \
                 incoming_seqnum {ty} NOT NULL, outgoing_seqnum {ty} NOT NULL, \
                 PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier)); \
                 CREATE TABLE messages (beginstring CHAR(8) NOT NULL, \
                 sendercompid VARCHAR(64) NOT NULL, targetcompid VARCHAR(64) NOT NULL, \
                 session_qualifier VARCHAR(64) NOT NULL, msgseqnum {ty} NOT NULL, \
                 message TEXT NOT NULL, PRIMARY KEY (beginstring, sendercompid, targetcompid, \
                 session_qualifier, msgseqnum)); \
                 INSERT INTO sessions VALUES ('FIX.4.2', 'ISLD', 'TW', '', now(), 7, 300)"
            ),
        );
        let mut s = PostgresStore::open(&db, key()).unwrap_or_else(|e| panic!("{ty}: {e}"));
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (300, 7), "{ty}");
        assert_eq!(s.max_seq(), max, "{ty}");
        for seq in 300..=310 {
            s.save(seq, &msg(seq)).unwrap();
        }
        s.set_seqs(311, 9).unwrap();
        s.flush().unwrap();
        let again = PostgresStore::open(&db, key()).unwrap();
        assert_eq!((again.next_sender_seq(), again.next_target_seq()), (311, 9));
        let mut out = Vec::new();
        assert!(again.load(305, &mut out).unwrap(), "{ty}");
        assert_eq!(out, msg(305));
        assert!(matches!(
            s.set_seqs(max + 1, 1),
            Err(StoreError::OutOfRange { .. })
        ));
        if ty != "INTEGER" {
            // Past 2^31 - 1, where 1.15.1 stops: the numbers go on.
            let big = (1u64 << 40) + 3;
            s.save(big, &msg(big)).unwrap();
            s.set_seqs(big + 1, 1 << 33).unwrap();
            s.flush().unwrap();
            let again = PostgresStore::open(&db, key()).unwrap();
            assert_eq!(again.next_sender_seq(), big + 1);
            assert_eq!(again.next_target_seq(), 1 << 33);
            let mut out = Vec::new();
            assert!(again.load(big, &mut out).unwrap());
            assert_eq!(out, msg(big));
        }
        if ty == "NUMERIC" {
            // QuickFIX's 64-bit unsigned numbers go past what this store
            // writes: read back, that is refused naming the column.
            pg.psql(
                DATABASE,
                "UPDATE sessions SET outgoing_seqnum = 18446744073709551615",
            );
            let e = PostgresStore::open(&db, key()).unwrap_err();
            assert!(
                e.to_string()
                    .contains("sessions.outgoing_seqnum is 18446744073709551615, above"),
                "{e}"
            );
        }
    }
    // A column of a type QuickFIX never used.
    pg.psql(
        DATABASE,
        "ALTER TABLE sessions ALTER COLUMN incoming_seqnum TYPE TEXT",
    );
    let e = PostgresStore::open(&db, key()).unwrap_err();
    assert!(
        matches!(e, StoreError::Backend { .. })
            && e.to_string()
                .contains("column sessions.incoming_seqnum is of type text"),
        "{e}"
    );
}

/// Another client holds the `sessions` table locked for 2 s, from half
/// a second after this returns; join the handle for its outcome.
fn lock_sessions(pg: &Postgres) -> std::thread::JoinHandle<std::process::Output> {
    let mut lock = pg.psql_command(
        DATABASE,
        "SET statement_timeout = 0; BEGIN; LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE; \
         SELECT pg_sleep(2); COMMIT;",
    );
    let locker = std::thread::spawn(move || lock.output().unwrap());
    std::thread::sleep(Duration::from_millis(500));
    locker
}

/// A statement the server cancels (`statement_timeout`, here while
/// another client holds the table locked) is a passing failure: the
/// flush says `Unavailable`, keeps the round, and the same flush writes
/// it once the lock is gone.
#[test]
fn a_statement_timeout_is_transient() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    pg.psql(
        DATABASE,
        &format!("ALTER DATABASE {DATABASE} SET statement_timeout = '200ms'"),
    );
    // Opened after: its connection takes the setting.
    let mut s2 = PostgresStore::open(&db, key()).unwrap();
    let locker = lock_sessions(&pg);
    s2.save(1, &msg(1)).unwrap();
    s2.set_seqs(2, 1).unwrap();
    let e = s2.flush().unwrap_err();
    assert!(e.is_transient(), "{e}");
    assert!(e.to_string().contains("statement timeout"), "{e}");
    assert_eq!(s2.pending(), 1);
    assert!(locker.join().unwrap().status.success());
    s2.flush().unwrap();
    assert_eq!(
        pg.psql(DATABASE, "SELECT outgoing_seqnum FROM sessions"),
        "2\n"
    );
}

/// Waits for the store's background round to land or fail.
fn landed(s: &mut PostgresStore, ticket: u64) -> Result<(), StoreError> {
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while s.flushed()? < ticket {
        assert!(
            std::time::Instant::now() < until,
            "ticket {ticket} never landed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// Rounds written in the background: a large round goes to the writer
/// and lands under its ticket; while it is being written its messages
/// are still loaded, rounds begun meanwhile wait for it, and when it
/// fails (a statement timeout) it comes back, in order before them, for
/// the flush that writes everything once the database answers again.
#[test]
fn background_rounds_land_in_order_and_come_back_when_they_fail() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let db = settings(&pg);
    pg.psql(
        DATABASE,
        &format!("ALTER DATABASE {DATABASE} SET statement_timeout = '300ms'"),
    );
    let mut s = PostgresStore::open(&db, key()).unwrap();
    assert_eq!(s.flush_signal(), None, "no writer before a large round");
    for seq in 1..=20 {
        s.save(seq, &msg(seq)).unwrap();
    }
    s.set_seqs(21, 1).unwrap();
    let t1 = s.begin_flush().unwrap();
    assert!(
        s.flush_signal().is_some(),
        "a round of 20 goes to the writer"
    );
    landed(&mut s, t1).unwrap();
    let count = |pg: &Postgres| pg.psql(DATABASE, "SELECT count(*) FROM messages");
    assert_eq!(count(&pg), "20\n");

    let locker = lock_sessions(&pg);
    for seq in 21..=40 {
        s.save(seq, &msg(seq)).unwrap();
    }
    s.set_seqs(41, 1).unwrap();
    let t2 = s.begin_flush().unwrap();
    assert!(t2 > t1);
    let mut out = Vec::new();
    assert!(s.load(25, &mut out).unwrap(), "a message being written");
    assert_eq!(out, msg(25));
    for seq in 41..=45 {
        s.save(seq, &msg(seq)).unwrap();
    }
    s.set_seqs(46, 1).unwrap();
    let t3 = s.begin_flush().unwrap();
    assert!(t3 > t2);
    let e = landed(&mut s, t2).unwrap_err();
    assert!(e.is_transient(), "{e}");
    // The failed round is back before the one begun after it.
    assert_eq!(s.pending(), 25);
    assert_eq!(count(&pg), "20\n");
    assert!(locker.join().unwrap().status.success());
    s.flush().unwrap();
    assert!(s.flushed().unwrap() >= t3);
    assert_eq!(count(&pg), "45\n");
    assert_eq!(
        pg.psql(DATABASE, "SELECT outgoing_seqnum FROM sessions"),
        "46\n"
    );
    assert_eq!(
        pg.psql(
            DATABASE,
            "SELECT message FROM messages WHERE msgseqnum = 33"
        ),
        format!("{}\n", String::from_utf8(msg(33)).unwrap())
    );
}
