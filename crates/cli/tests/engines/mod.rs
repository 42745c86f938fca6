//! perfkit engines as the FIX process tests start them: acceptors (the
//! exec application) whose Logons a test can wait for, and an initiator
//! sending orders; the database tests' settings for both, and the checks
//! of the initiator's order ledger.

#![allow(dead_code)]

use crate::order_ledger::{self, Order};
use perfkit_testkit::postgres::{DATABASE, Postgres};
use perfkit_testkit::process::Running;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

/// Settings every engine of these tests shares, but the heartbeat
/// interval.
pub const COMMON: &str = "BeginString=FIX.4.4\nStartTime=00:00:00\nEndTime=00:00:00\n\
                          UseDataDictionary=N\nReconnectInterval=1\n";

/// An acceptor's settings: the session on `port`, its store (and log)
/// in `pg`, reloaded at every Logon, heartbeats every 30 s.
pub fn acceptor_cfg(dir: &Path, name: &str, port: u16, pg: &Postgres) {
    acceptor_cfg_with(dir, name, port, pg, "HeartBtInt=30\nRefreshOnLogon=Y\n");
}

/// An acceptor's settings with `extra` keys in `[DEFAULT]` (a heartbeat
/// interval among them).
pub fn acceptor_cfg_with(dir: &Path, name: &str, port: u16, pg: &Postgres, extra: &str) {
    std::fs::write(
        dir.join(name),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}{extra}\
             {}{}\n[SESSION]\nSenderCompID=EXEC\nTargetCompID=BANZAI\n",
            pg.settings("PostgreSQLStore"),
            pg.settings("PostgreSQLLog"),
        ),
    )
    .unwrap();
}

/// The initiator's settings: it connects to each port in turn (the
/// first, then the next after each lost connection), with its own file
/// store, heartbeats every 30 s.
pub fn initiator_cfg(dir: &Path, ports: &[u16]) {
    initiator_cfg_with(dir, ports, "HeartBtInt=30\n");
}

/// The initiator's settings with `extra` keys in `[DEFAULT]`.
pub fn initiator_cfg_with(dir: &Path, ports: &[u16], extra: &str) {
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
            "[DEFAULT]\nConnectionType=initiator\n{targets}{COMMON}{extra}FileStorePath={}\n\n\
             [SESSION]\nSenderCompID=BANZAI\nTargetCompID=EXEC\n",
            dir.join("initiator-store").display()
        ),
    )
    .unwrap();
}

/// An acceptor process, a channel that gets a message at each Logon it
/// completes, and its stderr lines (all of them, once it ends).
pub struct Acceptor {
    pub child: Running,
    pub logons: mpsc::Receiver<()>,
    pub lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

pub fn acceptor(dir: &Path, cfg: &str) -> Acceptor {
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
    pub fn logged_on(&self, limit: Duration) -> bool {
        self.logons.recv_timeout(limit).is_ok()
    }

    /// Waits until it listens on `port` (its first line says it does).
    pub fn listening(&self, port: u16) {
        let until = Instant::now() + Duration::from_secs(20);
        while !self.stderr().contains(&format!("on port {port}")) {
            assert!(Instant::now() < until, "not listening: {}", self.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stderr(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }
}

/// The initiator sending `orders` orders, 20 unfilled at most, logging
/// every message to `log` and its stderr to [`stderr_of`]`(log)`: a
/// file, not a pipe, which nobody would read until the end while a
/// resend's line per message filled it and stalled the initiator.
pub fn initiator(dir: &Path, orders: u64, log: &Path) -> Running {
    Running(
        perfkit()
            .current_dir(dir)
            .args(["fix", "initiator", "initiator.cfg", "--orders"])
            .arg(orders.to_string())
            .args(["--window", "20", "--log"])
            .arg(log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(stderr_of(log)).unwrap())
            .spawn()
            .unwrap(),
    )
}

/// Where [`initiator`] writes its stderr when its message log is `log`.
pub fn stderr_of(log: &Path) -> PathBuf {
    let mut p = log.as_os_str().to_owned();
    p.push(".err");
    PathBuf::from(p)
}

/// The ledger of `log`, and how many ExecutionReports came as PossDup
/// copies.
pub fn ledger(log: &Path) -> (HashMap<String, Order>, u32) {
    let orders = order_ledger::ledger(log);
    let resent = orders.values().map(|o| o.resent_answers).sum();
    (orders, resent)
}

/// Waits for the initiator to finish (within `limit`), checks it
/// answered every order, and checks the ledger: every order sent once
/// afresh, answered at least once, never answered afresh more often than
/// it was sent. Returns the initiator's final `seqs SENDER TARGET` and
/// the number of PossDup answers.
pub fn check(mut init: Running, orders: u64, log: &Path, limit: Duration) -> ((u64, u64), u32) {
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
    let err = std::fs::read_to_string(stderr_of(log)).unwrap();
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
pub fn db_seqs(pg: &Postgres) -> (u64, u64) {
    let row = pg.psql(
        DATABASE,
        "SELECT incoming_seqnum, outgoing_seqnum FROM sessions \
         WHERE sendercompid = 'EXEC' AND targetcompid = 'BANZAI'",
    );
    let (a, b) = row.trim().split_once('|').expect("one session row");
    (a.parse().unwrap(), b.parse().unwrap())
}
