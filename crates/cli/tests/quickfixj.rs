//! A second independent engine: QuickFIX/J 2.3.2 (Maven Central's jars,
//! pinned by SHA-256, on this machine's JDK) against perfkit, both
//! directions, plain and TLS, with orders, and with a resend after a
//! restart of either side. QuickFIX/J validates every message perfkit
//! sends against its own FIX44.xml (`UseDataDictionary=Y`): an invalid
//! fill is rejected and never counted, so the order counts below fail.
//!
//! The QuickFIX/J side is `xtask/peers/quickfixj/QuickfixjPeer.java` as
//! `cargo xtask peers` builds it. A missing peer fails the test (set
//! `PERFKIT_SKIP_INTEROP=1` to skip it on a machine without one; CI never
//! does).

mod certs;
mod interop;

use perfkit_testkit::process::{Running, free_port};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn peer() -> Option<PathBuf> {
    interop::peer(
        perfkit_peers::QUICKFIXJ,
        " (needs curl and a JDK: apt-get install curl default-jdk-headless)",
    )
}

/// Whether the JDK's keytool runs (it makes the Java trust store).
fn have_keytool() -> bool {
    perfkit_testkit::interop::have("keytool", "-help", "apt-get install default-jdk-headless")
}

/// Settings for one engine in `role` on `port`, the initiator BANZAI and
/// the acceptor EXEC, its store in `store/` beside the file, and `extra`
/// keys in `[DEFAULT]`.
fn settings(dir: &Path, file: &str, role: &str, port: u16, extra: &str) -> PathBuf {
    let (sender, target, socket) = match role {
        "initiator" => (
            "BANZAI",
            "EXEC",
            format!("SocketConnectHost=127.0.0.1\nSocketConnectPort={port}\nReconnectInterval=1\n"),
        ),
        _ => ("EXEC", "BANZAI", format!("SocketAcceptPort={port}\n")),
    };
    let store = dir.join(format!("{file}.store"));
    let path = dir.join(file);
    std::fs::write(
        &path,
        format!(
            "[DEFAULT]\nConnectionType={role}\n{socket}BeginString=FIX.4.4\n\
             StartTime=00:00:00\nEndTime=00:00:00\nHeartBtInt=30\nFileStorePath={}\n{extra}\n\
             [SESSION]\nSenderCompID={sender}\nTargetCompID={target}\n",
            store.display()
        ),
    )
    .unwrap();
    path
}

/// QuickFIX/J's settings: validating with its own dictionary, and `tls`
/// keys when asked (its key store for `cert`, the CA as its trust store;
/// an acceptor requires the client's certificate).
fn quickfixj_settings(dir: &Path, role: &str, port: u16, tls: Option<&str>) -> PathBuf {
    let mut extra = String::from("UseDataDictionary=Y\n");
    if let Some(cert) = tls {
        let key_store = certs::java_key_store(dir, cert);
        let trust_store = certs::java_trust_store(dir, "ca");
        let password = certs::JAVA_STORE_PASSWORD;
        extra.push_str(&format!(
            "SocketUseSSL=Y\nSocketKeyStore={}\nKeyStoreType=PKCS12\n\
             SocketKeyStorePassword={password}\nSocketTrustStore={}\nTrustStoreType=PKCS12\n\
             SocketTrustStorePassword={password}\n",
            key_store.display(),
            trust_store.display()
        ));
        if role == "acceptor" {
            extra.push_str("NeedClientAuth=Y\n");
        }
    }
    settings(dir, &format!("quickfixj-{role}.cfg"), role, port, &extra)
}

/// perfkit's settings: a file log (the test reads what arrived), and with
/// `tls`, QuickFIX/C++'s certificate keys (the acceptor requiring the
/// client's certificate).
fn perfkit_settings(dir: &Path, role: &str, port: u16, tls: bool) -> PathBuf {
    let mut extra = format!("FileLogPath={}\n", dir.join("perfkit-log").display());
    if tls {
        extra.push_str("CertificationAuthoritiesFile=ca.pem\n");
        extra.push_str(match role {
            "initiator" => {
                "ClientCertificateFile=client.pem\nClientCertificateKeyFile=client.key\n"
            }
            _ => {
                "ServerCertificateFile=server.pem\nServerCertificateKeyFile=server.key\n\
                 CertificateVerifyLevel=1\n"
            }
        });
    }
    settings(dir, &format!("perfkit-{role}.cfg"), role, port, &extra)
}

/// A process whose stdout lines arrive on a channel as it prints them, so
/// the test can act between them (kill the other side, restart it); its
/// stderr goes to a file.
struct Talking {
    child: Running,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    stderr: PathBuf,
}

impl Talking {
    fn start(cmd: &mut Command, dir: &Path, stderr: &str) -> Talking {
        let stderr = dir.join(stderr);
        let mut child = cmd
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Talking {
            child: Running(child),
            lines,
            seen: Vec::new(),
            stderr,
        }
    }

    /// Waits up to 60 s for the line `want`.
    fn expect(&mut self, want: &str) {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = line == want;
                    self.seen.push(line);
                    if found {
                        return;
                    }
                }
                Err(_) => panic!(
                    "no line {want:?}; stdout: {:?}\nstderr:\n{}",
                    self.seen,
                    self.errors()
                ),
            }
        }
    }

    /// Its stdin, to close (the QuickFIX/J acceptor ends when it does).
    fn stdin(&mut self) -> ChildStdin {
        self.child.0.stdin.take().expect("stdin taken once")
    }

    /// Waits up to 60 s for it to exit; its status and every line.
    fn finish(mut self) -> (ExitStatus, Vec<String>, String) {
        drop(self.child.0.stdin.take());
        let status = wait(&mut self.child.0, 60);
        self.seen.extend(self.lines.iter());
        let errors = self.errors();
        (status, self.seen, errors)
    }

    fn errors(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

/// Waits up to `secs` for `child` (killed then, failing the test).
fn wait(child: &mut Child, secs: u64) -> ExitStatus {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The number after `word` on the last line that starts with it.
fn count(lines: &[String], word: &str) -> u64 {
    lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix(word)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {word:?} line in {lines:?}"))
}

fn quickfixj(qfj: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(qfj);
    cmd.args(args);
    cmd
}

/// `perfkit fix acceptor` with the exec application, once it listens.
fn perfkit_acceptor(dir: &Path, cfg: &Path, tls: bool, stderr: &str) -> Running {
    let mut cmd = interop::perfkit();
    cmd.args(["fix", "acceptor"])
        .arg(cfg)
        .args(["--app", "exec"]);
    if tls {
        cmd.arg("--tls");
    }
    let acceptor = Running::start_in(&mut cmd, dir, stderr);
    let until = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(dir.join(stderr))
        .unwrap_or_default()
        .contains(" session(s) on port ")
    {
        assert!(
            Instant::now() < until,
            "the perfkit acceptor never listened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    acceptor
}

/// `perfkit fix initiator --orders N`, run to its end within 60 s.
fn perfkit_orders(dir: &Path, cfg: &Path, orders: u64, tls: bool) -> Vec<String> {
    let mut cmd = interop::perfkit();
    cmd.current_dir(dir)
        .args(["fix", "initiator"])
        .arg(cfg)
        .args(["--orders", &orders.to_string()]);
    if tls {
        cmd.arg("--tls");
    }
    let out = interop::ok_within(&mut cmd, 60);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The messages of type `msg_type` perfkit's file log holds, and how many
/// of them came again (PossDupFlag=Y).
fn logged(dir: &Path, msg_type: &str) -> (usize, usize) {
    let log = dir
        .join("perfkit-log")
        .join("FIX.4.4-EXEC-BANZAI.messages.current.log");
    let log = if log.is_file() {
        log
    } else {
        dir.join("perfkit-log")
            .join("FIX.4.4-BANZAI-EXEC.messages.current.log")
    };
    let text =
        std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("reading {}: {e}", log.display()));
    let kind = format!("\x0135={msg_type}\x01");
    let of_kind: Vec<&str> = text.lines().filter(|l| l.contains(&kind)).collect();
    let again = of_kind
        .iter()
        .filter(|l| l.contains("\x0143=Y\x01"))
        .count();
    (of_kind.len(), again)
}

/// QuickFIX/J refused nothing perfkit sent: its session events hold no
/// Reject, sent or received.
fn no_rejects(events: &str) {
    assert!(
        !events.contains("Reject"),
        "QuickFIX/J rejected a message:\n{events}"
    );
}

#[test]
fn quickfixj_initiator_and_perfkit_acceptor_resend_after_either_restarts() {
    let Some(qfj) = peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let pk_cfg = perfkit_settings(d, "acceptor", port, false);
    let qfj_cfg = quickfixj_settings(d, "initiator", port, None);
    let qfj_cfg = qfj_cfg.to_str().unwrap();
    let mut acceptor = perfkit_acceptor(d, &pk_cfg, false, "acceptor-1.err");

    // QuickFIX/J sends five orders and dies at the first fill, before
    // storing it: perfkit sent fills it never took in.
    let first = interop::output_within(
        quickfixj(&qfj, &["initiator", qfj_cfg, "5", "--halt-at-fill", "1"]).current_dir(d),
        60,
    );
    assert_eq!(
        first.status.code(),
        Some(3),
        "QuickFIX/J should have died at its first fill: {}",
        String::from_utf8_lossy(&first.stderr)
    );

    // Restarted on its store, it asks for them again and perfkit resends
    // them. Then perfkit dies (kill -9) and QuickFIX/J sends three more
    // orders while it is down; perfkit, restarted on its store, asks for
    // those and fills them.
    let mut second = Talking::start(
        &mut quickfixj(
            &qfj,
            &[
                "initiator",
                qfj_cfg,
                "0",
                "--first",
                "6",
                "--expect",
                "5",
                "--while-away",
                "3",
            ],
        ),
        d,
        "quickfixj-2.err",
    );
    second.expect("answered 5");
    acceptor.kill().unwrap();
    acceptor.wait().unwrap();
    second.expect("away 3");
    let _acceptor = perfkit_acceptor(d, &pk_cfg, false, "acceptor-2.err");
    let (status, lines, events) = second.finish();
    assert!(status.success(), "QuickFIX/J: {lines:?}\n{events}");
    assert_eq!(count(&lines, "answered"), 8, "{lines:?}\n{events}");
    assert!(
        count(&lines, "resent") >= 1,
        "perfkit resent no fill after QuickFIX/J's restart: {lines:?}\n{events}"
    );
    no_rejects(&events);
    let (orders, again) = logged(d, "D");
    assert!(
        again >= 3,
        "QuickFIX/J should have resent the 3 orders sent while perfkit was down \
         ({orders} orders logged, {again} again)"
    );
}

#[test]
fn perfkit_initiator_and_quickfixj_acceptor_resend_after_either_restarts() {
    let Some(qfj) = peer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let pk_cfg = perfkit_settings(d, "initiator", port, false);
    let qfj_cfg = quickfixj_settings(d, "acceptor", port, None);
    let qfj_cfg = qfj_cfg.to_str().unwrap();

    // QuickFIX/J dies at the third order, before taking it in; restarted
    // on its store, it asks perfkit (which reconnects by itself) for the
    // rest, and fills them.
    let mut first = Talking::start(
        &mut quickfixj(&qfj, &["acceptor", qfj_cfg, "--halt-at-order", "3"]),
        d,
        "quickfixj-1.err",
    );
    first.expect("listening");
    let mut initiator = interop::perfkit();
    initiator
        .current_dir(d)
        .args(["fix", "initiator"])
        .arg(&pk_cfg)
        .args(["--orders", "10"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(d.join("initiator-1.err")).unwrap());
    let mut initiator = Running(initiator.spawn().unwrap());
    // Its stdin stays open: it ends by dying, or not at all.
    let status = wait(&mut first.child.0, 60);
    assert_eq!(
        status.code(),
        Some(3),
        "QuickFIX/J should have died at the third order:\n{}",
        first.errors()
    );
    let mut second = Talking::start(
        &mut quickfixj(&qfj, &["acceptor", qfj_cfg, "--news-when-away", "2"]),
        d,
        "quickfixj-2.err",
    );
    second.expect("listening");
    let status = wait(&mut initiator.0, 60);
    let mut out = String::new();
    std::io::Read::read_to_string(initiator.0.stdout.as_mut().unwrap(), &mut out).unwrap();
    let errors = std::fs::read_to_string(d.join("initiator-1.err")).unwrap();
    assert!(status.success(), "perfkit: {out}\n{errors}");
    let lines: Vec<String> = out.lines().map(str::to_owned).collect();
    assert_eq!(count(&lines, "answered"), 10, "{out}\n{errors}");

    // perfkit logged out; QuickFIX/J sends two News while it is away.
    // perfkit, started again on its store, asks for them.
    second.expect("away 2");
    let lines = perfkit_orders(d, &pk_cfg, 2, false);
    assert_eq!(count(&lines, "answered"), 2, "{lines:?}");
    let (news, again) = logged(d, "B");
    assert_eq!(
        (news, again),
        (2, 2),
        "the News QuickFIX/J sent while perfkit was away should arrive once each, resent"
    );
    drop(second.stdin());
    let (status, lines, events) = second.finish();
    assert!(status.success(), "QuickFIX/J: {lines:?}\n{events}");
    assert_eq!(count(&lines, "orders"), 10, "{lines:?}");
    assert!(
        count(&lines, "resent") >= 1,
        "perfkit resent no order after QuickFIX/J's restart: {lines:?}\n{events}"
    );
    no_rejects(&events);
}

const TLS_ORDERS: u64 = 500;

/// A TLS case: the peer, a directory with the certificates, and both
/// engines' settings on one port, perfkit in `role` (QuickFIX/J presents
/// the client certificate as initiator, the server one as acceptor).
struct Tls {
    qfj: PathBuf,
    dir: tempfile::TempDir,
    pk_cfg: PathBuf,
    qfj_cfg: PathBuf,
}

fn tls(role: &str) -> Option<Tls> {
    let qfj = peer()?;
    if !certs::have_openssl() || !have_keytool() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    certs::standard(d);
    let port = free_port();
    let (theirs, cert) = match role {
        "acceptor" => ("initiator", "client"),
        _ => ("acceptor", "server"),
    };
    Some(Tls {
        pk_cfg: perfkit_settings(d, role, port, true),
        qfj_cfg: quickfixj_settings(d, theirs, port, Some(cert)),
        qfj,
        dir,
    })
}

#[test]
fn quickfixj_tls_initiator_to_perfkit_tls_acceptor() {
    let Some(Tls {
        qfj,
        dir,
        pk_cfg,
        qfj_cfg,
    }) = tls("acceptor")
    else {
        return;
    };
    let d = dir.path();
    let _acceptor = perfkit_acceptor(d, &pk_cfg, true, "acceptor.err");
    let orders = TLS_ORDERS.to_string();
    let run = Talking::start(
        &mut quickfixj(&qfj, &["initiator", qfj_cfg.to_str().unwrap(), &orders]),
        d,
        "quickfixj.err",
    );
    let (status, lines, events) = run.finish();
    assert!(status.success(), "QuickFIX/J: {lines:?}\n{events}");
    assert_eq!(count(&lines, "answered"), TLS_ORDERS, "{lines:?}");
    no_rejects(&events);
}

#[test]
fn perfkit_tls_initiator_to_quickfixj_tls_acceptor() {
    let Some(Tls {
        qfj,
        dir,
        pk_cfg,
        qfj_cfg,
    }) = tls("initiator")
    else {
        return;
    };
    let d = dir.path();
    let mut acceptor = Talking::start(
        &mut quickfixj(&qfj, &["acceptor", qfj_cfg.to_str().unwrap()]),
        d,
        "quickfixj.err",
    );
    acceptor.expect("listening");
    let lines = perfkit_orders(d, &pk_cfg, TLS_ORDERS, true);
    assert_eq!(count(&lines, "answered"), TLS_ORDERS, "{lines:?}");
    drop(acceptor.stdin());
    let (status, lines, events) = acceptor.finish();
    assert!(status.success(), "QuickFIX/J: {lines:?}\n{events}");
    assert_eq!(count(&lines, "orders"), TLS_ORDERS, "{lines:?}");
    no_rejects(&events);
}
