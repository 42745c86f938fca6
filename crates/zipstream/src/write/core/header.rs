//! The local and central header encoders: the byte layout of the two
//! records every entry gets, read off an open entry or a finished record.
//! They stand alone because they only encode what the state machine in
//! [`super`] decided; no state changes here.

use crate::entry::Method;
use crate::error::{Error, Result};
use crate::format::*;

use super::{Open, Record};

fn needs_utf8(s: &str) -> bool {
    !s.is_ascii()
}

pub(super) fn entry_flags(open: &Open) -> u16 {
    let mut f = 0;
    if needs_utf8(&open.opts.name) || needs_utf8(&open.opts.comment) {
        f |= FLAG_UTF8;
    }
    if open.opts.encryption.is_some() {
        f |= FLAG_ENCRYPTED;
    }
    if open.descriptor {
        f |= FLAG_DESCRIPTOR;
    }
    f
}

pub(super) fn version_needed(open: &Open) -> u16 {
    let mut v = VERSION_DEFAULT;
    if open.zip64_local
        || open.raw >= U32_SENTINEL
        || open.comp >= U32_SENTINEL
        || open.offset >= U32_SENTINEL
    {
        v = v.max(VERSION_ZIP64);
    }
    if open.opts.encryption.is_some() {
        v = v.max(VERSION_AES);
    }
    if open.method == Method::Zstd {
        v = v.max(VERSION_ZSTD);
    }
    v
}

/// Builds a local header. `sizes` is `(crc, compressed, uncompressed)` when
/// known; `None` writes the streaming placeholders.
pub(super) fn local_header(open: &Open, sizes: Option<(u32, u64, u64)>) -> Vec<u8> {
    let name = open.opts.name.as_bytes();
    let mut h = Vec::with_capacity(LOCAL_LEN + name.len() + 40);
    let (time, date) = dos_datetime(open.opts.mtime);
    h.put32(LOCAL_SIG);
    h.put16(version_needed(open));
    h.put16(entry_flags(open));
    h.put16(if open.opts.encryption.is_some() {
        METHOD_AES
    } else {
        open.method.id()
    });
    h.put16(time);
    h.put16(date);
    let (crc, csize, usize) = sizes.unwrap_or((0, 0, 0));
    h.put32(crc);
    if open.zip64_local {
        h.put32(U32_SENTINEL as u32);
        h.put32(U32_SENTINEL as u32);
    } else {
        h.put32(csize as u32);
        h.put32(usize as u32);
    }
    h.put16(name.len() as u16);
    let extra_at = h.len();
    h.put16(0);
    h.extend_from_slice(name);
    let extra_start = h.len();
    if open.zip64_local {
        h.put16(EXTRA_ZIP64);
        h.put16(16);
        h.put64(usize);
        h.put64(csize);
    }
    if open.opts.timestamp_extra {
        put_timestamp_extra(&mut h, open.opts.mtime);
    }
    if let Some((strength, _)) = &open.opts.encryption {
        put_aes_extra(&mut h, strength.code(), open.method.id());
    }
    let extra_len = (h.len() - extra_start) as u16;
    h[extra_at..extra_at + 2].copy_from_slice(&extra_len.to_le_bytes());
    h
}

pub(super) fn central_header(r: &Record, h: &mut Vec<u8>) -> Result<()> {
    if let Some(central) = &r.copied {
        let moved = super::super::copy::central_at(central, r.offset).ok_or_else(|| {
            Error::InvalidOptions(format!(
                "entry {:?}: its extra fields leave no room for the ZIP64 offset it now needs",
                String::from_utf8_lossy(&r.name)
            ))
        })?;
        h.extend_from_slice(&moved);
        return Ok(());
    }
    h.put32(CENTRAL_SIG);
    h.put16(r.made_by);
    h.put16(r.version_needed);
    h.put16(r.flags);
    h.put16(r.method);
    h.put16(r.time);
    h.put16(r.date);
    h.put32(r.crc);
    let big_u = r.usize >= U32_SENTINEL;
    let big_c = r.csize >= U32_SENTINEL;
    let big_o = r.offset >= U32_SENTINEL;
    h.put32(if big_c {
        U32_SENTINEL as u32
    } else {
        r.csize as u32
    });
    h.put32(if big_u {
        U32_SENTINEL as u32
    } else {
        r.usize as u32
    });
    h.put16(r.name.len() as u16);
    let extra_at = h.len();
    h.put16(0);
    h.put16(r.comment.len() as u16);
    h.put16(0); // disk number start
    h.put16(0); // internal attributes
    h.put32(r.external);
    h.put32(if big_o {
        U32_SENTINEL as u32
    } else {
        r.offset as u32
    });
    h.extend_from_slice(&r.name);
    let extra_start = h.len();
    if big_u || big_c || big_o {
        h.put16(EXTRA_ZIP64);
        h.put16(8 * (u16::from(big_u) + u16::from(big_c) + u16::from(big_o)));
        if big_u {
            h.put64(r.usize);
        }
        if big_c {
            h.put64(r.csize);
        }
        if big_o {
            h.put64(r.offset);
        }
    }
    if let Some(t) = r.mtime {
        put_timestamp_extra(h, t);
    }
    if let Some((strength, method)) = r.aes {
        put_aes_extra(h, strength.code(), method);
    }
    let extra_len = (h.len() - extra_start) as u16;
    h[extra_at..extra_at + 2].copy_from_slice(&extra_len.to_le_bytes());
    h.extend_from_slice(&r.comment);
    Ok(())
}
