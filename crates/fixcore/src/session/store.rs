//! Session stores: the next sequence numbers in both directions and every
//! message sent, by sequence number.
//!
//! [`MemoryStore`] lives as long as the process. [`FileStore`] is one
//! append-only journal file per session, so a session killed at any point
//! (`kill -9`) resumes its numbers and can still resend what it sent:
//!
//! - a record is `M seq:u64le len:u32le bytes` (a sent message) or
//!   `N sender:u64le target:u64le` (next sequence numbers);
//! - each record reaches the kernel in one `write` before the call returns,
//!   so it survives the process dying; [`Durability::Fsync`] also
//!   `fdatasync`s it, so it survives the machine dying (at one disk flush
//!   per record). The default, [`Durability::Process`], does not;
//! - on open the journal is replayed; a record cut short at the end (the
//!   process died inside a `write`) is truncated away, while garbage before
//!   the end is a [`StoreError::Corrupt`] naming the offset, never skipped;
//! - a reset truncates the journal to one `N 1 1` record.
//!
//! The file store keeps only offsets in memory and reads a resent message
//! back from the file.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// A store that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The operating system refused an operation on the journal.
    #[error("{path}: {op}: {source}")]
    Io {
        /// The journal file.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The journal holds bytes that are not a record.
    #[error("{path}: corrupt journal at byte {offset}: {why}")]
    Corrupt {
        /// The journal file.
        path: PathBuf,
        /// Offset of the bad record.
        offset: u64,
        /// What is wrong.
        why: &'static str,
    },
    /// A message longer than a record can describe.
    #[error("message of {len} bytes is too long to store")]
    TooLong {
        /// Its length.
        len: usize,
    },
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
}

/// The store of a session without `FileStorePath`.
///
/// Sent messages lie end to end in chunks of [`CHUNK`] bytes, found by
/// sequence number through a dense index: sequence numbers grow by one per
/// message, so saving is an append, with no allocation per message once
/// warm (a map of one `Vec` per message was a tenth of an acceptor's time
/// per order). Chunks, not one growing buffer: each doubling of a single
/// buffer copied everything saved so far into fresh pages, so every byte
/// was faulted in about twice (page faults were ~7 % of an acceptor's
/// time).
#[derive(Debug, Clone)]
pub struct MemoryStore {
    sender: u64,
    target: u64,
    /// Full chunks and, last, the one being filled. A message longer than
    /// [`CHUNK`] has a chunk of its own.
    chunks: Vec<Vec<u8>>,
    /// `index[seq - 1]` = where its bytes are; length 0: none kept.
    index: Vec<Stored>,
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
            chunks: Vec::new(),
            index: Vec::new(),
        }
    }
}

impl MemoryStore {
    /// The chunk `len` more bytes go into, starting one when the last is
    /// too full; its number.
    fn chunk_for(&mut self, len: usize) -> usize {
        match self.chunks.last() {
            Some(c) if c.capacity() - c.len() >= len => {}
            _ => self.chunks.push(Vec::with_capacity(len.max(CHUNK))),
        }
        self.chunks.len() - 1
    }
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
        if i >= self.index.len() {
            // A number past the end (after a SequenceReset of ours): the
            // numbers skipped hold nothing.
            self.index.resize(i + 1, Stored::default());
        }
        // A number saved again (rare) takes new room; the old bytes stay
        // until a reset, like a journal's.
        let c = self.chunk_for(msg.len());
        let chunk = &mut self.chunks[c];
        // Offsets fit in u32: only a message over 4 GiB, refused above,
        // would make a chunk that long. Chunk numbers fit: 2^32 chunks of
        // 1 MiB would be 4 PiB.
        self.index[i] = Stored {
            chunk: c as u32,
            at: chunk.len() as u32,
            len,
        };
        chunk.extend_from_slice(msg);
        Ok(())
    }
    fn load(&self, seq: u64, out: &mut Vec<u8>) -> Result<bool, StoreError> {
        let entry = seq
            .checked_sub(1)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.index.get(i));
        match entry {
            Some(&Stored { chunk, at, len }) if len > 0 => {
                let (at, len) = (at as usize, len as usize);
                out.extend_from_slice(&self.chunks[chunk as usize][at..at + len]);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
    fn reset(&mut self) -> Result<(), StoreError> {
        *self = MemoryStore::default();
        Ok(())
    }
    fn refresh(&mut self) -> Result<(), StoreError> {
        // Nothing outside this process to reload from (QuickFIX's
        // MemoryStore does the same).
        Ok(())
    }
}

/// How far a [`FileStore`] record must get before the call returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Into the kernel: survives the process being killed, not a power cut.
    #[default]
    Process,
    /// Onto the disk (`fdatasync` per record).
    Fsync,
}

const MSG: u8 = b'M';
const SEQS: u8 = b'N';
const MSG_HEAD: usize = 1 + 8 + 4;
const SEQS_LEN: usize = 1 + 8 + 8;

/// A session's append-only journal file.
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    file: File,
    durability: Durability,
    /// End of the last whole record: where the next one goes.
    end: u64,
    sender: u64,
    target: u64,
    /// seq -> (offset of the message bytes, length).
    sent: HashMap<u64, (u64, u32)>,
    /// One record being assembled, reused so a save allocates nothing
    /// once warm.
    record: Vec<u8>,
}

impl FileStore {
    /// Opens (creating if absent) the journal at `path` and replays it.
    pub fn open(path: &Path, durability: Durability) -> Result<FileStore, StoreError> {
        let io = |op| {
            let path = path.to_path_buf();
            move |source| StoreError::Io { path, op, source }
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io("open"))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io("read"))?;
        let mut store = FileStore {
            path: path.to_path_buf(),
            file,
            durability,
            end: 0,
            sender: 1,
            target: 1,
            sent: HashMap::new(),
            record: Vec::new(),
        };
        store.replay(&bytes)?;
        if store.end != bytes.len() as u64 {
            // A record cut short by a death mid-write: it was never
            // acknowledged to the caller, so dropping it loses nothing.
            store.file.set_len(store.end).map_err(io("truncate"))?;
        }
        Ok(store)
    }

    fn replay(&mut self, b: &[u8]) -> Result<(), StoreError> {
        let mut at = 0usize;
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        while at < b.len() {
            let corrupt = |why| StoreError::Corrupt {
                path: self.path.clone(),
                offset: at as u64,
                why,
            };
            match b[at] {
                MSG => {
                    if b.len() - at < MSG_HEAD {
                        break;
                    }
                    let seq = u64_at(at + 1);
                    let len = u32::from_le_bytes(b[at + 9..at + 13].try_into().expect("4 bytes"));
                    let body = at + MSG_HEAD;
                    if b.len() - body < len as usize {
                        break;
                    }
                    if seq == 0 {
                        return Err(corrupt("message with sequence number 0"));
                    }
                    self.sent.insert(seq, (body as u64, len));
                    at = body + len as usize;
                }
                SEQS => {
                    if b.len() - at < SEQS_LEN {
                        break;
                    }
                    let (s, t) = (u64_at(at + 1), u64_at(at + 9));
                    if s == 0 || t == 0 {
                        return Err(corrupt("sequence number 0"));
                    }
                    self.sender = s;
                    self.target = t;
                    at += SEQS_LEN;
                }
                _ => return Err(corrupt("unknown record type")),
            }
            self.end = at as u64;
        }
        Ok(())
    }

    /// Writes `self.record` at the end in one call, then syncs if asked.
    fn append(&mut self) -> Result<u64, StoreError> {
        let at = self.end;
        let io = |op| {
            let path = self.path.clone();
            move |source| StoreError::Io { path, op, source }
        };
        self.file
            .write_all_at(&self.record, at)
            .map_err(io("write"))?;
        if self.durability == Durability::Fsync {
            self.file.sync_data().map_err(io("fdatasync"))?;
        }
        self.end += self.record.len() as u64;
        Ok(at)
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl SessionStore for FileStore {
    fn next_sender_seq(&self) -> u64 {
        self.sender
    }
    fn next_target_seq(&self) -> u64 {
        self.target
    }
    fn set_seqs(&mut self, sender: u64, target: u64) -> Result<(), StoreError> {
        self.record.clear();
        self.record.push(SEQS);
        self.record.extend_from_slice(&sender.to_le_bytes());
        self.record.extend_from_slice(&target.to_le_bytes());
        self.append()?;
        self.sender = sender;
        self.target = target;
        Ok(())
    }
    fn save(&mut self, seq: u64, msg: &[u8]) -> Result<(), StoreError> {
        let len = u32::try_from(msg.len()).map_err(|_| StoreError::TooLong { len: msg.len() })?;
        self.record.clear();
        self.record.push(MSG);
        self.record.extend_from_slice(&seq.to_le_bytes());
        self.record.extend_from_slice(&len.to_le_bytes());
        self.record.extend_from_slice(msg);
        let at = self.append()?;
        self.sent.insert(seq, (at + MSG_HEAD as u64, len));
        Ok(())
    }
    fn load(&self, seq: u64, out: &mut Vec<u8>) -> Result<bool, StoreError> {
        let Some(&(at, len)) = self.sent.get(&seq) else {
            return Ok(false);
        };
        let start = out.len();
        out.resize(start + len as usize, 0);
        self.file
            .read_exact_at(&mut out[start..], at)
            .map_err(|source| StoreError::Io {
                path: self.path.clone(),
                op: "read",
                source,
            })?;
        Ok(true)
    }
    fn reset(&mut self) -> Result<(), StoreError> {
        self.file.set_len(0).map_err(|source| StoreError::Io {
            path: self.path.clone(),
            op: "truncate",
            source,
        })?;
        self.end = 0;
        self.sent.clear();
        self.set_seqs(1, 1)
    }
    fn refresh(&mut self) -> Result<(), StoreError> {
        *self = FileStore::open(&self.path.clone(), self.durability)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;

/// Either store, chosen at run time from the settings (`FileStorePath`
/// or none).
#[derive(Debug)]
pub enum AnyStore {
    /// In memory.
    Memory(MemoryStore),
    /// A journal file.
    File(FileStore),
}

impl SessionStore for AnyStore {
    fn next_sender_seq(&self) -> u64 {
        match self {
            AnyStore::Memory(s) => s.next_sender_seq(),
            AnyStore::File(s) => s.next_sender_seq(),
        }
    }
    fn next_target_seq(&self) -> u64 {
        match self {
            AnyStore::Memory(s) => s.next_target_seq(),
            AnyStore::File(s) => s.next_target_seq(),
        }
    }
    fn set_seqs(&mut self, sender: u64, target: u64) -> Result<(), StoreError> {
        match self {
            AnyStore::Memory(s) => s.set_seqs(sender, target),
            AnyStore::File(s) => s.set_seqs(sender, target),
        }
    }
    fn save(&mut self, seq: u64, msg: &[u8]) -> Result<(), StoreError> {
        match self {
            AnyStore::Memory(s) => s.save(seq, msg),
            AnyStore::File(s) => s.save(seq, msg),
        }
    }
    fn load(&self, seq: u64, out: &mut Vec<u8>) -> Result<bool, StoreError> {
        match self {
            AnyStore::Memory(s) => s.load(seq, out),
            AnyStore::File(s) => s.load(seq, out),
        }
    }
    fn reset(&mut self) -> Result<(), StoreError> {
        match self {
            AnyStore::Memory(s) => s.reset(),
            AnyStore::File(s) => s.reset(),
        }
    }
    fn refresh(&mut self) -> Result<(), StoreError> {
        match self {
            AnyStore::Memory(s) => s.refresh(),
            AnyStore::File(s) => s.refresh(),
        }
    }
}
