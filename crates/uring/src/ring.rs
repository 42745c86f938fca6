//! The ring and the buffers it owns: one buffer per slot, at most one
//! operation in flight per slot, and a buffer lent out only while its
//! slot has nothing in flight.

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use io_uring::{IoUring, opcode, squeue, types};

use crate::setup::{Setup, build};

/// `user_data` of a cancellation (a slot's operation carries its index).
const CANCEL: u64 = u64::MAX;
/// Waits tried when draining cancelled operations before giving up on them.
const DRAIN_ATTEMPTS: usize = 1000;
/// How long each of those waits may take, where the kernel waits with a
/// timeout.
const DRAIN_WAIT: Duration = Duration::from_millis(10);

mod sealed {
    /// Keeps [`super::Buffer`] to the types whose bytes are known to stay
    /// put (see there).
    pub trait Sealed {}
    impl Sealed for Vec<u8> {}
    impl Sealed for Box<[u8]> {}
}

/// A buffer a [`Ring`] can own: `Vec<u8>` (its length is what a SEND
/// sends and a RECV may fill) or `Box<[u8]>`.
///
/// Sealed: the ring's safety rests on a buffer's bytes being a heap
/// allocation that stays at one address, valid, while the value sits
/// untouched in the ring, and is freed only by dropping the value, which
/// holds for these two types.
pub trait Buffer: sealed::Sealed + Default {
    /// The bytes an operation reads (a SEND) or writes (a RECV).
    fn bytes(&self) -> &[u8];
    /// The same bytes, writable.
    fn bytes_mut(&mut self) -> &mut [u8];
}

impl Buffer for Vec<u8> {
    #[inline]
    fn bytes(&self) -> &[u8] {
        self
    }
    #[inline]
    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl Buffer for Box<[u8]> {
    #[inline]
    fn bytes(&self) -> &[u8] {
        self
    }
    #[inline]
    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }
}

/// An operation that completed: its slot and the kernel's result (a byte
/// count, or a negated `errno`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The slot whose operation it was.
    pub slot: usize,
    /// The byte count, or `-errno`.
    pub result: i32,
}

/// An io_uring and the buffers of its operations, one per slot.
///
/// A slot's buffer is the kernel's from the moment an operation on it is
/// queued ([`Ring::send`], [`Ring::recv`]) until its completion is reaped
/// ([`Ring::reap`], [`Ring::cancel_and_drain`]); meanwhile [`Ring::get`]
/// and [`Ring::get_mut`] refuse it and no operation on it can be queued.
/// Dropping the ring cancels and drains what is still in flight, leaking
/// the buffers it cannot confirm finished.
pub struct Ring<B: Buffer> {
    ring: IoUring,
    /// Per slot, its buffer. Never resized, so no buffer moves either.
    bufs: Vec<B>,
    /// Per slot, whether its operation is in flight (its buffer the
    /// kernel's until the completion is reaped).
    in_flight: Vec<bool>,
    /// Which setup flags the ring got.
    setup: String,
    /// Whether the kernel waits with a timeout (EXT_ARG).
    timed: bool,
}

impl<B: Buffer> Ring<B> {
    /// A ring with one slot per buffer in `bufs`, sized for an operation
    /// in flight on every slot plus its cancellation, built as `setup`
    /// asks.
    pub fn new(bufs: Vec<B>, setup: Setup) -> io::Result<Ring<B>> {
        let entries = (bufs.len() * 2).max(8).next_power_of_two();
        let (ring, setup) = build(u32::try_from(entries).unwrap_or(1 << 15), setup)?;
        let timed = ring.params().is_feature_ext_arg();
        Ok(Ring {
            ring,
            in_flight: vec![false; bufs.len()],
            bufs,
            setup,
            timed,
        })
    }

    /// Which setup flags the ring got (or why it fell back), for a report.
    pub fn setup(&self) -> &str {
        &self.setup
    }

    /// How many slots the ring has.
    pub fn slots(&self) -> usize {
        self.bufs.len()
    }

    /// Whether `slot`'s operation is in flight.
    #[inline]
    pub fn in_flight(&self, slot: usize) -> bool {
        self.in_flight[slot]
    }

    /// Whether any slot's operation is in flight.
    pub fn any_in_flight(&self) -> bool {
        self.in_flight.iter().any(|&b| b)
    }

    /// `slot`'s buffer, unless an operation on it is in flight.
    #[inline]
    pub fn get(&self, slot: usize) -> Option<&B> {
        (!self.in_flight[slot]).then(|| &self.bufs[slot])
    }

    /// `slot`'s buffer to change or replace, unless an operation on it is
    /// in flight.
    #[inline]
    pub fn get_mut(&mut self, slot: usize) -> Option<&mut B> {
        (!self.in_flight[slot]).then(|| &mut self.bufs[slot])
    }

    /// Queues a SEND on `fd` of `slot`'s bytes from `from` on, with
    /// `flags` (`MSG_*`); submitted by the next submit or wait. False when
    /// `slot` has an operation in flight already or the submission queue
    /// is full. Panics when `from` is past the buffer's end.
    #[inline]
    pub fn send(&mut self, slot: usize, fd: RawFd, from: usize, flags: i32) -> bool {
        if self.in_flight[slot] {
            return false;
        }
        let bytes = &self.bufs[slot].bytes()[from..];
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        let sqe = opcode::Send::new(types::Fd(fd), bytes.as_ptr(), len)
            .flags(flags)
            .build();
        // SAFETY: the SQE reads `len` bytes inside `slot`'s buffer, which
        // `push` marks in flight.
        unsafe { self.push(slot, sqe) }
    }

    /// Queues a RECV on `fd` into `slot`'s buffer (all of it); submitted by
    /// the next submit or wait. False when `slot` has an operation in
    /// flight already or the submission queue is full.
    #[inline]
    pub fn recv(&mut self, slot: usize, fd: RawFd) -> bool {
        if self.in_flight[slot] {
            return false;
        }
        let bytes = self.bufs[slot].bytes_mut();
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        let sqe = opcode::Recv::new(types::Fd(fd), bytes.as_mut_ptr(), len).build();
        // SAFETY: the SQE writes at most `len` bytes inside `slot`'s
        // buffer, which `push` marks in flight.
        unsafe { self.push(slot, sqe) }
    }

    /// Queues `sqe` as `slot`'s operation and marks the slot in flight;
    /// false when the submission queue is full.
    ///
    /// # Safety
    /// `slot` has no operation in flight, and the memory `sqe` points at is
    /// inside `slot`'s buffer. (The ring then keeps it valid: the buffer
    /// is a heap allocation that stays put while it sits untouched in
    /// `bufs`, which is never resized; nothing lends it out, drops or
    /// replaces it until the slot is no longer in flight, which only a
    /// reaped completion clears; and `Drop` drains or leaks it first.)
    #[inline]
    unsafe fn push(&mut self, slot: usize, sqe: squeue::Entry) -> bool {
        // SAFETY: the memory the SQE points at stays valid and untouched
        // until its completion is reaped (the caller's contract, above).
        let ok = unsafe { self.ring.submission().push(&sqe.user_data(slot as u64)) }.is_ok();
        self.in_flight[slot] = ok;
        ok
    }

    /// Hands what is queued to the kernel without waiting.
    #[inline]
    pub fn submit(&mut self) -> io::Result<usize> {
        self.ring.submit()
    }

    /// Submits what is queued and waits for at least `want` completions,
    /// up to `timeout` if one is given (the kernel must wait with a
    /// timeout: [`crate::probe_timed_waits`]); a timeout or a signal is
    /// not an error.
    #[inline]
    pub fn submit_and_wait(&mut self, want: usize, timeout: Option<Duration>) -> io::Result<()> {
        let r = match timeout {
            Some(t) => {
                let ts = types::Timespec::from(t);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(want, &args)
            }
            None => self.ring.submit_and_wait(want),
        };
        match r {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Appends the completions that have arrived to `into`; their slots
    /// are no longer in flight, their buffers the caller's again.
    #[inline]
    pub fn reap(&mut self, into: &mut Vec<Completion>) {
        for cqe in self.ring.completion() {
            let slot = cqe.user_data();
            if slot == CANCEL {
                continue;
            }
            let slot = slot as usize;
            self.in_flight[slot] = false;
            into.push(Completion {
                slot,
                result: cqe.result(),
            });
        }
    }

    /// Takes the completions that have arrived and forgets their results.
    fn reap_quietly(&mut self) {
        for cqe in self.ring.completion() {
            let slot = cqe.user_data();
            if slot != CANCEL {
                self.in_flight[slot as usize] = false;
            }
        }
    }

    /// Cancels every operation in flight and waits for their completions
    /// (whose results are dropped), at most 1000 waits of 10 ms (where the
    /// kernel cannot wait with a timeout, 1000 waits for a completion).
    /// The buffers of the operations that could not be confirmed finished
    /// are leaked, so the kernel can never write into freed memory: those
    /// slots stay in flight, with an empty buffer. Returns how many were.
    pub fn cancel_and_drain(&mut self) -> usize {
        if !self.any_in_flight() {
            return 0;
        }
        for slot in 0..self.in_flight.len() {
            if self.in_flight[slot] {
                let cancel = opcode::AsyncCancel::new(slot as u64)
                    .build()
                    .user_data(CANCEL);
                // SAFETY: a cancellation carries no buffer.
                let _ = unsafe { self.ring.submission().push(&cancel) };
            }
        }
        let wait = self.timed.then_some(DRAIN_WAIT);
        for _ in 0..DRAIN_ATTEMPTS {
            self.reap_quietly();
            if !self.any_in_flight() {
                return 0;
            }
            if self.submit_and_wait(1, wait).is_err() {
                break;
            }
        }
        self.reap_quietly();
        let mut leaked = 0;
        for slot in 0..self.in_flight.len() {
            if self.in_flight[slot] {
                std::mem::forget(std::mem::take(&mut self.bufs[slot]));
                leaked += 1;
            }
        }
        leaked
    }
}

impl<B: Buffer> Drop for Ring<B> {
    fn drop(&mut self) {
        // Normally the user has left nothing in flight.
        self.cancel_and_drain();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe;
    use std::io::{Read, Write};
    use std::net::{Ipv4Addr, TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

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

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    /// The path an error takes: a receive that will never complete (the
    /// peer sends nothing) is cancelled and drained, and its buffer is
    /// kept, not leaked, because the kernel confirmed it let go of it;
    /// the ring is usable again after.
    #[test]
    fn a_pending_receive_is_cancelled_and_drained() {
        if !io_uring_here() {
            return;
        }
        let (a, mut b) = pair();
        for setup in [Setup::Plain, Setup::Deferred] {
            let bufs = vec![vec![0u8; 4096].into_boxed_slice(), b"x".to_vec().into()];
            let mut ring: Ring<Box<[u8]>> = Ring::new(bufs, setup).unwrap();
            assert!(ring.recv(0, a.as_raw_fd()));
            assert!(!ring.recv(0, a.as_raw_fd()), "one operation per slot");
            ring.submit().unwrap();
            assert!(ring.get(0).is_none(), "the kernel's while in flight");
            assert_eq!(ring.cancel_and_drain(), 0, "{}", ring.setup());
            assert!(!ring.in_flight(0));
            assert_eq!(ring.get(0).unwrap().len(), 4096, "kept: {}", ring.setup());
            // Usable again: a SEND of slot 1 reaches the peer.
            assert!(ring.send(1, a.as_raw_fd(), 0, 0));
            let mut done = Vec::new();
            while done.is_empty() {
                ring.submit_and_wait(1, None).unwrap();
                ring.reap(&mut done);
            }
            assert_eq!(done, [Completion { slot: 1, result: 1 }]);
            let mut got = [0u8; 1];
            b.read_exact(&mut got).unwrap();
            assert_eq!(&got, b"x");
        }
    }

    /// Bytes go out from a slot's offset and come back into another
    /// slot, with a timed wait that tolerates its timeout.
    #[test]
    fn sends_from_an_offset_and_receives_with_timed_waits() {
        if !io_uring_here() {
            return;
        }
        let (a, mut b) = pair();
        let mut ring: Ring<Vec<u8>> =
            Ring::new(vec![b"skip:hello".to_vec(), vec![0; 64]], Setup::Plain).unwrap();
        let mut done = Vec::with_capacity(2);
        assert!(ring.send(0, a.as_raw_fd(), 5, libc::MSG_NOSIGNAL));
        assert!(ring.recv(1, a.as_raw_fd()));
        let timeout = Some(Duration::from_millis(10));
        while ring.in_flight(0) {
            ring.submit_and_wait(1, timeout).unwrap();
            ring.reap(&mut done);
        }
        let mut got = [0u8; 5];
        b.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hello");
        b.write_all(b"back").unwrap();
        while ring.in_flight(1) {
            ring.submit_and_wait(1, timeout).unwrap();
            ring.reap(&mut done);
        }
        let r = done.iter().find(|c| c.slot == 1).unwrap().result;
        assert_eq!(&ring.get(1).unwrap()[..r as usize], b"back");
    }

    #[test]
    fn deferred_setup_says_which_flags_it_got() {
        if !io_uring_here() {
            return;
        }
        let (_, note) = build(8, Setup::Deferred).unwrap();
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
        assert_eq!(build(8, Setup::Plain).unwrap().1, "io_uring plain");
    }
}
