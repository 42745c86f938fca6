//! io_uring echo ends. All the `unsafe` of the transports lives here.
//!
//! An SQE points at memory the kernel reads or writes until its completion
//! arrives, so that memory must outlive the operation whatever happens to
//! the caller — including an early return on an error. Here the buffers are
//! owned by [`Ring`], next to the ring itself, and an operation is never
//! abandoned: if waiting for its completion fails, the operation is
//! cancelled and drained, and if even that cannot be confirmed the buffers
//! are leaked rather than freed under the kernel.

use super::{EchoLogic, record};
use crate::{Error, Result};
use hdrhistogram::Histogram;
use io_uring::{IoUring, opcode, squeue, types};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Instant;

/// `user_data` of the one echo operation that may be in flight.
const OP: u64 = 1;
/// `user_data` of the cancellation sent for it after a failed wait.
const CANCEL: u64 = 2;
/// Receive buffer size.
const RX: usize = 4096;
/// Waits tried when draining a cancelled operation before giving up on it.
const DRAIN_ATTEMPTS: usize = 1000;

/// Whether this kernel lets the process create an io_uring at all; the
/// reason when not (no such syscall, disabled by sysctl or seccomp...).
pub(super) fn probe() -> std::result::Result<(), String> {
    IoUring::new(2).map(drop).map_err(|e| e.to_string())
}

/// Builds a ring; with `defer`, asks for COOP_TASKRUN | SINGLE_ISSUER |
/// DEFER_TASKRUN, then COOP_TASKRUN | SINGLE_ISSUER alone (DEFER_TASKRUN
/// needs Linux 6.1, the other two 5.19 and 6.0), then a plain ring, and says
/// which one it got.
fn build(defer: bool) -> Result<(IoUring, String)> {
    if defer {
        let full = IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(8);
        let e1 = match full {
            Ok(r) => {
                return Ok((
                    r,
                    "io_uring COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN".into(),
                ));
            }
            Err(e) => e,
        };
        let e2 = match IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .build(8)
        {
            Ok(r) => {
                return Ok((
                    r,
                    format!(
                        "io_uring COOP_TASKRUN|SINGLE_ISSUER (DEFER_TASKRUN refused by the \
                         kernel: {e1}; fell back)"
                    ),
                ));
            }
            Err(e) => e,
        };
        let r = IoUring::new(8).map_err(Error::io("creating io_uring"))?;
        return Ok((
            r,
            format!(
                "io_uring plain (DEFER_TASKRUN refused: {e1}; COOP_TASKRUN|SINGLE_ISSUER \
                 refused: {e2}; fell back)"
            ),
        ));
    }
    let r = IoUring::new(8).map_err(Error::io("creating io_uring"))?;
    Ok((r, "io_uring plain".into()))
}

/// A ring with the buffers its operations use. At most one operation is in
/// flight, and `pending` stays true until its completion has been reaped,
/// so the buffers are never reused, moved out or freed under the kernel.
struct Ring {
    ring: IoUring,
    fd: types::Fd,
    /// Receive buffer.
    rx: Box<[u8]>,
    /// The message this end sends (request or reply).
    tx: Box<[u8]>,
    /// An `OP` was pushed and its completion not yet reaped.
    pending: bool,
    /// Which setup flags the ring got.
    setup: String,
}

impl Ring {
    fn new(s: &TcpStream, tx: &[u8], defer: bool) -> Result<Ring> {
        let (ring, setup) = build(defer)?;
        Ok(Ring {
            ring,
            fd: types::Fd(s.as_raw_fd()),
            rx: vec![0u8; RX].into_boxed_slice(),
            tx: tx.into(),
            pending: false,
            setup,
        })
    }

    /// Submits `sqe` (which points into `self.rx` or `self.tx`) and waits
    /// for its completion; returns its non-negative result.
    fn run(&mut self, sqe: squeue::Entry) -> Result<usize> {
        if self.pending {
            return Err(Error::Thread(
                "io_uring: an earlier operation never completed",
            ));
        }
        self.start(sqe)?;
        let res = match self.reap() {
            Ok(r) => r,
            Err(e) => {
                self.cancel_and_drain();
                return Err(e);
            }
        };
        usize::try_from(res).map_err(|_| Error::Io {
            context: "io_uring operation",
            source: std::io::Error::from_raw_os_error(-res),
        })
    }

    /// Queues `sqe` as `OP` (submitted by the next wait).
    fn start(&mut self, sqe: squeue::Entry) -> Result<()> {
        // SAFETY: the SQE points into `self.rx` / `self.tx`, heap buffers
        // owned by `self` that are not touched, reallocated or freed while
        // `pending` is set: it is cleared only once the completion has been
        // reaped (`reap`, `cancel_and_drain`), and `Drop` drains or leaks.
        unsafe {
            self.ring
                .submission()
                .push(&sqe.user_data(OP))
                .map_err(|_| Error::Thread("io_uring submission queue full"))?;
        }
        self.pending = true;
        Ok(())
    }

    /// Waits until the completion of `OP` arrives and returns its result.
    fn reap(&mut self) -> Result<i32> {
        loop {
            for cqe in self.ring.completion() {
                if cqe.user_data() == OP {
                    self.pending = false;
                    return Ok(cqe.result());
                }
            }
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io("io_uring_enter")(e)),
            }
        }
    }

    /// After a failed wait: asks the kernel to cancel `OP` and waits for its
    /// completion. If that cannot be confirmed, the buffers are leaked so
    /// the kernel can never write into freed memory.
    fn cancel_and_drain(&mut self) {
        if !self.pending {
            return;
        }
        let cancel = opcode::AsyncCancel::new(OP).build().user_data(CANCEL);
        // SAFETY: a cancel SQE carries no buffer.
        let _ = unsafe { self.ring.submission().push(&cancel) };
        for _ in 0..DRAIN_ATTEMPTS {
            for cqe in self.ring.completion() {
                if cqe.user_data() == OP {
                    self.pending = false;
                }
            }
            if !self.pending {
                return;
            }
            if let Err(e) = self.ring.submit_and_wait(1)
                && e.kind() != std::io::ErrorKind::Interrupted
            {
                break;
            }
        }
        std::mem::forget(std::mem::take(&mut self.rx));
        std::mem::forget(std::mem::take(&mut self.tx));
    }

    fn send_all(&mut self) -> Result<()> {
        let mut off = 0;
        while off < self.tx.len() {
            let rest = &self.tx[off..];
            let sqe = opcode::Send::new(self.fd, rest.as_ptr(), rest.len() as u32).build();
            let n = self.run(sqe)?;
            if n == 0 {
                return Err(Error::Io {
                    context: "io_uring send",
                    source: std::io::Error::new(std::io::ErrorKind::WriteZero, "wrote nothing"),
                });
            }
            off += n;
        }
        Ok(())
    }

    /// Receives into `self.rx`; returns the byte count (0 at end of stream).
    fn recv(&mut self) -> Result<usize> {
        let sqe = opcode::Recv::new(self.fd, self.rx.as_mut_ptr(), self.rx.len() as u32).build();
        Ok(self.run(sqe)?.min(self.rx.len()))
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Only after a failed cancellation; normally nothing is in flight.
        self.cancel_and_drain();
    }
}

pub(super) fn serve(s: TcpStream, reply: &[u8], defer: bool) -> Result<String> {
    let mut ring = Ring::new(&s, reply, defer)?;
    let mut logic = EchoLogic::new();
    loop {
        let n = ring.recv()?;
        if n == 0 {
            return Ok(std::mem::take(&mut ring.setup));
        }
        for _ in 0..logic.feed(&ring.rx[..n])? {
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
            let n = ring.recv()?;
            if n == 0 {
                return Err(super::closed_early());
            }
            if logic.reply_ready(&ring.rx[..n])? {
                break;
            }
        }
        record(h, i, warmup, t);
    }
    let setup = std::mem::take(&mut ring.setup);
    // The ring (and any state of it) goes before the socket it refers to.
    drop(ring);
    drop(s);
    Ok(setup)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpListener};

    /// Whether this kernel gives us io_uring. A test that needs it fails
    /// where it is missing, through the tests' interop gate (which
    /// `PERFKIT_SKIP_INTEROP=1` turns into a skip that says so), instead
    /// of passing without having run.
    fn io_uring_here() -> bool {
        let why = probe().err();
        perfkit_testkit::interop::available(
            why.is_none(),
            &format!("io_uring ({})", why.as_deref().unwrap_or("available")),
            "a Linux kernel with io_uring enabled (5.11 or later; kernel.io_uring_disabled=0)",
        )
    }

    /// The path an error takes: a receive that will never complete (the
    /// peer sends nothing) is cancelled and drained, and the buffers are
    /// kept, not leaked, because the kernel confirmed it let go of them.
    #[test]
    fn a_pending_receive_is_cancelled_and_drained() {
        if !io_uring_here() {
            return;
        }
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (_b, _) = l.accept().unwrap();
        for defer in [false, true] {
            let mut ring = Ring::new(&a, b"x", defer).unwrap();
            let sqe =
                opcode::Recv::new(ring.fd, ring.rx.as_mut_ptr(), ring.rx.len() as u32).build();
            ring.start(sqe).unwrap();
            ring.ring.submit().unwrap();
            ring.cancel_and_drain();
            assert!(!ring.pending, "{}", ring.setup);
            assert_eq!(ring.rx.len(), RX, "buffers kept: {}", ring.setup);
            // The ring is usable again.
            assert!(ring.run(opcode::Nop::new().build()).is_ok());
        }
    }

    #[test]
    fn defer_setup_says_which_flags_it_got() {
        if !io_uring_here() {
            return;
        }
        let (_, note) = build(true).unwrap();
        // The oracle is the kernel's version: DEFER_TASKRUN came in 6.1,
        // COOP_TASKRUN and SINGLE_ISSUER in 5.19/6.0.
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut v = release
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|x| x.parse::<u32>().ok());
        let version = (v.next().unwrap_or(0), v.next().unwrap_or(0));
        if version >= (6, 1) {
            assert_eq!(
                note, "io_uring COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN",
                "kernel {release}"
            );
        } else {
            assert!(
                note.starts_with("io_uring COOP_TASKRUN|SINGLE_ISSUER (DEFER_TASKRUN refused")
                    || note.starts_with("io_uring plain (DEFER_TASKRUN refused"),
                "kernel {release}: {note}"
            );
        }
        assert_eq!(build(false).unwrap().1, "io_uring plain");
    }
}
