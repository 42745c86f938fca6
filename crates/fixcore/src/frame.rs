//! [`Framer`]: splits a TCP byte stream into complete FIX messages.
//!
//! It tolerates partial reads (bytes may arrive one at a time), and when it
//! meets bytes that are not a message — garbage between messages, a frame
//! whose BodyLength does not land on a `10=ddd<SOH>` trailer — it reports
//! them once and resynchronises on the next `8=FIX`, so one bad frame never
//! costs the following good ones.
//!
//! A session connection cuts frames QuickFIX's way instead
//! ([`Framer::session_cut`]): a BodyLength that misses the trailer makes a
//! frame that runs to the next CheckSum field, returned for the parser to
//! refuse. A counterparty's session tests count on it: a BodyLength too
//! long swallows the next message (both must come again), and a Logon
//! with a bad BodyLength reaches the session, which ends the connection.
//!
//! The framer only finds boundaries; run [`Parser`](crate::parse::Parser)
//! on each frame to validate the checksum and fields.

use crate::parse::{BEGIN_STRING, parse_tag, valid_begin_string};
use crate::scan::SOH;
use crate::{Error, Result};
use std::io::Read;

/// Where a message starts: BeginString is always `FIX.x.y` or `FIXT.1.1`.
const MARKER: &[u8] = b"8=FIX";
/// Longest BeginString field accepted (`8=FIXT.1.1<SOH>` is 11 bytes).
const MAX_BEGIN: usize = 24;
/// Longest BodyLength field accepted (`9=` + 9 digits + SOH).
const MAX_LEN_FIELD: usize = 12;
/// `10=ddd<SOH>`.
const TRAILER: usize = 7;

/// Whether `msg` ends in a CheckSum(10) field whose value (digits as
/// QuickFIX reads them, any count) is the sum of the bytes before that
/// field, modulo 256.
pub fn checksum_matches(msg: &[u8]) -> bool {
    let Some(body) = msg.strip_suffix(b"\x01") else {
        return false;
    };
    let at = body.iter().rposition(|&b| b == 1).map_or(0, |p| p + 1);
    let Some(sum) = body[at..].strip_prefix(b"10=") else {
        return false;
    };
    crate::value::parse_uint(sum) == Some(u64::from(crate::parse::checksum(&msg[..at])))
}

/// Whether `msg` is one whole FIX message as a writer makes it: it starts
/// with `8=`, ends with `10=NNN` and SOH (exactly three digits), and its
/// CheckSum holds ([`checksum_matches`]).
pub fn checksum_holds(msg: &[u8]) -> bool {
    msg.starts_with(b"8=")
        && msg.len() >= 2 + TRAILER
        && msg[msg.len() - TRAILER - 1] == 1
        && msg[msg.len() - TRAILER..].starts_with(b"10=")
        && checksum_matches(msg)
}

/// Incremental stream framer. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Framer {
    /// `buf[head..end]` is received and not yet framed. Bytes past `end`
    /// are initialised but stale: kept so that a read does not zero its
    /// room again each time (that was a memset of every byte read).
    buf: Vec<u8>,
    head: usize,
    end: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    max_message: usize,
    /// QuickFIX's cut (see [`Framer::session_cut`]).
    session_cut: bool,
}

enum Header {
    NeedMore,
    Bad(Error),
    Total(usize),
}

impl Framer {
    /// A framer rejecting messages longer than `max_message` bytes.
    pub fn new(max_message: usize) -> Framer {
        Framer {
            buf: Vec::with_capacity(max_message.clamp(256, 1 << 20) * 2),
            head: 0,
            end: 0,
            base: 0,
            max_message: max_message.max(64),
            session_cut: false,
        }
    }

    /// This framer, cutting as QuickFIX's session parser does when the
    /// trailer is not where BodyLength says: the frame runs from its
    /// BeginString to the end of the first `10=` field that starts at or
    /// after the declared end (the SOH before it included), and is
    /// returned as a frame, its BodyLength wrong. So a BodyLength too long
    /// takes the next message into the frame with it, and a session sees
    /// (and can answer) a message whose length is wrong.
    pub fn session_cut(mut self) -> Framer {
        self.session_cut = true;
        self
    }

    /// Bytes received but not yet returned as frames or skipped.
    pub fn buffered(&self) -> usize {
        self.end - self.head
    }

    /// Stream offset of the next byte to be framed.
    pub fn position(&self) -> u64 {
        self.base + self.head as u64
    }

    fn compact(&mut self) {
        if self.head > 0 && (self.head * 2 >= self.end || self.head >= 1 << 16) {
            self.buf.copy_within(self.head..self.end, 0);
            self.end -= self.head;
            self.base += self.head as u64;
            self.head = 0;
        }
    }

    /// The bytes received but not yet returned as frames or skipped.
    pub fn pending(&self) -> &[u8] {
        &self.buf[self.head..self.end]
    }

    /// Drops the next `n` buffered bytes (all of them, if fewer are
    /// buffered) without framing them: for a reader that has recognised
    /// them itself, such as the line breaks between the messages of a log.
    pub fn skip(&mut self, n: usize) {
        self.head += n.min(self.buffered());
    }

    /// The bytes received but not yet returned as frames or skipped, as a
    /// vector (the framer's own buffer, so nothing is copied when no frame
    /// was taken yet): for a reader that decides after a first read to
    /// handle the input otherwise.
    pub fn into_pending(mut self) -> Vec<u8> {
        self.buf.truncate(self.end);
        self.buf.drain(..self.head);
        self.buf
    }

    /// The buffered bytes from stream offset `from` on, consumed or not, or
    /// `None` when some of them were already dropped. Bytes consumed by
    /// [`next_frame`](Framer::next_frame) stay buffered until the next
    /// [`push`](Framer::push) or [`read_from`](Framer::read_from), so a
    /// caller can look back at what a frame or a skip covered.
    pub fn bytes_from(&self, from: u64) -> Option<&[u8]> {
        let i = usize::try_from(from.checked_sub(self.base)?).ok()?;
        self.buf[..self.end].get(i..)
    }

    /// Appends received bytes.
    pub fn push(&mut self, data: &[u8]) {
        self.compact();
        self.buf.truncate(self.end);
        self.buf.extend_from_slice(data);
        self.end = self.buf.len();
    }

    /// Reads once from `r` straight into the buffer (up to `max` bytes);
    /// returns what `read` returned (0 at end of stream).
    pub fn read_from<R: Read>(&mut self, r: &mut R, max: usize) -> std::io::Result<usize> {
        self.compact();
        let room = self.end + max;
        if self.buf.len() < room {
            self.buf.resize(room, 0);
        }
        // A reader claiming more than it was given is wrong; taking its
        // word would frame stale bytes.
        let n = r.read(&mut self.buf[self.end..room])?.min(max);
        self.end += n;
        Ok(n)
    }

    /// The next complete frame, an error describing skipped bytes, or `None`
    /// when more input is needed.
    #[allow(clippy::should_implement_trait)]
    pub fn next_frame(&mut self) -> Option<Result<&[u8]>> {
        let data = &self.buf[self.head..self.end];
        if data.is_empty() {
            return None;
        }
        let pos = self.position();
        if !data.starts_with(MARKER) {
            if MARKER.starts_with(data) {
                return None;
            }
            let skipped = self.skip_to_marker(1);
            return if skipped == 0 {
                None
            } else {
                Some(Err(Error::Garbage { pos, skipped }))
            };
        }
        match self.header(data) {
            Header::NeedMore => None,
            Header::Bad(e) => {
                self.skip_to_marker(1);
                Some(Err(Error::BadFrame {
                    pos,
                    reason: Box::new(e),
                }))
            }
            Header::Total(total) => {
                let start = self.head;
                self.head += total;
                Some(Ok(&self.buf[start..start + total]))
            }
        }
    }

    /// Parses `8=...<SOH>9=<n><SOH>` and checks the trailer lands where
    /// BodyLength says.
    fn header(&self, data: &[u8]) -> Header {
        let (s1, s2, body) = match usual_header(data) {
            Some(found) => {
                // The fuzz target and the tests run with this on.
                debug_assert_eq!(any_header(data).ok(), Some(found));
                found
            }
            None => match any_header(data) {
                Ok(found) => found,
                Err(verdict) => return verdict,
            },
        };
        let head_len = s1 + 1 + s2 + 1;
        let total = head_len as u64 + body + TRAILER as u64;
        if total > self.max_message as u64 {
            return Header::Bad(Error::BodyLengthTooLarge {
                pos: s1 + 1,
                declared: body,
                limit: self.max_message,
            });
        }
        let total = total as usize;
        if data.len() < total {
            return Header::NeedMore;
        }
        if !is_trailer(&data[total - TRAILER..total]) && self.session_cut {
            return self.cut_at_next_checksum(data, total - TRAILER - 1, s1 + 1, body as usize);
        }
        if !is_trailer(&data[total - TRAILER..total]) {
            // Report the body's real length: up to the first CheckSum field
            // after the header, if one is buffered (tag 10 appears nowhere
            // else, and a value cannot hold the SOH before it). The search
            // stops at the size limit.
            let end = data.len().min(head_len + self.max_message);
            let reason = match find_trailer(&data[head_len..end]) {
                Some(actual) => Error::BodyLength {
                    pos: s1 + 1,
                    declared: body as usize,
                    actual,
                },
                None => Error::BodyLengthNoTrailer {
                    pos: s1 + 1,
                    declared: body as usize,
                },
            };
            return Header::Bad(reason);
        }
        Header::Total(total)
    }

    /// QuickFIX's cut: the frame ends after the first `<SOH>10=...<SOH>`
    /// at or after `from` (the byte before where the trailer should be);
    /// `pos` and `declared` are the BodyLength field's, for the error when
    /// no CheckSum comes within the size limit.
    fn cut_at_next_checksum(
        &self,
        data: &[u8],
        from: usize,
        pos: usize,
        declared: usize,
    ) -> Header {
        let end = data.len().min(self.max_message);
        let found = data[from..end]
            .windows(4)
            .position(|w| w == b"\x0110=")
            .map(|p| from + p + 4)
            .and_then(|v| {
                data[v..end]
                    .iter()
                    .position(|&b| b == SOH)
                    .map(|e| v + e + 1)
            });
        match found {
            Some(total) => Header::Total(total),
            None if data.len() < self.max_message => Header::NeedMore,
            None => Header::Bad(Error::BodyLengthNoTrailer { pos, declared }),
        }
    }

    /// Advances past `from` bytes and then to the next marker (or, if none is
    /// buffered, to the longest tail that could begin one). Returns bytes
    /// skipped.
    fn skip_to_marker(&mut self, from: usize) -> usize {
        let data = &self.buf[self.head..self.end];
        let from = from.min(data.len());
        let found = data[from..]
            .windows(MARKER.len())
            .position(|w| w == MARKER)
            .map(|p| p + from);
        let skip = match found {
            Some(p) => p,
            None => {
                // Keep a tail that may be the start of a marker split across reads.
                let keep = (1..MARKER.len())
                    .rev()
                    .find(|&k| k <= data.len() - from && data.ends_with(&MARKER[..k]))
                    .unwrap_or(0);
                data.len() - keep
            }
        };
        self.head += skip;
        skip
    }
}

/// The header of the usual message, `8=FIX.d.d` or `8=FIXT.d.d`, then
/// `9=` and 1 to 9 digits and their SOH, all buffered: the first SOH's
/// offset, the second's from the one after the first, and BodyLength.
/// Found by tests at fixed places instead of two searches byte by byte
/// (a fifth of the framing of a stream); `None` for anything else, which
/// [`any_header`] then decides. A valid BeginString holds no SOH, so the
/// offsets are those the searches find.
#[inline(always)]
fn usual_header(data: &[u8]) -> Option<(usize, usize, u64)> {
    let digit = |b: u8| b.is_ascii_digit();
    let s1 = match data.get(..11)? {
        [b'8', b'=', b'F', b'I', b'X', b'.', a, b'.', b, SOH, _] if digit(*a) && digit(*b) => 9,
        [b'8', b'=', b'F', b'I', b'X', b'T', b'.', a, b'.', b, SOH] if digit(*a) && digit(*b) => 10,
        _ => return None,
    };
    let rest = data.get(s1 + 1..)?.strip_prefix(b"9=")?;
    let mut body = 0u64;
    // At most MAX_LEN_FIELD - 3 digits, so their SOH is within the
    // MAX_LEN_FIELD bytes the search looks at (and the value fits).
    for (k, &b) in rest.iter().take(MAX_LEN_FIELD - 2).enumerate() {
        if b == SOH {
            return (k > 0).then_some((s1, k + 2, body));
        }
        if !digit(b) {
            return None;
        }
        body = body * 10 + u64::from(b - b'0');
    }
    None
}

/// [`Framer::header`]'s search for the first two fields of any buffered
/// bytes starting with the marker: their offsets and BodyLength as
/// [`usual_header`] returns them, or the verdict on bytes whose first two
/// fields are not (yet) a BeginString and a BodyLength.
fn any_header(data: &[u8]) -> std::result::Result<(usize, usize, u64), Header> {
    let Some(s1) = data.iter().take(MAX_BEGIN).position(|&b| b == SOH) else {
        return Err(if data.len() < MAX_BEGIN {
            Header::NeedMore
        } else {
            Header::Bad(Error::Truncated {
                pos: MAX_BEGIN,
                what: "BeginString(8) is not terminated",
            })
        });
    };
    // Rejecting anything else lets a marker that happens to sit inside
    // garbage be told apart from a real message start.
    if !valid_begin_string(&data[2..s1]) {
        return Err(Header::Bad(Error::BadValue {
            tag: 8,
            pos: 2,
            expected: BEGIN_STRING,
        }));
    }
    let rest = &data[s1 + 1..];
    let Some(s2) = rest.iter().take(MAX_LEN_FIELD).position(|&b| b == SOH) else {
        return Err(unterminated_second_field(rest, s1 + 1));
    };
    let field = &rest[..s2];
    let Some(digits) = field.strip_prefix(b"9=") else {
        return Err(Header::Bad(not_body_length(field, true, s1 + 1)));
    };
    let Some(body) = crate::value::parse_uint(digits) else {
        return Err(Header::Bad(Error::BadValue {
            tag: 9,
            pos: s1 + 3,
            expected: "Length",
        }));
    };
    Ok((s1, s2, body))
}

/// Whether `t` (7 bytes) is `10=ddd<SOH>`.
#[inline]
fn is_trailer(t: &[u8]) -> bool {
    t.len() == TRAILER
        && t.starts_with(b"10=")
        && t[3..6].iter().all(u8::is_ascii_digit)
        && t[6] == SOH
}

/// Offset in `body` of the first field that is a complete `10=ddd<SOH>`
/// trailer (at the start or just after an SOH).
fn find_trailer(body: &[u8]) -> Option<usize> {
    if body.len() >= TRAILER && is_trailer(&body[..TRAILER]) {
        return Some(0);
    }
    body.windows(TRAILER + 1)
        .position(|w| w[0] == SOH && is_trailer(&w[1..]))
        .map(|p| p + 1)
}

/// The verdict on a second field (at `pos`) whose bytes received so far,
/// `rest`, hold no SOH within MAX_LEN_FIELD. It is given only once the
/// bytes every split of the stream into reads must deliver have settled it,
/// so a stream gets the same error however it arrives.
fn unterminated_second_field(rest: &[u8], pos: usize) -> Header {
    let full = rest.len() >= MAX_LEN_FIELD;
    if rest.starts_with(b"9=") || b"9=".starts_with(rest) {
        // Still a BodyLength until MAX_LEN_FIELD bytes pass without its SOH;
        // then its value is too long to be one, and naming tag 9 as out of
        // order would be wrong.
        return if full {
            Header::Bad(Error::BadValue {
                tag: 9,
                pos: pos + 2,
                expected: "Length",
            })
        } else {
            Header::NeedMore
        };
    }
    // A '=' within the first 10 bytes fixes the tag whatever follows. Before
    // one, the next bytes can still change the verdict ("35" becomes tag 35,
    // "95<SOH>" has no '=', "x9=" is a bad tag), but only until MAX_LEN_FIELD
    // bytes are in, which bounds the wait.
    if full || rest.iter().take(10).any(|&b| b == b'=') {
        Header::Bad(not_body_length(rest, false, pos))
    } else {
        Header::NeedMore
    }
}

/// Why the second field at `pos` is not a BodyLength(9): the tag it has
/// instead, or what makes it no field at all. `field` is the whole field
/// when `complete`, else its first bytes, enough to decide (see
/// [`unterminated_second_field`]).
fn not_body_length(field: &[u8], complete: bool, pos: usize) -> Error {
    // A tag has at most 9 digits, so its '=' is within the first 10 bytes.
    let Some(eq) = field.iter().take(10).position(|&b| b == b'=') else {
        return if complete && !field.contains(&b'=') {
            Error::MissingEquals { pos }
        } else {
            Error::BadTag { pos }
        };
    };
    match parse_tag(&field[..eq]) {
        Ok(tag) => Error::FieldOrder {
            pos,
            tag,
            why: "BodyLength(9) must follow BeginString(8)",
        },
        Err(true) => Error::EmptyTag { pos },
        Err(false) => Error::BadTag { pos },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn msg(body: &str) -> Vec<u8> {
        let body = body.replace('|', "\x01");
        let mut m = format!("8=FIX.4.4\x019={}\x01{}", body.len(), body).into_bytes();
        let sum: u32 = m.iter().map(|&b| u32::from(b)).sum();
        m.extend_from_slice(format!("10={:03}\x01", sum % 256).as_bytes());
        m
    }

    #[test]
    fn the_session_cut_runs_a_bad_length_to_the_next_checksum() {
        let a = msg("35=0|34=2|49=TW|56=ISLD|");
        let b = msg("35=0|34=3|49=TW|56=ISLD|");
        let long = String::from_utf8(a.clone())
            .unwrap()
            .replacen("9=24", "9=40", 1)
            .into_bytes();
        let short = String::from_utf8(a.clone())
            .unwrap()
            .replacen("9=24", "9=10", 1)
            .into_bytes();
        for split in [1, 7, usize::MAX] {
            let frames = |first: &[u8]| {
                let mut f = Framer::new(1 << 16).session_cut();
                let stream = [first, &b[..], &a[..]].concat();
                let mut out = Vec::new();
                for chunk in stream.chunks(split.min(stream.len())) {
                    f.push(chunk);
                    while let Some(r) = f.next_frame() {
                        out.push(r.unwrap().to_vec());
                    }
                }
                out
            };
            // Too long: the next message goes with it; QuickFIX's
            // 2m_BodyLengthValueNotCorrect counts on losing both.
            assert_eq!(frames(&long), [[&long[..], &b[..]].concat(), a.clone()]);
            // Too short: the frame is the message itself, length and all.
            assert_eq!(frames(&short), [short.clone(), b.clone(), a.clone()]);
        }
        // The default framer skips the bad frame and keeps the next.
        let (frames, errs) = run(&[&long, &b]);
        assert_eq!((frames, errs.len()), (vec![b.clone()], 1));
    }

    /// Drives a framer over `chunks`; returns Ok frames and error count.
    fn run(chunks: &[&[u8]]) -> (Vec<Vec<u8>>, Vec<String>) {
        let mut f = Framer::new(1 << 16);
        let mut frames = Vec::new();
        let mut errs = Vec::new();
        for c in chunks {
            f.push(c);
            while let Some(r) = f.next_frame() {
                match r {
                    Ok(m) => frames.push(m.to_vec()),
                    Err(e) => errs.push(e.to_string()),
                }
            }
        }
        (frames, errs)
    }

    /// Hands out `data` in reads of the sizes of `sizes`, in turn.
    struct Reads<'a> {
        data: &'a [u8],
        sizes: std::iter::Cycle<std::slice::Iter<'a, usize>>,
    }

    impl Read for Reads<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = (*self.sizes.next().unwrap())
                .min(buf.len())
                .min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// A read's room is not cleared between reads (nor is what a frame
    /// left behind), so a short read after a long one leaves stale bytes
    /// past the new ones: none may reach a frame, a skip or `pending`,
    /// whatever the reads, the pushes between them and the garbage.
    #[test]
    fn reads_into_reused_room_frame_only_what_was_read() {
        let a = msg("35=D|55=MSFT|38=100|");
        let b = msg("35=8|58=x=8=FIX|");
        let stream = [
            &a[..],
            b"\n",
            &b[..],
            b"junk",
            &a[..],
            b"\n\n",
            &b[..],
            b"8=FI",
        ]
        .concat();
        for sizes in [&[4096][..], &[97, 3, 40, 1], &[60, 200, 7]] {
            let mut f = Framer::new(64);
            let mut r = Reads {
                data: &stream,
                sizes: sizes.iter().cycle(),
            };
            let (mut frames, mut skipped) = (Vec::new(), 0);
            loop {
                let n = f.read_from(&mut r, 256).unwrap();
                while let Some(got) = f.next_frame() {
                    match got {
                        Ok(m) => frames.push(m.to_vec()),
                        Err(Error::Garbage { skipped: k, .. }) => skipped += k,
                        Err(e) => panic!("{sizes:?}: {e}"),
                    }
                }
                if n == 0 {
                    break;
                }
            }
            assert_eq!(frames, [&a[..], &b, &a, &b], "{sizes:?}");
            // The line breaks and the junk; the partial marker is kept.
            assert_eq!(
                (skipped, f.pending()),
                (1 + 4 + 2, &b"8=FI"[..]),
                "{sizes:?}"
            );
            // A push after reads appends to what was read, not to the room.
            f.push(&a[4..]);
            assert_eq!(f.next_frame().unwrap().unwrap(), &a[..], "{sizes:?}");
            assert_eq!(f.into_pending(), b"", "{sizes:?}");
        }
    }

    #[test]
    fn frames_byte_at_a_time() {
        let a = msg("35=D|55=MSFT|38=100|");
        let b = msg("35=8|58=x=8=FIX|");
        let stream = [a.clone(), b.clone()].concat();
        let chunks: Vec<&[u8]> = stream.chunks(1).collect();
        let (frames, errs) = run(&chunks);
        assert_eq!(frames, vec![a, b]);
        assert!(errs.is_empty(), "{errs:?}");
    }

    /// The framer goes by BodyLength, so a data field (RawData(96)) whose
    /// value holds SOH, a CheckSum-like field and a BeginString frames
    /// whole, however the stream is split, and parses.
    #[test]
    fn data_fields_holding_delimiters_frame_whole() {
        let a = msg("35=D|95=18|96=x|10=000|8=FIX.4.4|55=A|");
        let b = msg("35=D|55=B|");
        let stream = [a.clone(), b.clone(), a.clone()].concat();
        for size in [1, 5, 19, stream.len()] {
            let chunks: Vec<&[u8]> = stream.chunks(size).collect();
            let (frames, errs) = run(&chunks);
            assert_eq!(frames, vec![a.clone(), b.clone(), a.clone()], "{size}");
            assert!(errs.is_empty(), "{errs:?}");
        }
        let mut p = crate::parse::Parser::new();
        let m = p.parse(&a).unwrap();
        assert_eq!(m.get(96), Some(&b"x\x0110=000\x018=FIX.4.4"[..]));
    }

    #[test]
    fn garbage_between_messages_is_reported_and_sync_kept() {
        let a = msg("35=D|55=A|");
        let b = msg("35=D|55=B|");
        let stream = [
            &a[..],
            b"GARBAGE\x01\x01==",
            &b[..],
            b"junk8=FI",
            b"X",
            &a[..],
        ]
        .concat();
        for size in [1, 3, 7, 64, stream.len()] {
            let chunks: Vec<&[u8]> = stream.chunks(size).collect();
            let (frames, errs) = run(&chunks);
            assert_eq!(
                frames,
                vec![a.clone(), b.clone(), a.clone()],
                "chunk size {size}"
            );
            assert!(!errs.is_empty());
            assert!(
                errs.iter()
                    .all(|e| e.contains("garbage") || e.contains("bad frame")),
                "{errs:?}"
            );
        }
    }

    #[test]
    fn wrong_body_length_is_skipped_without_losing_the_next_message() {
        let good = msg("35=D|55=A|");
        let bad = String::from_utf8(msg("35=D|55=LONGER|"))
            .unwrap()
            .replace("9=15", "9=99");
        let stream = [bad.as_bytes(), &good[..], &good[..], &good[..], &good[..]].concat();
        let (frames, errs) = run(&[&stream]);
        assert!(frames.len() >= 3, "{} frames, errs {errs:?}", frames.len());
        assert!(frames.iter().all(|f| *f == good));
        // "35=D|55=LONGER|" is 15 bytes, counted by hand.
        assert_eq!(
            errs[0],
            "bad frame at stream byte 0: BodyLength(9) at byte 10 says 99, body is 15 bytes"
        );
    }

    #[test]
    fn body_length_errors_report_the_real_length() {
        let good = msg("35=D|55=A|");
        // Too short: the trailer BodyLength points at lies inside the body.
        let short = String::from_utf8(msg("35=D|55=LONGER|"))
            .unwrap()
            .replace("9=15", "9=5");
        let (frames, errs) = run(&[short.as_bytes(), &good[..]]);
        assert_eq!(frames, vec![good.clone()]);
        assert_eq!(
            errs[0],
            "bad frame at stream byte 0: BodyLength(9) at byte 10 says 5, body is 15 bytes"
        );
        // No CheckSum field anywhere after the header.
        let none = b"8=FIX.4.4\x019=5\x0135=D\x0155=NO-TRAILER-HERE\x01";
        let (frames, errs) = run(&[&none[..]]);
        assert!(frames.is_empty());
        assert_eq!(
            errs[0],
            "bad frame at stream byte 0: BodyLength(9) at byte 10 says 5, \
             but no CheckSum(10) field ends the body there or later in the bytes received"
        );
    }

    #[test]
    fn oversized_and_malformed_headers() {
        let (frames, errs) = run(&[b"8=FIX.4.4\x019=999999999\x0135=D\x01"]);
        assert!(frames.is_empty());
        assert!(
            errs[0].contains(
                "BodyLength(9) at byte 10 says 999999999: the message would run past the"
            ),
            "{errs:?}"
        );
        // The second field is not BodyLength(9): the error names what is
        // there instead (a tag, or why it is no field).
        const BAD_TAG: &str = "bad tag at byte 10: not 1-9 digits without a leading zero";
        for (stream, want) in [
            (
                &b"8=FIX.4.4\x0135=D\x019=5\x01"[..],
                "field order: tag 35 at byte 10: BodyLength(9) must follow BeginString(8)",
            ),
            (
                // Longer than any BodyLength field: judged on its first bytes.
                b"8=FIX.4.4\x01123456789=ABCDEFGH\x01",
                "field order: tag 123456789 at byte 10: BodyLength(9) must follow BeginString(8)",
            ),
            (b"8=FIX.4.4\x011234567890123=D\x01", BAD_TAG),
            (b"8=FIX.4.4\x01=5\x01", "empty tag at byte 10"),
            (b"8=FIX.4.4\x01x9=5\x01", BAD_TAG),
            (b"8=FIX.4.4\x0195\x01", "field at byte 10 has no '='"),
            (
                b"8=FIX.4.4\x011234567890\x01",
                "field at byte 10 has no '='",
            ),
            (b"8=FIX.4.4\x011234567890=\x01", BAD_TAG),
            (b"8=FIX.4.4\x0112345678901=5\x01", BAD_TAG),
            (b"8=FIX.4.4\x019x=5\x01", BAD_TAG),
            (b"8=FIX.4.4\x010=5\x01", BAD_TAG),
            (
                b"8=FIX.4.4\x019=1234567890\x01",
                "tag 9 at byte 12: value is not a valid Length",
            ),
        ] {
            // The verdict is a property of the stream, not of how it was
            // split into reads: every chunk size, down to one byte at a time
            // as in `frames_byte_at_a_time`, must give the same error.
            for size in 1..=stream.len() {
                let chunks: Vec<&[u8]> = stream.chunks(size).collect();
                let (frames, errs) = run(&chunks);
                assert!(frames.is_empty());
                assert_eq!(
                    errs.first().map(String::as_str),
                    Some(&*format!("bad frame at stream byte 0: {want}")),
                    "stream {:?} in chunks of {size}",
                    String::from_utf8_lossy(stream)
                );
            }
        }
        // The reported split: tag 35 arriving as "3" then "5=D".
        let (frames, errs) = run(&[b"8=FIX.4.4\x013", b"5=D\x019=5\x01"]);
        assert!(frames.is_empty());
        assert_eq!(
            errs[0],
            "bad frame at stream byte 0: field order: tag 35 at byte 10: \
             BodyLength(9) must follow BeginString(8)"
        );
    }

    #[test]
    fn fuzz_body_over_seeds() {
        for s in crate::parse::tests::seeds() {
            crate::fuzzing::frame_stream(&s);
            crate::fuzzing::frame_stream(&[s.clone(), b"xx".to_vec(), s].concat());
        }
    }

    proptest! {
        /// Oracle: whatever garbage (free of the marker) is interleaved and
        /// however the stream is chopped, every good message comes out intact
        /// and in order.
        #[test]
        fn good_messages_survive_garbage_and_chopping(
            bodies in proptest::collection::vec("[A-Z]{1,30}", 1..8),
            garbage in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 8),
            chunk in 1usize..50,
        ) {
            let msgs: Vec<Vec<u8>> = bodies.iter().map(|b| msg(&format!("35=D|58={b}|"))).collect();
            let mut stream = Vec::new();
            for (m, g) in msgs.iter().zip(&garbage) {
                let g: Vec<u8> = g.iter().map(|&b| if b == b'8' { b'7' } else { b }).collect();
                stream.extend_from_slice(&g);
                stream.extend_from_slice(m);
            }
            let chunks: Vec<&[u8]> = stream.chunks(chunk).collect();
            let (frames, _) = run(&chunks);
            prop_assert_eq!(frames, msgs);
        }
    }
}
