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

mod engines;
mod order_ledger;

use engines::{acceptor, check, initiator};
use perfkit_testkit::noise::Rng;
use perfkit_testkit::process::free_port;

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

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

#[test]
fn no_order_is_lost_or_answered_twice_across_kill_9s_of_the_acceptor() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    settings(d, port);
    let mut acc = acceptor(d, "acceptor.cfg");
    // A fixed seed, so a failing run can be repeated.
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut crashes = 0;
    let deadline = Instant::now() + Duration::from_secs(600);
    for round in 0..ROUNDS {
        let log = d.join(format!("round-{round}.log"));
        let mut init = initiator(d, ORDERS, &log);
        // Crash the acceptor a share of the remaining times this round,
        // each at a random moment after a Logon, while orders flow.
        let want = (CRASHES - crashes).div_ceil(ROUNDS - round);
        for _ in 0..want {
            let logged_on = loop {
                match acc.logons.recv_timeout(Duration::from_millis(200)) {
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
            acc.child.kill().unwrap();
            acc.child.wait().unwrap();
            crashes += 1;
            acc = acceptor(d, "acceptor.cfg");
        }
        // Every order answered, none sent or answered afresh twice.
        check(init, ORDERS, &log, Duration::from_secs(120));
        if crashes >= CRASHES {
            break;
        }
    }
    assert!(
        crashes >= CRASHES,
        "only {crashes} crashes: rounds ended before the acceptor could be killed"
    );
}
