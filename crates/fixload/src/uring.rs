//! The load generator's io_uring transport: the sender's ring, which keeps
//! one SEND per session in flight, and the receiver's, which keeps one
//! RECV per session in flight, each a [`perfkit_uring::Ring`] with a slot
//! per session. The ring owns the buffers of its operations (and holds all
//! the `unsafe` of handing them to the kernel): a session's buffer is
//! touched again only once its completion has been reaped, and a ring that
//! winds down with operations still in flight cancels them and waits for
//! their completions, or leaks their buffers rather than free them under
//! the kernel.

use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use fixsession::store::SessionStore;
use perfkit_uring::{Completion, Ring, Setup};

use crate::Result;
use crate::link::Link;

/// Receive buffer size per session.
const RX: usize = 256 << 10;
/// How long the sender waits at the end for its writes still in flight.
const SEND_GRACE: Duration = Duration::from_secs(1);

/// Whether the load generator can run on io_uring here: a ring can be
/// created and the kernel waits with a timeout in `io_uring_enter`
/// (EXT_ARG, Linux 5.11). The reason when not.
pub fn probe() -> std::result::Result<(), String> {
    perfkit_uring::probe_timed_waits()
}

/// The sender's ring: writes each session's queued bytes with one SEND in
/// flight per session. A SEND the socket cannot take at once stays in flight
/// (the kernel finishes it when there is room) without holding the sender
/// up; that session's next bytes wait until it completes, so they go out in
/// order.
pub struct SendRing {
    /// Per session (slot): the bytes being sent, the ring's until their
    /// completion.
    ring: Ring<Vec<u8>>,
    /// Completions reaped and not yet handled.
    done: Vec<Completion>,
}

impl SendRing {
    /// A ring for `sessions` sessions, built on the thread that uses it.
    pub fn new(sessions: usize) -> io::Result<SendRing> {
        let bufs = (0..sessions)
            .map(|_| Vec::with_capacity(64 << 10))
            .collect();
        Ok(SendRing {
            ring: Ring::new(bufs, Setup::Plain)?,
            done: Vec::with_capacity(sessions),
        })
    }

    /// Settles the completions that arrived: sent bytes leave their buffer;
    /// a failed send closes its session.
    fn settle<S: SessionStore>(&mut self, links: &[Link<S>]) {
        self.ring.reap(&mut self.done);
        for Completion { slot: j, result } in self.done.drain(..) {
            match result {
                n if n > 0 => {
                    // Reaped, so not in flight: the buffer is ours.
                    if let Some(b) = self.ring.get_mut(j) {
                        let n = (n as usize).min(b.len());
                        b.drain(..n);
                    }
                }
                0 => links[j].fail("writing: the connection took no more bytes".into()),
                e if e == -libc::EAGAIN || e == -libc::EINTR => {}
                e => links[j].fail(format!("writing: {}", io::Error::from_raw_os_error(-e))),
            }
        }
    }

    /// Starts a SEND for each session with bytes to write and none in
    /// flight, and settles what completed.
    pub fn write<S: SessionStore>(&mut self, links: &[Link<S>]) {
        self.settle(links);
        let mut queued = false;
        for (j, l) in links.iter().enumerate() {
            if !l.is_open() {
                continue;
            }
            let Some(b) = self.ring.get_mut(j) else {
                continue;
            };
            if b.is_empty() {
                l.take_out(b);
            }
            if b.is_empty() {
                continue;
            }
            if !self
                .ring
                .send(j, l.stream().as_raw_fd(), 0, libc::MSG_NOSIGNAL)
            {
                break;
            }
            queued = true;
        }
        if queued && let Err(e) = self.ring.submit() {
            for (j, l) in links.iter().enumerate() {
                if self.ring.in_flight(j) {
                    l.fail(format!("writing through io_uring: {e}"));
                }
            }
        }
        // Sends the socket could take at once have completed already.
        self.settle(links);
    }

    /// Waits for the sends in flight (at most [`SEND_GRACE`]), cancels any
    /// still stuck, and puts the bytes not sent back in their session's
    /// queue for the next writer. A session whose send had to be cancelled
    /// is closed: what of it reached the socket is unknown.
    pub fn finish<S: SessionStore>(&mut self, links: &[Link<S>]) {
        let until = Instant::now() + SEND_GRACE;
        while self.ring.any_in_flight() && Instant::now() < until {
            if self
                .ring
                .submit_and_wait(1, Some(Duration::from_millis(10)))
                .is_err()
            {
                break;
            }
            self.settle(links);
        }
        let stuck_before: Vec<usize> = (0..links.len())
            .filter(|&j| self.ring.in_flight(j))
            .collect();
        // Leaks the buffers it cannot confirm the kernel let go of (their
        // slots stay in flight, so `get_mut` leaves them alone below).
        self.ring.cancel_and_drain();
        for j in stuck_before {
            links[j].fail("writing: a send never completed".into());
            if let Some(b) = self.ring.get_mut(j) {
                b.clear();
            }
        }
        for (j, l) in links.iter().enumerate() {
            if let Some(b) = self.ring.get_mut(j) {
                let rest = std::mem::take(b);
                l.put_back(&rest);
            }
        }
    }
}

/// What the receiver does with session `j`'s bytes, seen at a time.
pub type Take<'a> = dyn FnMut(usize, &[u8], Instant) -> Result<()> + 'a;

/// The receiver's ring: one RECV per open session in flight, each into
/// its session's buffer (its slot's).
pub struct RecvRing {
    ring: Ring<Box<[u8]>>,
    /// Completions reaped and not yet handled.
    done: Vec<Completion>,
}

impl RecvRing {
    /// A ring for `sessions` sessions, built on the thread that uses it.
    pub fn new(sessions: usize) -> io::Result<RecvRing> {
        let bufs = (0..sessions)
            .map(|_| vec![0u8; RX].into_boxed_slice())
            .collect();
        Ok(RecvRing {
            ring: Ring::new(bufs, Setup::Plain)?,
            done: Vec::with_capacity(sessions),
        })
    }

    /// Posts a RECV for every open session without one, waits up to
    /// `timeout` for data, and hands each session's bytes to `take` with the
    /// time they were seen; whether any arrived. End of stream and errors
    /// close their session.
    pub fn wait<S: SessionStore>(
        &mut self,
        links: &[Link<S>],
        timeout: Duration,
        take: &mut Take<'_>,
    ) -> Result<bool> {
        for (j, l) in links.iter().enumerate() {
            if self.ring.in_flight(j) || !l.is_open() {
                continue;
            }
            if !self.ring.recv(j, l.stream().as_raw_fd()) {
                break;
            }
        }
        self.ring.submit_and_wait(1, Some(timeout))?;
        let at = Instant::now();
        self.ring.reap(&mut self.done);
        let any = self.done.iter().any(|c| c.result > 0);
        let mut r = Ok(());
        for &Completion { slot: j, result } in &self.done {
            match result {
                n if n > 0 => {
                    // Reaped, so not in flight: the buffer is ours.
                    if r.is_ok()
                        && let Some(b) = self.ring.get(j)
                    {
                        r = take(j, &b[..(n as usize).min(b.len())], at);
                    }
                }
                0 => links[j].fail("connection closed by the engine".into()),
                e if e == -libc::EAGAIN || e == -libc::EINTR => {}
                e => links[j].fail(format!("reading: {}", io::Error::from_raw_os_error(-e))),
            }
        }
        self.done.clear();
        r.map(|()| any)
    }

    /// Cancels the receives still in flight and waits for them (leaking
    /// the buffers of those it cannot confirm finished).
    pub fn finish(&mut self) {
        self.ring.cancel_and_drain();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DEFAULT_MAX_UNSENT, Io, Plan};
    use fixcore::version::BeginString;
    use fixsession::machine::{Config, Role, Session};
    use fixsession::store::MemoryStore;
    use std::net::{TcpListener, TcpStream};

    /// A session's link to a peer that has read its Logon and answers
    /// nothing.
    fn quiet_link() -> (Link<MemoryStore>, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut peer, _) = l.accept().unwrap();
        let cfg = Config::new(Role::Initiator, BeginString::Fix44, "LOAD", "EXCH");
        let plan = Plan {
            rate: 1.0,
            duration: Duration::from_secs(1),
            warmup: Duration::ZERO,
            interval: Duration::from_secs(1),
            window: 10,
            template: Plan::default_template(),
            grace: Duration::ZERO,
            logon_timeout: Duration::from_secs(1),
            pin: None,
            coalesce: Duration::ZERO,
            io: Io::Uring,
            max_unsent: DEFAULT_MAX_UNSENT,
        };
        let link = Link::connect(
            "t".into(),
            s,
            Session::new(cfg, MemoryStore::default()),
            &plan,
        )
        .unwrap();
        // The peer reads the Logon, so what follows on the wire is the
        // test's (and closing it ends the stream instead of resetting it).
        let mut logon = [0u8; 512];
        let n = std::io::Read::read(&mut peer, &mut logon).unwrap();
        assert!(logon[..n].starts_with(b"8=FIX.4.4\x01"));
        (link, peer)
    }

    /// A receive that will never complete (the peer sends nothing) is
    /// cancelled and drained at the end, and its buffer kept, not leaked:
    /// the kernel confirmed it let go of it.
    #[test]
    fn a_pending_receive_is_cancelled_and_its_buffer_kept() {
        probe().expect("io_uring on this machine");
        let (link, _peer) = quiet_link();
        let links = [link];
        let mut ring = RecvRing::new(1).unwrap();
        let got = ring
            .wait(&links, Duration::from_millis(20), &mut |_, _, _| {
                panic!("nothing was sent")
            })
            .unwrap();
        assert!(!got);
        assert!(ring.ring.in_flight(0), "the RECV stays posted");
        ring.finish();
        assert!(!ring.ring.in_flight(0));
        assert_eq!(ring.ring.get(0).map(|b| b.len()), Some(RX), "buffer kept");
        assert!(links[0].is_open(), "a cancelled receive is not a failure");
    }

    /// Bytes a peer sends arrive through the ring in order, and the end of
    /// the stream closes the session.
    #[test]
    fn received_bytes_arrive_in_order_and_the_end_closes_the_session() {
        probe().expect("io_uring on this machine");
        let (link, mut peer) = quiet_link();
        let links = [link];
        let mut ring = RecvRing::new(1).unwrap();
        let sent: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        std::io::Write::write_all(&mut peer, &sent).unwrap();
        drop(peer);
        let mut got = Vec::new();
        while links[0].is_open() {
            ring.wait(&links, Duration::from_millis(100), &mut |j, b, _| {
                assert_eq!(j, 0);
                got.extend_from_slice(b);
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(got, sent);
        let lost = links[0].lost(Instant::now()).unwrap();
        assert_eq!(lost.why, "connection closed by the engine");
    }

    /// The sender's ring writes every queued byte in order, across rounds,
    /// and gives back nothing at the end when everything went out.
    #[test]
    fn queued_bytes_go_out_in_order() {
        probe().expect("io_uring on this machine");
        let (link, mut peer) = quiet_link();
        let links = [link];
        let mut ring = SendRing::new(1).unwrap();
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            std::io::Read::read_to_end(&mut peer, &mut all).unwrap();
            all
        });
        let mut want = Vec::new();
        for round in 0..200u32 {
            let chunk: Vec<u8> = (0..1_000u32).map(|i| ((i + round) % 253) as u8).collect();
            links[0].put_back(&chunk);
            want.extend_from_slice(&chunk);
            ring.write(&links);
        }
        ring.finish(&links);
        links[0].close();
        assert_eq!(reader.join().unwrap(), want);
    }
}
