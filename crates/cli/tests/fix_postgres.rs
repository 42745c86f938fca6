//! The PostgreSQL store under `perfkit fix`, against a real server that
//! perfkit-testkit starts in a temporary cluster:
//!
//! - failover: two acceptors share the database with `RefreshOnLogon=Y`;
//!   the one serving is killed (`kill -9`) while orders flow, the
//!   initiator reconnects to the other, which takes the session over;
//!   several times, each way;
//! - outage: the database server is stopped mid-session (cleanly, then
//!   as a crash) and started again on the same directory and port.
//!
//! Either way no order may be lost and none answered twice except as a
//! PossDup copy. The ledger is the initiator's message log (as in
//! `fix_crash.rs`): every NewOrderSingle it sent and every
//! ExecutionReport it received, as they crossed the wire.

mod order_ledger;

use order_ledger::Order;
use perfkit_testkit::postgres::{DATABASE, Postgres};
use perfkit_testkit::process::{Running, free_port};

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

const COMMON: &str = "BeginString=FIX.4.4\nStartTime=00:00:00\nEndTime=00:00:00\n\
                      HeartBtInt=30\nUseDataDictionary=N\nReconnectInterval=1\n";

/// An acceptor's settings: the session on `port`, its store (and log)
/// in `pg`, reloaded at every Logon.
fn acceptor_cfg(dir: &Path, name: &str, port: u16, pg: &Postgres) {
    std::fs::write(
        dir.join(name),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}\
             RefreshOnLogon=Y\n{}{}\n[SESSION]\nSenderCompID=EXEC\nTargetCompID=BANZAI\n",
            pg.settings("PostgreSQLStore"),
            pg.settings("PostgreSQLLog"),
        ),
    )
    .unwrap();
}

/// The initiator's settings: it connects to each port in turn (the
/// first, then the next after each lost connection), with its own file
/// store.
fn initiator_cfg(dir: &Path, ports: &[u16]) {
    let mut targets = String::new();
    for (i, p) in ports.iter().enumerate() {
        let n = if i == 0 { String::new() } else { i.to_string() };
        targets.push_str(&format!(
            "SocketConnectHost{n}=127.0.0.1\nSocketConnectPort{n}={p}\n"
        ));
    }
    std::fs::write(
        dir.join("initiator.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=initiator\n{targets}{COMMON}FileStorePath={}\n\n\
             [SESSION]\nSenderCompID=BANZAI\nTargetCompID=EXEC\n",
            dir.join("initiator-store").display()
        ),
    )
    .unwrap();
}

/// An acceptor process, a channel that gets a message at each Logon it
/// completes, and its stderr lines (all of them, once it ends).
struct Acceptor {
    child: Running,
    logons: mpsc::Receiver<()>,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

fn acceptor(dir: &Path, cfg: &str) -> Acceptor {
    let mut child = perfkit()
        .current_dir(dir)
        .args(["fix", "acceptor", cfg, "--app", "exec"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if line.contains("Logon complete") {
                let _ = tx.send(());
            }
            keep.lock().unwrap().push(line);
        }
    });
    Acceptor {
        child: Running(child),
        logons: rx,
        lines,
    }
}

impl Acceptor {
    /// Waits up to `limit` for its next Logon.
    fn logged_on(&self, limit: Duration) -> bool {
        self.logons.recv_timeout(limit).is_ok()
    }

    /// Waits until it listens on `port` (its first line says it does).
    fn listening(&self, port: u16) {
        let until = Instant::now() + Duration::from_secs(20);
        while !self.stderr().contains(&format!("on port {port}")) {
            assert!(Instant::now() < until, "not listening: {}", self.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stderr(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }
}

/// The initiator sending `orders` orders, 20 unfilled at most, logging
/// every message to `log`.
fn initiator(dir: &Path, orders: u64, log: &Path) -> Running {
    Running(
        perfkit()
            .current_dir(dir)
            .args(["fix", "initiator", "initiator.cfg", "--orders"])
            .arg(orders.to_string())
            .args(["--window", "20", "--log"])
            .arg(log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// The ledger of `log`, and how many ExecutionReports came as PossDup
/// copies.
fn ledger(log: &Path) -> (HashMap<String, Order>, u32) {
    let orders = order_ledger::ledger(log);
    let resent = orders.values().map(|o| o.resent_answers).sum();
    (orders, resent)
}

/// Waits for the initiator to finish (within `limit`), checks it
/// answered every order, and checks the ledger: every order sent once
/// afresh, answered at least once, never answered afresh more often than
/// it was sent. Returns the initiator's final `seqs SENDER TARGET` and
/// the number of PossDup answers.
fn check(mut init: Running, orders: u64, log: &Path, limit: Duration) -> ((u64, u64), u32) {
    let started = Instant::now();
    while init.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            init.kill().unwrap();
            init.wait().unwrap();
            let (ledger, _) = ledger(log);
            let unanswered: Vec<&String> = ledger
                .iter()
                .filter(|(_, o)| o.sent > 0 && o.fresh_answers + o.resent_answers == 0)
                .map(|(id, _)| id)
                .collect();
            panic!("the initiator did not finish within {limit:?}; unanswered: {unanswered:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = init.wait().unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(init.stdout.as_mut().unwrap(), &mut out).unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(init.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "initiator {status}: {err}");
    assert!(out.contains(&format!("answered {orders}")), "{out}{err}");
    let (ledger, resent) = ledger(log);
    let mut lost = Vec::new();
    let mut duplicated = Vec::new();
    for n in 1..=orders {
        let id = n.to_string();
        let o = ledger
            .get(&id)
            .unwrap_or_else(|| panic!("order {id} was never sent"));
        assert_eq!(o.sent, 1, "order {id} sent afresh twice");
        if o.fresh_answers + o.resent_answers == 0 {
            lost.push(id.clone());
        }
        if o.fresh_answers > o.sent + o.sent_possdup || (o.fresh_answers > 1 && o.sent_possdup == 0)
        {
            duplicated.push((id.clone(), format!("{o:?}")));
        }
    }
    assert!(lost.is_empty(), "lost orders {lost:?}");
    assert!(duplicated.is_empty(), "duplicated orders {duplicated:?}");
    let seqs = out
        .lines()
        .find_map(|l| l.strip_prefix("seqs "))
        .and_then(|s| s.split_once(' '))
        .map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap()))
        .unwrap_or_else(|| panic!("no seqs line: {out}"));
    (seqs, resent)
}

/// The session's numbers in the database: (incoming, outgoing).
fn db_seqs(pg: &Postgres) -> (u64, u64) {
    let row = pg.psql(
        DATABASE,
        "SELECT incoming_seqnum, outgoing_seqnum FROM sessions \
         WHERE sendercompid = 'EXEC' AND targetcompid = 'BANZAI'",
    );
    let (a, b) = row.trim().split_once('|').expect("one session row");
    (a.parse().unwrap(), b.parse().unwrap())
}

const FAILOVERS: usize = 4;
const FAILOVER_ORDERS: u64 = 30_000;

/// Acceptors A and B share the database; the initiator knows both
/// addresses. The acceptor serving is killed (`kill -9`) at a random
/// moment while orders flow and started again as the standby; the other
/// takes the session over at the initiator's next Logon, reloading the
/// numbers from the database (`RefreshOnLogon=Y`) and resending from its
/// `messages` table. Every order is answered, none twice afresh, and at
/// the end the database's numbers are the initiator's.
#[test]
fn a_standby_takes_the_session_over_from_a_killed_acceptor() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ports = [free_port(), free_port()];
    let cfgs = ["a.cfg", "b.cfg"];
    for (cfg, port) in cfgs.iter().zip(ports) {
        acceptor_cfg(d, cfg, port, &pg);
    }
    initiator_cfg(d, &ports);
    let mut engines = [acceptor(d, cfgs[0]), acceptor(d, cfgs[1])];
    engines[0].listening(ports[0]);
    engines[1].listening(ports[1]);
    let log = d.join("initiator.log");
    let mut init = initiator(d, FAILOVER_ORDERS, &log);

    // A tiny deterministic generator, so a failing run can be repeated.
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut below = |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    // The initiator tries A first, then B, then A...
    let mut serving = 0;
    let mut killed = 0;
    for _ in 0..FAILOVERS {
        if !engines[serving].logged_on(Duration::from_secs(20)) {
            let _ = init.kill();
            let _ = init.wait();
            let mut err = String::new();
            std::io::Read::read_to_string(init.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!(
                "acceptor {serving} never logged on: {}\ninitiator: {err}",
                engines[serving].stderr()
            );
        }
        std::thread::sleep(Duration::from_millis(20 + below(130)));
        if init.try_wait().unwrap().is_some() {
            break;
        }
        engines[serving].child.kill().unwrap();
        engines[serving].child.wait().unwrap();
        killed += 1;
        engines[serving] = acceptor(d, cfgs[serving]);
        engines[serving].listening(ports[serving]);
        serving = 1 - serving;
    }
    assert_eq!(
        killed, FAILOVERS,
        "the orders were done before every failover: raise FAILOVER_ORDERS"
    );
    let ((sender, target), resent) = check(init, FAILOVER_ORDERS, &log, Duration::from_secs(120));
    // The last acceptor's numbers are in the database, and they are the
    // initiator's: (its next expected = our next to send, and back).
    assert_eq!(db_seqs(&pg), (sender, target));
    eprintln!("{killed} failovers; {resent} ExecutionReports resent as PossDup copies");
    // The log tables hold both engines' events.
    let logons: u64 = pg
        .psql(
            DATABASE,
            "SELECT count(*) FROM event_log WHERE text = 'Logon complete' \
             AND sendercompid = 'EXEC' AND session_qualifier IS NULL",
        )
        .trim()
        .parse()
        .unwrap();
    assert!(logons > FAILOVERS as u64, "{logons} Logons logged");
    for e in &engines {
        assert!(!e.stderr().contains("panicked"), "{}", e.stderr());
    }
}

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
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}\
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
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}\
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
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}{}\n\
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
