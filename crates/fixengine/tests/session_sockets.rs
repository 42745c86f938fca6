//! The socket settings, checked against the kernel and real loopback
//! connections rather than against fixcore's own reading of them:
//! `SocketAcceptAddress` (who can reach the port), the buffer sizes
//! (getsockopt on the listener, an accepted and an initiator's
//! connection), `AllowedRemoteAddresses` (connections from other loopback
//! addresses), initiator failover over `SocketConnectHost<n>` (a host that
//! refuses, then one that accepts) with source addresses and ports (what
//! the acceptor sees), `SocketNodelay` (getsockopt on an initiator's
//! connection), and `ValidateLengthAndChecksum` (messages whose
//! CheckSum a client written here got wrong on purpose).

use perfkit_testkit::fix_wire::{frame_now, has, read_message};
use perfkit_testkit::process::free_port;

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener, TcpStream};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fixengine::acceptor::{Acceptor, listen};
use fixengine::apps::Echo;
use fixengine::connection::{self, Options};
use fixengine::initiator::Targets;
use fixsession::log::Discard;
use fixsession::machine::{Config, Session};
use fixsession::settings::{SessionSettings, Settings};
use fixsession::store::MemoryStore;
use socket2::SockRef;

const LOCAL_2: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
const LOCAL_3: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));

/// The sessions of a settings file.
fn sessions(text: &str) -> Vec<SessionSettings> {
    Settings::parse(text).unwrap().sessions
}

fn acceptor_file(port: u16, extra: &str) -> String {
    format!(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nSenderCompID=ISLD\n\
         ResetOnLogon=Y\n{extra}\n[SESSION]\nBeginString=FIX.4.4\nTargetCompID=TW\n"
    )
}

/// A connection to `to` from the loopback address `from`.
fn connect_from(from: IpAddr, to: std::net::SocketAddr) -> io::Result<TcpStream> {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    s.bind(&std::net::SocketAddr::new(from, 0).into())?;
    s.connect(&to.into())?;
    let s: TcpStream = s.into();
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    Ok(s)
}

/// Whether the peer closed `s` without sending a byte.
fn closed_unanswered(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 256];
    match s.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() == io::ErrorKind::ConnectionReset,
    }
}

/// Linux reports twice the size asked for (socket(7): the kernel keeps
/// room for its bookkeeping).
fn kernel_size(asked: usize) -> usize {
    2 * asked
}

#[test]
fn the_acceptor_listens_on_its_address_with_its_buffers() {
    let port = free_port();
    let s = &sessions(&acceptor_file(
        port,
        "SocketAcceptAddress=127.0.0.2\nSocketSendBufferSize=49152\nSocketReceiveBufferSize=81920\n",
    ))[0];
    let listener = listen(s).unwrap();
    assert_eq!(listener.local_addr().unwrap().ip(), LOCAL_2);
    let l = SockRef::from(&listener);
    assert_eq!(l.send_buffer_size().unwrap(), kernel_size(49152));
    assert_eq!(l.recv_buffer_size().unwrap(), kernel_size(81920));
    assert!(l.reuse_address().unwrap());

    // Reachable at 127.0.0.2 only; the connection inherits the buffers.
    let _c = TcpStream::connect((LOCAL_2, port)).unwrap();
    let (accepted, _) = listener.accept().unwrap();
    let a = SockRef::from(&accepted);
    assert_eq!(a.send_buffer_size().unwrap(), kernel_size(49152));
    assert_eq!(a.recv_buffer_size().unwrap(), kernel_size(81920));
    let refused = TcpStream::connect(("127.0.0.1", port)).unwrap_err();
    assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);

    // Unset: every IPv4 address, and SO_REUSEADDR as asked.
    for reuse in ["Y", "N"] {
        let port = free_port();
        let s = &sessions(&acceptor_file(
            port,
            &format!("SocketReuseAddress={reuse}\n"),
        ))[0];
        let listener = listen(s).unwrap();
        assert_eq!(
            listener.local_addr().unwrap().ip(),
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        );
        assert_eq!(
            SockRef::from(&listener).reuse_address().unwrap(),
            reuse == "Y"
        );
        for to in [Ipv4Addr::LOCALHOST, Ipv4Addr::new(127, 0, 0, 2)] {
            let _c = TcpStream::connect((to, port)).unwrap();
            listener.accept().unwrap();
        }
    }
}

/// Serves the acceptor sessions of `text` with the echo application
/// until `stop`; what belongs to no session goes to `misc`.
fn serve(
    text: &str,
    stop: &'static AtomicBool,
    misc: &'static Mutex<Vec<String>>,
) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
    let all = sessions(text);
    let listener = listen(&all[0]).unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let acceptor = Acceptor::new(
            all.iter()
                .map(|s| Session::new(Config::from_settings(s), MemoryStore::default()))
                .collect(),
        );
        let log_misc = |s: &str| misc.lock().unwrap().push(s.to_owned());
        acceptor
            .serve(
                &listener,
                |_| Echo::default(),
                |_| Ok(Discard),
                &log_misc,
                Options::new(stop),
            )
            .unwrap();
    });
    (addr, server)
}

fn leaked<T: Default>() -> &'static T {
    Box::leak(Box::default())
}

#[test]
fn allowed_remote_addresses_keep_other_peers_out_before_logon() {
    let port = free_port();
    // Session TW takes connections from 127.0.0.2 only; session OPEN from
    // anyone.
    let text = format!(
        "{}\n[SESSION]\nBeginString=FIX.4.4\nTargetCompID=OPEN\nAllowedRemoteAddresses=\n",
        acceptor_file(port, "AllowedRemoteAddresses=127.0.0.4, 127.0.0.2\n")
    );
    let stop: &'static AtomicBool = leaked();
    let misc: &'static Mutex<Vec<String>> = leaked();
    let (_, server) = serve(&text, stop, misc);
    let to = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let logon = |target: &str| {
        frame_now(&format!(
            "35=A|34=1|49={target}|52=NOW|56=ISLD|98=0|108=30|"
        ))
    };

    // From 127.0.0.3, TW's Logon is closed unanswered...
    let mut c = connect_from(LOCAL_3, to).unwrap();
    c.write_all(&logon("TW")).unwrap();
    assert!(closed_unanswered(&mut c));
    // ... while OPEN's is answered from there.
    let mut open = connect_from(LOCAL_3, to).unwrap();
    open.write_all(&logon("OPEN")).unwrap();
    assert!(has(&read_message(&mut open).unwrap(), "35=A"));
    // From 127.0.0.2, TW logs on.
    let mut c = connect_from(LOCAL_2, to).unwrap();
    c.write_all(&logon("TW")).unwrap();
    let answer = read_message(&mut c).unwrap();
    assert!(has(&answer, "35=A") && has(&answer, "56=TW"), "{answer:?}");
    stop.store(true, Ordering::Relaxed);
    drop((c, open));
    server.join().unwrap();
    let misc = misc.lock().unwrap();
    assert!(
        misc.iter().any(|l| l.contains("127.0.0.3")
            && l.contains("not in the AllowedRemoteAddresses of FIX.4.4:ISLD->TW")),
        "{misc:?}"
    );

    // With every session restricted, a stranger is closed before it
    // sends anything.
    let port = free_port();
    let stop: &'static AtomicBool = leaked();
    let misc: &'static Mutex<Vec<String>> = leaked();
    let (_, server) = serve(
        &acceptor_file(port, "AllowedRemoteAddresses=127.0.0.2\n"),
        stop,
        misc,
    );
    let mut c = connect_from(LOCAL_3, std::net::SocketAddr::from(([127, 0, 0, 1], port))).unwrap();
    assert!(closed_unanswered(&mut c));
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap();
    let misc = misc.lock().unwrap();
    assert!(
        misc.iter()
            .any(|l| l.contains("not in any session's AllowedRemoteAddresses")),
        "{misc:?}"
    );
}

/// `frame` with its CheckSum off by one.
fn bad_checksum(mut frame: Vec<u8>) -> Vec<u8> {
    let n = frame.len();
    let digits = &mut frame[n - 4..n - 1];
    let sum: u32 = std::str::from_utf8(digits).unwrap().parse().unwrap();
    digits.copy_from_slice(format!("{:03}", (sum + 1) % 256).as_bytes());
    frame
}

#[test]
fn validate_length_and_checksum_n_takes_messages_whose_checksum_is_wrong() {
    let logon = bad_checksum(frame_now("35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|"));
    let order = bad_checksum(frame_now(
        "35=D|34=2|49=TW|52=NOW|56=ISLD|11=ORDER1|21=1|55=MSFT|54=1|60=NOW|40=1|38=100|",
    ));
    for (setting, taken) in [
        ("", false),
        ("ValidateLengthAndChecksum=Y\n", false),
        ("ValidateLengthAndChecksum=N\n", true),
        ("ValidateChecksum=N\n", true),
    ] {
        let port = free_port();
        let stop: &'static AtomicBool = leaked();
        let misc: &'static Mutex<Vec<String>> = leaked();
        let (addr, server) = serve(&acceptor_file(port, setting), stop, misc);
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        c.write_all(&logon).unwrap();
        if taken {
            assert!(has(&read_message(&mut c).unwrap(), "35=A"), "{setting}");
            c.write_all(&order).unwrap();
            let echo = read_message(&mut c).unwrap();
            assert!(
                has(&echo, "35=D") && has(&echo, "11=ORDER1"),
                "{setting}: {echo:?}"
            );
        } else {
            assert!(closed_unanswered(&mut c), "{setting}");
        }
        stop.store(true, Ordering::Relaxed);
        drop(c);
        server.join().unwrap();
    }
}

fn initiator_file(extra: &str) -> String {
    format!(
        "[SESSION]\nConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=TW\n\
         TargetCompID=ISLD\nHeartBtInt=30\n{extra}"
    )
}

#[test]
fn an_initiator_fails_over_to_the_next_host_from_its_source_address() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let up = listener.local_addr().unwrap().port();
    let down = free_port();
    let s = &sessions(&initiator_file(&format!(
        "SocketConnectHost=127.0.0.1\nSocketConnectPort={down}\n\
         SocketConnectHost1=localhost\nSocketConnectPort1={up}\nSocketConnectSourceHost1=127.0.0.2\n"
    )))[0];
    let mut targets = Targets::new(s).unwrap();
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    // The first host refuses...
    let first = targets.next(t0).clone();
    assert_eq!((first.host.as_str(), first.port), ("127.0.0.1", down));
    let e = fixengine::initiator::connect(&first, &stop).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
    // ... the second accepts, and sees the connection come from the
    // source address asked for.
    let second = targets.next(t0 + Duration::from_secs(1)).clone();
    assert_eq!(second.port, up);
    let _c = fixengine::initiator::connect(&second, &stop).unwrap();
    let (_, peer) = listener.accept().unwrap();
    assert_eq!(peer.ip(), LOCAL_2);
    // Then the first again, in turn.
    assert_eq!(targets.next(t0 + Duration::from_secs(500)).port, down);
}

/// Issue 63.7: every socket error is one sentence naming the address
/// that failed, in the system's words: a source address not on this
/// machine (TEST-NET-1, whose bind fails with EADDRNOTAVAIL before
/// anything is sent) or a source port taken is the source's fault, not
/// the destination's; a destination that refuses is the destination's;
/// an acceptor's port taken names the address it binds. Before, each was
/// `connecting to 127.0.0.1:PORT: ...` or `Address already in use (os
/// error 98)`.
#[test]
fn a_socket_error_names_the_address_that_failed() {
    let up = TcpListener::bind("127.0.0.1:0").unwrap();
    up.set_nonblocking(true).unwrap();
    let port = up.local_addr().unwrap().port();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().port();
    let down = free_port();
    let stop = AtomicBool::new(false);
    let error = |keys: String| {
        let s = &sessions(&initiator_file(&keys))[0];
        let target = Targets::new(s).unwrap().next(Instant::now()).clone();
        fixengine::initiator::connect(&target, &stop)
            .map(|_| ())
            .unwrap_err()
    };
    let e = error(format!(
        "SocketConnectHost=127.0.0.1\nSocketConnectPort={port}\n\
         SocketConnectSourceHost=192.0.2.1\n"
    ));
    assert_eq!(
        e.to_string(),
        "binding the source address 192.0.2.1:0: Cannot assign requested address",
        "(with net.ipv4.ip_nonlocal_bind=1 this address can be bound)"
    );
    assert_eq!(e.kind(), io::ErrorKind::AddrNotAvailable);
    let e = error(format!(
        "SocketConnectHost=localhost\nSocketConnectPort={port}\n\
         SocketConnectSourceHost=127.0.0.1\nSocketConnectSourcePort={busy}\n"
    ));
    assert_eq!(
        e.to_string(),
        format!("binding the source address 127.0.0.1:{busy}: Address already in use")
    );
    // Nothing reached the destination.
    assert_eq!(
        up.accept().map(|_| ()).unwrap_err().kind(),
        io::ErrorKind::WouldBlock
    );
    let e = error(format!(
        "SocketConnectHost=localhost\nSocketConnectPort={down}\n"
    ));
    assert_eq!(
        e.to_string(),
        format!("connecting to 127.0.0.1:{down} (localhost): Connection refused")
    );
    assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);

    let listening = TcpListener::bind(("0.0.0.0", 0)).unwrap();
    let held = listening.local_addr().unwrap().port();
    let e = listen(&sessions(&acceptor_file(held, ""))[0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("binding 0.0.0.0:{held} (SocketAcceptPort): Address already in use")
    );
    let e =
        listen(&sessions(&acceptor_file(held, "SocketAcceptAddress=localhost\n"))[0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "binding 127.0.0.1:{held} (localhost) (SocketAcceptAddress, SocketAcceptPort): \
             Address already in use"
        )
    );
    drop(taken);
}

#[test]
fn host_selection_priority_starts_over_after_a_connection_that_lasted() {
    let hosts = "SocketConnectHost=a\nSocketConnectPort=1\nSocketConnectHost1=b\n\
                 SocketConnectPort1=2\nSocketConnectHost2=c\nSocketConnectPort2=3\n";
    let order = |policy: &str, gaps: &[u64]| -> Vec<u16> {
        let s = &sessions(&initiator_file(&format!("{hosts}{policy}")))[0];
        let mut targets = Targets::new(s).unwrap();
        let mut t = Instant::now();
        gaps.iter()
            .map(|&g| {
                t += Duration::from_secs(g);
                targets.next(t).port
            })
            .collect()
    };
    // In turn, whatever the time between attempts.
    assert_eq!(order("", &[0, 1, 1, 1, 300, 1]), [1, 2, 3, 1, 2, 3]);
    // PRIORITY: back to the first after 120 s (default) or the interval
    // given.
    assert_eq!(
        order("HostSelectionPolicy=PRIORITY\n", &[0, 1, 1, 1, 300, 1]),
        [1, 2, 3, 1, 1, 2]
    );
    assert_eq!(
        order(
            "HostSelectionPolicy=PRIORITY\nHostSelectionPolicyPriorityStartOverInterval=10\n",
            &[0, 5, 10, 9]
        ),
        [1, 2, 1, 2]
    );
}

/// Runs session `s` on `stream`, an initiator's connection to `listener`,
/// with the options `opts` makes, until the counterparty (a thread here)
/// has taken the Logon and hung up.
fn serve_until_hung_up(
    listener: &TcpListener,
    stream: &mut TcpStream,
    s: &SessionSettings,
    opts: impl for<'a> FnOnce(&'a AtomicBool) -> Options<'a>,
) {
    let (mut peer, _) = listener.accept().unwrap();
    let hang_up = std::thread::spawn(move || {
        let _ = read_message(&mut peer);
    });
    let mut session = Session::new(Config::from_settings(s), MemoryStore::default());
    let stop = AtomicBool::new(false);
    connection::run(
        stream,
        &[],
        &mut session,
        &mut Echo::default(),
        &mut Discard,
        opts(&stop),
    )
    .unwrap();
    hang_up.join().unwrap();
}

/// An initiator's connection gets the session's buffer sizes (the kernel
/// reports them on a clone of the socket).
#[test]
fn an_initiator_connection_gets_its_buffer_sizes() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let s = &sessions(&initiator_file(&format!(
        "SocketConnectHost=127.0.0.1\nSocketConnectPort={port}\n\
         SocketSendBufferSize=49152\nSocketReceiveBufferSize=81920\n"
    )))[0];
    let mut stream = fixengine::initiator::connect(
        &Targets::new(s).unwrap().next(Instant::now()).clone(),
        &AtomicBool::new(false),
    )
    .unwrap();
    let probe = stream.try_clone().unwrap();
    serve_until_hung_up(&listener, &mut stream, s, |stop| Options::new(stop));
    let p = SockRef::from(&probe);
    assert_eq!(p.send_buffer_size().unwrap(), kernel_size(49152));
    assert_eq!(p.recv_buffer_size().unwrap(), kernel_size(81920));
}

/// The unnumbered `SocketConnectSourceHost` and `SocketConnectSourcePort`
/// (QuickFIX/C++'s), and `SocketConnectSourcePort<n>` for a numbered
/// host: the acceptor sees each connection come from that address and
/// port.
#[test]
fn an_initiator_connects_from_its_source_address_and_port() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let up = listener.local_addr().unwrap().port();
    let (p0, p1) = (free_port(), free_port());
    let s = &sessions(&initiator_file(&format!(
        "SocketConnectHost=127.0.0.1\nSocketConnectPort={up}\n\
         SocketConnectSourceHost=127.0.0.2\nSocketConnectSourcePort={p0}\n\
         SocketConnectHost1=127.0.0.1\nSocketConnectPort1={up}\n\
         SocketConnectSourceHost1=127.0.0.3\nSocketConnectSourcePort1={p1}\n"
    )))[0];
    let mut targets = Targets::new(s).unwrap();
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    for (i, (ip, port)) in [(LOCAL_2, p0), (LOCAL_3, p1)].into_iter().enumerate() {
        let target = targets.next(t0 + Duration::from_secs(i as u64)).clone();
        let _c = fixengine::initiator::connect(&target, &stop).unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert_eq!((peer.ip(), peer.port()), (ip, port), "target {i}");
    }
}

/// `SocketNodelay`: TCP_NODELAY as the kernel reports it on an
/// initiator's connection, on by default (as QuickFIX's default Y), off
/// with `SocketNodelay=N`.
#[test]
fn socket_nodelay_sets_tcp_nodelay_on_the_connection() {
    for (key, want) in [
        ("", true),
        ("SocketNodelay=N\n", false),
        ("SocketNodelay=Y\n", true),
    ] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let s = &sessions(&initiator_file(&format!(
            "SocketConnectHost=127.0.0.1\nSocketConnectPort={port}\n{key}"
        )))[0];
        let mut stream = fixengine::initiator::connect(
            &Targets::new(s).unwrap().next(Instant::now()).clone(),
            &AtomicBool::new(false),
        )
        .unwrap();
        let probe = stream.try_clone().unwrap();
        // Set the other way first, so only the session's setting can
        // leave it as wanted.
        probe.set_nodelay(!want).unwrap();
        serve_until_hung_up(&listener, &mut stream, s, |stop| {
            Options::for_session(s, stop)
        });
        assert_eq!(probe.nodelay().unwrap(), want, "{key:?}");
    }
}
