//! `perfkit fix acceptor --tls` and `perfkit fix initiator --tls` with
//! each other, as processes, on certificates made at test time: orders
//! answered over TLS with a client certificate required; bad
//! certificates (a CA nobody trusts, a name the certificate does not
//! carry, an expired one, a revoked one, none at all) and a plain FIX
//! peer refused, each with one line and no panic, while the acceptor goes
//! on serving; a peer that stalls mid-handshake holds nothing and is
//! closed at the Logon timeout.

mod certs;
mod interop;

use perfkit_testkit::process::{Running, free_port};

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

/// An acceptor's settings: TLS by `--tls`, the server certificate `cert`,
/// the CA `ca` and `extra` keys.
fn acceptor(dir: &Path, port: u16, cert: &str, extra: &str) -> Running {
    std::fs::write(
        dir.join("acceptor.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nSenderCompID=ISLD\n\
             UseDataDictionary=N\nStartTime=00:00:00\nEndTime=00:00:00\nLogonTimeout=2\n\
             ResetOnLogon=Y\n\
             ServerCertificateFile={cert}.pem\nServerCertificateKeyFile={cert}.key\n\
             CertificationAuthoritiesFile=ca.pem\n{extra}\n\
             [SESSION]\nBeginString=FIX.4.4\nTargetCompID=TW\n"
        ),
    )
    .unwrap();
    let child = perfkit()
        .current_dir(dir)
        .args(["fix", "acceptor", "acceptor.cfg", "--tls", "--app", "exec"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("acceptor.err")).unwrap())
        .spawn()
        .unwrap();
    // Listening once it says so (a probe connection would be a handshake
    // refused, one more line in its log).
    wait_for_line(dir, "acceptor.err", " session(s) on port ", 30);
    Running(child)
}

/// The initiator's settings file `name` connecting to `host:port` with
/// `extra` keys.
fn initiator_cfg(dir: &Path, name: &str, host: &str, port: u16, extra: &str) {
    std::fs::write(
        dir.join(name),
        format!(
            "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost={host}\n\
             SocketConnectPort={port}\nSenderCompID=TW\nHeartBtInt=30\nReconnectInterval=30\n\
             UseDataDictionary=N\nStartTime=00:00:00\nEndTime=00:00:00\n{extra}\n\
             [SESSION]\nBeginString=FIX.4.4\nTargetCompID=ISLD\n"
        ),
    )
    .unwrap();
}

/// Runs an initiator with `cfg` and `args` until `stderr` (its file in
/// `dir`) shows `line`, then stops it: that line.
fn initiator_until(dir: &Path, cfg: &str, args: &[&str], err: &str, line: &str) -> String {
    let _child = Running(
        perfkit()
            .current_dir(dir)
            .args(["fix", "initiator", cfg])
            .args(args)
            .args(["--orders", "10"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join(err)).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_for_line(dir, err, line, 20)
}

/// Waits up to `secs` for a line of `file` in `dir` containing `text`;
/// returns it.
fn wait_for_line(dir: &Path, file: &str, text: &str, secs: u64) -> String {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        let all = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        if let Some(l) = all.lines().find(|l| l.contains(text)) {
            return l.to_string();
        }
        assert!(
            Instant::now() < until,
            "no line with {text:?} in {file} within {secs} s:\n{all}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A good initiator: `orders` answered, exit 0.
fn good_initiator(dir: &Path, port: u16, orders: u64) {
    initiator_cfg(
        dir,
        "good.cfg",
        "127.0.0.1",
        port,
        "CertificationAuthoritiesFile=ca.pem\nClientCertificateFile=client.pem\n\
         ClientCertificateKeyFile=client.key\n",
    );
    let out = interop::output_within(
        perfkit()
            .current_dir(dir)
            .args(["fix", "initiator", "good.cfg", "--tls", "--orders"])
            .arg(orders.to_string()),
        60,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("answered {orders}\n")),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn orders_go_over_tls_and_bad_certificates_are_refused_with_one_line() {
    if !certs::have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    certs::standard(d);
    let port = free_port();
    // A client certificate is required (CertificateVerifyLevel=1).
    let _acc = acceptor(d, port, "server", "CertificateVerifyLevel=1");
    good_initiator(d, port, 2000);

    // The initiator trusts another CA: it refuses the acceptor's certificate.
    initiator_cfg(
        d,
        "rogue.cfg",
        "127.0.0.1",
        port,
        "CertificationAuthoritiesFile=rogue.pem\n",
    );
    let line = initiator_until(
        d,
        "rogue.cfg",
        &["--tls"],
        "rogue.err",
        "TLS handshake failed",
    );
    assert!(
        line.ends_with("invalid peer certificate: unknown issuer"),
        "{line}"
    );
    // Connected by a name the certificate does not carry (127.0.0.2 is
    // loopback too; the certificate names localhost and 127.0.0.1).
    initiator_cfg(
        d,
        "name.cfg",
        "127.0.0.2",
        port,
        "CertificationAuthoritiesFile=ca.pem\n",
    );
    let line = initiator_until(
        d,
        "name.cfg",
        &["--tls"],
        "name.err",
        "TLS handshake failed",
    );
    assert!(
        line.contains("certificate not valid for name \"127.0.0.2\""),
        "{line}"
    );
    // The initiator presents no certificate, or one from the rogue CA: the
    // acceptor refuses it.
    initiator_cfg(
        d,
        "anon.cfg",
        "127.0.0.1",
        port,
        "CertificationAuthoritiesFile=ca.pem\n",
    );
    initiator_until(d, "anon.cfg", &["--tls"], "anon.err", "TLS");
    wait_for_line(d, "acceptor.err", "peer sent no certificates", 10);
    initiator_cfg(
        d,
        "impostor.cfg",
        "127.0.0.1",
        port,
        "CertificationAuthoritiesFile=ca.pem\nClientCertificateFile=impostor.pem\n\
         ClientCertificateKeyFile=impostor.key\n",
    );
    initiator_until(d, "impostor.cfg", &["--tls"], "impostor.err", "TLS");
    let line = wait_for_line(d, "acceptor.err", "unknown issuer", 10);
    assert!(line.ends_with("; closed"), "{line}");
    // An X.509 version 1 client certificate (openssl x509 -req without
    // an extensions file), which QuickFIX's OpenSSL engines take: perfkit
    // refuses it in one line saying why, not as webpki's enum name. As
    // the initiator's own certificate, before connecting:
    certs::signed_v1(d, "ca", "v1");
    initiator_cfg(
        d,
        "v1.cfg",
        "127.0.0.1",
        port,
        "CertificationAuthoritiesFile=ca.pem\nClientCertificateFile=v1.pem\n\
         ClientCertificateKeyFile=v1.key\n",
    );
    let out = interop::output_within(
        perfkit()
            .current_dir(d)
            .args(["fix", "initiator", "v1.cfg", "--tls", "--orders", "1"]),
        30,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("ClientCertificateFile v1.pem: it is not an X.509 version 3 certificate"),
        "{err}"
    );
    // and as a client's, presented to the acceptor (by OpenSSL's client).
    let _ = interop::output_within(
        Command::new("openssl")
            .current_dir(d)
            .args(["s_client", "-connect", &format!("127.0.0.1:{port}")])
            .args(["-cert", "v1.pem", "-key", "v1.key", "-CAfile", "ca.pem"]),
        30,
    );
    let line = wait_for_line(d, "acceptor.err", "not an X.509 version 3 certificate", 10);
    assert!(
        line.ends_with("; closed") && !line.contains("Unsupported"),
        "{line}"
    );
    // A plain FIX initiator on the TLS port.
    initiator_cfg(d, "plain.cfg", "127.0.0.1", port, "");
    initiator_until(d, "plain.cfg", &[], "plain.err", "Connection");
    wait_for_line(
        d,
        "acceptor.err",
        "sent plain FIX (8=...) to a TLS port; closed",
        10,
    );

    // Through all that the acceptor served on.
    good_initiator(d, port, 100);
    let log = std::fs::read_to_string(d.join("acceptor.err")).unwrap();
    assert!(!log.contains("panicked"), "{log}");
    // Every refusal was one line naming the connection.
    for l in log
        .lines()
        .filter(|l| l.contains("TLS") && !l.starts_with("perfkit fix acceptor"))
    {
        assert!(
            l.contains(": connection from 127.0.0.") && l.ends_with("; closed"),
            "{l}"
        );
    }
}

#[test]
fn an_expired_certificate_is_refused() {
    if !certs::have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    certs::ca(d, "ca");
    // Valid for no time at all: expired a second after it is made.
    certs::signed(d, "ca", "old", 0);
    std::thread::sleep(Duration::from_millis(1100));
    let port = free_port();
    let _acc = acceptor(d, port, "old", "");
    initiator_cfg(
        d,
        "i.cfg",
        "127.0.0.1",
        port,
        "CertificationAuthoritiesFile=ca.pem\n",
    );
    let line = initiator_until(d, "i.cfg", &["--tls"], "i.err", "TLS handshake failed");
    assert!(
        line.contains("invalid peer certificate: certificate expired"),
        "{line}"
    );
}

#[test]
fn a_revoked_client_certificate_is_refused_by_the_crl() {
    if !certs::have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    certs::standard(d);
    certs::signed(d, "ca", "revoked", 2);
    certs::revoke(d, "ca", "revoked");
    let port = free_port();
    let _acc = acceptor(
        d,
        port,
        "server",
        "CertificateVerifyLevel=1\nCertificateRevocationListFile=ca-crl.pem",
    );
    revoked_client_is_refused(d, port);
    let line = wait_for_line(d, "acceptor.err", "invalid peer certificate: revoked", 10);
    assert!(line.ends_with("; closed"), "{line}");
    // A certificate the CRL does not name still gets in.
    good_initiator(d, port, 100);
}

/// An initiator with the revoked certificate (`certs::revoke`) is refused
/// by the acceptor on `port`, and says so.
fn revoked_client_is_refused(d: &Path, port: u16) {
    initiator_cfg(
        d,
        "revoked.cfg",
        "127.0.0.1",
        port,
        "CertificationAuthoritiesFile=ca.pem\nClientCertificateFile=revoked.pem\n\
         ClientCertificateKeyFile=revoked.key\n",
    );
    initiator_until(
        d,
        "revoked.cfg",
        &["--tls"],
        "revoked.err",
        "the counterparty refused the handshake: certificate revoked",
    );
}

/// Whether the acceptor closed `s` within `limit`, reading nothing else.
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    let mut buf = [0u8; 4096];
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    while Instant::now() < until {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn a_peer_stalled_mid_handshake_or_never_reading_holds_nothing() {
    if !certs::have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    certs::standard(d);
    let port = free_port();
    let _acc = acceptor(d, port, "server", "");
    // Half a ClientHello record header, then silence.
    let mut half = TcpStream::connect(("127.0.0.1", port)).unwrap();
    half.write_all(&[0x16, 0x03, 0x01, 0x02]).unwrap();
    // A whole ClientHello's worth of the start of one, never reading what
    // comes back: a real client's hello, cut short of its end.
    let mut mute = TcpStream::connect(("127.0.0.1", port)).unwrap();
    mute.write_all(&[
        0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00, 0xc4, 0x03, 0x03,
    ])
    .unwrap();
    // Meanwhile a real initiator is served at once.
    let started = Instant::now();
    good_initiator(d, port, 100);
    assert!(started.elapsed() < Duration::from_secs(10));
    // Both stalled ones are closed at the Logon timeout (2 s), each with
    // one line.
    assert!(closed_within(&mut half, Duration::from_secs(8)));
    assert!(closed_within(&mut mute, Duration::from_secs(8)));
    let log = std::fs::read_to_string(d.join("acceptor.err")).unwrap();
    assert_eq!(
        log.matches("no TLS handshake within 2 s; closed").count(),
        2,
        "{log}"
    );
}

/// QuickFIX's directory forms of the trust keys, and its cipher keys,
/// each shown by a handshake it lets through and one it refuses:
/// `CertificationAuthoritiesDirectory` (the CA in a folder, or an empty
/// folder: "unknown issuer"), `CertificateRevocationListDirectory` (the
/// CRL in a folder refuses the revoked client), `SSLCipherSuite` (TLS 1.2
/// suites two sides must share) and `TLSCipherSuites` (TLS 1.3's).
#[test]
fn certificate_directories_and_cipher_keys_mean_what_quickfix_says() {
    if !certs::have_openssl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    certs::standard(d);
    certs::signed(d, "ca", "revoked", 2);
    certs::revoke(d, "ca", "revoked");
    for (sub, files) in [
        ("cas", &["ca.pem"][..]),
        ("empty", &[]),
        ("crls", &["ca-crl.pem"]),
    ] {
        std::fs::create_dir(d.join(sub)).unwrap();
        for f in files {
            std::fs::copy(d.join(f), d.join(sub).join(f)).unwrap();
        }
    }
    let client = "ClientCertificateFile=client.pem\nClientCertificateKeyFile=client.key\n";
    let answered = |cfg: &str, keys: &str, port: u16| -> (bool, String) {
        initiator_cfg(d, cfg, "127.0.0.1", port, keys);
        let out = interop::output_within(
            perfkit().current_dir(d).args([
                "fix",
                "initiator",
                cfg,
                "--tls",
                "--orders",
                "20",
                "--grace",
                "3",
            ]),
            60,
        );
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success() && said.contains("answered 20\n"), said)
    };

    // The CA directory and the CRL directory.
    let port = free_port();
    let acc = acceptor(
        d,
        port,
        "server",
        "CertificateVerifyLevel=1\nCertificateRevocationListDirectory=crls",
    );
    let (ok, said) = answered(
        "cadir.cfg",
        &format!("CertificationAuthoritiesDirectory=cas\n{client}"),
        port,
    );
    assert!(ok, "the CA from its directory: {said}");
    // A CA folder with no CA in it is refused at start-up, naming it
    // (OpenSSL would refuse every acceptor; checking none would be worse).
    let (ok, said) = answered(
        "emptydir.cfg",
        &format!("CertificationAuthoritiesDirectory=empty\n{client}"),
        port,
    );
    assert!(
        !ok && said.contains("CertificationAuthoritiesDirectory empty: holds no CA certificate"),
        "{said}"
    );
    revoked_client_is_refused(d, port);
    drop(acc);

    // Cipher suites: a TLS 1.2 acceptor of one suite, a TLS 1.3 one of
    // another; a client of the same suite gets in, one of another not.
    let trust = format!("CertificationAuthoritiesFile=ca.pem\n{client}");
    for (server, same, other) in [
        (
            "SSLProtocol=TLSv1_2\nSSLCipherSuite=ECDHE-RSA-AES128-GCM-SHA256",
            "SSLCipherSuite=ECDHE-RSA-AES128-GCM-SHA256\n",
            "SSLProtocol=TLSv1_2\nSSLCipherSuite=ECDHE-RSA-AES256-GCM-SHA384\n",
        ),
        (
            "SSLProtocol=TLSv1_3\nTLSCipherSuites=TLS_AES_256_GCM_SHA384",
            "TLSCipherSuites=TLS_AES_256_GCM_SHA384\n",
            "SSLProtocol=TLSv1_3\nTLSCipherSuites=TLS_AES_128_GCM_SHA256\n",
        ),
    ] {
        let port = free_port();
        let _acc = acceptor(
            d,
            port,
            "server",
            &format!("CertificateVerifyLevel=1\n{server}"),
        );
        let (ok, said) = answered("same.cfg", &format!("{trust}{same}"), port);
        assert!(ok, "{server} / {same}: {said}");
        initiator_cfg(
            d,
            "other.cfg",
            "127.0.0.1",
            port,
            &format!("{trust}{other}"),
        );
        let line = initiator_until(
            d,
            "other.cfg",
            &["--tls"],
            "other.err",
            "TLS handshake failed",
        );
        assert!(
            line.contains("handshake") && !line.contains("panicked"),
            "{server} / {other}: {line}"
        );
    }
}
