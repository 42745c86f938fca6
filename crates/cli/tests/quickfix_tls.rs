//! TLS interop with QuickFIX/C++'s OpenSSL classes (Debian's
//! libquickfix-dev 1.15.1): its `SSLSocketInitiator` -> `perfkit fix
//! acceptor --tls`, and `perfkit fix initiator --tls` -> its
//! `SSLSocketAcceptor`, 10,000 orders each way, each side checking the
//! other's certificate against the CA (the acceptor requiring the
//! initiator's, `CertificateVerifyLevel=1`). Both read one settings file
//! per role, QuickFIX's certificate keys in `[DEFAULT]` where QuickFIX
//! reads them.
//!
//! The QuickFIX side is `xtask/peers/quickfix/quickfix_session.cpp` in its
//! `ssl-` modes, as `cargo xtask peers` builds it. A missing peer fails the
//! test (set `PERFKIT_SKIP_INTEROP=1` to skip it on a machine without
//! one; CI never does).

mod certs;
mod interop;

use perfkit_testkit::process::{Running, free_port};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const ORDERS: u64 = 10_000;

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

fn peer() -> Option<PathBuf> {
    interop::peer(
        "quickfix-session",
        " (needs g++ libquickfix-dev libssl-dev)",
    )
}

/// The settings of `role` (for either engine) on `port`, with TLS keys:
/// the acceptor presents `server` and requires a certificate from `ca`;
/// the initiator checks the acceptor's against `ca` and presents
/// `client`.
fn settings(dir: &Path, role: &str, port: u16) -> PathBuf {
    let (sender, target, socket) = match role {
        "initiator" => (
            "TW",
            "ISLD",
            format!(
                "SocketConnectHost=127.0.0.1\nSocketConnectPort={port}\nReconnectInterval=1\n\
                 ClientCertificateFile=client.pem\nClientCertificateKeyFile=client.key\n"
            ),
        ),
        _ => (
            "ISLD",
            "TW",
            format!(
                "SocketAcceptPort={port}\nServerCertificateFile=server.pem\n\
                 ServerCertificateKeyFile=server.key\nCertificateVerifyLevel=1\n"
            ),
        ),
    };
    let path = dir.join(format!("{role}.cfg"));
    std::fs::write(
        &path,
        format!(
            "[DEFAULT]\nConnectionType={role}\n{socket}CertificationAuthoritiesFile=ca.pem\n\
             HeartBtInt=30\nStartTime=00:00:00\nEndTime=00:00:00\nUseDataDictionary=N\n\n\
             [SESSION]\nBeginString=FIX.4.4\nSenderCompID={sender}\nTargetCompID={target}\n"
        ),
    )
    .unwrap();
    path
}

/// `answered N` / `orders N` and `seqs S T` from a side's stdout.
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

#[test]
fn quickfix_ssl_initiator_to_perfkit_tls_acceptor() {
    let Some(qf) = peer() else { return };
    if !certs::have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    certs::standard(d);
    let port = free_port();
    let cfg = settings(d, "acceptor", port);
    let mut acceptor = Running(
        perfkit()
            .current_dir(d)
            .args(["fix", "acceptor"])
            .arg(&cfg)
            .args(["--tls", "--app", "exec"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.join("acceptor.err")).unwrap())
            .spawn()
            .unwrap(),
    );
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(d.join("acceptor.err"))
        .unwrap_or_default()
        .contains(" session(s) on port ")
    {
        assert!(
            std::time::Instant::now() < until,
            "the acceptor never listened"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let qf_cfg = settings(d, "initiator", port);
    let out = interop::output_within(
        Command::new(&qf)
            .current_dir(d)
            .arg("ssl-initiator")
            .arg(&qf_cfg)
            .arg(ORDERS.to_string()),
        120,
    );
    let qf_out = String::from_utf8_lossy(&out.stdout).into_owned();
    let _ = acceptor.kill();
    let _ = acceptor.wait();
    let events = std::fs::read_to_string(d.join("acceptor.err")).unwrap();
    assert!(
        out.status.success(),
        "QuickFIX: {qf_out}{}\nperfkit acceptor:\n{events}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (answered, _) = summary(&qf_out);
    assert_eq!(answered, ORDERS, "{events}");
    assert!(
        events.contains("on port") && events.contains("(TLS)"),
        "{events}"
    );
    assert!(events.contains("Logon complete"), "{events}");
}

#[test]
fn perfkit_tls_initiator_to_quickfix_ssl_acceptor() {
    let Some(qf) = peer() else { return };
    if !certs::have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    certs::standard(d);
    let port = free_port();
    let qf_cfg = settings(d, "acceptor", port);
    let mut qf_run = Running(
        Command::new(&qf)
            .current_dir(d)
            .arg("ssl-acceptor")
            .arg(&qf_cfg)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // "listening" once its socket is open.
    let mut first = [0u8; 10];
    qf_run
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    assert_eq!(&first, b"listening\n");
    let cfg = settings(d, "initiator", port);
    let out = interop::output_within(
        perfkit()
            .current_dir(d)
            .args(["fix", "initiator"])
            .arg(&cfg)
            .args(["--tls", "--orders", &ORDERS.to_string()]),
        120,
    );
    let our_out = String::from_utf8_lossy(&out.stdout).into_owned();
    let events = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{our_out}{events}");
    let (answered, our_seqs) = summary(&our_out);
    assert_eq!(answered, ORDERS, "{events}");

    drop(qf_run.stdin.take());
    let mut qf_out = String::new();
    qf_run
        .stdout
        .as_mut()
        .unwrap()
        .read_to_string(&mut qf_out)
        .unwrap();
    let (orders, qf_seqs) = summary(&qf_out);
    assert_eq!(orders, ORDERS, "{qf_out}");
    assert_eq!(qf_seqs, (our_seqs.1, our_seqs.0), "{qf_out} vs {our_out}");
}
