//! [`FileStore`]: QuickFIX's file-store layout, read and written.
//!
//! A session's store is four files beside each other, named as QuickFIX
//! names them (`FIX.4.4-EXEC-BANZAI.body` and so on; the prefix is
//! BeginString-SenderCompID-TargetCompID, then `-qualifier` if any:
//! [`SessionId::file_name`]):
//!
//! - `.body`: every stored message, end to end;
//! - `.header`: one `seq,offset,size ` text entry per stored message, in
//!   the order they were stored; this is the on-disk index;
//! - `.seqnums`: `SSSSSSSSSS : TTTTTTTTTT`, the next sender and target
//!   numbers (QuickFIX 1.15.1 writes ten digits, later versions twenty;
//!   both are read, ten are written, so 1.15.1 reads what we leave);
//! - `.session`: the store's creation time, `YYYYMMDD-HH:MM:SS` (with
//!   milliseconds or without, any year, as QuickFIX reads it).
//!
//! What it guarantees, and how:
//!
//! - **One holder.** An open store holds an exclusive `flock` on its
//!   `.body` file until it is dropped, so a second session or process
//!   given the same files is refused ([`StoreError::Locked`]) instead of
//!   writing numbers into the same store.
//! - **Its own messages only.** Opened for a known session
//!   ([`FileStore::open`] with an owner), every stored message must carry
//!   that session's BeginString, SenderCompID and TargetCompID: QuickFIX's
//!   names are ambiguous once a CompID holds `-`, and a store that
//!   belongs to another session is refused ([`StoreError::Foreign`]),
//!   naming both, even by recovery.
//! - **Records are buffered until [`SessionStore::flush`]**, which writes
//!   the body, then the header, then the numbers. The session's driver
//!   flushes before it writes to the socket, so a message is stored
//!   before it is sent, and an inbound number is counted on disk only
//!   after the application took the message (the flush comes after the
//!   round's deliveries). A process killed at any point leaves at worst
//!   body bytes no entry names or entries the numbers do not count yet:
//!   open puts the next sender number past every number either shows.
//! - **A damaged store is refused**, never cut silently: at open every
//!   entry is parsed and checked against the body (in bounds, after the
//!   previous one, and the bytes it names are one FIX message whose
//!   CheckSum holds and whose MsgSeqNum is the entry's), and both small
//!   files must parse. The only thing dropped without a word is an entry
//!   cut short at the very end of the header, which a death mid-write
//!   leaves and which no number counts. [`FileStore::recover`] instead
//!   repairs, in an order a kill at any point cannot make unsafe (see
//!   [`RecoveryStep`]), and never reuses a number the body shows was sent.
//! - **Memory does not grow with the store**: open streams both files
//!   through fixed buffers, and lookups go through the header on disk
//!   with a sparse index (one position per [`STRIDE`] entries) and a
//!   cursor, so a resend of a long range reads the header once, in order.

mod meta;
mod part;
mod scan;

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{Durability, SessionStore, StoreError};
use crate::id::SessionId;
use meta::{creation_stamp, read_seqnums, read_session, seqnums_text, write_whole};
use part::Part;
use scan::{highest_seq_in, map_of, scan};

/// The largest sequence number the store writes: QuickFIX 1.15.1 reads
/// the numbers as a C `int`, so a larger one would come back wrapped.
pub const MAX_SEQ: u64 = i32::MAX as u64;

/// One entry in every this many keeps its header position in memory.
pub const STRIDE: u64 = 1024;

/// Bytes read from a file at a time while scanning it.
const SCAN: usize = 64 << 10;

/// One `.header` entry: message `seq` is `size` bytes at `offset` of the
/// body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    seq: u64,
    offset: u64,
    size: u64,
}

/// How one entry at the start of some bytes reads.
enum Parsed {
    /// A whole entry, and the bytes it took.
    Entry(Entry, usize),
    /// The bytes end inside an entry that is well formed so far.
    Short,
    /// Not an entry: why.
    Bad(&'static str),
}

/// Reads one `seq,offset,size ` entry at the start of `b`.
fn parse_entry(b: &[u8]) -> Parsed {
    let mut nums = [0u64; 3];
    let mut at = 0;
    for (k, n) in nums.iter_mut().enumerate() {
        let start = at;
        while at < b.len() && b[at].is_ascii_digit() {
            if at - start >= 19 {
                return Parsed::Bad("a number of more than 19 digits");
            }
            *n = *n * 10 + u64::from(b[at] - b'0');
            at += 1;
        }
        if at == b.len() {
            return Parsed::Short;
        }
        if at == start {
            return Parsed::Bad("a digit expected");
        }
        let sep = if k == 2 { b' ' } else { b',' };
        if b[at] != sep {
            return Parsed::Bad(if k == 2 {
                "a space expected after the size"
            } else {
                "a comma expected"
            });
        }
        at += 1;
    }
    let [seq, offset, size] = nums;
    Parsed::Entry(Entry { seq, offset, size }, at)
}

/// Where the flushed entries are found.
#[derive(Debug)]
enum Index {
    /// Entries in rising sequence order (the normal case): every
    /// [`STRIDE`]th entry's (seq, header offset), and where the last
    /// lookup stopped (the next entry's seq and header offset), so a
    /// resend reading numbers in order continues instead of searching.
    Sorted {
        sparse: Vec<(u64, u64)>,
        count: u64,
        last_seq: u64,
        cursor: Cell<Option<(u64, u64)>>,
    },
    /// A number stored again below the last one (a session whose numbers
    /// were set back without a reset): QuickFIX reads the later entry, so
    /// the whole header is held in a map, as QuickFIX holds it.
    Map(HashMap<u64, (u64, u64)>),
}

impl Default for Index {
    fn default() -> Self {
        Index::Sorted {
            sparse: Vec::new(),
            count: 0,
            last_seq: 0,
            cursor: Cell::new(None),
        }
    }
}

/// What [`FileStore::recover`] had to do to open a damaged store, one line
/// per repair, for the operator.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The repairs made; empty when the store was whole.
    pub repairs: Vec<String>,
}

/// The points between the writes an opening makes, in the order made,
/// for a caller that watches them ([`FileStore::recover_observed`]; a
/// test kills its process at each). The order is what makes a kill at
/// any point safe: the numbers are written first, already past every
/// number the body shows, so no later state (old header, cut header,
/// old `.session`) can lead a later start to give one out again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryStep {
    /// Both files were read and the repairs decided; nothing written.
    Scanned,
    /// `.seqnums` holds the final numbers (replaced whole by a rename).
    SeqnumsWritten,
    /// The header is cut before its first bad entry, or its torn last
    /// entry dropped (one truncation).
    HeaderCut,
    /// `.session` holds a creation time (replaced whole by a rename).
    SessionWritten,
}

/// A session's store in QuickFIX's file layout; see the [module
/// docs](self).
#[derive(Debug)]
pub struct FileStore {
    prefix: PathBuf,
    /// The session whose messages the store must hold, when known.
    owner: Option<SessionId>,
    /// Holds the store's lock ([`Part::lock`]).
    body: Part,
    header: Part,
    seqnums: Part,
    session: Part,
    durability: Durability,
    sender: u64,
    target: u64,
    /// The numbers the `.seqnums` file holds now.
    written: (u64, u64),
    /// Flushed lengths of the body and header: where the next bytes go.
    body_end: u64,
    header_end: u64,
    /// Records waiting for [`SessionStore::flush`], and their entries
    /// with where each will lie in the header.
    body_buf: Vec<u8>,
    header_buf: Vec<u8>,
    pending: Vec<(Entry, u64)>,
    index: Index,
    /// The `.session` file's text.
    creation: String,
}

impl FileStore {
    /// Opens (creating if absent) the store whose files are `prefix`
    /// followed by `.body`, `.header`, `.seqnums` and `.session`, and
    /// takes its lock. With `owner`, every stored message must be that
    /// session's ([`StoreError::Foreign`] otherwise). A damaged store is a
    /// [`StoreError::Corrupt`] naming the file, the byte and the entry;
    /// nothing is changed on disk then.
    pub fn open(
        prefix: &Path,
        durability: Durability,
        owner: Option<&SessionId>,
    ) -> Result<FileStore, StoreError> {
        Self::open_with(prefix, durability, owner, false, None, &mut |_| {}).map(|(s, _)| s)
    }

    /// Opens the store at `prefix` as [`Self::open`] does, but repairs
    /// what it must instead of refusing: the header is cut before its
    /// first bad entry (the messages from there on can no longer be
    /// resent, and are gap-filled), unreadable numbers are rebuilt, a
    /// damaged `.session` is written anew, and the next sender number is
    /// put past every number the body shows was stored, so none is sent
    /// twice. Says what it did. A store of another session, or held by
    /// another, is refused as by [`Self::open`]: cutting cannot cure it.
    pub fn recover(
        prefix: &Path,
        durability: Durability,
        owner: Option<&SessionId>,
    ) -> Result<(FileStore, Recovery), StoreError> {
        Self::recover_observed(prefix, durability, owner, &mut |_| {})
    }

    /// [`Self::recover`], calling `step` at each [`RecoveryStep`] as it is
    /// reached.
    pub fn recover_observed(
        prefix: &Path,
        durability: Durability,
        owner: Option<&SessionId>,
        step: &mut dyn FnMut(RecoveryStep),
    ) -> Result<(FileStore, Recovery), StoreError> {
        Self::open_with(prefix, durability, owner, true, None, step)
    }

    /// The file name prefix QuickFIX gives a session's store in `dir`:
    /// `BeginString-SenderCompID-TargetCompID`, then `-qualifier`.
    pub fn prefix_in(
        dir: &Path,
        begin_string: &str,
        sender: &str,
        target: &str,
        qualifier: &str,
    ) -> PathBuf {
        dir.join(SessionId::new(begin_string, sender, target, qualifier).file_name())
    }

    /// The path every file's name starts with.
    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// The store's creation time as the `.session` file holds it.
    pub fn creation_time(&self) -> &str {
        &self.creation
    }

    /// Opens (`repair`: recovers) the store at `prefix`; `body`, when
    /// given, is its body file already open and locked (a refresh keeps
    /// its lock that way).
    fn open_with(
        prefix: &Path,
        durability: Durability,
        owner: Option<&SessionId>,
        repair: bool,
        body: Option<Part>,
        step: &mut dyn FnMut(RecoveryStep),
    ) -> Result<(FileStore, Recovery), StoreError> {
        let mut recovery = Recovery::default();
        // The lock first: nothing is read or changed in a store another
        // session holds.
        let body = match body {
            Some(b) => b,
            None => {
                let mut b = Part::open(prefix, "body")?;
                b.lock()?;
                b
            }
        };
        let header = Part::open(prefix, "header")?;
        let seqnums = Part::open(prefix, "seqnums")?;
        let session = Part::open(prefix, "session")?;
        let body_len = body.len()?;
        let scan = scan(&header, &body, body_len, owner)?;
        let header_end = scan.header_end;
        let mut max_seq = scan.max_seq;
        if let Some(e) = scan.bad {
            if !repair {
                return Err(e);
            }
            recovery
                .repairs
                .push(format!("{e}; the header is cut there"));
        }
        // Body bytes no good entry names: past the last one, a death
        // between writing a round's body and its entries (never sent);
        // when repairing, anywhere (what a damaged entry named was sent).
        // Their numbers are not given out again either way.
        let unnamed_from = if repair { 0 } else { scan.body_end };
        max_seq = max_seq.max(highest_seq_in(&body, unnamed_from, body_len)?);
        let (sender, target) = match read_seqnums(&seqnums)? {
            Ok(n) => n,
            Err(e) if repair => {
                recovery.repairs.push(format!(
                    "{e}; the next target number is set to 1, so the counterparty is asked to resend"
                ));
                (1, 1)
            }
            Err(e) => return Err(e),
        };
        if let Some((at, Some(seq))) = scan.torn
            && seq < sender
        {
            // A death mid-write leaves an entry no number counts yet;
            // this one was counted, so the header lost its end.
            let e = header.corrupt(
                at,
                format!("message {seq}, the last entry"),
                format!("cut short, though the next sender number {sender} counts it"),
            );
            if !repair {
                return Err(e);
            }
            recovery.repairs.push(format!("{e}; it is dropped"));
        }
        let creation = match read_session(&session)? {
            Ok(t) => t,
            Err(e) if repair => {
                recovery
                    .repairs
                    .push(format!("{e}; it is written anew with the time now"));
                None
            }
            Err(e) => return Err(e),
        };
        step(RecoveryStep::Scanned);
        let header_len = header.len()?;
        let mut store = FileStore {
            prefix: prefix.to_path_buf(),
            owner: owner.cloned(),
            body,
            header,
            seqnums,
            session,
            durability,
            // Messages stored but not yet counted (a death between the
            // header's write and the numbers'): never sent, yet their
            // numbers are not given out again.
            sender: sender.max(max_seq.saturating_add(1)),
            target,
            written: (0, 0),
            body_end: body_len,
            header_end,
            body_buf: Vec::new(),
            header_buf: Vec::new(),
            pending: Vec::new(),
            index: scan.index,
            creation: String::new(),
        };
        // A repair writes the numbers before anything else changes: from
        // then on no state of the other files can lower them. A plain
        // open only drops a torn last entry no number counts, and does
        // that first: numbers written first could count it, and a death
        // before the cut would leave what reads as a damaged header.
        let cut = header_end != header_len;
        if repair {
            store.rewrite_seqnums()?;
        } else if cut {
            store.cut_header(header_end)?;
        }
        step(RecoveryStep::SeqnumsWritten);
        if repair {
            if cut {
                store.cut_header(header_end)?;
            }
        } else {
            store.rewrite_seqnums()?;
        }
        step(RecoveryStep::HeaderCut);
        store.creation = match creation {
            Some(t) => t,
            None => {
                let t = creation_stamp();
                write_whole(&store.session.path, t.as_bytes(), durability)?;
                store.session = Part::open(prefix, "session")?;
                t
            }
        };
        step(RecoveryStep::SessionWritten);
        Ok((store, recovery))
    }

    /// Cuts the header to its first `end` bytes, in one call.
    fn cut_header(&mut self, end: u64) -> Result<(), StoreError> {
        self.header.truncate(end)?;
        if self.durability == Durability::Fsync {
            self.header.sync()?;
        }
        Ok(())
    }

    /// Writes the numbers as QuickFIX 1.15.1 does, replacing a file of
    /// another shape (twenty digits, or repaired) whole through a rename,
    /// so a death midway leaves the old one or the new one.
    fn rewrite_seqnums(&mut self) -> Result<(), StoreError> {
        let text = seqnums_text(self.sender, self.target)?;
        let mut current = Vec::new();
        let len = self.seqnums.len()?;
        if len <= 64 {
            current.resize(len as usize, 0);
            let n = self.seqnums.read_at(&mut current, 0)?;
            current.truncate(n);
        }
        if current != text.as_bytes() {
            write_whole(&self.seqnums.path, text.as_bytes(), self.durability)?;
            self.seqnums = Part::open(&self.prefix, "seqnums")?;
        }
        self.written = (self.sender, self.target);
        Ok(())
    }

    /// The entry for `seq` among the flushed ones.
    fn find(&self, seq: u64) -> Result<Option<Entry>, StoreError> {
        let (sparse, count, cursor) = match &self.index {
            Index::Map(map) => {
                return Ok(map
                    .get(&seq)
                    .map(|&(offset, size)| Entry { seq, offset, size }));
            }
            Index::Sorted {
                sparse,
                count,
                cursor,
                ..
            } => (sparse, *count, cursor),
        };
        if count == 0 {
            return Ok(None);
        }
        let i = sparse.partition_point(|&(s, _)| s <= seq);
        if i == 0 {
            return Ok(None);
        }
        let mut from = sparse[i - 1].1;
        if let Some((s, at)) = cursor.get()
            && s <= seq
            && at > from
        {
            from = at;
        }
        let mut buf = [0u8; 4096];
        let mut have = 0usize;
        let mut at = from;
        while at < self.header_end {
            let want = ((self.header_end - at) as usize).min(buf.len() - have);
            let n = self
                .header
                .read_at(&mut buf[have..have + want], at + have as u64)?;
            if n == 0 {
                break;
            }
            have += n;
            let mut used = 0;
            loop {
                match parse_entry(&buf[used..have]) {
                    Parsed::Entry(e, took) => {
                        used += took;
                        if e.seq >= seq {
                            let next = at + used as u64;
                            cursor.set((next < self.header_end).then(|| {
                                // The next entry's number is unknown until
                                // read: the cursor is good for any number
                                // above this one.
                                (e.seq + 1, next)
                            }));
                            return Ok((e.seq == seq).then_some(e));
                        }
                    }
                    Parsed::Short => break,
                    Parsed::Bad(why) => {
                        return Err(self.header.corrupt(
                            at + used as u64,
                            format!("entry after message {seq}'s search start"),
                            why.to_string(),
                        ));
                    }
                }
            }
            buf.copy_within(used..have, 0);
            at += used as u64;
            have -= used;
        }
        Ok(None)
    }

    /// Records `e`, whose header entry now lies at `header_at`, in the
    /// index.
    fn index_entry(&mut self, e: Entry, header_at: u64) -> Result<(), StoreError> {
        if let Index::Sorted {
            sparse,
            count,
            last_seq,
            cursor,
        } = &mut self.index
        {
            if *count == 0 || e.seq > *last_seq {
                if *count % STRIDE == 0 {
                    sparse.push((e.seq, header_at));
                }
                *count += 1;
                *last_seq = e.seq;
                return Ok(());
            }
            cursor.set(None);
            // Out of order: from now on a map, built from the header.
            let map = map_of(&self.header, header_at)?;
            self.index = Index::Map(map);
        }
        if let Index::Map(map) = &mut self.index {
            map.insert(e.seq, (e.offset, e.size));
        }
        Ok(())
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
        for n in [sender, target] {
            if n > MAX_SEQ {
                return Err(StoreError::OutOfRange { seq: n });
            }
        }
        self.sender = sender;
        self.target = target;
        Ok(())
    }
    fn save(&mut self, seq: u64, msg: &[u8]) -> Result<(), StoreError> {
        if seq == 0 {
            return Ok(());
        }
        if seq > MAX_SEQ {
            return Err(StoreError::OutOfRange { seq });
        }
        let e = Entry {
            seq,
            offset: self.body_end + self.body_buf.len() as u64,
            size: msg.len() as u64,
        };
        self.body_buf.extend_from_slice(msg);
        let header_at = self.header_end + self.header_buf.len() as u64;
        let mut n = itoa::Buffer::new();
        for (v, sep) in [(e.seq, b','), (e.offset, b','), (e.size, b' ')] {
            self.header_buf.extend_from_slice(n.format(v).as_bytes());
            self.header_buf.push(sep);
        }
        self.pending.push((e, header_at));
        Ok(())
    }
    fn load(&self, seq: u64, out: &mut Vec<u8>) -> Result<bool, StoreError> {
        // The latest record of a number wins, as in QuickFIX's map.
        let pending = self
            .pending
            .iter()
            .rev()
            .map(|&(e, _)| e)
            .find(|e| e.seq == seq);
        if let Some(e) = pending
            && let Some(at) = e.offset.checked_sub(self.body_end)
        {
            let at = at as usize;
            out.extend_from_slice(&self.body_buf[at..at + e.size as usize]);
            return Ok(true);
        }
        // Flushed, or its bytes flushed by a flush that failed before its
        // entry was: read from the body either way.
        let found = match pending {
            Some(e) => Some(e),
            None => self.find(seq)?,
        };
        let Some(e) = found else {
            return Ok(false);
        };
        let start = out.len();
        out.resize(start + e.size as usize, 0);
        let n = self.body.read_at(&mut out[start..], e.offset)?;
        if n != e.size as usize {
            out.truncate(start);
            return Err(self.body.corrupt(
                e.offset,
                format!("message {seq}"),
                "the body ends inside it".into(),
            ));
        }
        Ok(true)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        let sync = self.durability == Durability::Fsync;
        if !self.body_buf.is_empty() {
            self.body.write_at(&self.body_buf, self.body_end)?;
            if sync {
                self.body.sync()?;
            }
            self.body_end += self.body_buf.len() as u64;
            self.body_buf.clear();
        }
        if !self.header_buf.is_empty() {
            self.header.write_at(&self.header_buf, self.header_end)?;
            if sync {
                self.header.sync()?;
            }
            let pending = std::mem::take(&mut self.pending);
            for &(e, at) in &pending {
                self.index_entry(e, at)?;
            }
            // Given back emptied, keeping its allocation for the next round.
            self.pending = pending;
            self.pending.clear();
            self.header_end += self.header_buf.len() as u64;
            self.header_buf.clear();
        }
        if self.written != (self.sender, self.target) {
            let text = seqnums_text(self.sender, self.target)?;
            self.seqnums.write_at(text.as_bytes(), 0)?;
            if sync {
                self.seqnums.sync()?;
            }
            self.written = (self.sender, self.target);
        }
        Ok(())
    }
    fn reset(&mut self) -> Result<(), StoreError> {
        self.body_buf.clear();
        self.header_buf.clear();
        self.pending.clear();
        // A death part way leaves the files emptied so far: open reads
        // the old numbers beside fewer messages (the reset undone, and
        // done again by the Logon that asked for it), or 1 and 1 beside
        // none.
        self.sender = 1;
        self.target = 1;
        self.header.truncate(0)?;
        self.body.truncate(0)?;
        self.body_end = 0;
        self.header_end = 0;
        self.index = Index::default();
        let text = seqnums_text(1, 1)?;
        self.seqnums.write_at(text.as_bytes(), 0)?;
        self.written = (1, 1);
        self.creation = creation_stamp();
        self.session.truncate(0)?;
        self.session.write_at(self.creation.as_bytes(), 0)?;
        if self.durability == Durability::Fsync {
            for p in [&self.body, &self.header, &self.seqnums, &self.session] {
                p.sync()?;
            }
        }
        Ok(())
    }
    fn refresh(&mut self) -> Result<(), StoreError> {
        self.flush()?;
        // A second descriptor of the same opening carries the lock over:
        // opening the body anew would be refused by this store's own lock.
        // Not marked as holding the lock until the refreshed store takes
        // it over below: a refresh that fails drops it, and this store
        // keeps its lock.
        let body = Part {
            path: self.body.path.clone(),
            file: self.body.file.try_clone().map_err(self.body.io("dup"))?,
            locked: false,
        };
        let owner = self.owner.clone();
        let (fresh, _) = FileStore::open_with(
            &self.prefix.clone(),
            self.durability,
            owner.as_ref(),
            false,
            Some(body),
            &mut |_| {},
        )?;
        let mut old = std::mem::replace(self, fresh);
        old.body.locked = false;
        self.body.locked = true;
        Ok(())
    }
    fn max_seq(&self) -> u64 {
        MAX_SEQ
    }
}

impl Drop for FileStore {
    fn drop(&mut self) {
        // What was stored is kept even if never sent: storing more than
        // was sent is safe, the other way round is not.
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests;
