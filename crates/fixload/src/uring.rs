//! The load generator's io_uring transport: the sender's ring, which keeps
//! one SEND per session in flight, and the receiver's, which keeps one
//! RECV per session in flight. All the `unsafe` of the load generator's
//! rings lives here.
//!
//! An SQE points at memory the kernel reads or writes until its completion
//! arrives, so each ring owns the buffers of its operations, and a buffer
//! is touched again only once its completion has been reaped. A ring that
//! winds down with operations still in flight cancels them and waits for
//! their completions; if even that cannot be confirmed, it leaks the
//! buffers rather than free them under the kernel.

use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use fixcore::session::store::SessionStore;
use io_uring::{IoUring, opcode, types};

use crate::Result;
use crate::link::Link;

/// `user_data` of a cancellation (a session's operation is its index).
const CANCEL: u64 = u64::MAX;
/// Waits tried when draining cancelled operations before giving up on them.
const DRAIN_ATTEMPTS: usize = 1000;
/// Receive buffer size per session.
const RX: usize = 256 << 10;
/// How long the sender waits at the end for its writes still in flight.
const SEND_GRACE: Duration = Duration::from_secs(1);

/// Whether the load generator can run on io_uring here: a ring can be
/// created and the kernel waits with a timeout in `io_uring_enter`
/// (EXT_ARG, Linux 5.11). The reason when not.
pub fn probe() -> std::result::Result<(), String> {
    let ring = IoUring::new(2).map_err(|e| e.to_string())?;
    if !ring.params().is_feature_ext_arg() {
        return Err("the kernel's io_uring cannot wait with a timeout (no EXT_ARG)".into());
    }
    Ok(())
}

/// A ring with one operation in flight at most per session; what both
/// rings share.
struct Ops {
    ring: IoUring,
    /// Per session, whether its operation is in flight (its buffer the
    /// kernel's until the completion is reaped).
    inflight: Vec<bool>,
    /// Completions reaped and not yet handled: (session, result).
    done: Vec<(usize, i32)>,
}

impl Ops {
    fn new(sessions: usize) -> io::Result<Ops> {
        let entries = (sessions * 2).max(8).next_power_of_two();
        Ok(Ops {
            ring: IoUring::new(u32::try_from(entries).unwrap_or(1 << 15))?,
            inflight: vec![false; sessions],
            done: Vec::with_capacity(sessions),
        })
    }

    /// Queues `sqe` as session `j`'s operation; false when the submission
    /// queue is full.
    ///
    /// # Safety
    /// The memory `sqe` points at must stay valid and untouched until the
    /// completion of `j`'s operation is reaped (`inflight[j]` false again).
    unsafe fn push(&mut self, j: usize, sqe: io_uring::squeue::Entry) -> bool {
        // SAFETY: the caller keeps the operation's memory alive (above).
        let ok = unsafe { self.ring.submission().push(&sqe.user_data(j as u64)) }.is_ok();
        self.inflight[j] |= ok;
        ok
    }

    /// Moves the completions that have arrived into `done`.
    fn reap(&mut self) {
        for cqe in self.ring.completion() {
            let j = cqe.user_data();
            if j == CANCEL {
                continue;
            }
            let j = j as usize;
            self.inflight[j] = false;
            self.done.push((j, cqe.result()));
        }
    }

    fn any_inflight(&self) -> bool {
        self.inflight.iter().any(|&b| b)
    }

    /// Submits what is queued and waits up to `timeout` for at least `want`
    /// completions; a timeout or a signal is not an error.
    fn submit_and_wait(&mut self, want: usize, timeout: Duration) -> io::Result<()> {
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(want, &args) {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Cancels every operation in flight and waits for their completions
    /// (left in `done`); returns the sessions whose operations could not
    /// be confirmed finished, whose buffers must then be leaked.
    fn cancel_and_drain(&mut self) -> Vec<usize> {
        if !self.any_inflight() {
            return Vec::new();
        }
        for j in 0..self.inflight.len() {
            if self.inflight[j] {
                let cancel = opcode::AsyncCancel::new(j as u64).build().user_data(CANCEL);
                // SAFETY: a cancellation carries no buffer.
                let _ = unsafe { self.ring.submission().push(&cancel) };
            }
        }
        for _ in 0..DRAIN_ATTEMPTS {
            self.reap();
            if !self.any_inflight() {
                return Vec::new();
            }
            if self.submit_and_wait(1, Duration::from_millis(10)).is_err() {
                break;
            }
        }
        self.reap();
        (0..self.inflight.len())
            .filter(|&j| self.inflight[j])
            .collect()
    }
}

/// The sender's ring: writes each session's queued bytes with one SEND in
/// flight per session. A SEND the socket cannot take at once stays in flight
/// (the kernel finishes it when there is room) without holding the sender
/// up; that session's next bytes wait until it completes, so they go out in
/// order.
pub struct SendRing {
    slots: Ops,
    /// Per session: the bytes being sent, owned here until their completion.
    bufs: Vec<Vec<u8>>,
}

impl SendRing {
    /// A ring for `sessions` sessions, built on the thread that uses it.
    pub fn new(sessions: usize) -> io::Result<SendRing> {
        Ok(SendRing {
            slots: Ops::new(sessions)?,
            bufs: (0..sessions)
                .map(|_| Vec::with_capacity(64 << 10))
                .collect(),
        })
    }

    /// Settles the completions that arrived: sent bytes leave their buffer;
    /// a failed send closes its session.
    fn settle<S: SessionStore>(&mut self, links: &[Link<S>]) {
        self.slots.reap();
        for (j, r) in std::mem::take(&mut self.slots.done) {
            match r {
                n if n > 0 => {
                    let n = (n as usize).min(self.bufs[j].len());
                    self.bufs[j].drain(..n);
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
            if self.slots.inflight[j] || !l.is_open() {
                continue;
            }
            if self.bufs[j].is_empty() {
                l.take_out(&mut self.bufs[j]);
            }
            let b = &self.bufs[j];
            if b.is_empty() {
                continue;
            }
            let len = u32::try_from(b.len()).unwrap_or(u32::MAX);
            let sqe = opcode::Send::new(types::Fd(l.stream().as_raw_fd()), b.as_ptr(), len)
                .flags(libc::MSG_NOSIGNAL)
                .build();
            // SAFETY: `bufs[j]` is not touched (not even moved: it is a Vec
            // whose heap buffer stays put) until `settle` has reaped j's
            // completion, and `finish`/`Drop` drain or leak it first.
            if !unsafe { self.slots.push(j, sqe) } {
                break;
            }
            queued = true;
        }
        if queued && let Err(e) = self.slots.ring.submit() {
            for (j, l) in links.iter().enumerate() {
                if self.slots.inflight[j] {
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
        while self.slots.any_inflight() && Instant::now() < until {
            if self
                .slots
                .submit_and_wait(1, Duration::from_millis(10))
                .is_err()
            {
                break;
            }
            self.settle(links);
        }
        let stuck_before: Vec<usize> = (0..links.len())
            .filter(|&j| self.slots.inflight[j])
            .collect();
        let leaked = self.slots.cancel_and_drain();
        self.slots.done.clear();
        for j in stuck_before {
            links[j].fail("writing: a send never completed".into());
            if leaked.contains(&j) {
                std::mem::forget(std::mem::take(&mut self.bufs[j]));
            } else {
                self.bufs[j].clear();
            }
        }
        for (j, l) in links.iter().enumerate() {
            let rest = std::mem::take(&mut self.bufs[j]);
            l.put_back(&rest);
        }
    }
}

impl Drop for SendRing {
    fn drop(&mut self) {
        // Normally `finish` has left nothing in flight.
        for j in self.slots.cancel_and_drain() {
            std::mem::forget(std::mem::take(&mut self.bufs[j]));
        }
    }
}

/// What the receiver does with session `j`'s bytes, seen at a time.
pub type Take<'a> = dyn FnMut(usize, &[u8], Instant) -> Result<()> + 'a;

/// The receiver's ring: one RECV per open session in flight, each into
/// its session's buffer.
pub struct RecvRing {
    slots: Ops,
    bufs: Vec<Box<[u8]>>,
}

impl RecvRing {
    /// A ring for `sessions` sessions, built on the thread that uses it.
    pub fn new(sessions: usize) -> io::Result<RecvRing> {
        Ok(RecvRing {
            slots: Ops::new(sessions)?,
            bufs: (0..sessions)
                .map(|_| vec![0u8; RX].into_boxed_slice())
                .collect(),
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
            if self.slots.inflight[j] || !l.is_open() {
                continue;
            }
            let b = &mut self.bufs[j];
            let sqe = opcode::Recv::new(
                types::Fd(l.stream().as_raw_fd()),
                b.as_mut_ptr(),
                b.len() as u32,
            )
            .build();
            // SAFETY: `bufs[j]` is a boxed slice owned by the ring, not read
            // or freed until j's completion is reaped; `finish`/`Drop`
            // drain or leak it first.
            if !unsafe { self.slots.push(j, sqe) } {
                break;
            }
        }
        self.slots.submit_and_wait(1, timeout)?;
        let at = Instant::now();
        self.slots.reap();
        let done = std::mem::take(&mut self.slots.done);
        let any = done.iter().any(|&(_, r)| r > 0);
        let mut r = Ok(());
        for &(j, res) in &done {
            match res {
                n if n > 0 => {
                    if r.is_ok() {
                        r = take(j, &self.bufs[j][..(n as usize).min(RX)], at);
                    }
                }
                0 => links[j].fail("connection closed by the engine".into()),
                e if e == -libc::EAGAIN || e == -libc::EINTR => {}
                e => links[j].fail(format!("reading: {}", io::Error::from_raw_os_error(-e))),
            }
        }
        self.slots.done = done;
        self.slots.done.clear();
        r.map(|()| any)
    }

    /// Cancels the receives still in flight and waits for them.
    pub fn finish(&mut self) {
        for j in self.slots.cancel_and_drain() {
            std::mem::forget(std::mem::take(&mut self.bufs[j]));
        }
        self.slots.done.clear();
    }
}

impl Drop for RecvRing {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DEFAULT_MAX_UNSENT, Io, Plan};
    use fixcore::session::machine::{Config, Role, Session};
    use fixcore::session::store::MemoryStore;
    use fixcore::settings::BeginString;
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
        assert!(ring.slots.inflight[0], "the RECV stays posted");
        ring.finish();
        assert!(!ring.slots.inflight[0]);
        assert_eq!(ring.bufs[0].len(), RX, "buffer kept");
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
