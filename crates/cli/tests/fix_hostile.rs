//! Counterparties that lie, stall or never read, against `perfkit fix
//! acceptor` and `perfkit fix initiator` as processes. The real
//! counterparty must never be locked out, memory and threads stay
//! bounded, and signals work in every state. Messages are framed by the
//! tests' own oracle (`perfkit_testkit::fix_wire`), not by perfkit.

use perfkit_testkit::fix_wire::frame_now as frame;
use perfkit_testkit::process::{Running, free_port};

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

fn acceptor(dir: &Path, port: u16, extra: &str) -> Running {
    std::fs::write(
        dir.join("acceptor.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nSenderCompID=ISLD\n\
             ResetOnLogon=Y\nUseDataDictionary=N\nStartTime=00:00:00\nEndTime=00:00:00\n{extra}\n\
             [SESSION]\nBeginString=FIX.4.4\nTargetCompID=TW\n"
        ),
    )
    .unwrap();
    let child = perfkit()
        .current_dir(dir)
        .args(["fix", "acceptor", "acceptor.cfg", "--app", "exec"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the acceptor never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    Running(child)
}

/// Whether the peer closed `s` within `limit` (reading and dropping
/// whatever it sends first).
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    let mut buf = [0u8; 4096];
    while Instant::now() < until {
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
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

/// The real counterparty logs on and gets the acceptor's Logon back.
fn real_logon_works(port: u16) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(&frame("35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|"))
        .unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(5).any(|w| w == b"\x0135=A") {
        let n = c
            .read(&mut buf)
            .expect("the real counterparty got no Logon");
        assert!(n > 0, "the real counterparty was refused");
        got.extend_from_slice(&buf[..n]);
    }
    // Logged out again, so the next check finds the session free.
    c.write_all(&frame("35=5|34=2|49=TW|52=NOW|56=ISLD|"))
        .unwrap();
    assert!(closed_within(&mut c, Duration::from_secs(10)));
}

/// Whether the peer closed `s` within `limit`, without reading from it
/// (reading would drain what a stalled peer is meant to leave unread).
fn hung_up_within(s: &TcpStream, limit: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let until = Instant::now() + limit;
    while Instant::now() < until {
        let mut fd = libc::pollfd {
            fd: s.as_raw_fd(),
            events: libc::POLLRDHUP,
            revents: 0,
        };
        // SAFETY: one valid pollfd for a socket borrowed throughout.
        let n = unsafe { libc::poll(&mut fd, 1, 100) };
        if n > 0 && fd.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0 {
            return true;
        }
    }
    false
}

fn threads_of(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap()
}

/// A first frame with the session's CompIDs that is not a good Logon
/// (a bad CheckSum, or another type) takes no session: the connection is
/// closed at once and the real counterparty logs on while the stranger
/// still holds its socket.
#[test]
fn a_garbled_first_frame_takes_no_session() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _acc = acceptor(dir.path(), port, "");
    let mut bad_sum = frame("35=D|34=1|49=TW|52=NOW|56=ISLD|11=X|");
    let n = bad_sum.len();
    bad_sum[n - 2] = if bad_sum[n - 2] == b'0' { b'1' } else { b'0' };
    let not_logon = frame("35=0|34=1|49=TW|52=NOW|56=ISLD|");
    let mut bad_logon = frame("35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|");
    let n = bad_logon.len();
    bad_logon[n - 3] = if bad_logon[n - 3] == b'9' { b'8' } else { b'9' };
    for first in [bad_sum, not_logon, bad_logon] {
        let mut stranger = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stranger.write_all(&first).unwrap();
        assert!(
            closed_within(&mut stranger, Duration::from_secs(5)),
            "the stranger's connection stayed open"
        );
        real_logon_works(port);
    }
}

/// A connection that sends nothing, or half a message, is closed after
/// LogonTimeout; hundreds of them hold neither threads nor memory, and
/// the real counterparty still logs on among them.
#[test]
fn unauthenticated_connections_are_bounded_and_time_out() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let acc = acceptor(dir.path(), port, "LogonTimeout=2\n");
    let pid = acc.id();
    let base_threads = threads_of(pid);
    let mut silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let chunk = vec![b'x'; 16 << 10];
    let mut conns = Vec::new();
    for _ in 0..300 {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        // An unfinished message of 48 KiB each, under the first
        // message's limit, so each is held until its time runs out.
        let _ = c.write_all(b"8=FIX.4.4\x019=60000\x01");
        c.set_nonblocking(true).unwrap();
        for _ in 0..3 {
            let _ = c.write(&chunk);
        }
        conns.push(c);
    }
    std::thread::sleep(Duration::from_millis(500));
    let threads = threads_of(pid);
    assert!(
        threads <= base_threads + 2,
        "{threads} threads with 300 connections awaiting a Logon (from {base_threads})"
    );
    let rss = rss_kib(pid);
    assert!(rss < 100 << 10, "{rss} KiB resident with 300 connections");
    real_logon_works(port);
    assert!(
        closed_within(&mut silent, Duration::from_secs(6)),
        "a silent connection outlived LogonTimeout=2"
    );
}

/// A logged-on peer that floods orders and never reads is dropped (its
/// answers pile up unread), the real counterparty then logs on, and
/// SIGTERM ends the acceptor even while a peer stalls it.
#[test]
fn a_peer_that_never_reads_is_dropped_and_signals_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut acc = acceptor(dir.path(), port, "");
    let flood = |hb: u32| {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.write_all(&frame(&format!(
            "35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108={hb}|141=Y|"
        )))
        .unwrap();
        // Small buffers so the flood blocks early.
        socket2::SockRef::from(&c)
            .set_recv_buffer_size(4096)
            .unwrap();
        c.set_write_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut seq = 2u64;
        let start = Instant::now();
        // Write orders until the acceptor stops taking them (it stopped
        // reading because its answers wait for us) or drops us.
        while start.elapsed() < Duration::from_secs(20) {
            let mut batch = Vec::new();
            for _ in 0..100 {
                batch.extend_from_slice(&frame(&format!(
                    "35=D|34={seq}|49=TW|52=NOW|56=ISLD|11=O{seq}|21=1|55=MSFT|54=1|60=NOW|40=1|38=100|"
                )));
                seq += 1;
            }
            if c.write_all(&batch).is_err() {
                break;
            }
        }
        c
    };
    // HeartBtInt=1: the stall limit is 2 s.
    let start = Instant::now();
    let c = flood(1);
    assert!(
        hung_up_within(&c, Duration::from_secs(20)),
        "the acceptor kept a peer that never read"
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    real_logon_works(port);
    // HeartBtInt=30: stalled for longer than a signal should wait.
    let _stalled = flood(30);
    let pid = acc.id() as i32;
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = acc.try_wait().unwrap() {
            // 128 + SIGTERM, after the sessions' logout (docs/exit-codes.md).
            assert_eq!(status.code(), Some(143), "{status}");
            break;
        }
        assert!(
            Instant::now() < until,
            "SIGTERM did not end a stalled acceptor"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An initiator whose acceptor answers the Logon, then never reads
/// again: SIGINT still ends it.
#[test]
fn an_initiator_against_an_acceptor_that_stops_reading_ends_on_sigint() {
    let dir = tempfile::tempdir().unwrap();
    // A small receive buffer set before listening, so that the window
    // the connection offers is small from its handshake on.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket
        .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    socket.listen(1).unwrap();
    let listener: TcpListener = socket.into();
    let port = listener.local_addr().unwrap().port();
    std::fs::write(
        dir.path().join("initiator.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\n\
             SocketConnectPort={port}\nHeartBtInt=30\nReconnectInterval=1\nResetOnLogon=Y\n\
             UseDataDictionary=N\nStartTime=00:00:00\nEndTime=00:00:00\n\n\
             [SESSION]\nBeginString=FIX.4.4\nSenderCompID=TW\nTargetCompID=ISLD\n"
        ),
    )
    .unwrap();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        socket2::SockRef::from(&s)
            .set_recv_buffer_size(4096)
            .unwrap();
        let mut buf = [0u8; 1024];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\x0110=") || !got.windows(5).any(|w| w == b"\x0135=A")
        {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0);
            got.extend_from_slice(&buf[..n]);
        }
        s.write_all(&frame("35=A|34=1|49=ISLD|52=NOW|56=TW|98=0|108=30|141=Y|"))
            .unwrap();
        // Never reads again; holds the socket until the test ends.
        std::thread::sleep(Duration::from_secs(30));
        drop(s);
    });
    let mut init = Running(
        perfkit()
            .current_dir(dir.path())
            .args([
                "fix",
                "initiator",
                "initiator.cfg",
                "--orders",
                "1000000",
                // 100,000 orders in flight are 14 MB queued behind a
                // counterparty that never reads: stalled, under the 64 MiB
                // that would disconnect it on its own, so SIGINT is what
                // ends it. (A window of 1,000,000 queued 139 MB in one
                // round, which a debug build under load took over 10 s
                // to make before it could look at the signal.)
                "--window",
                "100000",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        init.try_wait().unwrap().is_none(),
        "the initiator ended early"
    );
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(init.id() as i32, libc::SIGINT) }, 0);
    let until = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = init.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < until,
            "SIGINT did not end a stalled initiator"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // 128 + SIGINT (docs/exit-codes.md), not 0: it was stopped.
    assert_eq!(status.code(), Some(130), "{status}");
    drop(server);
}
