//! Interop of the session engine with QuickFIX/C++ (Debian's
//! libquickfix-dev, as `cargo xtask ci` installs it): QuickFIX initiator ->
//! `perfkit fix acceptor`, and `perfkit fix initiator` -> QuickFIX
//! acceptor. Each way: logon, 10,000 orders each answered (the filled
//! ExecutionReport counted by the sender), the TCP connection cut in the
//! middle of the stream by a proxy and re-established by the initiator with
//! the gap recovered by resend, a clean logout, and both sides reporting
//! the same sequence numbers at the end. And the file store both ways:
//! each engine resumes on the `FileStorePath` the other left.
//!
//! The QuickFIX side is `xtask/peers/quickfix/quickfix_session.cpp`, as
//! `cargo xtask peers` builds it. A missing peer fails the test (set
//! `PERFKIT_SKIP_INTEROP=1` to skip it on a machine without one; CI never
//! does).

mod interop;

use perfkit_testkit::process::free_port;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

const ORDERS: u64 = 10_000;

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

/// The QuickFIX peer `cargo xtask peers` builds (as `cargo xtask ci`
/// does before the tests), through the interop gate: missing, it fails
/// the test naming the command, unless PERFKIT_SKIP_INTEROP asks to skip.
fn peer() -> Option<PathBuf> {
    interop::peer("quickfix-session", " (needs g++ libquickfix-dev)")
}

/// A TCP proxy from `listen` to `target`: the first connection is cut
/// (both directions shut down) once `cut_after` bytes have gone from the
/// initiator to the acceptor; later connections are forwarded whole.
/// Returns how many connections it has seen.
fn proxy(listen: u16, target: u16, cut_after: usize) -> Arc<AtomicUsize> {
    let seen = Arc::new(AtomicUsize::new(0));
    let listener = TcpListener::bind(("127.0.0.1", listen)).unwrap();
    let count = Arc::clone(&seen);
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let n = count.fetch_add(1, Ordering::SeqCst);
            let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                continue;
            };
            let limit = if n == 0 { cut_after } else { usize::MAX };
            let cut = Arc::new(AtomicBool::new(false));
            let pipe =
                |mut from: TcpStream, mut to: TcpStream, limit: usize, cut: Arc<AtomicBool>| {
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 4096];
                        let mut sent = 0usize;
                        loop {
                            let k = match from.read(&mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(k) => k,
                            };
                            if cut.load(Ordering::SeqCst) {
                                break;
                            }
                            let k = k.min(limit - sent);
                            if to.write_all(&buf[..k]).is_err() {
                                break;
                            }
                            sent += k;
                            if sent >= limit {
                                cut.store(true, Ordering::SeqCst);
                                break;
                            }
                        }
                        let _ = from.shutdown(Shutdown::Both);
                        let _ = to.shutdown(Shutdown::Both);
                    })
                };
            pipe(
                client.try_clone().unwrap(),
                server.try_clone().unwrap(),
                limit,
                Arc::clone(&cut),
            );
            pipe(server, client, usize::MAX, cut);
        }
    });
    seen
}

/// `answered N` and `seqs S T` from a side's stdout.
fn summary(out: &str) -> (u64, (u64, u64)) {
    let mut answered = None;
    let mut seqs = None;
    for l in out.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w[..] {
            ["answered", n] | ["orders", n] => answered = n.parse().ok(),
            ["seqs", s, t] => seqs = Some((s.parse().unwrap(), t.parse().unwrap())),
            _ => {}
        }
    }
    (
        answered.unwrap_or_else(|| panic!("no count in {out:?}")),
        seqs.unwrap_or_else(|| panic!("no seqs in {out:?}")),
    )
}

fn wait_with_timeout(mut child: Child, secs: u64, what: &str) -> std::process::Output {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what} did not finish in {secs} s: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// One settings file for either engine: perfkit reads QuickFIX's own
/// (the keys both understand), so the two sides are configured alike.
fn settings(dir: &Path, engine: &str, role: &str, port: u16) -> PathBuf {
    let (sender, target, socket) = match role {
        "initiator" => (
            "TW",
            "ISLD",
            format!("SocketConnectHost=127.0.0.1\nSocketConnectPort={port}\nReconnectInterval=1\n"),
        ),
        _ => ("ISLD", "TW", format!("SocketAcceptPort={port}\n")),
    };
    let path = dir.join(format!("{engine}-{role}.cfg"));
    std::fs::write(
        &path,
        format!(
            "[DEFAULT]\nConnectionType={role}\n{socket}HeartBtInt=30\nStartTime=00:00:00\n\
             EndTime=00:00:00\nUseDataDictionary=N\n\n[SESSION]\nBeginString=FIX.4.4\n\
             SenderCompID={sender}\nTargetCompID={target}\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn quickfix_initiator_to_perfkit_acceptor_with_a_cut_connection() {
    let Some(qf) = peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (acceptor_port, proxy_port) = (free_port(), free_port());
    let cfg = settings(dir.path(), "perfkit", "acceptor", acceptor_port);
    let acceptor = perfkit()
        .args(["fix", "acceptor"])
        .arg(&cfg)
        .args(["--app", "exec", "--log"])
        .arg(dir.path().join("messages.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        // A file, not a pipe: a resend logs a line per message, and a
        // pipe nobody reads until the end would fill and stall the engine.
        .stderr(std::fs::File::create(dir.path().join("acceptor.err")).unwrap())
        .spawn()
        .unwrap();
    // Cut about a third of the way into the orders.
    let connections = proxy(proxy_port, acceptor_port, 500_000);
    std::thread::sleep(Duration::from_millis(300));
    let qf_cfg = settings(dir.path(), "quickfix", "initiator", proxy_port);
    let qf_run = Command::new(&qf)
        .args(["initiator"])
        .arg(&qf_cfg)
        .arg(ORDERS.to_string())
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_with_timeout(qf_run, 90, "the QuickFIX initiator");
    let qf_out = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        // The acceptor's side of the story, for whoever reads the failure.
        let mut acceptor = acceptor;
        let _ = acceptor.kill();
        let _ = acceptor.wait();
        let events = std::fs::read_to_string(dir.path().join("acceptor.err")).unwrap();
        let tail: Vec<&str> = events.lines().rev().take(40).collect();
        panic!(
            "QuickFIX: {qf_out}{}\nperfkit acceptor, last events:\n{}",
            String::from_utf8_lossy(&out.stderr),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    let (answered, qf_seqs) = summary(&qf_out);
    assert_eq!(answered, ORDERS);
    assert!(
        connections.load(Ordering::SeqCst) >= 2,
        "the connection was never cut"
    );

    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(acceptor.id() as i32, libc::SIGINT) }, 0);
    let out = wait_with_timeout(acceptor, 60, "perfkit fix acceptor");
    let events = std::fs::read_to_string(dir.path().join("acceptor.err")).unwrap();
    assert_eq!(out.status.code(), Some(130), "{events}");
    assert!(
        events.contains("Sent ResendRequest") || events.contains("Received ResendRequest"),
        "no gap was recovered: {events}"
    );
    // The acceptor's last numbers, from its message log: the highest
    // MsgSeqNum it sent and received.
    let log = std::fs::read(dir.path().join("messages.log")).unwrap();
    let (mut sent, mut received) = (0u64, 0u64);
    for line in log.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let text = String::from_utf8_lossy(line);
        let seq: u64 = text
            .split('\x01')
            .find_map(|f| f.strip_prefix("34="))
            .unwrap()
            .parse()
            .unwrap();
        if text.contains(" -> ") {
            sent = sent.max(seq);
        } else {
            received = received.max(seq);
        }
    }
    // QuickFIX's next sender number is one past what we received, and
    // its next target one past what we sent.
    assert_eq!(qf_seqs, (received + 1, sent + 1), "{qf_out}");
}

#[test]
fn perfkit_initiator_to_quickfix_acceptor_with_a_cut_connection() {
    let Some(qf) = peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (acceptor_port, proxy_port) = (free_port(), free_port());
    let qf_cfg = settings(dir.path(), "quickfix", "acceptor", acceptor_port);
    let mut qf_run = Command::new(&qf)
        .args(["acceptor"])
        .arg(&qf_cfg)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // "listening" once its socket is open.
    let mut first = [0u8; 10];
    qf_run
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    assert_eq!(&first, b"listening\n");
    let connections = proxy(proxy_port, acceptor_port, 500_000);
    let cfg = settings(dir.path(), "perfkit", "initiator", proxy_port);
    let ours = perfkit()
        .args(["fix", "initiator"])
        .arg(&cfg)
        .args(["--orders", &ORDERS.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.path().join("initiator.err")).unwrap())
        .spawn()
        .unwrap();
    let out = wait_with_timeout(ours, 180, "perfkit fix initiator");
    let our_out = String::from_utf8_lossy(&out.stdout).into_owned();
    let events = std::fs::read_to_string(dir.path().join("initiator.err")).unwrap();
    assert!(out.status.success(), "{our_out}{events}");
    let (answered, our_seqs) = summary(&our_out);
    assert_eq!(answered, ORDERS, "{events}");
    assert!(
        connections.load(Ordering::SeqCst) >= 2,
        "the connection was never cut"
    );
    assert!(
        events.contains("ResendRequest"),
        "no gap was recovered: {events}"
    );

    drop(qf_run.stdin.take());
    let out = wait_with_timeout(qf_run, 60, "the QuickFIX acceptor");
    let qf_out = String::from_utf8_lossy(&out.stdout).into_owned();
    let (orders, qf_seqs) = summary(&qf_out);
    assert!(orders >= ORDERS, "{qf_out}");
    assert_eq!(qf_seqs, (our_seqs.1, our_seqs.0), "{qf_out} vs {our_out}");
}

/// Settings for the store round trip: both acceptors read the same file
/// and so keep their session in the same `FileStorePath`; `extra` adds
/// keys.
fn store_settings(dir: &Path, role: &str, port: u16, extra: &str) -> PathBuf {
    let path = settings(dir, "store", role, port);
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "\n\n[SESSION]",
        &format!(
            "\nFileStorePath={}\n{extra}\n[SESSION]",
            dir.join(format!("{role}-store")).display()
        ),
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// QuickFIX's acceptor on `cfg`, once it listens.
fn quickfix_acceptor(qf: &Path, cfg: &Path) -> Child {
    let mut run = Command::new(qf)
        .arg("acceptor")
        .arg(cfg)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    run.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    assert_eq!(&first, b"listening\n");
    run
}

/// `perfkit fix acceptor` on `cfg`, once it listens.
fn perfkit_acceptor(cfg: &Path, port: u16, err: &Path) -> Child {
    let run = perfkit()
        .args(["fix", "acceptor"])
        .arg(cfg)
        .args(["--app", "exec"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(err).unwrap())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "perfkit never listened"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    run
}

/// `perfkit fix initiator` on `cfg` sending `orders`, to the end.
fn perfkit_orders(cfg: &Path, orders: u64) {
    let out = perfkit()
        .args(["fix", "initiator"])
        .arg(cfg)
        .args(["--orders", &orders.to_string(), "--window", "50"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_with_timeout(out, 120, "perfkit fix initiator");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(summary(&text).0, orders, "{text}");
}

/// Logs on as the initiator with MsgSeqNum `seq`, asks for everything
/// again (ResendRequest 1..0) and logs out: the acceptor's Logon number
/// and the ClOrdIDs of the ExecutionReports it resent (PossDupFlag=Y).
fn resume(port: u16, seq: u64) -> (u64, Vec<String>) {
    use perfkit_testkit::fix_wire::frame_now;
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(1500)))
        .unwrap();
    s.write_all(&frame_now(&format!(
        "35=A|34={seq}|49=TW|52=NOW|56=ISLD|98=0|108=30|"
    )))
    .unwrap();
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut asked = false;
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(_) if !asked => {}
            // Quiet for a while after the request: the resend is over.
            Err(_) => break,
        }
        if !asked && got.windows(6).any(|w| w == b"\x0135=A\x01") {
            asked = true;
            s.write_all(&frame_now(&format!(
                "35=2|34={}|49=TW|52=NOW|56=ISLD|7=1|16=0|",
                seq + 1
            )))
            .unwrap();
        }
    }
    let _ = s.write_all(&frame_now(&format!(
        "35=5|34={}|49=TW|52=NOW|56=ISLD|",
        seq + 2
    )));
    let text = String::from_utf8_lossy(&got).into_owned();
    let mut logon = None;
    let mut resent = Vec::new();
    // Messages end in "10=NNN" and SOH; fields are split at SOH.
    let mut fields: Vec<&str> = Vec::new();
    for f in text.split('\x01') {
        fields.push(f);
        if !f.starts_with("10=") {
            continue;
        }
        let get = |tag: &str| {
            fields
                .iter()
                .find_map(|x| x.strip_prefix(tag))
                .map(str::to_owned)
        };
        match get("35=").as_deref() {
            Some("A") => logon = get("34=").map(|v| v.parse().unwrap()),
            Some("8") if get("43=").as_deref() == Some("Y") => resent.push(get("11=").unwrap()),
            _ => {}
        }
        fields.clear();
    }
    (logon.expect("no Logon answered"), resent)
}

/// The two numbers of a QuickFIX `.seqnums` file.
fn seqnums(dir: &Path) -> (u64, u64) {
    let text = std::fs::read_to_string(dir.join("acceptor-store/FIX.4.4-ISLD-TW.seqnums")).unwrap();
    let (s, t) = text.split_once(':').unwrap();
    (s.trim().parse().unwrap(), t.trim().parse().unwrap())
}

/// Each of the ids `1..=n` twice (new, then filled), in any order.
fn every_order_twice(mut ids: Vec<String>, n: u64) {
    ids.sort_by_key(|i| i.parse::<u64>().unwrap());
    let want: Vec<String> = (1..=n)
        .flat_map(|i| [i.to_string(), i.to_string()])
        .collect();
    assert_eq!(ids, want);
}

/// QuickFIX/C++'s FileStore and perfkit's read each other's files: a
/// QuickFIX acceptor exchanges 1,000 orders and stops; perfkit's acceptor
/// resumes on the same FileStorePath with the next numbers and resends
/// every ExecutionReport QuickFIX stored; then perfkit's acceptor
/// exchanges 1,000 orders of its own, and QuickFIX's resumes on what
/// perfkit left and resends those.
#[test]
fn quickfix_and_perfkit_take_over_each_others_file_store() {
    const N: u64 = 1000;
    let Some(qf) = peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let acc = store_settings(d, "acceptor", port, "");
    let ini = store_settings(d, "initiator", port, "");

    let mut quickfix = quickfix_acceptor(&qf, &acc);
    perfkit_orders(&ini, N);
    drop(quickfix.stdin.take());
    let out = wait_with_timeout(quickfix, 60, "the QuickFIX acceptor");
    let (orders, (qf_sender, qf_target)) = summary(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(orders, N);

    let mut ours = perfkit_acceptor(&acc, port, &d.join("perfkit-1.err"));
    let (logon, resent) = resume(port, qf_target);
    assert_eq!(
        logon, qf_sender,
        "perfkit did not resume QuickFIX's numbers"
    );
    every_order_twice(resent, N);
    let _ = ours.kill();
    let _ = ours.wait();

    // perfkit's own orders, from numbers 1 (both sides reset at the Logon).
    let ini_reset = store_settings(d, "initiator", port, "ResetOnLogon=Y\n");
    let ours = perfkit_acceptor(&acc, port, &d.join("perfkit-2.err"));
    perfkit_orders(&ini_reset, N);
    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(ours.id() as i32, libc::SIGINT) }, 0);
    let out = wait_with_timeout(ours, 60, "perfkit fix acceptor");
    assert_eq!(out.status.code(), Some(130));
    let (sender, target) = seqnums(d);

    let mut quickfix = quickfix_acceptor(&qf, &acc);
    let (logon, resent) = resume(port, target);
    assert_eq!(logon, sender, "QuickFIX did not resume perfkit's numbers");
    every_order_twice(resent, N);
    drop(quickfix.stdin.take());
    wait_with_timeout(quickfix, 60, "the QuickFIX acceptor");
}

/// The lines of a QuickFIX-style log: each split at its first ` : ` into
/// the timestamp's shape (digits as `d`) and the rest.
fn log_lines(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| {
            let (stamp, rest) = l
                .split_once(" : ")
                .unwrap_or_else(|| panic!("{}: no ` : ` in {l:?}", path.display()));
            let shape = stamp
                .chars()
                .map(|c| if c.is_ascii_digit() { 'd' } else { c })
                .collect();
            (shape, rest.to_string())
        })
        .collect()
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn perfkit_writes_the_file_logs_quickfix_writes() {
    const N: u64 = 300;
    let Some(qf) = peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let with_log = |engine: &str, role: &str, extra: &str| {
        let path = settings(d, engine, role, port);
        let text = std::fs::read_to_string(&path).unwrap().replace(
            "\n\n[SESSION]",
            &format!(
                "\nFileLogPath={}\n{extra}\n[SESSION]",
                d.join(format!("{engine}-log")).display()
            ),
        );
        std::fs::write(&path, text).unwrap();
        path
    };
    let backups = d.join("perfkit-old");
    let backup_key = format!("FileLogBackupPath={}\n", backups.display());
    let acc = with_log("quickfix", "acceptor", "");
    let ini = with_log("perfkit", "initiator", &backup_key);

    let mut quickfix = quickfix_acceptor(&qf, &acc);
    perfkit_orders(&ini, N);
    drop(quickfix.stdin.take());
    wait_with_timeout(quickfix, 60, "the QuickFIX acceptor");

    // QuickFIX's names, each engine under its own session ID, and the
    // engine's GLOBAL pair beside them.
    let names = |id: &str| {
        [
            format!("FIX.4.4-{id}.event.current.log"),
            format!("FIX.4.4-{id}.messages.current.log"),
            "GLOBAL.event.current.log".into(),
            "GLOBAL.messages.current.log".into(),
        ]
    };
    assert_eq!(file_names(&d.join("quickfix-log")), names("ISLD-TW"));
    assert_eq!(file_names(&d.join("perfkit-log")), names("TW-ISLD"));
    // QuickFIX's line format, and the same messages: each side logged
    // what it sent and what it received, so the two logs hold the same
    // bytes (in an order that may interleave differently).
    let theirs = log_lines(&d.join("quickfix-log/FIX.4.4-ISLD-TW.messages.current.log"));
    let pk_messages = d.join("perfkit-log/FIX.4.4-TW-ISLD.messages.current.log");
    let ours = log_lines(&pk_messages);
    let stamp = &theirs[0].0;
    for (shape, _) in ours.iter().chain(&theirs) {
        assert_eq!(shape, stamp, "a timestamp unlike QuickFIX's");
    }
    let sorted = |lines: &[(String, String)]| {
        let mut m: Vec<String> = lines.iter().map(|(_, m)| m.clone()).collect();
        m.sort();
        m
    };
    assert_eq!(sorted(&ours), sorted(&theirs));
    let orders = ours
        .iter()
        .filter(|(_, m)| m.contains("\u{1}35=D\u{1}"))
        .count();
    assert_eq!(orders as u64, N);
    for (shape, _) in log_lines(&d.join("perfkit-log/FIX.4.4-TW-ISLD.event.current.log")) {
        assert_eq!(&shape, stamp, "an event timestamp unlike QuickFIX's");
    }

    // `fix check` reads the message log as it is.
    let check = perfkit()
        .args(["fix", "check"])
        .arg(&pk_messages)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{said}");
    assert!(
        said.contains(&format!("{} valid, 0 invalid", ours.len())),
        "{said}"
    );

    // A reset moves the run's logs to FileLogBackupPath and starts anew.
    let first_run = std::fs::read(&pk_messages).unwrap();
    let ini = with_log(
        "perfkit",
        "initiator",
        &format!("{backup_key}ResetOnLogon=Y\n"),
    );
    let mut quickfix = quickfix_acceptor(&qf, &acc);
    perfkit_orders(&ini, 10);
    drop(quickfix.stdin.take());
    wait_with_timeout(quickfix, 60, "the QuickFIX acceptor");
    assert_eq!(
        std::fs::read(backups.join("FIX.4.4-TW-ISLD.messages.backup.1.log")).unwrap(),
        first_run
    );
    assert!(backups.join("FIX.4.4-TW-ISLD.event.backup.1.log").exists());
    let second = log_lines(&pk_messages);
    assert!(second[0].1.contains("\u{1}34=1\u{1}"), "{:?}", second[0]);
    let orders = second
        .iter()
        .filter(|(_, m)| m.contains("\u{1}35=D\u{1}"))
        .count();
    assert_eq!(orders, 10);
}

/// Each way of damaging a file of a QuickFIX store: (file, what is done).
const DAMAGE: &[(&str, &str)] = &[
    ("body", "truncated"),
    ("body", "a byte changed"),
    ("header", "truncated"),
    ("header", "a byte changed"),
    ("seqnums", "truncated"),
    ("seqnums", "a byte changed"),
    ("session", "truncated"),
    ("session", "a byte changed"),
];

fn damage(path: &Path, how: &str) {
    let mut bytes = std::fs::read(path).unwrap();
    if how == "truncated" {
        bytes.truncate(bytes.len() / 2);
    } else {
        // A separator or a digit turned into a letter: no reading of the
        // file can take it for what was written.
        let at = bytes
            .iter()
            .position(|&b| b == b':' || b == b',')
            .unwrap_or(bytes.len() / 2);
        let at = if path.extension().unwrap() == "body" {
            bytes.len() / 2
        } else {
            at
        };
        bytes[at] = if bytes[at] == b'Q' { b'R' } else { b'Q' };
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_damaged_quickfix_store_is_refused_in_one_line_and_left_as_it_was() {
    let Some(qf) = peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let acc = store_settings(d, "acceptor", port, "");
    let ini = settings(d, "perfkit", "initiator", port);
    let mut quickfix = quickfix_acceptor(&qf, &acc);
    perfkit_orders(&ini, 100);
    drop(quickfix.stdin.take());
    wait_with_timeout(quickfix, 60, "the QuickFIX acceptor");
    let store = d.join("acceptor-store");
    let pristine = d.join("pristine");
    std::fs::rename(&store, &pristine).unwrap();

    for &(file, how) in DAMAGE {
        let _ = std::fs::remove_dir_all(&store);
        std::fs::create_dir(&store).unwrap();
        for name in file_names(&pristine) {
            std::fs::copy(pristine.join(&name), store.join(&name)).unwrap();
        }
        let damaged = store.join(format!("FIX.4.4-ISLD-TW.{file}"));
        damage(&damaged, how);
        let before: Vec<Vec<u8>> = file_names(&store)
            .iter()
            .map(|n| std::fs::read(store.join(n)).unwrap())
            .collect();
        let run = perfkit()
            .args(["fix", "acceptor"])
            .arg(&acc)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_with_timeout(run, 30, "perfkit fix acceptor on a damaged store");
        let err = String::from_utf8_lossy(&out.stderr);
        let what = format!("{file} {how}");
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(
            err.contains(&format!("FIX.4.4-ISLD-TW.{file}")),
            "{what}: {err}"
        );
        assert!(!err.contains("panicked"), "{what}: {err}");
        let after: Vec<Vec<u8>> = file_names(&store)
            .iter()
            .map(|n| std::fs::read(store.join(n)).unwrap())
            .collect();
        assert!(
            before == after,
            "{what}: the refused start changed the store"
        );
    }
}
