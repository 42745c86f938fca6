//! The single-file journal earlier perfkit versions kept per session
//! (`<session>.journal`), read once to move a store to QuickFIX's layout.
//!
//! A journal is a run of records: `M seq:u64le len:u32le bytes` (a sent
//! message) or `N sender:u64le target:u64le` (the next numbers). A record
//! cut short at the very end (a death mid-write) was never acknowledged
//! and is dropped; anything else that is not a record is a
//! [`StoreError::Corrupt`], and nothing is converted.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::{Durability, FileStore, SessionStore, StoreError};
use crate::id::SessionId;

const MSG: u8 = b'M';
const SEQS: u8 = b'N';

/// Copies the journal at `journal` into a new [`FileStore`] at `prefix`
/// (whose files must not hold a store yet), then renames the journal to
/// `<journal>.bak`. Returns the store, opened for `owner` as
/// [`FileStore::open`] opens it, and the backup's path. Memory stays
/// flat whatever the journal's length: records are read one at a time.
pub fn convert(
    journal: &Path,
    prefix: &Path,
    durability: Durability,
    owner: Option<&SessionId>,
) -> Result<(FileStore, PathBuf), StoreError> {
    // Written beside the final files under another name, and renamed into
    // place only once whole: a journal that fails to convert leaves no
    // store that a later start would take for the session's.
    let mut partial = prefix.as_os_str().to_owned();
    partial.push(".converting");
    let partial = PathBuf::from(partial);
    let files = |p: &Path| {
        ["body", "header", "seqnums", "session"].map(|ext| {
            let mut name = p.as_os_str().to_owned();
            name.push(".");
            name.push(ext);
            PathBuf::from(name)
        })
    };
    // What a conversion that died part way left.
    for f in files(&partial) {
        let _ = std::fs::remove_file(f);
    }
    let copied = copy(journal, &partial, durability);
    let bak = match copied {
        Ok(bak) => bak,
        Err(e) => {
            for f in files(&partial) {
                let _ = std::fs::remove_file(f);
            }
            return Err(e);
        }
    };
    for (from, to) in files(&partial).iter().zip(files(prefix).iter()) {
        std::fs::rename(from, to).map_err(|source| StoreError::Io {
            path: from.clone(),
            op: "rename",
            source,
        })?;
    }
    Ok((FileStore::open(prefix, durability, owner)?, bak))
}

/// Copies the journal's records into a new store at `prefix`, then renames
/// the journal to its backup name, which it returns.
fn copy(journal: &Path, prefix: &Path, durability: Durability) -> Result<PathBuf, StoreError> {
    let io = |op| {
        let path = journal.to_path_buf();
        move |source| StoreError::Io { path, op, source }
    };
    let file = File::open(journal).map_err(io("open"))?;
    let file_len = file.metadata().map_err(io("stat"))?.len();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut store = FileStore::open(prefix, durability, None)?;
    store.reset()?;
    let mut at = 0u64;
    let mut msg = Vec::new();
    let mut since_flush = 0usize;
    let corrupt = |offset, why: &str| StoreError::Corrupt {
        path: journal.to_path_buf(),
        offset,
        record: "journal record".into(),
        why: why.into(),
    };
    loop {
        let mut kind = [0u8; 1];
        if read_full(&mut r, &mut kind).map_err(io("read"))? == 0 {
            break;
        }
        match kind[0] {
            MSG => {
                let mut head = [0u8; 12];
                if read_full(&mut r, &mut head).map_err(io("read"))? < head.len() {
                    break;
                }
                let seq = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
                let len = u32::from_le_bytes(head[8..].try_into().expect("4 bytes")) as usize;
                if seq == 0 {
                    return Err(corrupt(at, "message with sequence number 0"));
                }
                let rest = file_len.saturating_sub(at + 13);
                if len as u64 > rest {
                    // Longer than what is left: a record cut short by a
                    // death mid-write, or a damaged length. A cut record
                    // holds part of one message and nothing after it; a
                    // damaged length runs over whole messages that follow.
                    msg.resize(rest.min(TAIL_LOOK) as usize, 0);
                    let n = read_full(&mut r, &mut msg).map_err(io("read"))?;
                    if rest > TAIL_LOOK || holds_more_than_one_message(&msg[..n]) {
                        return Err(corrupt(at, "a message length that runs past later records"));
                    }
                    break;
                }
                msg.resize(len, 0);
                if read_full(&mut r, &mut msg).map_err(io("read"))? < len {
                    break;
                }
                store.save(seq, &msg)?;
                since_flush += len;
                at += 13 + len as u64;
            }
            SEQS => {
                let mut nums = [0u8; 16];
                if read_full(&mut r, &mut nums).map_err(io("read"))? < nums.len() {
                    break;
                }
                let s = u64::from_le_bytes(nums[..8].try_into().expect("8 bytes"));
                let t = u64::from_le_bytes(nums[8..].try_into().expect("8 bytes"));
                if s == 0 || t == 0 {
                    return Err(corrupt(at, "sequence number 0"));
                }
                store.set_seqs(s, t)?;
                at += 17;
            }
            _ => return Err(corrupt(at, "unknown record type")),
        }
        if since_flush >= 1 << 20 {
            store.flush()?;
            since_flush = 0;
        }
    }
    store.flush()?;
    drop(store);
    let mut bak = journal.as_os_str().to_owned();
    bak.push(".bak");
    let bak = PathBuf::from(bak);
    std::fs::rename(journal, &bak).map_err(io("rename"))?;
    Ok(bak)
}

/// Most bytes a record cut short at the end can hold: a message the
/// session accepted is at most 1 GiB, but the journal's writer wrote a
/// record in one call, and a death mid-call leaves far less; past this a
/// short record is taken as damage.
const TAIL_LOOK: u64 = 1 << 20;

/// Whether `b` holds a whole FIX message (up to a `10=NNN` trailer) and
/// more bytes after it.
fn holds_more_than_one_message(b: &[u8]) -> bool {
    memchr::memmem::find_iter(b, b"\x0110=").any(|i| {
        let end = i + 8;
        b.len() > end && b[i + 4..i + 7].iter().all(u8::is_ascii_digit) && b[end - 1] == 1
    })
}

/// Reads until `buf` is full or the input ends; how much was read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
