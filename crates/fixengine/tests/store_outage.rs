//! The session driver while its store is unavailable
//! (`StoreError::Unavailable`, a database restarting): it sends nothing
//! it could not store, reads nothing more (so nothing more is counted),
//! says so once, retries, and when the store is back sends what it held
//! and reads on, losing nothing. The store here is a memory store whose
//! flush fails while a switch is on, so the outage starts and ends
//! exactly where the test says.

use perfkit_testkit::fix_wire::{frame_now, has, read_message};

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use fixcore::value::UtcTimestamp;
use fixengine::apps::Echo;
use fixengine::connection::{self, Options};
use fixsession::log::Log;
use fixsession::machine::{Config, Session};
use fixsession::settings::Settings;
use fixsession::store::{MemoryStore, SessionStore, StoreError};

/// What the test and the store share.
#[derive(Default)]
struct Switch {
    /// While set, every flush fails as `Unavailable`.
    down: AtomicBool,
    /// Flushes tried while down.
    failed_flushes: AtomicU64,
    /// The highest next-target number recorded while down.
    target_while_down: AtomicU64,
}

#[derive(Debug)]
struct Flaky {
    inner: MemoryStore,
    switch: &'static Switch,
}

impl std::fmt::Debug for Switch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Switch")
    }
}

impl SessionStore for Flaky {
    fn next_sender_seq(&self) -> u64 {
        self.inner.next_sender_seq()
    }
    fn next_target_seq(&self) -> u64 {
        self.inner.next_target_seq()
    }
    fn set_seqs(&mut self, sender: u64, target: u64) -> Result<(), StoreError> {
        if self.switch.down.load(Ordering::SeqCst) {
            self.switch
                .target_while_down
                .fetch_max(target, Ordering::SeqCst);
        }
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
        self.inner.refresh()
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        if self.switch.down.load(Ordering::SeqCst) {
            self.switch.failed_flushes.fetch_add(1, Ordering::SeqCst);
            return Err(StoreError::Unavailable {
                store: "test store".into(),
                why: "switched off".into(),
            });
        }
        Ok(())
    }
}

/// Event lines, kept for the test.
struct Events(&'static Mutex<Vec<String>>);

impl Log for Events {
    fn message(&mut self, _: UtcTimestamp, _: bool, _: &[u8]) {}
    fn event(&mut self, _: UtcTimestamp, text: &str) {
        self.0.lock().unwrap().push(text.to_owned());
    }
}

fn leaked<T: Default>() -> &'static T {
    Box::leak(Box::default())
}

fn order(seq: u64, id: &str) -> Vec<u8> {
    frame_now(&format!(
        "35=D|34={seq}|49=TW|52=NOW|56=ISLD|11={id}|21=1|55=MSFT|54=1|60=NOW|40=1|38=100|"
    ))
}

#[test]
fn an_unavailable_store_holds_the_session_until_it_is_back() {
    let settings = Settings::parse(
        "[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=ISLD\n\
         TargetCompID=TW\nSocketAcceptPort=1\n",
    )
    .unwrap();
    let switch: &'static Switch = leaked();
    let events: &'static Mutex<Vec<String>> = leaked();
    let stop: &'static AtomicBool = leaked();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let cfg = Config::from_settings(&settings.sessions[0]);
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut session = Session::new(
            cfg,
            Flaky {
                inner: MemoryStore::default(),
                switch,
            },
        );
        let res = connection::run(
            &mut stream,
            &[],
            &mut session,
            &mut Echo::default(),
            &mut Events(events),
            Options::new(stop),
        );
        (
            res.map_err(|e| e.to_string()),
            session.store().next_target_seq(),
        )
    });

    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(&frame_now("35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|"))
        .unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert!(has(&read_message(&mut c).unwrap(), "35=A"));

    // The store goes away; the order's echo is stored but cannot be
    // flushed, so it is not sent.
    switch.down.store(true, Ordering::SeqCst);
    c.write_all(&order(2, "FIRST")).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut byte = [0u8; 1];
    match c.read(&mut byte) {
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
        other => panic!("sent while the store is away: {other:?}"),
    }
    // A second order waits in the socket: not read, so not counted.
    c.write_all(&order(3, "SECOND")).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        switch.failed_flushes.load(Ordering::SeqCst) >= 3,
        "the driver retries"
    );
    assert_eq!(
        switch.target_while_down.load(Ordering::SeqCst),
        3,
        "only the first order (34=2) was taken while the store was away"
    );

    // Back: the held echo goes out, then the second order is read and
    // answered, in order.
    switch.down.store(false, Ordering::SeqCst);
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let first = read_message(&mut c).unwrap();
    assert!(has(&first, "11=FIRST") && has(&first, "34=2"), "{first:?}");
    let second = read_message(&mut c).unwrap();
    assert!(
        has(&second, "11=SECOND") && has(&second, "34=3"),
        "{second:?}"
    );

    drop(c);
    let (res, next_target) = server.join().unwrap();
    res.unwrap();
    assert_eq!(next_target, 4);
    let events = events.lock().unwrap();
    let said = |what: &str| events.iter().filter(|l| l.contains(what)).count();
    assert_eq!(
        said("Store failed (test store: unavailable: switched off)"),
        1,
        "{events:?}"
    );
    assert_eq!(said("Store available again"), 1, "{events:?}");
}
