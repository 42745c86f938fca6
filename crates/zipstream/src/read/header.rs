//! Parsing local and central headers into [`Entry`] metadata.

use crate::crypto::AesStrength;
use crate::entry::{Entry, decode_name};
use crate::error::{Error, Result};
use crate::format::*;

/// A parsed local header.
pub(crate) struct Local {
    pub entry: Entry,
    /// Header length including name and extra.
    pub len: usize,
    /// The local header had a ZIP64 extra field (descriptor sizes are 64-bit).
    pub zip64: bool,
}

fn malformed(offset: u64, what: impl Into<String>) -> Error {
    Error::Malformed {
        offset,
        what: what.into(),
    }
}

/// Fills AES/timestamp/ZIP64 information from an extra block.
fn apply_extra(
    e: &mut Entry,
    extra: &[u8],
    usize32: u32,
    csize32: u32,
    offset32: Option<u32>,
    at: u64,
) -> Result<bool> {
    let mut zip64 = false;
    for (id, data) in extra_fields(extra) {
        match id {
            EXTRA_ZIP64 => {
                zip64 = true;
                let (u, c, o) =
                    parse_zip64_extra(data, usize32, csize32, offset32).ok_or_else(|| {
                        malformed(
                            at,
                            format!("entry {:?}: ZIP64 extra field too short", e.name),
                        )
                    })?;
                e.size = u;
                e.compressed_size = c;
                if let Some(o) = o {
                    e.header_offset = o;
                }
            }
            EXTRA_TIMESTAMP => {
                if let Some(t) = parse_timestamp_extra(data) {
                    e.mtime = t;
                }
            }
            EXTRA_AES => {
                if let Some(a) = parse_aes_extra(data) {
                    let strength =
                        AesStrength::from_code(a.strength).ok_or_else(|| Error::Unsupported {
                            name: e.name.clone(),
                            what: "AES strength",
                            id: u32::from(a.strength),
                        })?;
                    e.aes = Some((strength, a.vendor_version));
                    e.method = a.method;
                }
            }
            _ => {}
        }
    }
    if e.method == METHOD_AES && e.aes.is_none() {
        return Err(malformed(
            at,
            format!("entry {:?}: method 99 without an AES extra field", e.name),
        ));
    }
    Ok(zip64)
}

/// Parses a local header at the start of `b`. `Ok(None)` means more bytes are needed.
pub(crate) fn parse_local(b: &[u8], at: u64) -> Result<Option<Local>> {
    if b.len() < LOCAL_LEN {
        return Ok(None);
    }
    if le32(b, 0) != LOCAL_SIG {
        return Err(malformed(at, "expected a local file header signature"));
    }
    let flags = le16(b, 6);
    let name_len = usize::from(le16(b, 26));
    let extra_len = usize::from(le16(b, 28));
    let len = LOCAL_LEN + name_len + extra_len;
    if b.len() < len {
        return Ok(None);
    }
    let raw_name = &b[LOCAL_LEN..LOCAL_LEN + name_len];
    let (name, raw) = Entry::named(raw_name, decode_name(raw_name, flags & FLAG_UTF8 != 0));
    let csize32 = le32(b, 18);
    let usize32 = le32(b, 22);
    let mut e = Entry {
        name,
        raw,
        method: le16(b, 8),
        flags,
        crc32: le32(b, 14),
        compressed_size: u64::from(csize32),
        size: u64::from(usize32),
        header_offset: at,
        mtime: unix_from_dos(le16(b, 10), le16(b, 12)),
        dos_time: le16(b, 10),
        unix_mode: None,
        comment: String::new(),
        aes: None,
        encrypted: flags & FLAG_ENCRYPTED != 0,
        dos_attrs: 0,
        made_by: 0,
        internal_attrs: 0,
        extra_len: 0,
        external_attrs: 0,
    };
    let zip64 = apply_extra(
        &mut e,
        &b[LOCAL_LEN + name_len..len],
        usize32,
        csize32,
        None,
        at,
    )?;
    Ok(Some(Local {
        entry: e,
        len,
        zip64,
    }))
}

/// Parses one central directory header; returns the entry and the record length.
pub(crate) fn parse_central(b: &[u8], at: u64) -> Result<(Entry, usize)> {
    if b.len() < CENTRAL_LEN {
        return Err(Error::Truncated {
            offset: at + b.len() as u64,
        });
    }
    if le32(b, 0) != CENTRAL_SIG {
        return Err(malformed(
            at,
            "expected a central directory header signature",
        ));
    }
    let made_by = le16(b, 4);
    let flags = le16(b, 8);
    let name_len = usize::from(le16(b, 28));
    let extra_len = usize::from(le16(b, 30));
    let comment_len = usize::from(le16(b, 32));
    let len = CENTRAL_LEN + name_len + extra_len + comment_len;
    if b.len() < len {
        return Err(Error::Truncated {
            offset: at + b.len() as u64,
        });
    }
    let raw_name = &b[CENTRAL_LEN..CENTRAL_LEN + name_len];
    let utf8 = flags & FLAG_UTF8 != 0;
    let (name, raw) = Entry::named(raw_name, decode_name(raw_name, utf8));
    let external = le32(b, 38);
    let csize32 = le32(b, 20);
    let usize32 = le32(b, 24);
    let offset32 = le32(b, 42);
    let mut e = Entry {
        name,
        raw,
        method: le16(b, 10),
        flags,
        crc32: le32(b, 16),
        compressed_size: u64::from(csize32),
        size: u64::from(usize32),
        header_offset: u64::from(offset32),
        mtime: unix_from_dos(le16(b, 12), le16(b, 14)),
        dos_time: le16(b, 12),
        unix_mode: (made_by >> 8 == 3 && external >> 16 != 0).then_some(external >> 16),
        comment: decode_name(&b[len - comment_len..len], utf8),
        aes: None,
        encrypted: flags & FLAG_ENCRYPTED != 0,
        dos_attrs: external as u8,
        made_by,
        internal_attrs: le16(b, 36),
        extra_len: extra_len as u16,
        external_attrs: external,
    };
    let extra_start = CENTRAL_LEN + name_len;
    apply_extra(
        &mut e,
        &b[extra_start..extra_start + extra_len],
        usize32,
        csize32,
        Some(offset32),
        at,
    )?;
    Ok((e, len))
}
