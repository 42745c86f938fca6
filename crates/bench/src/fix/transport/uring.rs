//! io_uring echo ends, over [`perfkit_uring::Ring`], which owns the
//! buffers of the operations and holds all the `unsafe` of handing them to
//! the kernel: this end has a receive slot and a send slot, one operation
//! in flight at a time, and if waiting for its completion fails the ring
//! cancels and drains it, or leaks its buffer rather than free it under
//! the kernel.

use super::{EchoLogic, record};
use crate::{Error, Result};
use hdrhistogram::Histogram;
use perfkit_uring::{Completion, Setup};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

/// The slot of the receive buffer.
const RX: usize = 0;
/// The slot of the message this end sends (request or reply).
const TX: usize = 1;
/// Receive buffer size.
const RX_LEN: usize = 4096;

/// Whether this kernel lets the process create an io_uring at all; the
/// reason when not (no such syscall, disabled by sysctl or seccomp...).
pub(super) fn probe() -> std::result::Result<(), String> {
    perfkit_uring::probe()
}

/// An echo end's ring: the receive buffer and the message it sends, each
/// in a slot of its own, and at most one operation in flight.
struct Ring {
    ring: perfkit_uring::Ring<Box<[u8]>>,
    fd: RawFd,
    /// The message's length (the send slot's buffer is the ring's while a
    /// send is in flight).
    tx_len: usize,
    /// The completion of the operation in flight, when reaped.
    done: Vec<Completion>,
}

impl Ring {
    /// With `defer`, asks for COOP_TASKRUN | SINGLE_ISSUER | DEFER_TASKRUN
    /// ([`Setup::Deferred`], which falls back and says so).
    fn new(s: &TcpStream, tx: &[u8], defer: bool) -> Result<Ring> {
        let setup = if defer { Setup::Deferred } else { Setup::Plain };
        let bufs = vec![vec![0u8; RX_LEN].into_boxed_slice(), tx.into()];
        Ok(Ring {
            ring: perfkit_uring::Ring::new(bufs, setup).map_err(Error::io("creating io_uring"))?,
            fd: s.as_raw_fd(),
            tx_len: tx.len(),
            done: Vec::with_capacity(2),
        })
    }

    /// Which setup flags the ring got.
    fn setup(&self) -> String {
        self.ring.setup().to_owned()
    }

    /// Queues one operation (`queue` says whether it could), waits for its
    /// completion and returns its non-negative result; if waiting fails the
    /// operation is cancelled and drained.
    fn run(
        &mut self,
        queue: impl FnOnce(&mut perfkit_uring::Ring<Box<[u8]>>, RawFd) -> bool,
    ) -> Result<usize> {
        if self.ring.any_in_flight() {
            return Err(Error::Thread(
                "io_uring: an earlier operation never completed",
            ));
        }
        if !queue(&mut self.ring, self.fd) {
            return Err(Error::Thread("io_uring submission queue full"));
        }
        let res = loop {
            self.ring.reap(&mut self.done);
            if let Some(c) = self.done.pop() {
                break c.result;
            }
            if let Err(e) = self.ring.submit_and_wait(1, None) {
                self.ring.cancel_and_drain();
                return Err(Error::io("io_uring_enter")(e));
            }
        };
        usize::try_from(res).map_err(|_| Error::Io {
            doing: "io_uring operation".into(),
            source: std::io::Error::from_raw_os_error(-res),
        })
    }

    fn send_all(&mut self) -> Result<()> {
        let mut off = 0;
        while off < self.tx_len {
            let n = self.run(|r, fd| r.send(TX, fd, off, 0))?;
            if n == 0 {
                return Err(Error::Io {
                    doing: "io_uring send".into(),
                    source: std::io::Error::new(std::io::ErrorKind::WriteZero, "wrote nothing"),
                });
            }
            off += n;
        }
        Ok(())
    }

    /// Receives into the receive buffer; returns the bytes (none at end of
    /// stream).
    fn recv(&mut self) -> Result<&[u8]> {
        let n = self.run(|r, fd| r.recv(RX, fd))?;
        let rx = self.ring.get(RX).ok_or(Error::Thread(
            "io_uring: a receive completed and is still in flight",
        ))?;
        Ok(&rx[..n.min(rx.len())])
    }
}

pub(super) fn serve(s: TcpStream, reply: &[u8], defer: bool) -> Result<String> {
    let mut ring = Ring::new(&s, reply, defer)?;
    let mut logic = EchoLogic::new();
    loop {
        let got = ring.recv()?;
        if got.is_empty() {
            return Ok(ring.setup());
        }
        for _ in 0..logic.feed(got)? {
            ring.send_all()?;
        }
    }
}

pub(super) fn client(
    s: TcpStream,
    req: &[u8],
    total: usize,
    warmup: usize,
    h: &mut Histogram<u64>,
    defer: bool,
) -> Result<String> {
    let mut ring = Ring::new(&s, req, defer)?;
    let mut logic = EchoLogic::new();
    for i in 0..total {
        let t = Instant::now();
        ring.send_all()?;
        loop {
            let got = ring.recv()?;
            if got.is_empty() {
                return Err(super::closed_early());
            }
            if logic.reply_ready(got)? {
                break;
            }
        }
        record(h, i, warmup, t);
    }
    let setup = ring.setup();
    // The ring (and any state of it) goes before the socket it refers to.
    drop(ring);
    drop(s);
    Ok(setup)
}
