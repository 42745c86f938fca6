//! Session stores: the next sequence numbers in both directions and every
//! message sent, by sequence number.
//!
//! [`MemoryStore`] lives as long as the process. [`FileStore`] keeps them
//! in QuickFIX's file-store layout (see [`file`](mod@file)), so a session killed at
//! any point (`kill -9`) resumes its numbers and can still resend what it
//! sent, and a store QuickFIX wrote is read as it is. [`journal`] converts
//! the single-file journal earlier versions wrote.
//!
//! The delivery guarantee rests on one rule every driver keeps: the store
//! is flushed ([`SessionStore::flush`]) after the application has taken
//! the round's delivered messages and before the round's bytes are
//! written to the socket. So a message is stored before it is sent, and
//! an inbound number is counted on disk only once its message was taken:
//! after a crash, anything not taken is asked for again (at least once,
//! PossDupFlag=Y on the copies).

pub mod file;
pub mod journal;

pub use file::{FileStore, Recovery, RecoveryStep};

use std::path::PathBuf;

use fixcore::resend::{MessageStore, RingStore};

use crate::lease::Standing;

/// A store that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The operating system refused an operation on a store file (the
    /// store itself may be whole: this is no damage for recovery to cut).
    #[error("{path}: I/O error ({op}): {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// A store file holds what no record can be: the session must not
    /// start on it (see [`FileStore::recover`]).
    #[error("{path}: damaged store at byte {offset} ({record}): {why}")]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// Offset of the bad record in it.
        offset: u64,
        /// Which record (entry number, sequence number).
        record: String,
        /// What is wrong.
        why: String,
    },
    /// A store whose messages are another session's: QuickFIX's file
    /// names are `BeginString-Sender-Target[-Qualifier]`, so two sessions
    /// whose CompIDs hold `-` can be given the same files. The store is
    /// left as it is; recovery cannot cure it.
    #[error(
        "{path}: message {seq} (body byte {offset}) is session {found}'s, not {expected}'s: the \
         store belongs to another session (QuickFIX's file names cannot tell them apart); give \
         one of them another FileStorePath or SessionQualifier"
    )]
    Foreign {
        /// The body file.
        path: PathBuf,
        /// Where the message lies in it.
        offset: u64,
        /// Its sequence number.
        seq: u64,
        /// The session its BeginString, SenderCompID and TargetCompID name.
        found: String,
        /// The session opening the store.
        expected: String,
    },
    /// Another session, in this process or another, holds the store: two
    /// holders would give out the same numbers and overwrite each
    /// other's records.
    #[error("{path}: the store is held by another session or process (one holder at a time)")]
    Locked {
        /// The file locked.
        path: PathBuf,
    },
    /// A sequence number larger than the store can hold.
    #[error("sequence number {seq} is above {max}, the largest this store holds", max = file::MAX_SEQ)]
    OutOfRange {
        /// The number.
        seq: u64,
    },
    /// A message longer than a record can describe.
    #[error("message of {len} bytes is too long to store")]
    TooLong {
        /// Its length.
        len: usize,
    },
    /// The store cannot be reached now (a database whose connection was
    /// lost, or that refuses connections), and may be again later: what
    /// was recorded since the last good flush is kept, and the same call
    /// may be tried again. A driver holds the round's bytes back and
    /// retries rather than ending the session (see
    /// `fixengine::connection::run`).
    #[error("{store}: unavailable: {why}")]
    Unavailable {
        /// Which store (a database and session, say).
        store: String,
        /// What failed.
        why: String,
    },
    /// Another engine has taken the session's lease over (see
    /// [`crate::lease`]): the write carried a stale epoch and did not
    /// land. The session must stop at once, sending nothing more.
    #[error("{store}: fenced: {why}")]
    Fenced {
        /// Which store.
        store: String,
        /// What the lease says now.
        why: String,
    },
    /// The store's backend refused an operation for a reason retrying
    /// will not cure (a missing table, a message its encoding cannot
    /// hold, a permission).
    #[error("{store}: {why}")]
    Backend {
        /// Which store.
        store: String,
        /// What the backend said.
        why: String,
    },
}

impl StoreError {
    /// Whether the failure may pass by itself ([`StoreError::Unavailable`]).
    pub fn is_transient(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }

    /// Whether another engine serves the session now
    /// ([`StoreError::Fenced`]).
    pub fn is_fenced(&self) -> bool {
        matches!(self, StoreError::Fenced { .. })
    }
}

/// What a session remembers between connections.
pub trait SessionStore {
    /// Sequence number the next message we send gets.
    fn next_sender_seq(&self) -> u64;
    /// Sequence number we expect on the next message received.
    fn next_target_seq(&self) -> u64;
    /// Records both next sequence numbers.
    fn set_seqs(&mut self, sender: u64, target: u64) -> Result<(), StoreError>;
    /// Records a message we sent under `seq`.
    fn save(&mut self, seq: u64, msg: &[u8]) -> Result<(), StoreError>;
    /// Appends the message sent under `seq` to `out`; false when none is
    /// kept.
    fn load(&self, seq: u64, out: &mut Vec<u8>) -> Result<bool, StoreError>;
    /// Forgets every message and sets both numbers back to 1.
    fn reset(&mut self) -> Result<(), StoreError>;
    /// Reloads the numbers and messages from where they persist, for a
    /// store another process may have written (`RefreshOnLogon`); a store
    /// that persists nothing keeps what it has.
    fn refresh(&mut self) -> Result<(), StoreError>;
    /// Makes everything recorded so far persist. A store may hold records
    /// back until then; see the [module docs](self) for when a driver
    /// calls it.
    fn flush(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Starts making everything recorded so far persist and returns a
    /// ticket for it: it has persisted once [`flushed`](Self::flushed)
    /// reaches the ticket. A store that writes in the background returns
    /// before the write ends, so a driver can go on reading and answering
    /// while it runs, holding each round's bytes until their ticket is
    /// reached (stored before sent, as with [`flush`](Self::flush)). The
    /// default writes at once and returns 0.
    fn begin_flush(&mut self) -> Result<u64, StoreError> {
        self.flush()?;
        Ok(0)
    }
    /// The newest ticket of [`begin_flush`](Self::begin_flush) that has
    /// persisted (every earlier one has too), without waiting. An error
    /// says a background write failed; what it held is recorded again,
    /// so a [`flush`](Self::flush) (the driver's retry) writes it. The
    /// default, for a store that writes at once: everything has.
    fn flushed(&mut self) -> Result<u64, StoreError> {
        Ok(u64::MAX)
    }
    /// A descriptor that becomes readable when a background write ends,
    /// for a driver to wait on beside its socket (the store empties it in
    /// [`flushed`](Self::flushed)); `None` for a store that writes at
    /// once.
    fn flush_signal(&self) -> Option<std::os::fd::RawFd> {
        None
    }
    /// The largest sequence number the store can record; a session never
    /// accepts a number beyond it.
    fn max_seq(&self) -> u64 {
        u64::MAX - 1
    }
    /// Whether what the store records outlives it (files, a database):
    /// then a session made at a Logon can be dropped when its connection
    /// ends, closing what the store holds open, and made again from the
    /// same place at its next Logon. A store that keeps everything in
    /// memory says no.
    fn persists(&self) -> bool {
        true
    }
    /// Where this engine stands with the session, for a store engines
    /// may share (see [`crate::lease`]); a store of this engine's alone
    /// says [`Standing::Unshared`].
    fn standing(&self) -> Standing {
        Standing::Unshared
    }
}

/// The store of a session without `FileStorePath`: every message sent
/// ([`MemoryStore::default`], QuickFIX's MemoryStore), or only the last
/// ones ([`MemoryStore::window`]).
///
/// Every message: they lie end to end in chunks of [`CHUNK`] bytes, found
/// by sequence number through a dense index: sequence numbers grow by one
/// per message, so saving is an append, with no allocation per message
/// once warm (a map of one `Vec` per message was a tenth of an acceptor's
/// time per order). Chunks, not one growing buffer: each doubling of a
/// single buffer copied everything saved so far into fresh pages, so every
/// byte was faulted in about twice (page faults were ~7 % of an acceptor's
/// time).
///
/// A window: fixcore's resend ring ([`RingStore`]), whose slots are
/// written over lap after lap, so memory stays flat and, once warm, a save
/// touches no fresh page (see `benches/session_store.rs`).
#[derive(Debug, Clone)]
pub struct MemoryStore {
    sender: u64,
    target: u64,
    sent: Sent,
}

/// The messages a [`MemoryStore`] keeps.
#[derive(Debug, Clone)]
enum Sent {
    /// Every one.
    Every {
        /// Full chunks and, last, the one being filled. A message longer
        /// than [`CHUNK`] has a chunk of its own.
        chunks: Vec<Vec<u8>>,
        /// `index[seq - 1]` = where its bytes are; length 0: none kept.
        index: Vec<Stored>,
    },
    /// The last ones, on a ring (its capacity: the window asked for,
    /// rounded up to a power of two).
    Window(RingStore),
}

/// The size of a [`MemoryStore`] chunk: large enough that starting one is
/// rare, small enough that a quiet session holds little.
pub const CHUNK: usize = 1 << 20;

/// Where a [`MemoryStore`] keeps one message.
#[derive(Debug, Clone, Copy, Default)]
struct Stored {
    chunk: u32,
    at: u32,
    len: u32,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore {
            sender: 1,
            target: 1,
            sent: Sent::Every {
                chunks: Vec::new(),
                index: Vec::new(),
            },
        }
    }
}

impl MemoryStore {
    /// A store keeping only the last `messages` sent (at least that many:
    /// the ring rounds up to a power of two; at least one). A
    /// ResendRequest for an older number is answered with a gap fill over
    /// it, as for a message never kept.
    pub fn window(messages: usize) -> MemoryStore {
        MemoryStore {
            sent: Sent::Window(RingStore::new(1, messages)),
            ..MemoryStore::default()
        }
    }

    /// The memory store session `s` asks for: a window when its
    /// `PerfkitMemoryStoreWindow` sets one, else every message.
    pub fn for_session(s: &crate::settings::SessionSettings) -> MemoryStore {
        match s.memory_store_window {
            Some(n) => MemoryStore::window(n as usize),
            None => MemoryStore::default(),
        }
    }

    /// How many of the last messages sent the store keeps; `None` when it
    /// keeps every one.
    pub fn kept(&self) -> Option<usize> {
        match &self.sent {
            Sent::Every { .. } => None,
            Sent::Window(ring) => Some(ring.capacity()),
        }
    }
}

/// The chunk of `chunks` that `len` more bytes go into, starting one when
/// the last is too full; its number.
fn chunk_for(chunks: &mut Vec<Vec<u8>>, len: usize) -> usize {
    match chunks.last() {
        Some(c) if c.capacity() - c.len() >= len => {}
        _ => chunks.push(Vec::with_capacity(len.max(CHUNK))),
    }
    chunks.len() - 1
}

impl SessionStore for MemoryStore {
    fn next_sender_seq(&self) -> u64 {
        self.sender
    }
    fn next_target_seq(&self) -> u64 {
        self.target
    }
    fn set_seqs(&mut self, sender: u64, target: u64) -> Result<(), StoreError> {
        self.sender = sender;
        self.target = target;
        Ok(())
    }
    fn save(&mut self, seq: u64, msg: &[u8]) -> Result<(), StoreError> {
        let len = u32::try_from(msg.len()).map_err(|_| StoreError::TooLong { len: msg.len() })?;
        let Some(i) = seq.checked_sub(1).and_then(|i| usize::try_from(i).ok()) else {
            return Ok(());
        };
        let (chunks, index) = match &mut self.sent {
            Sent::Every { chunks, index } => (chunks, index),
            // The ring refuses only u64::MAX here (its base is 1), which
            // no session saves: it is above `max_seq`.
            Sent::Window(ring) => {
                return ring
                    .insert(seq, msg)
                    .map_err(|_| StoreError::OutOfRange { seq });
            }
        };
        if i >= index.len() {
            // A number past the end (after a SequenceReset of ours): the
            // numbers skipped hold nothing.
            index.resize(i + 1, Stored::default());
        }
        // A number saved again (rare) takes new room; the old bytes stay
        // until a reset, like a journal's.
        let c = chunk_for(chunks, msg.len());
        let chunk = &mut chunks[c];
        // Offsets fit in u32: only a message over 4 GiB, refused above,
        // would make a chunk that long. Chunk numbers fit: 2^32 chunks of
        // 1 MiB would be 4 PiB.
        index[i] = Stored {
            chunk: c as u32,
            at: chunk.len() as u32,
            len,
        };
        chunk.extend_from_slice(msg);
        Ok(())
    }
    fn load(&self, seq: u64, out: &mut Vec<u8>) -> Result<bool, StoreError> {
        let (chunks, index) = match &self.sent {
            Sent::Every { chunks, index } => (chunks, index),
            Sent::Window(ring) => {
                // An empty message is never saved by a session; the
                // chunked store reads length 0 as none kept, and so here.
                return Ok(match ring.get(seq) {
                    Some(m) if !m.is_empty() => {
                        out.extend_from_slice(m);
                        true
                    }
                    _ => false,
                });
            }
        };
        let entry = seq
            .checked_sub(1)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| index.get(i));
        match entry {
            Some(&Stored { chunk, at, len }) if len > 0 => {
                let (at, len) = (at as usize, len as usize);
                out.extend_from_slice(&chunks[chunk as usize][at..at + len]);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
    fn reset(&mut self) -> Result<(), StoreError> {
        *self = match self.kept() {
            None => MemoryStore::default(),
            Some(window) => MemoryStore::window(window),
        };
        Ok(())
    }
    fn refresh(&mut self) -> Result<(), StoreError> {
        // Nothing outside this process to reload from (QuickFIX's
        // MemoryStore does the same).
        Ok(())
    }
    fn persists(&self) -> bool {
        false
    }
}

/// How far a [`FileStore`] record must get before
/// [`SessionStore::flush`] returns (QuickFIX's `FileStoreSync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Into the kernel: survives the process being killed, not a power cut.
    #[default]
    Process,
    /// Onto the disk (`fdatasync` of each file written, per flush).
    Fsync,
}

#[cfg(test)]
mod tests;

/// Any store, chosen at run time from the settings (`FileStorePath`,
/// a store of another crate, or none).
#[derive(Debug)]
pub enum AnyStore {
    /// In memory.
    Memory(MemoryStore),
    /// QuickFIX's files (boxed: the store is large and the memory store
    /// is the common case).
    File(Box<FileStore>),
    /// A store this crate does not hold (the PostgreSQL store of
    /// `fixsession-postgres`): fixcore stays free of its dependencies, and
    /// the session machine still sees only [`SessionStore`].
    Other(Box<dyn OtherStore>),
}

/// A [`SessionStore`] that can go in [`AnyStore::Other`]: movable to a
/// session's thread and printable.
pub trait OtherStore: SessionStore + Send + std::fmt::Debug {}

impl<T: SessionStore + Send + std::fmt::Debug> OtherStore for T {}

impl SessionStore for AnyStore {
    fn next_sender_seq(&self) -> u64 {
        match self {
            AnyStore::Memory(s) => s.next_sender_seq(),
            AnyStore::File(s) => s.next_sender_seq(),
            AnyStore::Other(s) => s.next_sender_seq(),
        }
    }
    fn next_target_seq(&self) -> u64 {
        match self {
            AnyStore::Memory(s) => s.next_target_seq(),
            AnyStore::File(s) => s.next_target_seq(),
            AnyStore::Other(s) => s.next_target_seq(),
        }
    }
    fn set_seqs(&mut self, sender: u64, target: u64) -> Result<(), StoreError> {
        match self {
            AnyStore::Memory(s) => s.set_seqs(sender, target),
            AnyStore::File(s) => s.set_seqs(sender, target),
            AnyStore::Other(s) => s.set_seqs(sender, target),
        }
    }
    fn save(&mut self, seq: u64, msg: &[u8]) -> Result<(), StoreError> {
        match self {
            AnyStore::Memory(s) => s.save(seq, msg),
            AnyStore::File(s) => s.save(seq, msg),
            AnyStore::Other(s) => s.save(seq, msg),
        }
    }
    fn load(&self, seq: u64, out: &mut Vec<u8>) -> Result<bool, StoreError> {
        match self {
            AnyStore::Memory(s) => s.load(seq, out),
            AnyStore::File(s) => s.load(seq, out),
            AnyStore::Other(s) => s.load(seq, out),
        }
    }
    fn reset(&mut self) -> Result<(), StoreError> {
        match self {
            AnyStore::Memory(s) => s.reset(),
            AnyStore::File(s) => s.reset(),
            AnyStore::Other(s) => s.reset(),
        }
    }
    fn refresh(&mut self) -> Result<(), StoreError> {
        match self {
            AnyStore::Memory(s) => s.refresh(),
            AnyStore::File(s) => s.refresh(),
            AnyStore::Other(s) => s.refresh(),
        }
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        match self {
            AnyStore::Memory(s) => s.flush(),
            AnyStore::File(s) => s.flush(),
            AnyStore::Other(s) => s.flush(),
        }
    }
    fn begin_flush(&mut self) -> Result<u64, StoreError> {
        match self {
            AnyStore::Memory(s) => s.begin_flush(),
            AnyStore::File(s) => s.begin_flush(),
            AnyStore::Other(s) => s.begin_flush(),
        }
    }
    fn flushed(&mut self) -> Result<u64, StoreError> {
        match self {
            AnyStore::Memory(s) => s.flushed(),
            AnyStore::File(s) => s.flushed(),
            AnyStore::Other(s) => s.flushed(),
        }
    }
    fn flush_signal(&self) -> Option<std::os::fd::RawFd> {
        match self {
            AnyStore::Memory(s) => s.flush_signal(),
            AnyStore::File(s) => s.flush_signal(),
            AnyStore::Other(s) => s.flush_signal(),
        }
    }
    fn max_seq(&self) -> u64 {
        match self {
            AnyStore::Memory(s) => s.max_seq(),
            AnyStore::File(s) => s.max_seq(),
            AnyStore::Other(s) => s.max_seq(),
        }
    }
    fn persists(&self) -> bool {
        match self {
            AnyStore::Memory(s) => s.persists(),
            AnyStore::File(s) => s.persists(),
            AnyStore::Other(s) => s.persists(),
        }
    }
    fn standing(&self) -> Standing {
        match self {
            AnyStore::Memory(s) => s.standing(),
            AnyStore::File(s) => s.standing(),
            AnyStore::Other(s) => s.standing(),
        }
    }
}
