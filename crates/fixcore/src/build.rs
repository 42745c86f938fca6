//! [`MessageBuilder`]: writes FIX 4.2, 4.4 and FIXT.1.1 messages with the
//! header in the order QuickFIX emits it — 8, 9, 35, then the other header
//! tags ascending, then the body — and computes BodyLength and CheckSum.
//!
//! The body is written after a reserved gap; at [`MessageBuilder::finish`]
//! the `8=…|9=…|` prefix is written right-aligned into the gap, so the
//! message is never moved. The buffer is reused: after the first message of
//! a given size no call allocates.

pub mod format;

use crate::parse::checksum;
use crate::scan::SOH;
use crate::value::{Decimal, UtcTimestamp};
use crate::{Error, Result};
pub use format::TimePrecision;

/// Room for `8=FIXT.1.1|9=<up to 10 digits>|`.
const RESERVE: usize = 32;
/// Largest tag the parser accepts (9 digits).
const MAX_TAG: u32 = 999_999_999;
/// Most header fields (besides 8, 9, 35) a message may carry.
const MAX_HEADER: usize = 32;

/// `tag=` for tags below 1,000 (every standard header tag and most body
/// tags) as up to 4 bytes and their count; 0 for tag 0, which is never
/// written. Built at compile time.
static SMALL_TAGS: [([u8; 4], u8); 1000] = small_tags();

const fn small_tags() -> [([u8; 4], u8); 1000] {
    let mut table = [([0u8; 4], 0u8); 1000];
    let mut tag = 1;
    while tag < 1000 {
        let digits = if tag < 10 {
            1
        } else if tag < 100 {
            2
        } else {
            3
        };
        let mut text = [0u8; 4];
        let (mut x, mut k) = (tag, digits);
        while k > 0 {
            k -= 1;
            text[k] = b'0' + (x % 10) as u8;
            x /= 10;
        }
        text[digits] = b'=';
        table[tag] = (text, digits as u8 + 1);
        tag += 1;
    }
    table
}

/// Copies `v` to `dst` with at most two overlapping fixed-size moves when
/// it is at most 32 bytes long, a `memcpy` otherwise.
///
/// # Safety
/// `dst` must be valid for `v.len()` byte writes and not overlap `v`.
#[inline(always)]
unsafe fn copy_short(v: &[u8], dst: *mut u8) {
    let n = v.len();
    let src = v.as_ptr();
    // SAFETY: in each branch every read is inside `v` (the two moves of a
    // branch overlap when n is below twice their size) and every write is
    // inside `dst[..n]`, as the caller promises.
    unsafe {
        if (8..=16).contains(&n) {
            let a = src.cast::<u64>().read_unaligned();
            let b = src.add(n - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(a);
            dst.add(n - 8).cast::<u64>().write_unaligned(b);
        } else if (4..8).contains(&n) {
            let a = src.cast::<u32>().read_unaligned();
            let b = src.add(n - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(a);
            dst.add(n - 4).cast::<u32>().write_unaligned(b);
        } else if n > 0 && n < 4 {
            // Bytes 0, n/2 and n-1 cover every length from 1 to 3 (a loop
            // here was turned into a `memcpy` call by the optimiser, the
            // very cost this function avoids).
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        } else if (17..=32).contains(&n) {
            // Timestamps (21 bytes with milliseconds) and most ids land
            // here: a call costs more than these two moves.
            let a = src.cast::<[u8; 16]>().read_unaligned();
            let b = src.add(n - 16).cast::<[u8; 16]>().read_unaligned();
            dst.cast::<[u8; 16]>().write_unaligned(a);
            dst.add(n - 16).cast::<[u8; 16]>().write_unaligned(b);
        } else if n > 32 {
            std::ptr::copy_nonoverlapping(src, dst, n);
        }
    }
}

/// Whether `v` holds an SOH byte. Almost every value is a few bytes
/// long, where `contains` goes byte by byte (~200 instructions per
/// ExecutionReport); up to 16 bytes, two overlapping word loads are tested
/// for an SOH byte at once instead.
#[inline(always)]
pub(crate) fn has_soh(v: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // `x` has a zero byte (an SOH of the value, after `^ ONES`): the
    // borrow trick is exact for whether one exists.
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
    let n = v.len();
    let word = |at: usize| u64::from_le_bytes(v[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |at: usize| u32::from_le_bytes(v[at..at + 4].try_into().unwrap_or([0; 4]));
    if (8..=16).contains(&n) {
        zero(word(0) ^ ONES) || zero(word(n - 8) ^ ONES)
    } else if (4..8).contains(&n) {
        zero((u64::from(half(0)) | u64::from(half(n - 4)) << 32) ^ ONES)
    } else if n > 16 {
        v.contains(&SOH)
    } else {
        // 0 to 3 bytes: bytes 0, n/2 and n-1 cover them all.
        n > 0 && (v[0] == SOH || v[n / 2] == SOH || v[n - 1] == SOH)
    }
}

use crate::version::BeginString;

/// Reusable FIX message writer. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct MessageBuilder {
    version: BeginString,
    buf: Vec<u8>,
    /// (tag, offset) of each header field after 35, ascending by tag.
    header: [(u32, u32); MAX_HEADER],
    nheader: usize,
    /// End of the header region (where body fields start being appended).
    header_end: usize,
    error: Option<&'static str>,
    started: bool,
    /// The last whole second written as a timestamp and its text
    /// (`YYYYMMDD-HH:MM:SS`): a session stamps every message with the
    /// clock, so consecutive messages mostly share it and only the
    /// fraction is formatted again.
    stamp: Option<(i64, [u8; 17])>,
    /// The last timestamp written whole: its time, precision and text. A
    /// session hands every message of one read the same clock reading,
    /// so an acceptor answering a batch of orders writes the same
    /// SendingTime over and over; copying it is cheaper than formatting
    /// its fraction (~100 instructions) each time.
    last_stamp: Option<(i64, TimePrecision, [u8; 32], usize)>,
}

impl MessageBuilder {
    /// A builder for `version`.
    pub fn new(version: BeginString) -> MessageBuilder {
        MessageBuilder {
            version,
            buf: Vec::with_capacity(1024),
            header: [(0, 0); MAX_HEADER],
            nheader: 0,
            header_end: RESERVE,
            error: None,
            started: false,
            stamp: None,
            last_stamp: None,
        }
    }

    /// `t` as a UTCTimestamp in `out`, its length; `None` for a year
    /// outside 0..=9999. Reuses the text of the last second written.
    fn timestamp(
        &mut self,
        out: &mut [u8; 32],
        t: UtcTimestamp,
        p: TimePrecision,
    ) -> Option<usize> {
        if let Some((at, prec, text, n)) = self.last_stamp
            && at == t.unix_nanos
            && prec == p
        {
            *out = text;
            return Some(n);
        }
        let secs = t.unix_nanos.div_euclid(1_000_000_000);
        let n = match self.stamp {
            Some((s, text)) if s == secs => {
                out[..17].copy_from_slice(&text);
                let nanos = t.unix_nanos.rem_euclid(1_000_000_000) as u64;
                17 + format::fraction(&mut out[17..], nanos, p)
            }
            _ => {
                let n = format::timestamp(out, t, p)?;
                let mut text = [0u8; 17];
                text.copy_from_slice(&out[..17]);
                self.stamp = Some((secs, text));
                n
            }
        };
        self.last_stamp = Some((t.unix_nanos, p, *out, n));
        Some(n)
    }

    /// The version written as BeginString.
    pub fn version(&self) -> BeginString {
        self.version
    }

    /// Starts a message of type `msg_type`, discarding any unfinished one.
    /// A MsgType that is empty or contains SOH or `=` makes
    /// [`finish`](Self::finish) fail with [`Error::Build`].
    pub fn begin(&mut self, msg_type: &[u8]) -> &mut Self {
        self.buf.clear();
        self.buf.resize(RESERVE, 0);
        self.nheader = 0;
        self.error = if msg_type.is_empty() {
            Some("empty MsgType(35)")
        } else if msg_type.contains(&SOH) {
            Some("MsgType(35) contains SOH")
        } else if msg_type.contains(&b'=') {
            Some("MsgType(35) contains '='")
        } else {
            None
        };
        self.started = true;
        self.append(35, msg_type);
        self.header_end = self.buf.len();
        self
    }

    /// Inlined: at each call site the tag is mostly a constant, so the
    /// tag rules fold away and what is left is the value's emptiness and
    /// SOH test (as a call it was ~20 instructions per field).
    #[inline(always)]
    fn check(&mut self, tag: u32, v: &[u8]) -> bool {
        if !self.started || tag == 0 || tag > MAX_TAG {
            // Those faults come before the value's; `check_formatted`
            // names them.
            return self.check_formatted(tag);
        }
        if v.is_empty() {
            self.error = Some("empty value");
        } else if has_soh(v) {
            self.error = Some("value contains SOH");
        } else {
            return self.check_reserved(tag);
        }
        false
    }

    /// [`check`](Self::check) for a value the builder formatted itself (a
    /// number, a timestamp, `Y`/`N`): never empty and never SOH, so only
    /// the tag is checked. Every message's MsgSeqNum and SendingTime come
    /// through here, and the SOH search was a visible part of their cost.
    #[inline(always)]
    fn check_formatted(&mut self, tag: u32) -> bool {
        if !self.started {
            self.error = Some("begin() was not called");
        } else if tag == 0 {
            self.error = Some("tag 0");
        } else if tag > MAX_TAG {
            self.error = Some("tag above 999999999 (tags have at most 9 digits)");
        } else {
            return self.check_reserved(tag);
        }
        false
    }

    /// The last rule of [`check`](Self::check): the builder's own tags.
    #[inline(always)]
    fn check_reserved(&mut self, tag: u32) -> bool {
        if matches!(tag, 8 | 9 | 10 | 35) {
            self.error = Some("tags 8, 9, 10 and 35 are written by the builder");
            return false;
        }
        self.error.is_none()
    }

    /// Appends `tag=v<SOH>` at the end.
    ///
    /// The hot spot of building (a message is mostly this, field by
    /// field): the tag comes from [`SMALL_TAGS`] when below 1,000, and the
    /// tag text and a short value are written with a few fixed-size moves
    /// instead of two `memcpy` calls, which cost more than the bytes they
    /// move (callgrind: about 40 % of an ExecutionReport's build was the
    /// call overhead of copies of 1 to 10 bytes).
    #[inline(always)]
    fn append(&mut self, tag: u32, v: &[u8]) {
        let mut t = [0u8; 16];
        let n = match SMALL_TAGS.get(tag as usize) {
            Some(&(text, len)) if len > 0 => {
                t[..4].copy_from_slice(&text);
                usize::from(len)
            }
            _ => {
                let n = format::uint(&mut t, u64::from(tag));
                t[n] = b'=';
                n + 1
            }
        };
        let len = self.buf.len();
        self.buf.reserve(t.len() + v.len() + 1);
        // SAFETY: `reserve` made room for 16 + v.len() + 1 bytes after
        // `len`. The 16-byte move writes the tag text (n <= 11 bytes) and
        // padding that the value and SOH then overwrite or leave beyond
        // the new length; `v` cannot overlap the buffer's spare capacity;
        // every byte up to the new length is written before `set_len`.
        unsafe {
            let dst = self.buf.as_mut_ptr().add(len);
            std::ptr::copy_nonoverlapping(t.as_ptr(), dst, t.len());
            copy_short(v, dst.add(n));
            *dst.add(n + v.len()) = SOH;
            self.buf.set_len(len + n + v.len() + 1);
        }
    }

    /// Adds a header field, keeping header tags ascending after 35.
    pub fn header_bytes(&mut self, tag: u32, v: &[u8]) -> &mut Self {
        if self.check(tag, v) {
            self.place_header(tag, v);
        }
        self
    }

    /// Puts the checked header field `tag=v` in its place.
    #[inline(always)]
    fn place_header(&mut self, tag: u32, v: &[u8]) {
        let n = self.nheader;
        // A session writes its header in tag order before any body field:
        // that is an append, decided without searching.
        if n < MAX_HEADER
            && self.header_end == self.buf.len()
            && (n == 0 || self.header[n - 1].0 < tag)
        {
            let at = self.buf.len();
            self.append(tag, v);
            self.header[n] = (tag, at as u32);
            self.nheader = n + 1;
            self.header_end = self.buf.len();
        } else {
            self.insert_header(tag, v);
        }
    }

    /// [`place_header`](Self::place_header) when the field goes before
    /// another header field or after a body field.
    #[cold]
    fn insert_header(&mut self, tag: u32, v: &[u8]) {
        if self.nheader == MAX_HEADER {
            self.error = Some("more than 32 header fields");
            return;
        }
        let k = self.header[..self.nheader].partition_point(|&(t, _)| t <= tag);
        if k > 0 && self.header[k - 1].0 == tag {
            self.error = Some("duplicate header tag");
            return;
        }
        let at = if k < self.nheader {
            self.header[k].1 as usize
        } else {
            self.header_end
        };
        let old = self.buf.len();
        let mut t = [0u8; 20];
        let tn = format::uint(&mut t, u64::from(tag));
        let flen = tn + v.len() + 2;
        self.buf.resize(old + flen, 0);
        self.buf.copy_within(at..old, at + flen);
        let dst = &mut self.buf[at..at + flen];
        dst[..tn].copy_from_slice(&t[..tn]);
        dst[tn] = b'=';
        dst[tn + 1..flen - 1].copy_from_slice(v);
        dst[flen - 1] = SOH;
        for h in &mut self.header[k..self.nheader] {
            h.1 += flen as u32;
        }
        self.header.copy_within(k..self.nheader, k + 1);
        self.header[k] = (tag, at as u32);
        self.nheader += 1;
        self.header_end += flen;
    }

    /// Adds a text header field (SenderCompID, TargetCompID...).
    pub fn header_str(&mut self, tag: u32, v: &str) -> &mut Self {
        self.header_bytes(tag, v.as_bytes())
    }

    /// Adds an integer header field (MsgSeqNum...).
    pub fn header_uint(&mut self, tag: u32, v: u64) -> &mut Self {
        let mut b = [0u8; 20];
        let n = format::uint(&mut b, v);
        if self.check_formatted(tag) {
            self.place_header(tag, &b[..n]);
        }
        self
    }

    /// Adds a UTCTimestamp header field (SendingTime...).
    pub fn header_timestamp(&mut self, tag: u32, t: UtcTimestamp, p: TimePrecision) -> &mut Self {
        let mut b = [0u8; 32];
        match self.timestamp(&mut b, t, p) {
            Some(n) => {
                if self.check_formatted(tag) {
                    self.place_header(tag, &b[..n]);
                }
                self
            }
            None => {
                self.error = Some("timestamp year outside 0..=9999");
                self
            }
        }
    }

    /// Appends a body field with raw bytes.
    #[inline]
    pub fn field_bytes(&mut self, tag: u32, v: &[u8]) -> &mut Self {
        if self.check(tag, v) {
            self.append(tag, v);
        }
        self
    }

    /// A body field whose value the builder formatted (see
    /// [`check_formatted`](Self::check_formatted)).
    #[inline(always)]
    fn field_formatted(&mut self, tag: u32, v: &[u8]) -> &mut Self {
        if self.check_formatted(tag) {
            self.append(tag, v);
        }
        self
    }

    /// [`field_bytes`](Self::field_bytes) that also writes an empty value
    /// (`tag=<SOH>`): for relaying a message as it was received from a
    /// counterparty whose session does not require values.
    pub fn field_bytes_or_empty(&mut self, tag: u32, v: &[u8]) -> &mut Self {
        if v.is_empty() {
            // Checked with a stand-in value: every rule but emptiness.
            if self.check(tag, b"x") {
                self.append(tag, v);
            }
            return self;
        }
        self.field_bytes(tag, v)
    }

    /// Appends a Length/Data pair, `length_tag=<len>` then `data_tag=v`
    /// (RawDataLength(95) and RawData(96), ...). The data may hold any
    /// byte, SOH and `=` included: a parser that knows the pair reads it by
    /// its length (see [`Dictionary::data_pairs`](crate::groups::Dictionary::data_pairs)).
    /// An empty `v` or equal tags make [`finish`](Self::finish) fail.
    pub fn field_data(&mut self, length_tag: u32, data_tag: u32, v: &[u8]) -> &mut Self {
        let mut b = [0u8; 24];
        let n = format::uint(&mut b, v.len() as u64);
        if length_tag == data_tag {
            self.error = Some("a Length field and its data field need different tags");
        } else if self.check(length_tag, &b[..n]) && self.check(data_tag, b"-") {
            if v.is_empty() {
                self.error = Some("empty value");
            } else {
                self.append(length_tag, &b[..n]);
                self.append(data_tag, v);
            }
        }
        self
    }

    /// Appends a text body field.
    #[inline]
    pub fn field_str(&mut self, tag: u32, v: &str) -> &mut Self {
        self.field_bytes(tag, v.as_bytes())
    }

    /// Appends a signed integer body field.
    #[inline]
    pub fn field_int(&mut self, tag: u32, v: i64) -> &mut Self {
        let mut b = [0u8; 24];
        let n = format::int(&mut b, v);
        self.field_formatted(tag, &b[..n])
    }

    /// Appends an unsigned integer body field.
    #[inline]
    pub fn field_uint(&mut self, tag: u32, v: u64) -> &mut Self {
        let mut b = [0u8; 24];
        let n = format::uint(&mut b, v);
        self.field_formatted(tag, &b[..n])
    }

    /// Appends an exact decimal (price, quantity) body field.
    #[inline]
    pub fn field_decimal(&mut self, tag: u32, v: Decimal) -> &mut Self {
        let mut b = [0u8; 24];
        let n = format::decimal(&mut b, v);
        self.field_formatted(tag, &b[..n])
    }

    /// Appends a single-character body field.
    #[inline]
    pub fn field_char(&mut self, tag: u32, v: u8) -> &mut Self {
        self.field_bytes(tag, &[v])
    }

    /// Appends a Boolean (`Y`/`N`) body field.
    #[inline]
    pub fn field_bool(&mut self, tag: u32, v: bool) -> &mut Self {
        self.field_formatted(tag, if v { b"Y" } else { b"N" })
    }

    /// Appends a UTCTimestamp body field.
    #[inline]
    pub fn field_timestamp(&mut self, tag: u32, t: UtcTimestamp, p: TimePrecision) -> &mut Self {
        let mut b = [0u8; 32];
        match self.timestamp(&mut b, t, p) {
            Some(n) => self.field_formatted(tag, &b[..n]),
            None => {
                self.error = Some("timestamp year outside 0..=9999");
                self
            }
        }
    }

    /// Writes BeginString, BodyLength and CheckSum and returns the complete
    /// message. Fails if any earlier call was given an unencodable field.
    pub fn finish(&mut self) -> Result<&[u8]> {
        if let Some(e) = self.error {
            return Err(Error::Build(e));
        }
        if !self.started {
            return Err(Error::Build("begin() was not called"));
        }
        self.started = false;
        let body_len = self.buf.len() - RESERVE;
        let bs = self.version.as_bytes();
        let mut lenbuf = [0u8; 20];
        let ln = format::uint(&mut lenbuf, body_len as u64);
        let prefix = 2 + bs.len() + 1 + 2 + ln + 1;
        let start = RESERVE - prefix;
        let p = &mut self.buf[start..RESERVE];
        p[..2].copy_from_slice(b"8=");
        p[2..2 + bs.len()].copy_from_slice(bs);
        let mut i = 2 + bs.len();
        p[i] = SOH;
        p[i + 1..i + 3].copy_from_slice(b"9=");
        i += 3;
        p[i..i + ln].copy_from_slice(&lenbuf[..ln]);
        p[i + ln] = SOH;
        let cs = checksum(&self.buf[start..]);
        self.buf.extend_from_slice(&[
            b'1',
            b'0',
            b'=',
            b'0' + cs / 100,
            b'0' + cs / 10 % 10,
            b'0' + cs % 10,
            SOH,
        ]);
        Ok(&self.buf[start..])
    }
}

#[cfg(test)]
mod tests;
