//! What waits to be sent: the rounds a connection makes, the rounds
//! held until their store write lands, and the bytes the socket has not
//! taken yet.

use std::collections::VecDeque;
use std::io;
use std::time::Instant;

use fixcore::value::UtcTimestamp;
use fixsession::log::Log;
use fixsession::machine::{Session, SessionError};
use fixsession::store::SessionStore;

use super::{ConnectionError, Options, Transport, flush_or_wait};

/// Bytes written but not yet taken by the socket.
pub(super) struct SendQueue {
    pub(super) bytes: Vec<u8>,
    /// Where the unsent part begins.
    pub(super) head: usize,
    /// Since when the queue has waited without the socket taking a byte.
    pub(super) stalled: Option<Instant>,
}

impl SendQueue {
    pub(super) fn len(&self) -> usize {
        self.bytes.len() - self.head
    }

    /// Writes what the socket takes without blocking; an error only when
    /// the connection failed.
    pub(super) fn write<T: Transport>(&mut self, stream: &mut T) -> io::Result<()> {
        stream.flush_pending()?;
        while self.len() > 0 {
            match stream.write(&self.bytes[self.head..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.head += n;
                    self.stalled = None;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.len() == 0 {
            self.bytes.clear();
            self.head = 0;
        } else {
            if self.head > (1 << 20) && self.head * 2 > self.bytes.len() {
                // Keep the buffer from only growing while the peer reads
                // slowly.
                self.bytes.drain(..self.head);
                self.head = 0;
            }
            self.stalled.get_or_insert_with(Instant::now);
        }
        Ok(())
    }
}

/// What one round sends: messages end to end, and where each ends.
pub(super) struct Round {
    pub(super) bytes: Vec<u8>,
    pub(super) ends: Vec<usize>,
}

/// Rounds whose store write has begun and not yet landed, each with its
/// ticket ([`SessionStore::begin_flush`]) and time: sent, in order, once
/// it has.
#[derive(Default)]
pub(super) struct Held {
    pub(super) rounds: VecDeque<(u64, UtcTimestamp, Round)>,
    /// Their bytes.
    pub(super) bytes: usize,
    /// Rounds sent, kept for their buffers.
    pub(super) spare: Vec<Round>,
}

impl Held {
    /// Holds `out`'s round under `ticket`, leaving `out` empty.
    pub(super) fn hold(&mut self, ticket: u64, t: UtcTimestamp, out: &mut Round) {
        let next = self.spare.pop().unwrap_or_else(Round::new);
        self.bytes += out.bytes.len();
        self.rounds
            .push_back((ticket, t, std::mem::replace(out, next)));
    }

    /// Moves the rounds that landed to `queue`, logging them as sent
    /// only now: a round whose store write fails (fenced) is never sent,
    /// and its log must not say it was. A background write that failed
    /// is retried as [`flush_or_wait`] does; after it everything landed.
    pub(super) fn release<S: SessionStore, L: Log>(
        &mut self,
        queue: &mut SendQueue,
        session: &mut Session<S>,
        log: &mut L,
        opts: &Options<'_>,
    ) -> Result<(), ConnectionError> {
        if self.rounds.is_empty() {
            return Ok(());
        }
        let landed = match session.store_flushed() {
            Ok(n) => n,
            Err(SessionError::Store(e)) if e.is_transient() => {
                flush_or_wait(session, log, opts)?;
                u64::MAX
            }
            Err(e) => return Err(e.into()),
        };
        while let Some((ticket, _, _)) = self.rounds.front()
            && *ticket <= landed
        {
            let (_, t, mut r) = self.rounds.pop_front().expect("a front round");
            self.bytes -= r.bytes.len();
            r.send(queue, log, t);
            self.spare.push(r);
        }
        Ok(())
    }
}

impl Round {
    pub(super) fn new() -> Round {
        Round {
            bytes: Vec::with_capacity(64 << 10),
            ends: Vec::new(),
        }
    }

    /// Sends the round, whose store write has landed: logs each message
    /// as sent and moves the bytes to the end of `queue`, leaving the
    /// round empty.
    pub(super) fn send<L: Log>(&mut self, queue: &mut SendQueue, log: &mut L, t: UtcTimestamp) {
        let mut start = 0;
        for end in self.ends.drain(..) {
            log.message(t, false, &self.bytes[start..end]);
            start = end;
        }
        if queue.len() == 0 {
            // Nothing waits: the buffers trade places instead of copying.
            queue.bytes.clear();
            queue.head = 0;
            std::mem::swap(&mut queue.bytes, &mut self.bytes);
        } else {
            queue.bytes.extend_from_slice(&self.bytes);
        }
        self.bytes.clear();
    }
}
