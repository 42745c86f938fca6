//! The open scan: every `.header` entry parsed and checked against the
//! body, in one pass through both files with fixed buffers.
//!
//! An entry is good when it is well formed, names bytes inside the body
//! after the previous entry's, and those bytes are one FIX message whose
//! CheckSum holds and whose MsgSeqNum(34) is the entry's number. When
//! the store's owner is known, each message must also carry the owner's
//! BeginString(8), SenderCompID(49) and TargetCompID(56): QuickFIX's file
//! names (`BeginString-Sender-Target[-Qualifier]`) are ambiguous once a
//! CompID holds `-`, so the names alone cannot tell `ACC-UAT` ← `BANK`
//! from `ACC` ← `UAT-BANK`, but the messages can.

use std::cell::Cell;
use std::collections::HashMap;

use super::{Entry, Index, MAX_SEQ, Parsed, Part, SCAN, STRIDE, parse_entry};
use crate::id::SessionId;
use crate::store::StoreError;

/// What a scan of the header and body found.
pub(super) struct Scan {
    pub(super) index: Index,
    /// Highest sequence number an entry names.
    pub(super) max_seq: u64,
    /// End of the last good entry in the header.
    pub(super) header_end: u64,
    /// End of the last good entry's message in the body.
    pub(super) body_end: u64,
    /// Where the first bad entry is, and why, when there is one.
    pub(super) bad: Option<StoreError>,
    /// The header ends in an entry cut short: where, and its number when
    /// that much was written.
    pub(super) torn: Option<(u64, Option<u64>)>,
}

/// The header fields of a stored message the scan checks.
#[derive(Default)]
struct Routing<'a> {
    begin: Option<&'a [u8]>,
    seq: Option<&'a [u8]>,
    sender: Option<&'a [u8]>,
    target: Option<&'a [u8]>,
}

/// BeginString(8), MsgSeqNum(34), SenderCompID(49) and TargetCompID(56)
/// of `msg`, each its first occurrence; reading stops once all four are
/// found (they lead the message in anything a session stored).
fn routing(msg: &[u8]) -> Routing<'_> {
    let mut r = Routing::default();
    let mut rest = msg;
    while let Some(end) = memchr::memchr(1, rest) {
        let field = &rest[..end];
        rest = &rest[end + 1..];
        let Some(eq) = memchr::memchr(b'=', field) else {
            continue;
        };
        let value = &field[eq + 1..];
        let slot = match &field[..eq] {
            b"8" => &mut r.begin,
            b"34" => &mut r.seq,
            b"49" => &mut r.sender,
            b"56" => &mut r.target,
            _ => continue,
        };
        slot.get_or_insert(value);
        if r.begin.is_some() && r.seq.is_some() && r.sender.is_some() && r.target.is_some() {
            break;
        }
    }
    r
}

/// Why the message `msg` cannot be entry `e`'s (damage), or the error
/// saying it belongs to another session than `owner`.
fn check_message(
    msg: &[u8],
    e: &Entry,
    owner: Option<&SessionId>,
    body: &Part,
) -> Result<Option<String>, StoreError> {
    let r = routing(msg);
    match r.seq.map(fixcore::value::parse_uint) {
        Some(Some(s)) if s == e.seq => {}
        Some(Some(s)) => return Ok(Some(format!("its message says MsgSeqNum {s}"))),
        Some(None) => return Ok(Some("its message's MsgSeqNum(34) is not a number".into())),
        None => return Ok(Some("its message has no MsgSeqNum(34)".into())),
    }
    let Some(owner) = owner else {
        return Ok(None);
    };
    let (Some(begin), Some(sender), Some(target)) = (r.begin, r.sender, r.target) else {
        return Ok(Some(
            "its message lacks BeginString(8), SenderCompID(49) or TargetCompID(56)".into(),
        ));
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if begin != owner.begin_string.as_bytes()
        || sender != owner.sender_comp_id.as_bytes()
        || target != owner.target_comp_id.as_bytes()
    {
        return Err(StoreError::Foreign {
            path: body.path.clone(),
            offset: e.offset,
            seq: e.seq,
            found: SessionId::new(&text(begin), &text(sender), &text(target), "").to_string(),
            expected: owner.to_string(),
        });
    }
    Ok(None)
}

/// Reads the header through, checking each entry against the body (and
/// its message against `owner`, when given).
pub(super) fn scan(
    header: &Part,
    body: &Part,
    body_len: u64,
    owner: Option<&SessionId>,
) -> Result<Scan, StoreError> {
    let header_len = header.len()?;
    let mut out = Scan {
        index: Index::default(),
        max_seq: 0,
        header_end: 0,
        body_end: 0,
        bad: None,
        torn: None,
    };
    let mut sorted = true;
    let (mut sparse, mut count, mut last_seq) = (Vec::new(), 0u64, 0u64);
    let mut buf = vec![0u8; SCAN];
    let mut have = 0usize;
    let mut at = 0u64; // header offset of buf[0]
    let mut msg = Vec::new();
    let mut entry_no = 0u64;
    let body_name = || {
        body.path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    'read: loop {
        let n = header.read_at(&mut buf[have..], at + have as u64)?;
        have += n;
        let end = n == 0 || at + have as u64 >= header_len;
        let mut used = 0;
        loop {
            let here = at + used as u64;
            match parse_entry(&buf[used..have]) {
                Parsed::Entry(e, took) => {
                    entry_no += 1;
                    let record = || format!("entry {entry_no}, message {}", e.seq);
                    let why = if e.seq == 0 {
                        Some("sequence number 0".to_string())
                    } else if e.seq > MAX_SEQ {
                        Some(format!("sequence number {} above 2147483647", e.seq))
                    } else if e.offset < out.body_end {
                        Some(format!(
                            "its message starts at body byte {}, inside the one before (ending at {})",
                            e.offset, out.body_end
                        ))
                    } else if e.offset.checked_add(e.size).is_none_or(|x| x > body_len) {
                        Some(format!(
                            "its message ({} bytes at {}) runs past the end of {} ({body_len} bytes)",
                            e.size,
                            e.offset,
                            body_name()
                        ))
                    } else if e.size > (1 << 30) {
                        Some(format!("a message of {} bytes", e.size))
                    } else {
                        msg.resize(e.size as usize, 0);
                        let got = body.read_at(&mut msg, e.offset)?;
                        if got != msg.len() || !fixcore::frame::checksum_holds(&msg) {
                            Some(format!(
                                "the {} bytes at {} of {} are not one FIX message with a good CheckSum",
                                e.size,
                                e.offset,
                                body_name()
                            ))
                        } else {
                            check_message(&msg, &e, owner, body)?
                        }
                    };
                    if let Some(why) = why {
                        out.bad = Some(header.corrupt(here, record(), why));
                        break 'read;
                    }
                    used += took;
                    out.body_end = e.offset + e.size;
                    out.max_seq = out.max_seq.max(e.seq);
                    if sorted && count > 0 && e.seq <= last_seq {
                        sorted = false;
                    }
                    if sorted {
                        if count % STRIDE == 0 {
                            sparse.push((e.seq, here));
                        }
                        count += 1;
                        last_seq = e.seq;
                    }
                    out.header_end = at + used as u64;
                }
                Parsed::Short if !end => break,
                Parsed::Short => {
                    // The header ends inside an entry: a death mid-write.
                    if used < have {
                        let rest = &buf[used..have];
                        let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
                        let seq = (digits < rest.len())
                            .then(|| fixcore::value::parse_uint(&rest[..digits]))
                            .flatten();
                        out.torn = Some((here, seq));
                    }
                    break 'read;
                }
                Parsed::Bad(why) => {
                    out.bad = Some(header.corrupt(
                        here,
                        format!("entry {}", entry_no + 1),
                        why.to_string(),
                    ));
                    break 'read;
                }
            }
        }
        if end {
            break;
        }
        buf.copy_within(used..have, 0);
        at += used as u64;
        have -= used;
    }
    out.index = if sorted {
        Index::Sorted {
            sparse,
            count,
            last_seq,
            cursor: Cell::new(None),
        }
    } else {
        Index::Map(map_of(header, out.header_end)?)
    };
    Ok(out)
}

/// Every entry of the header's first `end` bytes, later ones winning.
pub(super) fn map_of(header: &Part, end: u64) -> Result<HashMap<u64, (u64, u64)>, StoreError> {
    let mut map = HashMap::new();
    let mut buf = vec![0u8; SCAN];
    let (mut at, mut have) = (0u64, 0usize);
    while at + (have as u64) < end {
        let want = ((end - at) as usize - have).min(buf.len() - have);
        let n = header.read_at(&mut buf[have..have + want], at + have as u64)?;
        if n == 0 {
            break;
        }
        have += n;
        let mut used = 0;
        while let Parsed::Entry(e, took) = parse_entry(&buf[used..have]) {
            map.insert(e.seq, (e.offset, e.size));
            used += took;
        }
        buf.copy_within(used..have, 0);
        at += used as u64;
        have -= used;
    }
    Ok(map)
}

/// The highest MsgSeqNum(34) of any message in the body's bytes
/// `from..to` (damaged or not), read as `SOH 34=digits SOH`.
pub(super) fn highest_seq_in(body: &Part, from: u64, to: u64) -> Result<u64, StoreError> {
    let mut best = 0u64;
    let mut buf = vec![0u8; SCAN];
    let mut at = from;
    // Overlap chunks so a field across a boundary is seen whole.
    const KEEP: usize = 32;
    while at < to {
        let want = ((to - at) as usize).min(buf.len());
        let n = body.read_at(&mut buf[..want], at)?;
        if n == 0 {
            break;
        }
        let b = &buf[..n];
        for i in memchr::memmem::find_iter(b, b"\x0134=") {
            let digits = &b[i + 4..];
            let len = digits.iter().take_while(|c| c.is_ascii_digit()).count();
            if len < digits.len() && digits[len] == 1 {
                let v = fixcore::value::parse_uint(&digits[..len]).unwrap_or(0);
                best = best.max(v.min(MAX_SEQ));
            }
        }
        if n < want || at + (n as u64) >= to {
            break;
        }
        at += (n - KEEP.min(n)) as u64;
    }
    Ok(best)
}
