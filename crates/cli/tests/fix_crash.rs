//! `kill -9` the acceptor at random points while an initiator floods it
//! with orders, at least 50 times, and check that no order was lost or
//! answered twice.
//!
//! Both engines are `perfkit fix` processes with file stores; only the
//! acceptor is killed (and restarted at once). The ledger is the
//! initiator's message log: every NewOrderSingle it sent and every
//! ExecutionReport it received, as they crossed the wire. An order is
//! lost when no ExecutionReport ever answers its ClOrdID; it is
//! duplicated when the acceptor answered it afresh more often than it was
//! sent copies, i.e. an answer came for a copy sent without
//! PossDupFlag(43)=Y after the first. Answers the acceptor resent (43=Y)
//! are copies of one answer, not new ones.

mod order_ledger;

use order_ledger::ledger;
use perfkit_testkit::noise::Rng;
use perfkit_testkit::process::{Running, free_port};

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

const CRASHES: usize = 50;
const ROUNDS: usize = 10;
const ORDERS: u64 = 20_000;

fn settings(dir: &Path, port: u16) {
    let common = "BeginString=FIX.4.4\nStartTime=00:00:00\nEndTime=00:00:00\nHeartBtInt=30\n\
                  UseDataDictionary=N\nReconnectInterval=1\n";
    std::fs::write(
        dir.join("acceptor.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{common}\
             FileStorePath={}\n\n[SESSION]\nSenderCompID=EXEC\nTargetCompID=BANZAI\n",
            dir.join("acceptor-store").display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("initiator.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\n\
             SocketConnectPort={port}\n{common}FileStorePath={}\n\n\
             [SESSION]\nSenderCompID=BANZAI\nTargetCompID=EXEC\n",
            dir.join("initiator-store").display()
        ),
    )
    .unwrap();
}

/// The acceptor, and a channel that gets a message at each Logon it
/// completes (read from its event lines on stderr).
fn acceptor(dir: &Path) -> (Running, mpsc::Receiver<()>) {
    let mut child = perfkit()
        .current_dir(dir)
        .args(["fix", "acceptor", "acceptor.cfg", "--app", "exec"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if line.contains("Logon complete") && tx.send(()).is_err() {
                break;
            }
        }
    });
    (Running(child), rx)
}

#[test]
fn no_order_is_lost_or_answered_twice_across_kill_9s_of_the_acceptor() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    settings(d, port);
    let (mut acc, mut logons) = acceptor(d);
    // A fixed seed, so a failing run can be repeated.
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut crashes = 0;
    let deadline = Instant::now() + Duration::from_secs(600);
    for round in 0..ROUNDS {
        let log = d.join(format!("round-{round}.log"));
        let mut init = Running(
            perfkit()
                .current_dir(d)
                .args(["fix", "initiator", "initiator.cfg", "--orders"])
                .arg(ORDERS.to_string())
                .args(["--window", "20", "--log"])
                .arg(&log)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        // Crash the acceptor a share of the remaining times this round,
        // each at a random moment after a Logon, while orders flow.
        let want = (CRASHES - crashes).div_ceil(ROUNDS - round);
        for _ in 0..want {
            let logged_on = loop {
                match logons.recv_timeout(Duration::from_millis(200)) {
                    Ok(()) => break true,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if init.try_wait().unwrap().is_some() {
                            break false;
                        }
                        assert!(
                            Instant::now() < deadline,
                            "no Logon after {crashes} crashes"
                        );
                    }
                    Err(e) => panic!("acceptor events: {e}"),
                }
            };
            if !logged_on {
                break;
            }
            std::thread::sleep(Duration::from_millis(rng.below(60)));
            if init.try_wait().unwrap().is_some() {
                break;
            }
            acc.kill().unwrap();
            acc.wait().unwrap();
            crashes += 1;
            (acc, logons) = acceptor(d);
        }
        let started = Instant::now();
        while init.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(120) {
                init.kill().unwrap();
                init.wait().unwrap();
                let orders = ledger(&log);
                let unanswered: Vec<&String> = orders
                    .iter()
                    .filter(|(_, o)| o.sent > 0 && o.fresh_answers + o.resent_answers == 0)
                    .map(|(id, _)| id)
                    .collect();
                panic!(
                    "round {round}: the initiator never got every order answered; lost after {crashes} crashes: {unanswered:?}"
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let status = init.wait().unwrap();
        assert!(status.success(), "round {round}: initiator {status}");
        let mut out = String::new();
        std::io::Read::read_to_string(init.stdout.as_mut().unwrap(), &mut out).unwrap();
        assert!(out.contains(&format!("answered {ORDERS}")), "{out}");

        let orders = ledger(&log);
        let mut lost = Vec::new();
        let mut duplicated = Vec::new();
        for n in 1..=ORDERS {
            let id = n.to_string();
            let Some(o) = orders.get(&id) else {
                panic!("round {round}: order {id} was never sent")
            };
            assert_eq!(o.sent, 1, "round {round}: order {id} sent afresh twice");
            if o.fresh_answers + o.resent_answers == 0 {
                lost.push(id.clone());
            }
            if o.fresh_answers > o.sent + o.sent_possdup
                || (o.fresh_answers > 1 && o.sent_possdup == 0)
            {
                duplicated.push((id.clone(), format!("{o:?}")));
            }
        }
        assert!(lost.is_empty(), "round {round}: lost orders {lost:?}");
        assert!(
            duplicated.is_empty(),
            "round {round}: duplicated orders {duplicated:?}"
        );
        if crashes >= CRASHES {
            break;
        }
    }
    assert!(
        crashes >= CRASHES,
        "only {crashes} crashes: rounds ended before the acceptor could be killed"
    );
}
