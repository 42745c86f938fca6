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
            // Nothing until the first bytes: a reserved buffer was
            // allocated only to be dropped by the first `read_from` (and
            // a framer is made for every line of a `|` input that fails
            // to parse whole).
            buf: Vec::new(),
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
        if self.buf.is_empty() {
            // The first room comes zeroed from the allocator (fresh pages
            // for a large one, which only the bytes read then touch),
            // where `resize` wrote all of it first: `fix check` of a small
            // file touched 256 KiB, some 60 page faults, to read a few.
            self.buf = vec![0; room];
        } else if self.buf.len() < room {
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
mod tests;
