//! The acceptor over real loopback TCP with the echo application: a
//! client written here (its own framing and checksums) logs on, has an
//! order echoed, logs out; a connection for an unknown session and a
//! second connection for a live session are closed without disturbing it;
//! the stop flag logs a live session out.

use perfkit_testkit::fix_wire as wire;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fixcore::session::acceptor::Acceptor;
use fixcore::session::app::Echo;
use fixcore::session::connection::{Log, Options, now};
use fixcore::session::machine::{Config, Role, Session};
use fixcore::session::store::MemoryStore;
use fixcore::settings::BeginString;
use fixcore::value::UtcTimestamp;

fn config(bs: BeginString, theirs: &str) -> Config {
    Config {
        reset_on_logon: true,
        ..Config::new(Role::Acceptor, bs, "ISLD", theirs)
    }
}

/// A message of `bs` with `fields`, `NOW` being the wall clock.
fn frame(bs: &str, fields: &str) -> Vec<u8> {
    let now = wire::timestamp(now().unix_nanos);
    wire::frame(&format!("8={bs}|{}", fields.replace("NOW", &now)))
}

/// Reads one message (up to and including `10=xxx<SOH>`) as `tag=value`
/// strings; `None` when the acceptor closed the connection.
fn read_message(s: &mut TcpStream) -> Option<Vec<String>> {
    let mut bytes = Vec::new();
    let mut b = [0u8; 1];
    loop {
        match s.read(&mut b) {
            Ok(0) => return None,
            Ok(_) => bytes.push(b[0]),
            Err(e) => panic!("read: {e}"),
        }
        if b[0] == 1 {
            let text = String::from_utf8_lossy(&bytes);
            let last = text.trim_end_matches('\x01').rsplit('\x01').next().unwrap();
            if last.starts_with("10=") {
                let fields: Vec<String> = text
                    .trim_end_matches('\x01')
                    .split('\x01')
                    .map(str::to_owned)
                    .collect();
                return Some(fields);
            }
        }
    }
}

fn has(fields: &[String], f: &str) -> bool {
    fields.iter().any(|x| x == f)
}

/// Collects the event lines of every session.
#[derive(Clone, Copy)]
struct Events(&'static Mutex<Vec<String>>);

impl Log for Events {
    fn message(&mut self, _: UtcTimestamp, _: bool, _: &[u8]) {}
    fn event(&mut self, _: UtcTimestamp, text: &str) {
        self.0.lock().unwrap().push(text.to_owned());
    }
}

#[test]
fn echo_acceptor_serves_sessions_and_closes_strangers() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let events: &'static Mutex<Vec<String>> = Box::leak(Box::default());
    let misc: &'static Mutex<Vec<String>> = Box::leak(Box::default());
    let server = std::thread::spawn(move || {
        let acceptor = Acceptor::new(vec![
            Session::new(config(BeginString::Fix42, "TW"), MemoryStore::default()),
            Session::new(config(BeginString::Fix44, "TW"), MemoryStore::default()),
        ]);
        let misc_log = |s: &str| misc.lock().unwrap().push(s.to_owned());
        acceptor
            .serve(
                &listener,
                |_| Echo::default(),
                |_| Events(events),
                &misc_log,
                Options {
                    max_message: 1 << 20,
                    stop,
                    nodelay: true,
                },
            )
            .unwrap();
    });
    let connect = || {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    };

    // FIX.4.4 session: logon, an order echoed, logout.
    let mut c = connect();
    c.write_all(&frame(
        "FIX.4.4",
        "35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|",
    ))
    .unwrap();
    let logon = read_message(&mut c).unwrap();
    assert!(has(&logon, "35=A") && has(&logon, "49=ISLD") && has(&logon, "56=TW"));
    assert!(has(&logon, "8=FIX.4.4") && has(&logon, "34=1") && has(&logon, "141=Y"));

    // A second connection for the live session is closed, unanswered.
    let mut dup = connect();
    dup.write_all(&frame(
        "FIX.4.4",
        "35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|",
    ))
    .unwrap();
    assert!(read_message(&mut dup).is_none());
    // So is one for no configured session.
    let mut stranger = connect();
    stranger
        .write_all(&frame(
            "FIX.4.4",
            "35=A|34=1|49=EVE|52=NOW|56=ISLD|98=0|108=30|",
        ))
        .unwrap();
    assert!(read_message(&mut stranger).is_none());

    c.write_all(&frame(
        "FIX.4.4",
        "35=D|34=2|49=TW|52=NOW|56=ISLD|11=ORDER1|21=1|55=MSFT|54=1|60=NOW|40=1|38=100|",
    ))
    .unwrap();
    let echo = read_message(&mut c).unwrap();
    for f in [
        "35=D",
        "34=2",
        "49=ISLD",
        "56=TW",
        "11=ORDER1",
        "55=MSFT",
        "38=100",
    ] {
        assert!(has(&echo, f), "{f} missing from {echo:?}");
    }
    // The body comes back in tag order, as QuickFIX writes a message.
    let body: Vec<u32> = echo
        .iter()
        .map(|f| f.split('=').next().unwrap().parse::<u32>().unwrap())
        .filter(|t| ![8, 9, 10, 34, 35, 49, 52, 56].contains(t))
        .collect();
    assert_eq!(body, [11, 21, 38, 40, 54, 55, 60], "{echo:?}");
    // An unsupported type: BusinessMessageReject, the session goes on.
    c.write_all(&frame("FIX.4.4", "35=ZZ|34=3|49=TW|52=NOW|56=ISLD|"))
        .unwrap();
    let rej = read_message(&mut c).unwrap();
    assert!(
        has(&rej, "35=j") && has(&rej, "45=3") && has(&rej, "380=3"),
        "{rej:?}"
    );
    c.write_all(&frame("FIX.4.4", "35=5|34=4|49=TW|52=NOW|56=ISLD|"))
        .unwrap();
    let logout = read_message(&mut c).unwrap();
    assert!(has(&logout, "35=5") && has(&logout, "34=4"), "{logout:?}");
    assert!(read_message(&mut c).is_none(), "closed after the logout");

    // FIX.4.2 session: the stop flag logs it out.
    let mut c = connect();
    c.write_all(&frame(
        "FIX.4.2",
        "35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|",
    ))
    .unwrap();
    assert!(has(&read_message(&mut c).unwrap(), "35=A"));
    stop.store(true, Ordering::Relaxed);
    let logout = read_message(&mut c).unwrap();
    assert!(
        has(&logout, "35=5") && has(&logout, "8=FIX.4.2"),
        "{logout:?}"
    );
    c.write_all(&frame("FIX.4.2", "35=5|34=2|49=TW|52=NOW|56=ISLD|"))
        .unwrap();
    assert!(read_message(&mut c).is_none());
    server.join().unwrap();
    let misc = misc.lock().unwrap();
    assert!(
        misc.iter().any(|l| l.contains("already connected")),
        "{misc:?}"
    );
    assert!(
        misc.iter().any(|l| l.contains("Unknown session")),
        "{misc:?}"
    );
    let events = events.lock().unwrap();
    assert!(events.iter().any(|l| l == "Logon complete"), "{events:?}");
}
