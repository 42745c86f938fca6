//! Finding the messages of a FIX input (a file, a pipe, a capture) in
//! bounded chunks, around [`Framer`].
//!
//! Input whose first chunk holds an SOH byte is a byte stream (a capture, or
//! a log with one message per line, prefixes allowed): the framer splits
//! it by BodyLength, whatever line breaks it has. Input without SOH there is
//! the `|` form, one message per line: a line that starts with
//! `8=` is parsed whole, so its errors are the parser's; any other line
//! (a log's prefix before a message, or no message at all), a line
//! holding several messages, and one with bytes after its message's
//! CheckSum, is framed as the byte stream is.
//!
//! Memory stays bounded whatever the input: the stream is read 256 KiB at a
//! time, a message is at most [`MAX_MESSAGE`] bytes and a line at most
//! [`MAX_LINE`]; longer ones are reported and skipped, not buffered.
//!
//! What is found goes to a [`Sink`], in input order: it decides what a
//! valid message is (usually [`Parser`]'s verdict) and what to do with the
//! problems, each with its [`Origin`].
//!
//! ```
//! use fixcore::input::{Origin, ReadError, Sink, each_message};
//! use fixcore::parse::Parser;
//!
//! #[derive(Default)]
//! struct Count {
//!     parser: Parser,
//!     valid: usize,
//!     problems: Vec<(Origin, String)>,
//! }
//!
//! impl Sink for &mut Count {
//!     type Error = ReadError;
//!     fn message(&mut self, bytes: &[u8]) -> Result<Option<String>, ReadError> {
//!         Ok(match self.parser.parse(bytes) {
//!             Ok(_) => {
//!                 self.valid += 1;
//!                 None
//!             }
//!             Err(e) => Some(e.to_string()),
//!         })
//!     }
//!     fn problem(&mut self, origin: Origin, why: &str) -> Result<(), ReadError> {
//!         self.problems.push((origin, why.to_owned()));
//!         Ok(())
//!     }
//! }
//!
//! // The `|` form: one message per line, a stray line between them.
//! let input = "8=FIX.4.4|9=5|35=0|10=163|\nnot a message\n8=FIX.4.4|9=5|35=0|10=163|\n";
//! let mut count = Count::default();
//! each_message(input.as_bytes(), "the example", &mut count).unwrap();
//! assert_eq!(count.valid, 2);
//! assert_eq!(count.problems.len(), 1);
//! assert_eq!(count.problems[0].0, Origin::Line(2));
//! assert_eq!(count.problems[0].1, "garbage: 13 bytes that are not a FIX message, skipped");
//! ```

use std::io::{self, ErrorKind, Read};

use crate::Error;
use crate::frame::Framer;
use crate::parse::Parser;

/// Bytes asked of each `read`.
const CHUNK: usize = 256 << 10;
/// Longest message the framer accepts.
pub const MAX_MESSAGE: usize = 1 << 20;
/// Longest `|`-separated line accepted.
pub const MAX_LINE: usize = 1 << 20;

/// Where a message came from, for messages about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The start of a line (1-based).
    Line(usize),
    /// Inside a line: the line and the byte offset in the input.
    LineOffset(usize, u64),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Line(l) => write!(f, "line {l}"),
            Origin::LineOffset(l, o) => write!(f, "line {l}, offset {o}"),
        }
    }
}

impl Origin {
    /// The line (1-based).
    pub fn line(self) -> usize {
        match self {
            Origin::Line(l) | Origin::LineOffset(l, _) => l,
        }
    }

    /// The byte offset in the input, for an origin inside a line.
    pub fn offset(self) -> Option<u64> {
        match self {
            Origin::Line(_) => None,
            Origin::LineOffset(_, o) => Some(o),
        }
    }
}

/// A read of the input failed: the input's name (as given to
/// [`each_message`]) and the I/O error.
#[derive(Debug, thiserror::Error)]
#[error("reading {name}")]
pub struct ReadError {
    /// The input's name.
    pub name: String,
    /// Why the read failed.
    #[source]
    pub source: io::Error,
}

/// Where the messages and problems of an input go, in input order.
pub trait Sink {
    /// What stops the reading: the sink's own errors, and a failed read.
    type Error: From<ReadError>;
    /// A message's bytes (SOH separated, not yet validated). Returns why it
    /// is invalid, if it is; that is then reported through
    /// [`problem`](Sink::problem) with its origin, which is only worked out
    /// for the messages that need one. A message called invalid must
    /// leave no trace in the sink: the bytes of a line holding several
    /// messages are handed over whole first, then framed.
    fn message(&mut self, bytes: &[u8]) -> Result<Option<String>, Self::Error>;
    /// Bytes at `origin` that are not a valid message, and why.
    fn problem(&mut self, origin: Origin, why: &str) -> Result<(), Self::Error>;
}

/// Reads `r` to its end in bounded chunks and hands `sink` every message
/// and problem, in input order, as it is met. `sink`'s error stops
/// the reading and is returned; so is a read error ([`ReadError`], with
/// `name` in it).
pub fn each_message<R: Read, S: Sink>(mut r: R, name: &str, mut sink: S) -> Result<(), S::Error> {
    let mut framer = Framer::new(MAX_MESSAGE);
    let mut eof = false;
    // The first chunk decides the form, so read until it is full.
    while framer.buffered() < CHUNK && !eof {
        eof = read_some(&mut framer, &mut r, name)?;
    }
    if memchr::memchr(1, framer.pending()).is_some() {
        let mut s = Stream::new(0, 1, 0);
        loop {
            s.drain(&mut framer, eof, &mut sink)?;
            if eof {
                return Ok(());
            }
            s.count_to(&framer, framer.position());
            eof = read_some(&mut framer, &mut r, name)?;
        }
    }
    each_line(framer.into_pending(), eof, r, name, &mut sink)
}

/// One `read` into the framer; returns whether the input has ended.
fn read_some<R: Read>(framer: &mut Framer, r: &mut R, name: &str) -> Result<bool, ReadError> {
    loop {
        match framer.read_from(r, CHUNK) {
            Ok(n) => return Ok(n == 0),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(ReadError {
                    name: name.to_owned(),
                    source,
                });
            }
        }
    }
}

/// The framing side: line numbers of framer positions, and garbage
/// stretches merged across reads so one stretch is one report.
struct Stream {
    /// Added to framer positions to give input offsets.
    base: u64,
    /// Framer position up to which line breaks are counted.
    counted: u64,
    /// The line holding `counted` (1-based).
    line: usize,
    /// Framer position where that line starts.
    line_start: u64,
    /// A garbage stretch not yet reported.
    garbage: Option<Stretch>,
}

/// Bytes between messages that are not a message.
struct Stretch {
    /// Where its first visible byte is.
    origin: Origin,
    /// Its length from there.
    len: u64,
    /// How many of its last bytes are white space (the line break before
    /// the next message is no part of what is reported).
    blank_tail: u64,
    /// Whether it may be a log line's prefix (a timestamp, a direction): it
    /// starts a line and holds no line break and no SOH. A prefix that the
    /// next message follows on the same line is part of the log's format,
    /// not a problem; anything else is reported.
    prefix: bool,
}

impl Stretch {
    fn report<S: Sink>(self, sink: &mut S) -> Result<(), S::Error> {
        sink.problem(self.origin, &garbage(self.len - self.blank_tail))
    }
}

/// How many of `bytes`' last bytes are white space (0 when they are no
/// longer buffered).
fn blank_tail(bytes: Option<&[u8]>) -> u64 {
    bytes.map_or(0, |b| {
        b.iter()
            .rev()
            .take_while(|c| c.is_ascii_whitespace())
            .count() as u64
    })
}

/// Whether `bytes` (`None`: no longer buffered) can be part of a log line's
/// prefix: no line break, no SOH.
fn prefix_bytes(bytes: Option<&[u8]>) -> bool {
    bytes.is_some_and(|b| memchr::memchr2(b'\n', 1, b).is_none())
}

impl Stream {
    fn new(base: u64, line: usize, line_start: u64) -> Stream {
        Stream {
            base,
            counted: 0,
            line,
            line_start,
            garbage: None,
        }
    }

    /// Counts the line breaks from `counted` to framer position `to`.
    fn count_to(&mut self, framer: &Framer, to: u64) {
        if to <= self.counted {
            return;
        }
        let Some(bytes) = framer.bytes_from(self.counted) else {
            return;
        };
        let span = &bytes[..usize::try_from(to - self.counted).unwrap_or(bytes.len())];
        let breaks = crate::scan::count_byte(span, b'\n');
        if breaks > 0 {
            self.line += breaks;
            let last = memchr::memrchr(b'\n', span).unwrap_or(0);
            self.line_start = self.counted + last as u64 + 1;
        }
        self.counted = to;
    }

    /// The origin of framer position `at` (line breaks counted up to it).
    fn origin(&mut self, framer: &Framer, at: u64) -> Origin {
        self.count_to(framer, at);
        if at == self.line_start {
            Origin::Line(self.line)
        } else {
            Origin::LineOffset(self.line, self.base + at)
        }
    }

    /// Reports the pending garbage stretch, if any.
    fn flush_garbage<S: Sink>(&mut self, sink: &mut S) -> Result<(), S::Error> {
        match self.garbage.take() {
            Some(g) => g.report(sink),
            None => Ok(()),
        }
    }

    /// Hands every complete frame (and every problem) buffered in `framer`
    /// to `sink`; at `eof`, also what is left over.
    fn drain<S: Sink>(
        &mut self,
        framer: &mut Framer,
        eof: bool,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        loop {
            let at = framer.position();
            // Line breaks and blanks before stray bytes are not part of
            // them: a stretch is reported from its first visible byte.
            let lead = framer
                .pending()
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
            if lead > 0 && self.garbage.is_none() {
                // The line break after each message of a log: the framer
                // would search it for a message start and call it a
                // stretch of garbage that is then not reported, a second
                // `next_frame` per message. Dropped here, which changes
                // no report: a stretch after it starts at its end anyway.
                framer.skip(lead);
                continue;
            }
            let lead = lead as u64;
            match framer.next_frame() {
                Some(Ok(frame)) => {
                    if let Some(g) = self.garbage.take()
                        && !g.prefix
                    {
                        g.report(sink)?;
                    }
                    // Line breaks are only counted for the messages that
                    // need an origin (and in bulk before each read).
                    if let Some(why) = sink.message(frame)? {
                        let origin = self.origin(framer, at);
                        sink.problem(origin, &why)?;
                    }
                }
                Some(Err(Error::Garbage { skipped, .. })) => {
                    let skipped = skipped as u64;
                    let span = |from: u64| {
                        framer
                            .bytes_from(from)
                            .and_then(|b| b.get(..usize::try_from(at + skipped - from).ok()?))
                    };
                    match &mut self.garbage {
                        Some(g) => {
                            let tail = blank_tail(span(at));
                            g.blank_tail = if tail == skipped {
                                g.blank_tail + tail
                            } else {
                                tail
                            };
                            g.len += skipped;
                            g.prefix = g.prefix && prefix_bytes(span(at));
                        }
                        None if lead < skipped => {
                            let origin = self.origin(framer, at + lead);
                            let prefix =
                                matches!(origin, Origin::Line(_)) && prefix_bytes(span(at + lead));
                            self.garbage = Some(Stretch {
                                origin,
                                len: skipped - lead,
                                blank_tail: blank_tail(span(at + lead)),
                                prefix,
                            });
                        }
                        None => {}
                    }
                }
                Some(Err(Error::BadFrame { reason, .. })) => {
                    self.flush_garbage(sink)?;
                    let origin = self.origin(framer, at);
                    sink.problem(origin, &reason.to_string())?;
                }
                Some(Err(e)) => {
                    self.flush_garbage(sink)?;
                    let origin = self.origin(framer, at);
                    sink.problem(origin, &e.to_string())?;
                }
                None => break,
            }
        }
        if !eof {
            return Ok(());
        }
        self.flush_garbage(sink)?;
        let at = framer.position();
        let rest = framer.pending();
        if rest.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        // An incomplete last message: the parser says precisely what is
        // wrong (the framer holds at most MAX_MESSAGE bytes of it).
        let trimmed = rest.trim_ascii_end();
        let why = match Parser::new().parse(trimmed) {
            Err(Error::BodyLength { .. }) | Err(Error::Truncated { .. })
                if trimmed.starts_with(b"8=FIX") =>
            {
                format!(
                    "truncated message: the input ends {} bytes into it, before the end \
                     its BodyLength(9) declares",
                    rest.len()
                )
            }
            Err(e) => e.to_string(),
            Ok(_) => format!(
                "{} trailing bytes do not form a complete message",
                rest.len()
            ),
        };
        let origin = self.origin(framer, at);
        sink.problem(origin, &why)
    }
}

/// Why a garbage stretch of `n` bytes is reported.
fn garbage(n: u64) -> String {
    format!("garbage: {n} bytes that are not a FIX message, skipped")
}

/// The `|` form: one message per line, read in bounded chunks. `head` is
/// what was read already; `eof` whether that was all.
fn each_line<R: Read, S: Sink>(
    mut buf: Vec<u8>,
    mut eof: bool,
    mut r: R,
    name: &str,
    sink: &mut S,
) -> Result<(), S::Error> {
    let mut start = 0usize;
    // buf[..end] holds input; the rest is room for the next read, zeroed
    // once when it is made rather than before every read.
    let mut end = buf.len();
    // Input offset of buf[0], and the number of the next line.
    let mut base = 0u64;
    let mut line_no = 1usize;
    // Inside an over-long line being skipped to its end.
    let mut skipping = false;
    let mut message = Vec::new();
    // The complete lines of buf[..mapped] have their `|` made SOH in
    // place (see `map_lines`), and `breaks[next..]` are their ends; those
    // starting before buf[plain_until] are copied and mapped one by one
    // (a line with an SOH of its own is).
    let (mut mapped, mut plain_until) = (0usize, 0usize);
    let (mut breaks, mut next) = (Vec::new(), 0usize);
    loop {
        let nl = match breaks.get(next) {
            Some(&at) if start < mapped && at >= start => {
                next += 1;
                Some(at - start)
            }
            _ => memchr::memchr(b'\n', &buf[start..end]),
        };
        if let Some(nl) = nl {
            if !skipping {
                if start >= mapped && start >= plain_until {
                    breaks.clear();
                    (mapped, plain_until) = map_lines(&mut buf[..end], start, &mut breaks);
                    // The line found above is the first one mapped, if any.
                    next = usize::from(start < mapped);
                }
                let line = &buf[start..start + nl];
                let form = if start < mapped {
                    Form::Mapped
                } else {
                    Form::Bars
                };
                one_line(line, form, line_no, base + start as u64, &mut message, sink)?;
            }
            skipping = false;
            start += nl + 1;
            line_no += 1;
            continue;
        }
        if eof {
            if start < end && !skipping {
                // A last line without a line break is never mapped in place.
                let line = &buf[start..end];
                one_line(
                    line,
                    Form::Bars,
                    line_no,
                    base + start as u64,
                    &mut message,
                    sink,
                )?;
            }
            return Ok(());
        }
        if !skipping && end - start > MAX_LINE {
            let why = format!(
                "line longer than {MAX_LINE} bytes with no SOH and no line break: not a \
                 message, skipped"
            );
            sink.problem(Origin::Line(line_no), &why)?;
            skipping = true;
        }
        if skipping {
            // Nothing of an over-long line is kept.
            start = end;
        }
        buf.copy_within(start..end, 0);
        end -= start;
        base += start as u64;
        mapped = mapped.saturating_sub(start);
        plain_until = plain_until.saturating_sub(start);
        start = 0;
        if buf.len() < end + CHUNK {
            buf.resize(end + CHUNK, 0);
        }
        let n = loop {
            match r.read(&mut buf[end..end + CHUNK]) {
                Ok(n) => break n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(ReadError {
                        name: name.to_owned(),
                        source,
                    }
                    .into());
                }
            }
        };
        end += n;
        eof = n == 0;
    }
}

/// What a line of the `|` form holds when [`one_line`] gets it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// As read: `|` separates its fields unless it has an SOH of its own.
    Bars,
    /// Its `|` already made SOH in place: it had no SOH of its own.
    Mapped,
}

/// Maps the `|` of the complete lines of `buf` from `start` (a line's
/// start) to SOH in place, up to the first line holding an SOH of its own
/// (whose `|` are data), and appends the ends of the lines mapped to
/// `breaks`; returns the end of what was mapped and the end of that line
/// (or `start` when there is none).
///
/// Done per read, not per line: copying and mapping each line on its own
/// was an eighth of `fix check`'s time on the `|` form.
fn map_lines(buf: &mut [u8], start: usize, breaks: &mut Vec<usize>) -> (usize, usize) {
    let Some(last) = memchr::memrchr(b'\n', &buf[start..]) else {
        return (start, start);
    };
    let block = &mut buf[start..start + last + 1];
    let (mapped, plain_until) = match memchr::memchr(1, block) {
        None => (block.len(), 0),
        Some(k) => {
            let line_start = memchr::memrchr(b'\n', &block[..k]).map_or(0, |p| p + 1);
            let line_end =
                k + memchr::memchr(b'\n', &block[k..]).map_or(block.len() - k, |p| p + 1);
            (line_start, line_end)
        }
    };
    crate::scan::bars_to_soh(&mut block[..mapped], start, breaks);
    (start + mapped, start + plain_until)
}

/// One line of the `|` form, starting at input offset `offset`; `message`
/// is scratch space reused across lines.
fn one_line<S: Sink>(
    line: &[u8],
    form: Form,
    line_no: usize,
    offset: u64,
    message: &mut Vec<u8>,
    sink: &mut S,
) -> Result<(), S::Error> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let message: &[u8] = match form {
        Form::Mapped => line.strip_suffix(b"\r").unwrap_or(line),
        Form::Bars => {
            line_message(line, message);
            message
        }
    };
    // The line is parsed whole first. A message ends at its CheckSum, so a
    // line holding several fails that parse, and only a failed line is
    // searched for further message starts: a search of every line cost
    // `fix check` a tenth of its time. (A sink leaves no trace of a
    // message it calls invalid, so the line can be framed instead.)
    let Some(why) = sink.message(message)? else {
        return Ok(());
    };
    // A line that starts as a message is one, and its problem is the
    // parser's. Any other line is framed as a byte stream is: a log's
    // prefix before a message is skipped, and bytes that are no message
    // at all are named as such, not parsed as a message they never began.
    let several = match form {
        Form::Bars => several_messages(line),
        Form::Mapped => several_mapped(line),
    };
    if line.starts_with(b"8=") && !several && !message_then_more(message) {
        return sink.problem(Origin::Line(line_no), &why);
    }
    let mut framer = Framer::new(MAX_MESSAGE);
    framer.push(message);
    Stream::new(offset, line_no, 0).drain(&mut framer, true, sink)
}

/// Whether `message` (a line starting with `8=`) is a whole message
/// followed by more than white space. The framer then reports the bytes
/// after its CheckSum(10) apart from it, as the SOH form does, where the
/// parser would call the whole line a truncated message.
fn message_then_more(message: &[u8]) -> bool {
    let mut framer = Framer::new(MAX_MESSAGE);
    framer.push(message);
    matches!(framer.next_frame(), Some(Ok(frame))
        if message.get(frame.len()..).is_some_and(|rest| !rest.trim_ascii().is_empty()))
}

/// One message of a line-oriented input into `out`, with `|` turned into
/// SOH when the line has no SOH of its own.
pub fn line_message(line: &[u8], out: &mut Vec<u8>) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    out.clear();
    out.extend_from_slice(line);
    // One pass over a copy, every byte written and the SOH test folded
    // in: a select and an or the compiler vectorises. (A mapped `extend`
    // checks capacity per byte and a conditional store is a branch per
    // byte; either cost `fix check` a third of its time.)
    let mut soh = false;
    for b in out.iter_mut() {
        soh |= *b == 1;
        *b = if *b == b'|' { 1 } else { *b };
    }
    if soh {
        // The line's own SOHs separate it; its `|` are data.
        out.clear();
        out.extend_from_slice(line);
    }
}

/// Whether a `|`-separated line holds more than one message start (`8=FIX`
/// at its start or after a separator).
fn several_messages(line: &[u8]) -> bool {
    // A SIMD substring search: a byte-by-byte window scan of every line
    // was the largest cost of `fix check` on the `|` form.
    static STARTS: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"|8=FIX"));
    starts_beyond_one(STARTS.find_iter(line), line)
}

/// [`several_messages`] of a line whose `|` were made SOH in place.
fn several_mapped(line: &[u8]) -> bool {
    static STARTS: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\x018=FIX"));
    starts_beyond_one(STARTS.find_iter(line), line)
}

/// Whether `line`, whose message starts after a separator are `after`,
/// holds more than one start (one more if it starts with `8=FIX`).
fn starts_beyond_one(mut after: impl Iterator<Item = usize>, line: &[u8]) -> bool {
    match after.next() {
        None => false,
        Some(_) if line.starts_with(b"8=FIX") => true,
        Some(_) => after.next().is_some(),
    }
}

#[cfg(test)]
mod tests;
