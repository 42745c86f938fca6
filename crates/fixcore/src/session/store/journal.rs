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

const MSG: u8 = b'M';
const SEQS: u8 = b'N';

/// Copies the journal at `journal` into a new [`FileStore`] at `prefix`
/// (whose files must not hold a store yet), then renames the journal to
/// `<journal>.bak`. Returns the store and the backup's path. Memory stays
/// flat whatever the journal's length: records are read one at a time.
pub fn convert(
    journal: &Path,
    prefix: &Path,
    durability: Durability,
) -> Result<(FileStore, PathBuf), StoreError> {
    let io = |op| {
        let path = journal.to_path_buf();
        move |source| StoreError::Io { path, op, source }
    };
    let mut r = BufReader::with_capacity(1 << 20, File::open(journal).map_err(io("open"))?);
    let mut store = FileStore::open(prefix, durability)?;
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
    let mut bak = journal.as_os_str().to_owned();
    bak.push(".bak");
    let bak = PathBuf::from(bak);
    std::fs::rename(journal, &bak).map_err(io("rename"))?;
    Ok((store, bak))
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
