//! The ZIP on-disk records (APPNOTE 6.3.x): signatures, field layouts, extra
//! fields, and the DOS date/time conversion. Encoding appends to a `Vec<u8>`;
//! parsing works on byte slices and never panics on short input.

/// Local file header signature.
pub const LOCAL_SIG: u32 = 0x0403_4b50;
/// Central directory file header signature.
pub const CENTRAL_SIG: u32 = 0x0201_4b50;
/// Data descriptor signature (optional in the spec; always written by us).
pub const DESCRIPTOR_SIG: u32 = 0x0807_4b50;
/// End of central directory record signature.
pub const EOCD_SIG: u32 = 0x0605_4b50;
/// ZIP64 end of central directory record signature.
pub const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
/// ZIP64 end of central directory locator signature.
pub const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;

/// Compression method: stored.
pub const METHOD_STORED: u16 = 0;
/// Compression method: deflate.
pub const METHOD_DEFLATE: u16 = 8;
/// Compression method: zstd (APPNOTE 6.3.8).
pub const METHOD_ZSTD: u16 = 93;
/// Compression method marker for WinZip AES encrypted entries.
pub const METHOD_AES: u16 = 99;

/// Extra field: ZIP64 extended information.
pub const EXTRA_ZIP64: u16 = 0x0001;
/// Extra field: extended timestamp ("UT").
pub const EXTRA_TIMESTAMP: u16 = 0x5455;
/// Extra field: WinZip AES.
pub const EXTRA_AES: u16 = 0x9901;

/// General purpose flag: entry is encrypted.
pub const FLAG_ENCRYPTED: u16 = 1 << 0;
/// General purpose flag: PKWARE's strong encryption (not read).
pub const FLAG_STRONG: u16 = 1 << 6;
/// General purpose flag: sizes and CRC follow the data in a data descriptor.
pub const FLAG_DESCRIPTOR: u16 = 1 << 3;
/// General purpose flag: name and comment are UTF-8.
pub const FLAG_UTF8: u16 = 1 << 11;

/// "version made by": Unix host (3), spec 6.3.
pub const VERSION_MADE_BY: u16 = (3 << 8) | 63;
/// "version made by" of an entry marked as made on MS-DOS (host 0), spec
/// 2.0, as Info-ZIP's `zip -k` writes it.
pub const VERSION_MADE_BY_DOS: u16 = 20;
/// Version needed for plain entries.
pub const VERSION_DEFAULT: u16 = 20;
/// Version needed when ZIP64 records are used.
pub const VERSION_ZIP64: u16 = 45;
/// Version needed for zstd (APPNOTE says 6.3).
pub const VERSION_ZSTD: u16 = 63;
/// Version needed for WinZip AES (per WinZip: 5.1).
pub const VERSION_AES: u16 = 51;

/// Fixed part of a local header.
pub const LOCAL_LEN: usize = 30;
/// Fixed part of a central directory header.
pub const CENTRAL_LEN: usize = 46;
/// Fixed part of the end of central directory record.
pub const EOCD_LEN: usize = 22;
/// ZIP64 end of central directory record (without extensible data).
pub const ZIP64_EOCD_LEN: usize = 56;
/// ZIP64 end of central directory locator.
pub const ZIP64_LOCATOR_LEN: usize = 20;

/// 32-bit fields at or above this value must move to the ZIP64 extra field.
pub const U32_SENTINEL: u64 = 0xFFFF_FFFF;

/// Little-endian appenders.
pub trait Put {
    /// Append a u16.
    fn put16(&mut self, v: u16);
    /// Append a u32.
    fn put32(&mut self, v: u32);
    /// Append a u64.
    fn put64(&mut self, v: u64);
}

impl Put for Vec<u8> {
    fn put16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
}

/// Little-endian field reads at fixed positions; callers check lengths first.
pub fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
/// Read a u32 at `at`.
pub fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
/// Read a u64 at `at`.
pub fn le64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Converts Unix seconds (UTC) to the MS-DOS (time, date) pair.
/// DOS dates cover 1980..=2107; times outside are clamped to the ends.
pub fn dos_datetime(unix: i64) -> (u16, u16) {
    const MIN: i64 = 315_532_800; // 1980-01-01
    const MAX: i64 = 4_354_819_198; // 2107-12-31 23:59:58
    let t = unix.clamp(MIN, MAX);
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let (y, m, d) = civil::civil_from_days(days);
    let time = ((secs / 3600) << 11) | (((secs % 3600) / 60) << 5) | ((secs % 60) / 2);
    let date = ((y - 1980) << 9) | (i64::from(m) << 5) | i64::from(d);
    (time as u16, date as u16)
}

/// Converts an MS-DOS (time, date) pair, taken as UTC, to Unix seconds.
pub fn unix_from_dos(time: u16, date: u16) -> i64 {
    let y = 1980 + i64::from(date >> 9);
    let m = u32::from((date >> 5) & 0xF).clamp(1, 12);
    let d = u32::from(date & 0x1F).max(1);
    let secs = i64::from(time >> 11) * 3600
        + i64::from((time >> 5) & 0x3F) * 60
        + i64::from(time & 0x1F) * 2;
    civil::days_from_civil(y, m, d) * 86_400 + secs
}

/// Iterates `(id, data)` over an extra field block, stopping at the first
/// truncated record (extra fields from the wild are often sloppy).
pub fn extra_fields(mut extra: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        if extra.len() < 4 {
            return None;
        }
        let id = le16(extra, 0);
        let len = usize::from(le16(extra, 2));
        if extra.len() < 4 + len {
            return None;
        }
        let data = &extra[4..4 + len];
        extra = &extra[4 + len..];
        Some((id, data))
    })
}

/// The fields of a WinZip AES extra field (0x9901).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AesExtra {
    /// 1 = AE-1 (CRC stored and checked), 2 = AE-2 (CRC zero).
    pub vendor_version: u16,
    /// 1, 2, 3 for 128, 192, 256 bits.
    pub strength: u8,
    /// The real compression method.
    pub method: u16,
}

/// Parses a 0x9901 payload: version (2), vendor "AE" (2), strength (1), method (2).
pub fn parse_aes_extra(data: &[u8]) -> Option<AesExtra> {
    if data.len() < 7 || &data[2..4] != b"AE" {
        return None;
    }
    Some(AesExtra {
        vendor_version: le16(data, 0),
        strength: data[4],
        method: le16(data, 5),
    })
}

/// Appends a 0x9901 extra field (AE-2).
pub fn put_aes_extra(out: &mut Vec<u8>, strength: u8, method: u16) {
    out.put16(EXTRA_AES);
    out.put16(7);
    out.put16(2);
    out.extend_from_slice(b"AE");
    out.push(strength);
    out.put16(method);
}

/// Appends an extended timestamp extra field holding the modification time only.
pub fn put_timestamp_extra(out: &mut Vec<u8>, mtime: i64) {
    out.put16(EXTRA_TIMESTAMP);
    out.put16(5);
    out.push(1);
    out.put32(mtime.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32);
}

/// Reads the mtime from an extended timestamp extra field payload.
pub fn parse_timestamp_extra(data: &[u8]) -> Option<i64> {
    if data.len() >= 5 && data[0] & 1 != 0 {
        Some(i64::from(le32(data, 1) as i32))
    } else {
        None
    }
}

/// Reads the ZIP64 extra field: each value is present only if its 32-bit
/// counterpart is saturated, in the order uncompressed, compressed, offset.
/// Returns None when the field is shorter than the saturated fields need.
pub fn parse_zip64_extra(
    data: &[u8],
    usize32: u32,
    csize32: u32,
    offset32: Option<u32>,
) -> Option<(u64, u64, Option<u64>)> {
    let mut at = 0;
    let mut next = |sat: bool, v: u64| -> Option<u64> {
        if !sat {
            return Some(v);
        }
        if data.len() < at + 8 {
            return None;
        }
        let x = le64(data, at);
        at += 8;
        Some(x)
    };
    let u = next(u64::from(usize32) == U32_SENTINEL, u64::from(usize32))?;
    let c = next(u64::from(csize32) == U32_SENTINEL, u64::from(csize32))?;
    let o = match offset32 {
        Some(o) => Some(next(u64::from(o) == U32_SENTINEL, u64::from(o))?),
        None => None,
    };
    Some((u, c, o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dos_time_known_values() {
        // 2020-02-29 13:37:42 UTC = 1582983462 (computed with `date -u -d`).
        let (t, d) = dos_datetime(1_582_983_462);
        assert_eq!(d, ((2020 - 1980) << 9) | (2 << 5) | 29);
        assert_eq!(t, (13 << 11) | (37 << 5) | 21);
        assert_eq!(unix_from_dos(t, d), 1_582_983_462);
        // Before 1980 clamps to the DOS epoch.
        assert_eq!(dos_datetime(0), (0, (1 << 5) | 1));
    }

    #[test]
    fn extra_iteration_stops_on_truncation() {
        let mut e = Vec::new();
        put_timestamp_extra(&mut e, 7);
        e.extend_from_slice(&[1, 0, 9, 0, 1]);
        let v: Vec<_> = extra_fields(&e).collect();
        assert_eq!(v.len(), 1);
        assert_eq!(parse_timestamp_extra(v[0].1), Some(7));
    }
}
