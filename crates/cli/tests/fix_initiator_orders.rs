//! `perfkit fix initiator --orders` as a test client (issue 48.3): its
//! orders come from an order template (`fix load --order-template`'s
//! format, so limit orders can be sent), what comes back is counted
//! (fills, rejected orders, Rejects), and the command exits 1 when orders
//! are rejected or still unanswered after `--grace`, never hanging.

mod interop;

use interop::perfkit;
use perfkit_testkit::fix_wire::{frame_now as frame, has, read_message};
use perfkit_testkit::process::{Running, free_port};
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// An initiator's settings for FIX.4.4 to `port`.
fn initiator_cfg(dir: &Path, port: u16) {
    std::fs::write(
        dir.join("i.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\n\
             SocketConnectPort={port}\nReconnectInterval=1\nHeartBtInt=30\nStartTime=00:00:00\n\
             EndTime=00:00:00\nUseDataDictionary=N\nResetOnLogon=Y\n\n[SESSION]\n\
             BeginString=FIX.4.4\nSenderCompID=TW\nTargetCompID=ISLD\n"
        ),
    )
    .unwrap();
}

/// `perfkit fix acceptor --app APP` in `dir` for the initiator's session
/// on `port`.
fn acceptor(dir: &Path, port: u16, app: &str) -> Running {
    std::fs::write(
        dir.join("a.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nHeartBtInt=30\n\
             StartTime=00:00:00\nEndTime=00:00:00\nUseDataDictionary=N\n\n[SESSION]\n\
             BeginString=FIX.4.4\nSenderCompID=ISLD\nTargetCompID=TW\n"
        ),
    )
    .unwrap();
    Running::start_in(
        perfkit().args(["fix", "acceptor", "a.cfg", "--app", app]),
        dir,
        "a.err",
    )
}

/// `perfkit fix initiator i.cfg ARGS` in `dir`, to its end (at most 60 s).
fn orders(dir: &Path, args: &[&str]) -> Output {
    interop::output_within(
        perfkit()
            .current_dir(dir)
            .args(["fix", "initiator", "i.cfg"])
            .args(args),
        60,
    )
}

/// A line of the command's results, `NAME VALUE`.
fn result(out: &Output, name: &str) -> Option<u64> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} "))?.parse().ok())
}

/// Limit orders from a template reach the acceptor as written, each is
/// filled, and the run exits 0 with nothing rejected.
#[test]
fn template_orders_are_sent_as_written_and_filled() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let _acceptor = acceptor(d, port, "exec");
    initiator_cfg(d, port);
    std::fs::write(
        d.join("limit.txt"),
        "55=IBM|54=2|38=300|40=2|44=25.50\n21=1\n",
    )
    .unwrap();
    let out = orders(
        d,
        &[
            "--orders",
            "5",
            "--order-template",
            "limit.txt",
            "--log",
            "i.log",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(result(&out, "answered"), Some(5), "{text}");
    assert_eq!(result(&out, "rejected"), Some(0), "{text}");
    assert_eq!(result(&out, "unanswered"), Some(0), "{text}");
    let log = std::fs::read_to_string(d.join("i.log")).unwrap();
    let sent: Vec<&str> = log.lines().filter(|l| l.contains("35=D")).collect();
    assert_eq!(sent.len(), 5, "{log}");
    for l in sent {
        for f in [
            "55=IBM", "54=2", "38=300", "40=2", "44=25.50", "21=1", "60=",
        ] {
            assert!(l.contains(f), "{f} missing: {l}");
        }
    }
    // A template the parser refuses: one line, exit 1, before connecting.
    std::fs::write(d.join("bad.txt"), "11=mine|55=IBM\n").unwrap();
    let out = orders(d, &["--orders", "1", "--order-template", "bad.txt"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.txt") && err.contains("tag 11"), "{err}");
}

/// A counterparty that answers each order with OrdStatus Rejected (as
/// QuickFIX's executor answers a market order) and then a session
/// Reject: the rejections are counted and shown, and the run exits 1
/// naming them and the first reason.
#[test]
fn rejected_orders_are_counted_and_fail_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let exchange = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let logon = read_message(&mut s).unwrap();
        assert!(has(&logon, "35=A"), "{logon:?}");
        s.write_all(&frame("35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|141=Y|"))
            .unwrap();
        let mut seq = 2;
        let mut answered = 0;
        while answered < 3 {
            let Some(m) = read_message(&mut s) else {
                return;
            };
            if !has(&m, "35=D") {
                continue;
            }
            let id = m
                .iter()
                .find_map(|f| f.strip_prefix("11="))
                .unwrap()
                .to_owned();
            s.write_all(&frame(&format!(
                "35=8|34={seq}|49=ISLD|52=NOW|56=TW|37=NONE|17=R{id}|150=8|39=8|11={id}|\
                 55=MSFT|54=1|151=0|14=0|6=0|58=Unsupported order type|"
            )))
            .unwrap();
            seq += 1;
            answered += 1;
        }
        // And one session-level Reject of the last order.
        s.write_all(&frame(&format!(
            "35=3|34={seq}|49=ISLD|52=NOW|56=TW|45=4|58=Value is incorrect|"
        )))
        .unwrap();
        // Answer the Logout.
        while let Some(m) = read_message(&mut s) {
            if has(&m, "35=5") {
                s.write_all(&frame(&format!(
                    "35=5|34={}|49=ISLD|52=NOW|56=TW|",
                    seq + 1
                )))
                .unwrap();
                break;
            }
        }
    });
    initiator_cfg(d, port);
    let out = orders(d, &["--orders", "3", "--grace", "2s"]);
    exchange.join().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}{err}");
    assert_eq!(result(&out, "answered"), Some(0), "{text}");
    assert_eq!(result(&out, "rejected"), Some(3), "{text}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("perfkit: fix initiator: FIX.4.4:TW->ISLD: 3 of 3 orders rejected")
            && last.contains("(first reason: Unsupported order type)"),
        "{err}"
    );
}

/// A counterparty that takes the orders and never answers them (the echo
/// application sends each back as it came): after `--grace` the session
/// logs out and the run exits 1 saying how many went unanswered, instead
/// of waiting for ever.
#[test]
fn unanswered_orders_end_the_run_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let _acceptor = acceptor(d, port, "echo");
    initiator_cfg(d, port);
    let started = Instant::now();
    let out = orders(d, &["--orders", "4", "--grace", "1s"]);
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}{err}");
    assert_eq!(result(&out, "unanswered"), Some(4), "{text}");
    assert!(err.contains("4 orders unanswered"), "{err}");
    assert!(took < Duration::from_secs(30), "{took:?}");
}
