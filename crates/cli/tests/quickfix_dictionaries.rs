//! Every application message the built-in applications send is valid for
//! its BeginString, as QuickFIX/C++ itself judges it: a counterparty with
//! `UseDataDictionary=Y` on QuickFIX 1.15.1's own dictionaries (FIX40 to
//! FIX44, FIXT11 with FIX50SP2) answers an invalid message with a Reject
//! and never hands it to its application. Per version, both ways:
//! `perfkit fix acceptor --app exec` answers the peer's orders (its
//! ExecutionReports: ExecType, OrdStatus, ExecTransType, LastShares and
//! LastPx, LeavesQty as each version has them), and `perfkit fix
//! initiator --orders` sends its NewOrderSingles to the peer.
//!
//! The peer is `quickfix-session check-initiator` / `check-acceptor`
//! (`xtask/peers/quickfix/quickfix_session.cpp`): it prints `app <type>`
//! for each message QuickFIX validated and delivered, and `reject <msg>`
//! for each Reject it sent. A missing peer or dictionary fails the test
//! (PERFKIT_SKIP_INTEROP=1 skips it on a machine without them).

mod interop;

use perfkit_testkit::fix_wire::quickfix_spec;
use perfkit_testkit::process::free_port;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ORDERS: usize = 3;

/// Each BeginString with the settings lines that load its dictionaries
/// (`spec`: QuickFIX's `spec/` folder) and the lines both sides need.
fn versions(spec: &Path) -> Vec<(&'static str, String, &'static str)> {
    let dict = |name: &str| format!("DataDictionary={}\n", spec.join(name).display());
    vec![
        ("FIX.4.0", dict("FIX40.xml"), ""),
        ("FIX.4.1", dict("FIX41.xml"), ""),
        ("FIX.4.2", dict("FIX42.xml"), ""),
        ("FIX.4.3", dict("FIX43.xml"), ""),
        ("FIX.4.4", dict("FIX44.xml"), ""),
        (
            "FIXT.1.1",
            format!(
                "TransportDataDictionary={}\nAppDataDictionary={}\n",
                spec.join("FIXT11.xml").display(),
                spec.join("FIX50SP2.xml").display()
            ),
            "DefaultApplVerID=FIX.5.0SP2\n",
        ),
    ]
}

/// A settings file: `checked` lines (the dictionaries) make the side
/// validate; `both` lines go to either side.
fn settings(
    dir: &Path,
    name: &str,
    role: &str,
    port: u16,
    begin: &str,
    checked: Option<&str>,
    both: &str,
) -> PathBuf {
    let (sender, target, socket) = match role {
        "initiator" => (
            "BUY",
            "SELL",
            format!("SocketConnectHost=127.0.0.1\nSocketConnectPort={port}\nReconnectInterval=1\n"),
        ),
        _ => ("SELL", "BUY", format!("SocketAcceptPort={port}\n")),
    };
    let dictionary = match checked {
        Some(lines) => format!("UseDataDictionary=Y\n{lines}"),
        None => "UseDataDictionary=N\n".to_owned(),
    };
    let path = dir.join(format!("{name}.cfg"));
    std::fs::write(
        &path,
        format!(
            "[DEFAULT]\nConnectionType={role}\n{socket}HeartBtInt=30\nStartTime=00:00:00\n\
             EndTime=00:00:00\n{dictionary}{both}\n[SESSION]\nBeginString={begin}\n\
             SenderCompID={sender}\nTargetCompID={target}\n"
        ),
    )
    .unwrap();
    path
}

/// The peer's lines as they come, read on a thread of their own.
fn collect(out: impl std::io::Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&lines);
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

fn count(lines: &[String], prefix: &str) -> usize {
    lines.iter().filter(|l| l.starts_with(prefix)).count()
}

/// `perfkit fix acceptor --app exec` answers QuickFIX's orders: every
/// ExecutionReport passes QuickFIX's validation.
fn exec_reports_pass(qf: &Path, dir: &Path, begin: &str, dict: &str, both: &str) {
    let port = free_port();
    let acceptor_cfg = settings(dir, "perfkit-acceptor", "acceptor", port, begin, None, both);
    let peer_cfg = settings(
        dir,
        "qf-initiator",
        "initiator",
        port,
        begin,
        Some(dict),
        both,
    );
    let mut acceptor = interop::perfkit()
        .args(["fix", "acceptor", "--app", "exec"])
        .arg(&acceptor_cfg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{begin}: perfkit never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = interop::output_within(
        Command::new(qf)
            .arg("check-initiator")
            .arg(&peer_cfg)
            .arg(ORDERS.to_string()),
        60,
    );
    let _ = acceptor.kill();
    let _ = acceptor.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert!(out.status.success(), "{begin}: {text}");
    assert_eq!(
        count(&lines, "reject "),
        0,
        "{begin}: QuickFIX rejected\n{text}"
    );
    assert_eq!(count(&lines, "app 8"), 2 * ORDERS, "{begin}: {text}");
}

/// `perfkit fix initiator --orders` sends its NewOrderSingles to
/// QuickFIX: every one passes QuickFIX's validation.
fn orders_pass(qf: &Path, dir: &Path, begin: &str, dict: &str, both: &str) {
    let port = free_port();
    let peer_cfg = settings(
        dir,
        "qf-acceptor",
        "acceptor",
        port,
        begin,
        Some(dict),
        both,
    );
    let initiator_cfg = settings(
        dir,
        "perfkit-initiator",
        "initiator",
        port,
        begin,
        None,
        both,
    );
    let mut peer = Command::new(qf)
        .arg("check-acceptor")
        .arg(&peer_cfg)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = collect(peer.stdout.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while count(&lines.lock().unwrap(), "listening") == 0 {
        assert!(
            Instant::now() < deadline,
            "{begin}: QuickFIX never listened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The peer answers nothing: the initiator waits for fills until it
    // is stopped, once the peer has taken (or rejected) every order.
    let mut initiator = interop::perfkit()
        .args(["fix", "initiator", "--orders", &ORDERS.to_string()])
        .args(["--window", &ORDERS.to_string()])
        .arg(&initiator_cfg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen = {
            let l = lines.lock().unwrap();
            count(&l, "app D") + count(&l, "reject ")
        };
        if seen >= ORDERS || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // A moment for a Reject of a late order to show.
    std::thread::sleep(Duration::from_millis(200));
    let _ = initiator.kill();
    let _ = initiator.wait();
    drop(peer.stdin.take());
    let _ = peer.wait();
    let lines = lines.lock().unwrap();
    let text = lines.join("\n");
    assert_eq!(
        count(&lines, "reject "),
        0,
        "{begin}: QuickFIX rejected\n{text}"
    );
    assert_eq!(count(&lines, "app D"), ORDERS, "{begin}: {text}");
}

#[test]
fn every_application_message_passes_quickfixs_own_dictionary_for_its_version() {
    let Some(qf) = interop::peer("quickfix-session", " (needs g++ libquickfix-dev)") else {
        return;
    };
    let Some(spec) = quickfix_spec() else { return };
    let dir = tempfile::tempdir().unwrap();
    for (begin, dict, both) in versions(&spec) {
        exec_reports_pass(&qf, dir.path(), begin, &dict, both);
        orders_pass(&qf, dir.path(), begin, &dict, both);
    }
}
