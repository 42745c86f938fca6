//! The PostgreSQL store under `perfkit fix`, against a real server that
//! perfkit-testkit starts in a temporary cluster:
//!
//! - outage: the database server is stopped mid-session (cleanly, then
//!   as a crash) and started again on the same directory and port;
//! - tables QuickFIX's scripts made, templates, statement timeouts, and
//!   a database that cannot be reached at start.
//!
//! No order may be lost and none answered twice except as a PossDup
//! copy. The ledger is the initiator's message log (as in
//! `fix_crash.rs`): every NewOrderSingle it sent and every
//! ExecutionReport it received, as they crossed the wire. Failover
//! between engines is `fix_failover.rs`'s.

mod engines;
mod order_ledger;

use engines::{
    COMMON, acceptor, acceptor_cfg, check, db_seqs, initiator, initiator_cfg, ledger, perfkit,
};
use perfkit_testkit::postgres::{DATABASE, Postgres};
use perfkit_testkit::process::free_port;

use std::process::Stdio;
use std::time::{Duration, Instant};

const OUTAGE_ORDERS: u64 = 30_000;

/// The database server stops mid-session (cleanly: `pg_ctl stop -m fast`;
/// then as a crash: `-m immediate`) and starts again on the same
/// directory and port a moment later. The acceptor says so once per
/// outage, holds its answers and reads nothing meanwhile, and carries on
/// when the server is back: every order answered, none twice afresh, the
/// database's numbers the initiator's, and the acceptor still running.
#[test]
fn the_session_waits_out_a_database_restart_without_loss() {
    let Some(mut pg) = Postgres::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    acceptor_cfg(d, "acceptor.cfg", port, &pg);
    initiator_cfg(d, &[port]);
    let mut acc = acceptor(d, "acceptor.cfg");
    acc.listening(port);
    let log = d.join("initiator.log");
    let init = initiator(d, OUTAGE_ORDERS, &log);
    assert!(acc.logged_on(Duration::from_secs(20)), "{}", acc.stderr());
    for (i, fast) in [true, false].into_iter().enumerate() {
        // The session is back from the last outage, and orders flow.
        let until = Instant::now() + Duration::from_secs(30);
        while acc.stderr().matches("Store available again").count() < i {
            assert!(Instant::now() < until, "{}", acc.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        let sent = ledger(&log).0.values().filter(|o| o.sent > 0).count() as u64;
        assert!(
            sent < OUTAGE_ORDERS,
            "the orders were done before outage {i}: raise OUTAGE_ORDERS"
        );
        pg.stop(fast);
        std::thread::sleep(Duration::from_millis(1000));
        pg.restart();
    }
    let ((sender, target), _) = check(init, OUTAGE_ORDERS, &log, Duration::from_secs(120));
    assert_eq!(db_seqs(&pg), (sender, target));
    assert!(
        acc.child.try_wait().unwrap().is_none(),
        "the acceptor ended: {}",
        acc.stderr()
    );
    let stderr = acc.stderr();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let failed = stderr.matches("Store failed").count();
    let back = stderr.matches("Store available again").count();
    assert_eq!((failed, back), (2, 2), "{stderr}");
}

/// A database nobody serves stops the command at start, naming the
/// session and the database (never the password); a file that gives a
/// session both a file store and a PostgreSQL one is refused.
#[test]
fn an_unreachable_database_or_two_stores_stop_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (port, db_port) = (free_port(), free_port());
    let run = |text: String| {
        std::fs::write(d.join("a.cfg"), text).unwrap();
        let out = perfkit()
            .current_dir(d)
            .args(["fix", "acceptor", "a.cfg"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let session = "[SESSION]\nSenderCompID=EXEC\nTargetCompID=BANZAI\n";
    let (code, err) = run(format!(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}HeartBtInt=30\n\
         PostgreSQLStoreHost=127.0.0.1\nPostgreSQLStorePort={db_port}\n\
         PostgreSQLStorePassword=hunter2\n{session}"
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("opening the store of FIX.4.4:EXEC->BANZAI")
            && err.contains(&format!(
                "postgresql://postgres@127.0.0.1:{db_port}/quickfix FIX.4.4:EXEC->BANZAI: \
                 unavailable: connecting"
            ))
            && !err.contains("hunter2"),
        "{err}"
    );
    let (code, err) = run(format!(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}HeartBtInt=30\n\
         FileStorePath=store\nPostgreSQLStoreDatabase=fix\n{session}"
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("FileStorePath and PostgreSQLStore* keys both choose the session's store"),
        "{err}"
    );
}

/// An acceptor template (`AcceptorTemplate=Y`) whose store is the
/// database: three counterparties log on, and each session keeps its own
/// row of numbers in QuickFIX's `sessions` table, under its CompIDs.
#[test]
fn template_sessions_each_keep_their_numbers_in_the_database() {
    use perfkit_testkit::fix_wire::frame_now as frame;
    use perfkit_testkit::fix_wire::{connect, has, read_message};
    use std::io::Write;
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    std::fs::write(
        d.join("t.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}HeartBtInt=30\n{}\n\
             [SESSION]\nSenderCompID=EXEC\nTargetCompID=*\nAcceptorTemplate=Y\n",
            pg.settings("PostgreSQLStore"),
        ),
    )
    .unwrap();
    let acc = acceptor(d, "t.cfg");
    acc.listening(port);
    let mut open = Vec::new();
    for n in 0..3 {
        let mut c = connect(port);
        c.write_all(&frame(&format!(
            "35=A|34=1|49=CLIENT{n}|52=NOW|56=EXEC|98=0|108=30|"
        )))
        .unwrap();
        let answer = read_message(&mut c).expect("a Logon answer");
        assert!(has(&answer, "35=A"), "{answer:?}");
        open.push(c);
    }
    let rows = pg.psql(
        DATABASE,
        "SELECT targetcompid, incoming_seqnum, outgoing_seqnum FROM sessions \
         WHERE sendercompid = 'EXEC' ORDER BY targetcompid",
    );
    let rows: Vec<&str> = rows
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        rows,
        ["CLIENT0|2|2", "CLIENT1|2|2", "CLIENT2|2|2"],
        "{}",
        acc.stderr()
    );
}

const SCHEMA_ORDERS: u64 = 60_000;

/// Tables made by QuickFIX master's scripts (sequence columns `NUMERIC`)
/// before the acceptor first starts: it starts, the orders flow, and the
/// numbers land in them. Then the server cancels statements that wait
/// on a lock (`statement_timeout`) while another client holds the
/// sessions table: the session holds its answers and retries, as for a
/// lost server, and stays connected; every order is answered once.
#[test]
fn quickfix_master_tables_and_statement_timeouts_keep_the_session() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pg.psql(
        DATABASE,
        &format!("CREATE TABLE sessions (beginstring CHAR(8) NOT NULL, sendercompid VARCHAR(64) NOT NULL, \
         targetcompid VARCHAR(64) NOT NULL, session_qualifier VARCHAR(64) NOT NULL, \
         creation_time TIMESTAMP NOT NULL, incoming_seqnum NUMERIC NOT NULL, \
         outgoing_seqnum NUMERIC NOT NULL, \
         PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier)); \
         CREATE TABLE messages (beginstring CHAR(8) NOT NULL, sendercompid VARCHAR(64) NOT NULL, \
         targetcompid VARCHAR(64) NOT NULL, session_qualifier VARCHAR(64) NOT NULL, \
         msgseqnum NUMERIC NOT NULL, message TEXT NOT NULL, \
         PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier, msgseqnum)); \
         ALTER DATABASE {DATABASE} SET statement_timeout = '300ms'"),
    );
    let port = free_port();
    acceptor_cfg(d, "acceptor.cfg", port, &pg);
    initiator_cfg(d, &[port]);
    let acc = acceptor(d, "acceptor.cfg");
    acc.listening(port);
    let log = d.join("initiator.log");
    let init = initiator(d, SCHEMA_ORDERS, &log);
    assert!(acc.logged_on(Duration::from_secs(20)), "{}", acc.stderr());
    // Orders flow; then a client locks the numbers' table for 2 s.
    std::thread::sleep(Duration::from_millis(100));
    let sent = ledger(&log).0.values().filter(|o| o.sent > 0).count() as u64;
    assert!(
        sent < SCHEMA_ORDERS / 2,
        "the orders were nearly done: raise SCHEMA_ORDERS"
    );
    let locked = pg
        .psql_command(
            DATABASE,
            "SET statement_timeout = 0; BEGIN; LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE; \
             SELECT pg_sleep(2); COMMIT;",
        )
        .output()
        .unwrap();
    assert!(locked.status.success(), "{locked:?}");
    let ((sender, target), _) = check(init, SCHEMA_ORDERS, &log, Duration::from_secs(120));
    assert_eq!(db_seqs(&pg), (sender, target));
    let stderr = acc.stderr();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("canceling statement due to statement timeout")
            && stderr.contains("Store available again"),
        "{stderr}"
    );
    // One Logon: the session was never dropped.
    assert_eq!(stderr.matches("Logon complete").count(), 1, "{stderr}");
}

/// Every connection and table key of QuickFIX's PostgreSQL store and log,
/// each with a value other than its default, seen from the server: the
/// store's rows in `PostgreSQLStoreDatabase`, its tables owned by
/// `PostgreSQLStoreUser`, whose `PostgreSQLStorePassword` the server asks
/// for (scram-sha-256 for that role); the log's rows in
/// `PostgreSQLLogDatabase`, as `PostgreSQLLogUser` with its password, in
/// the tables `PostgreSQLLogIncomingTable`, `…OutgoingTable` and
/// `…EventTable` name. A wrong password stops the start, naming the
/// database and not the password.
#[test]
fn connection_and_table_keys_reach_the_server() {
    use perfkit_testkit::fix_wire::frame_now as frame;
    use perfkit_testkit::fix_wire::{connect, has, read_message};
    use std::io::Write;
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    pg.psql(DATABASE, "CREATE ROLE fixuser LOGIN PASSWORD 'sekret'");
    for db in ["fixstore", "fixlog"] {
        pg.psql(DATABASE, &format!("CREATE DATABASE {db} OWNER fixuser"));
    }
    // The role must give its password; everyone else is trusted still.
    let hba = pg.dir().join("data/pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(
        &hba,
        format!("host all fixuser 127.0.0.1/32 scram-sha-256\n{rules}"),
    )
    .unwrap();
    pg.psql(DATABASE, "SELECT pg_reload_conf()");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let keys = |store_pw: &str, log_pw: &str| {
        format!(
            "PostgreSQLStoreHost=127.0.0.1\nPostgreSQLStorePort={db}\nPostgreSQLStoreUser=fixuser\n\
             PostgreSQLStorePassword={store_pw}\nPostgreSQLStoreDatabase=fixstore\n\
             PostgreSQLLogHost=127.0.0.1\nPostgreSQLLogPort={db}\nPostgreSQLLogUser=fixuser\n\
             PostgreSQLLogPassword={log_pw}\nPostgreSQLLogDatabase=fixlog\n\
             PostgreSQLLogIncomingTable=fix_in\nPostgreSQLLogOutgoingTable=fix_out\n\
             PostgreSQLLogEventTable=fix_events\n",
            db = pg.port
        )
    };
    let cfg = |keys: String| {
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}HeartBtInt=30\n\
             {keys}[SESSION]\nSenderCompID=EXEC\nTargetCompID=BANZAI\n"
        )
    };
    // Wrong passwords, the store's then the log's.
    for (store_pw, log_pw) in [("wrong1", "sekret"), ("sekret", "wrong2")] {
        std::fs::write(d.join("bad.cfg"), cfg(keys(store_pw, log_pw))).unwrap();
        let out = perfkit()
            .current_dir(d)
            .args(["fix", "acceptor", "bad.cfg"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        let db = if store_pw.starts_with("wrong") {
            "fixstore"
        } else {
            "fixlog"
        };
        assert!(
            err.contains(&format!("postgresql://fixuser@127.0.0.1:{}/{db}", pg.port))
                && !err.contains("wrong1")
                && !err.contains("wrong2")
                && !err.contains("sekret"),
            "{err}"
        );
    }
    std::fs::write(d.join("a.cfg"), cfg(keys("sekret", "sekret"))).unwrap();
    let acc = acceptor(d, "a.cfg");
    acc.listening(port);
    // The session is served once its lease (in the store's database) is
    // held; a Logon before that is closed unanswered.
    let until = Instant::now() + Duration::from_secs(20);
    while !acc.stderr().contains("lease taken") {
        assert!(Instant::now() < until, "no lease: {}", acc.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut c = connect(port);
    c.write_all(&frame("35=A|34=1|49=BANZAI|52=NOW|56=EXEC|98=0|108=30|"))
        .unwrap();
    let answer =
        read_message(&mut c).unwrap_or_else(|| panic!("no Logon answer: {}", acc.stderr()));
    assert!(has(&answer, "35=A"), "{answer:?}");
    let q = |db: &str, sql: &str| pg.psql(db, sql).trim().to_string();
    assert_eq!(
        q(
            "fixstore",
            "SELECT incoming_seqnum || ' ' || outgoing_seqnum FROM sessions \
             WHERE sendercompid = 'EXEC' AND targetcompid = 'BANZAI'"
        ),
        "2 2",
        "{}",
        acc.stderr()
    );
    assert_eq!(
        q(
            "fixstore",
            "SELECT tableowner FROM pg_tables WHERE tablename = 'sessions'"
        ),
        "fixuser"
    );
    assert_eq!(
        q(
            DATABASE,
            "SELECT count(*) FROM pg_tables WHERE tablename = 'sessions'"
        ),
        "0",
        "the default database got the store's tables"
    );
    // The log's rows are written by its own thread: wait for them.
    let until = Instant::now() + Duration::from_secs(20);
    let count = |t: &str, like: &str| {
        q(
            "fixlog",
            &format!("SELECT count(*) FROM {t} WHERE text LIKE '{like}'"),
        )
    };
    while count("fix_events", "%Logon%") == "0" {
        assert!(Instant::now() < until, "no event rows: {}", acc.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(count("fix_in", "%35=A%"), "1");
    assert_eq!(count("fix_out", "%35=A%"), "1");
    assert_eq!(
        q(
            "fixlog",
            "SELECT count(*) FROM pg_tables WHERE tablename IN ('messages_log', 'event_log')"
        ),
        "0",
        "rows went to the default tables"
    );
    assert_eq!(
        q(
            "fixlog",
            "SELECT tableowner FROM pg_tables WHERE tablename = 'fix_in'"
        ),
        "fixuser"
    );
}
