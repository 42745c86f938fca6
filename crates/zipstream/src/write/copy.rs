//! Entries copied from another archive as they are (`zip -d`, `-u`, `-f`
//! keep the entries they do not touch this way, as Info-ZIP does): the
//! local header and the compressed data byte for byte, a data descriptor
//! rebuilt from the central record when the original had one, and the
//! central record byte for byte but for where the entry now starts.
//!
//! Only that offset moves. When it no longer fits 32 bits (or no longer
//! needs 64), the record's ZIP64 extra field is rebuilt around it; every
//! other extra field, the comment, the attributes and the versions stay.

use crate::format::*;

/// The central record `central` (name, extra fields and comment
/// included) for an entry whose local header is now at `offset`; `None`
/// when the ZIP64 field that offset needs does not fit beside the
/// record's other extra fields (65,535 bytes in all).
pub(crate) fn central_at(central: &[u8], offset: u64) -> Option<Vec<u8>> {
    let name_len = usize::from(le16(central, 28));
    let extra_len = usize::from(le16(central, 30));
    let comment_len = usize::from(le16(central, 32));
    let extra_start = CENTRAL_LEN + name_len;
    let extra = &central[extra_start..extra_start + extra_len];
    let (usize32, csize32, offset32) = (le32(central, 24), le32(central, 20), le32(central, 42));
    // The 64-bit values the record stands for, from its ZIP64 field when
    // a 32-bit field is saturated.
    let (size, csize) = extra_fields(extra)
        .find(|(id, _)| *id == EXTRA_ZIP64)
        .and_then(|(_, d)| parse_zip64_extra(d, usize32, csize32, Some(offset32)))
        .map_or((u64::from(usize32), u64::from(csize32)), |(u, c, _)| (u, c));
    let (big_u, big_c, big_o) = (
        u64::from(usize32) == U32_SENTINEL,
        u64::from(csize32) == U32_SENTINEL,
        offset >= U32_SENTINEL,
    );
    let mut out = Vec::with_capacity(central.len() + 8);
    out.extend_from_slice(&central[..CENTRAL_LEN]);
    if big_o {
        // Reading a ZIP64 offset needs version 4.5.
        let needed = le16(central, 6).max(VERSION_ZIP64);
        out[6..8].copy_from_slice(&needed.to_le_bytes());
    }
    let offset32 = if big_o {
        U32_SENTINEL as u32
    } else {
        offset as u32
    };
    out[42..46].copy_from_slice(&offset32.to_le_bytes());
    out.extend_from_slice(&central[CENTRAL_LEN..extra_start]);
    let new_extra_at = out.len();
    if big_u || big_c || big_o {
        out.put16(EXTRA_ZIP64);
        out.put16(8 * (u16::from(big_u) + u16::from(big_c) + u16::from(big_o)));
        if big_u {
            out.put64(size);
        }
        if big_c {
            out.put64(csize);
        }
        if big_o {
            out.put64(offset);
        }
    }
    for (id, data) in extra_fields(extra) {
        if id != EXTRA_ZIP64 {
            out.put16(id);
            out.put16(data.len() as u16);
            out.extend_from_slice(data);
        }
    }
    let new_extra_len = u16::try_from(out.len() - new_extra_at).ok()?;
    out[30..32].copy_from_slice(&new_extra_len.to_le_bytes());
    out.extend_from_slice(&central[central.len() - comment_len..]);
    Some(out)
}

/// The data descriptor of a copied entry whose local header promised one
/// (flag bit 3), with the signature, in 64-bit sizes when the local
/// header has a ZIP64 field, as readers expect.
pub(crate) fn descriptor(crc: u32, csize: u64, size: u64, zip64: bool) -> Vec<u8> {
    let mut d = Vec::with_capacity(24);
    d.put32(DESCRIPTOR_SIG);
    d.put32(crc);
    if zip64 {
        d.put64(csize);
        d.put64(size);
    } else {
        d.put32(csize as u32);
        d.put32(size as u32);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A central record for "a.txt" at `offset` with a timestamp extra
    /// field and a comment.
    fn record(offset: u32) -> Vec<u8> {
        let mut r = Vec::new();
        r.put32(CENTRAL_SIG);
        r.put16(VERSION_MADE_BY);
        r.put16(20);
        r.put16(0);
        r.put16(8);
        r.put32(0); // time, date
        r.put32(0xDEAD_BEEF);
        r.put32(10);
        r.put32(20);
        r.put16(5);
        r.put16(9);
        r.put16(2);
        r.put16(0);
        r.put16(0);
        r.put32(0o100644 << 16);
        r.put32(offset);
        r.extend_from_slice(b"a.txt");
        put_timestamp_extra(&mut r, 7);
        r.extend_from_slice(b"hi");
        r
    }

    #[test]
    fn only_the_offset_moves() {
        let r = record(100);
        let moved = central_at(&r, 5000).unwrap();
        assert_eq!(moved.len(), r.len());
        assert_eq!(le32(&moved, 42), 5000);
        assert_eq!(moved[..42], r[..42]);
        assert_eq!(moved[46..], r[46..]);
    }

    #[test]
    fn an_offset_past_4_gib_gets_a_zip64_field_and_back() {
        let r = record(100);
        let far = central_at(&r, 5 << 30).unwrap();
        assert_eq!(le32(&far, 42), u32::MAX);
        assert_eq!(le16(&far, 6), VERSION_ZIP64);
        let (e, _) = crate::read::header::parse_central(&far, 0).unwrap();
        assert_eq!(
            (e.header_offset, e.size, e.compressed_size, e.mtime),
            (5 << 30, 20, 10, 7)
        );
        assert_eq!(e.comment, "hi");
        // Moved back below 4 GiB, the ZIP64 field goes again.
        let near = central_at(&far, 64).unwrap();
        assert_eq!(le32(&near, 42), 64);
        assert_eq!(near.len(), r.len());
    }

    #[test]
    fn a_zip64_field_that_does_not_fit_is_refused() {
        let mut r = record(100);
        // Fill the extra block to its limit with one unknown field.
        let name_end = CENTRAL_LEN + 5;
        let comment = r.split_off(r.len() - 2);
        r.truncate(name_end);
        r.put16(0xCAFE);
        r.put16(0xFFFF - 4);
        r.extend(std::iter::repeat_n(0u8, 0xFFFF - 4));
        r[30..32].copy_from_slice(&0xFFFFu16.to_le_bytes());
        r.extend_from_slice(&comment);
        assert!(central_at(&r, 64).is_some());
        assert!(central_at(&r, 5 << 30).is_none());
    }
}
