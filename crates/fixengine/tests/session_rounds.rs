//! How a connection sends what one read brought: answered in rounds, each
//! written before the next is made, so that the counterparty can work on
//! the first answers while the rest are made (two engines under a window
//! of orders otherwise take turns). Checked on the bytes handed to a real
//! loopback socket: a client sends 100 orders in one write, and every
//! write the acceptor's connection makes is counted in whole messages.

use perfkit_testkit::fix_wire::{frame_now, has, read_message};

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use fixengine::apps::Exchange;
use fixengine::connection::{self, Options, Transport, WRITE_CUT};
use fixsession::log::Discard;
use fixsession::machine::{Config, Session};
use fixsession::settings::Settings;
use fixsession::store::MemoryStore;

const ORDERS: usize = 100;

/// The socket, with a copy of each write it took.
struct Recording {
    socket: TcpStream,
    writes: Vec<Vec<u8>>,
}

impl Transport for Recording {
    fn socket(&self) -> &TcpStream {
        &self.socket
    }
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&self.socket).read(buf)
    }
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = (&self.socket).write(buf)?;
        self.writes.push(buf[..n].to_vec());
        Ok(n)
    }
}

/// How often `needle` occurs in `hay`.
fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

/// The counterparty: logs on, sends every order in one write, reads an
/// ExecutionReport new and a fill per order (in order), logs out.
fn client(mut s: TcpStream) -> usize {
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(&frame_now("35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|"))
        .unwrap();
    assert!(has(&read_message(&mut s).unwrap(), "35=A"));
    let mut orders = Vec::new();
    for n in 1..=ORDERS {
        orders.extend(frame_now(&format!(
            "35=D|34={}|49=TW|52=NOW|56=ISLD|11={n}|21=1|55=MSFT|54=1|38=100|40=1|60=NOW|",
            n + 1
        )));
    }
    s.write_all(&orders).unwrap();
    let mut reports = 0;
    while reports < 2 * ORDERS {
        let m = read_message(&mut s).expect("an ExecutionReport");
        assert!(has(&m, "35=8"), "{m:?}");
        assert!(has(&m, &format!("11={}", reports / 2 + 1)), "{m:?}");
        reports += 1;
    }
    s.write_all(&frame_now(&format!(
        "35=5|34={}|49=TW|52=NOW|56=ISLD|",
        ORDERS + 2
    )))
    .unwrap();
    while let Some(m) = read_message(&mut s) {
        if has(&m, "35=5") {
            break;
        }
    }
    reports
}

#[test]
fn a_read_of_many_orders_is_answered_in_rounds_each_written_at_once() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let settings = Settings::parse(&format!(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nSenderCompID=ISLD\n\
         ResetOnLogon=Y\n\n[SESSION]\nBeginString=FIX.4.4\nTargetCompID=TW\n"
    ))
    .unwrap();
    let peer = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let counterparty = std::thread::spawn(move || client(peer));
    let (socket, _) = listener.accept().unwrap();
    let mut stream = Recording {
        socket,
        writes: Vec::new(),
    };
    let mut session = Session::new(
        Config::from_settings(&settings.sessions[0]),
        MemoryStore::default(),
    );
    let stop = AtomicBool::new(false);
    connection::run(
        &mut stream,
        &[],
        &mut session,
        &mut Exchange::default(),
        &mut Discard,
        Options::new(&stop),
    )
    .unwrap();
    assert_eq!(counterparty.join().unwrap(), 2 * ORDERS);

    // A message ends with its CheckSum field, and only there.
    let per_write: Vec<usize> = stream.writes.iter().map(|w| count(w, b"\x0110=")).collect();
    let reports: usize = stream
        .writes
        .iter()
        .map(|w| count(w, b"\x0135=8\x01"))
        .sum();
    assert_eq!(reports, 2 * ORDERS, "{per_write:?}");
    // Uncut, the 100 orders of one read went out as one write of 200.
    assert!(
        per_write.iter().all(|&n| n <= WRITE_CUT),
        "a write carried more than {WRITE_CUT} messages: {per_write:?}"
    );
}
