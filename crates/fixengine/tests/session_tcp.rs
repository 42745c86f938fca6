//! The acceptor over real loopback TCP with the echo application: a
//! client written here (its own framing and checksums) logs on, has an
//! order echoed, logs out; a connection for an unknown session and a
//! second connection for a live session are closed without disturbing it;
//! the stop flag logs a live session out. With the exchange application,
//! a batch of orders sent in one write (read by the acceptor in as few
//! reads as the kernel gives it) is answered whole and in order. A Logon
//! for a session whose lease has not been looked at yet waits for the
//! look.

use perfkit_testkit::fix_wire as wire;
use perfkit_testkit::fix_wire::{has, read_message};

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fixcore::value::UtcTimestamp;
use fixcore::version::BeginString;
use fixengine::acceptor::Acceptor;
use fixengine::apps::{Echo, Exchange};
use fixengine::connection::Options;
use fixsession::lease::{Holding, Standing, Taking, Vacancy};
use fixsession::log::Log;
use fixsession::machine::{Config, Role, Session};
use fixsession::store::{MemoryStore, SessionStore, StoreError};

fn config(bs: BeginString, theirs: &str) -> Config {
    Config {
        reset_on_logon: true,
        ..Config::new(Role::Acceptor, bs, "ISLD", theirs)
    }
}

/// A message of `bs` with `fields`, `NOW` being the wall clock.
fn frame(bs: &str, fields: &str) -> Vec<u8> {
    let now = wire::timestamp(UtcTimestamp::now().unix_nanos);
    wire::frame(&format!("8={bs}|{}", fields.replace("NOW", &now)))
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
                |_| Ok(Events(events)),
                &misc_log,
                Options::new(stop),
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

/// A memory store that writes under a lease's holding, as a database
/// store engines share does: the test plays the lease keeper.
#[derive(Debug)]
struct Leased {
    inner: MemoryStore,
    holding: Arc<Holding>,
    /// The taking its numbers were last read (refreshed) under.
    read: Taking,
}

impl SessionStore for Leased {
    fn next_sender_seq(&self) -> u64 {
        self.inner.next_sender_seq()
    }
    fn next_target_seq(&self) -> u64 {
        self.inner.next_target_seq()
    }
    fn set_seqs(&mut self, sender: u64, target: u64) -> Result<(), StoreError> {
        self.inner.set_seqs(sender, target)
    }
    fn save(&mut self, seq: u64, msg: &[u8]) -> Result<(), StoreError> {
        self.inner.save(seq, msg)
    }
    fn load(&self, seq: u64, out: &mut Vec<u8>) -> Result<bool, StoreError> {
        self.inner.load(seq, out)
    }
    fn reset(&mut self) -> Result<(), StoreError> {
        self.inner.reset()
    }
    fn refresh(&mut self) -> Result<(), StoreError> {
        self.read = self.holding.taking();
        self.inner.refresh()
    }
    fn standing(&self) -> Standing {
        Standing::of(&self.holding, self.read)
    }
}

/// Issue 63: a Logon that arrives before the lease keeper has first
/// looked at its session's lease (the keeper's start-up wait) is held,
/// unread and unanswered, and answered once the lease is taken, instead
/// of being closed and costing the counterparty a ReconnectInterval.
/// One whose look finds the lease another engine's, or its record
/// unusable, is closed, with a line that says which.
#[test]
fn a_logon_before_the_first_look_at_the_lease_waits_for_it() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let events: &'static Mutex<Vec<String>> = Box::leak(Box::default());
    let misc: &'static Mutex<Vec<String>> = Box::leak(Box::default());
    let holdings: Vec<Arc<Holding>> = (0..3).map(|_| Holding::new()).collect();
    let sessions = [
        (BeginString::Fix44, "TW"),
        (BeginString::Fix42, "TW"),
        (BeginString::Fix44, "EVE"),
    ]
    .iter()
    .zip(&holdings)
    .map(|((bs, theirs), h)| {
        Session::new(
            config(*bs, theirs),
            Leased {
                inner: MemoryStore::default(),
                holding: Arc::clone(h),
                read: Taking::default(),
            },
        )
    })
    .collect();
    let server = std::thread::spawn(move || {
        let misc_log = |s: &str| misc.lock().unwrap().push(s.to_owned());
        Acceptor::new(sessions)
            .serve(
                &listener,
                |_| Echo::default(),
                |_| Ok(Events(events)),
                &misc_log,
                Options::new(stop),
            )
            .unwrap();
    });
    let logon = |bs: &str, theirs: &str| {
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(&frame(
            bs,
            &format!("35=A|34=1|49={theirs}|52=NOW|56=ISLD|98=0|108=30|"),
        ))
        .unwrap();
        c
    };
    let mut held = logon("FIX.4.4", "TW");
    let mut busy = logon("FIX.4.2", "TW");
    let mut unusable = logon("FIX.4.4", "EVE");
    // Nothing looked at yet: each is held, neither answered nor closed.
    for c in [&mut held, &mut busy, &mut unusable] {
        c.set_read_timeout(Some(Duration::from_millis(400)))
            .unwrap();
        let mut b = [0u8; 1];
        match c.read(&mut b) {
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            other => panic!("a Logon before the keeper's look was not held: {other:?}"),
        }
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    }
    // The keeper looks: one lease taken, one another engine's, one whose
    // record is unusable.
    holdings[0].hold(1);
    holdings[1].vacant(Vacancy::Busy);
    holdings[2].vacant(Vacancy::Unusable);
    let answer = read_message(&mut held).expect("the held Logon was closed");
    assert!(has(&answer, "35=A") && has(&answer, "56=TW"), "{answer:?}");
    assert!(read_message(&mut busy).is_none());
    assert!(read_message(&mut unusable).is_none());
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap();
    let misc = misc.lock().unwrap();
    let said = |what: &str| misc.iter().filter(|l| l.contains(what)).count();
    assert_eq!(
        said("FIX.4.2:ISLD->TW: it is served by another engine"),
        1,
        "{misc:?}"
    );
    assert_eq!(
        said("FIX.4.4:ISLD->EVE: no engine serves it: its lease record is unusable"),
        1,
        "{misc:?}"
    );
    assert_eq!(misc.len(), 2, "{misc:?}");
}

/// Splits `wire` into whole messages, checking each one's BodyLength and
/// CheckSum by hand (not with fixcore's framer or parser): the fields of
/// each, and the bytes left over (an incomplete message).
fn split_checked(wire: &[u8]) -> (Vec<Vec<String>>, usize) {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        let rest = &wire[at..];
        let Some(s1) = rest.iter().position(|&b| b == 1) else {
            break;
        };
        let Some(s2) = rest[s1 + 1..].iter().position(|&b| b == 1) else {
            break;
        };
        let len_field = std::str::from_utf8(&rest[s1 + 1..s1 + 1 + s2]).unwrap();
        let body_len: usize = len_field.strip_prefix("9=").unwrap().parse().unwrap();
        let body_start = s1 + 1 + s2 + 1;
        let trailer = body_start + body_len;
        if rest.len() < trailer + 7 {
            break;
        }
        let sum = rest[..trailer].iter().fold(0u32, |a, &b| a + u32::from(b)) % 256;
        let want = format!("10={sum:03}\x01");
        assert_eq!(
            &rest[trailer..trailer + 7],
            want.as_bytes(),
            "BodyLength or CheckSum wrong in {:?}",
            String::from_utf8_lossy(&rest[..trailer + 7])
        );
        let text = String::from_utf8(rest[..trailer + 7].to_vec()).unwrap();
        out.push(
            text.trim_end_matches('\x01')
                .split('\x01')
                .map(str::to_owned)
                .collect(),
        );
        at += trailer + 7;
    }
    (out, wire.len() - at)
}

fn field<'a>(msg: &'a [String], tag: &str) -> &'a str {
    msg.iter()
        .find_map(|f| f.strip_prefix(tag).and_then(|v| v.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {tag} in {msg:?}"))
}

/// Many orders in one write: the acceptor handles what each read brings
/// as a batch and writes the batch's replies together. Every order is
/// answered, new then filled, in the order sent, numbered 2, 3, 4... with
/// nothing skipped or repeated, each message whole (BodyLength, CheckSum
/// checked here by hand).
#[test]
fn a_batch_of_orders_is_answered_whole_and_in_order() {
    batch_of_orders(Duration::ZERO);
}

/// The same with the acceptor busy-polling its socket: it reads the batch
/// in the pieces it lands in, and must answer exactly as when it blocks.
#[test]
fn a_spinning_acceptor_answers_the_same_batch_the_same_way() {
    batch_of_orders(Duration::from_millis(5));
}

fn batch_of_orders(spin: Duration) {
    const ORDERS: usize = 2_000;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let events: &'static Mutex<Vec<String>> = Box::leak(Box::default());
    let server = std::thread::spawn(move || {
        let acceptor = Acceptor::new(vec![Session::new(
            config(BeginString::Fix44, "TW"),
            MemoryStore::default(),
        )]);
        acceptor
            .serve(
                &listener,
                |_| Exchange::default(),
                |_| Ok(Events(events)),
                &|_: &str| {},
                Options {
                    spin,
                    ..Options::new(stop)
                },
            )
            .unwrap();
    });
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut batch = frame(
        "FIX.4.4",
        "35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|",
    );
    for i in 1..=ORDERS {
        batch.extend(frame(
            "FIX.4.4",
            &format!(
                "35=D|34={}|49=TW|52=NOW|56=ISLD|11=C{i}|21=1|55=SYM{i}|54=1|60=NOW|40=1|38={i}|",
                i + 1
            ),
        ));
    }
    c.write_all(&batch).unwrap();
    let mut wire = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let msgs = loop {
        let n = c.read(&mut buf).unwrap();
        assert!(n > 0, "closed after {} bytes", wire.len());
        wire.extend_from_slice(&buf[..n]);
        let (msgs, _) = split_checked(&wire);
        if msgs.len() > 2 * ORDERS {
            break msgs;
        }
    };
    let (_, partial) = split_checked(&wire);
    assert_eq!(msgs.len(), 1 + 2 * ORDERS, "no more than asked for");
    assert_eq!(partial, 0);
    assert_eq!(field(&msgs[0], "35"), "A");
    for (k, m) in msgs.iter().enumerate() {
        assert_eq!(field(m, "34"), (k + 1).to_string(), "{m:?}");
        assert_eq!(field(m, "49"), "ISLD");
        assert_eq!(field(m, "56"), "TW");
    }
    for (i, pair) in msgs[1..].chunks(2).enumerate() {
        let i = i + 1;
        for (m, status) in pair.iter().zip(["0", "2"]) {
            assert_eq!(field(m, "35"), "8", "{m:?}");
            assert_eq!(field(m, "11"), format!("C{i}"), "{m:?}");
            assert_eq!(field(m, "55"), format!("SYM{i}"), "{m:?}");
            assert_eq!(field(m, "38"), i.to_string(), "{m:?}");
            assert_eq!(field(m, "39"), status, "{m:?}");
        }
    }
    // Closed first: the session ends at once instead of logging out.
    drop(c);
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap();
}
