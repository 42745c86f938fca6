//! Streaming readers: terms, and events, one at a time from a reader.

use super::{Term, event_values, read_terms};
use crate::{Error, Result};

/// Reads `.`-terminated terms one at a time from a reader, for inputs too
/// large to hold: it keeps only the lines of the terms not yet returned.
///
/// Lines are gathered until one ends (outside quotes and comments) with the
/// `.` that closes a term, then parsed with [`read_terms`]; so the memory
/// held is the longest run of lines up to such a line (one event of a
/// reference event file), and line numbers in errors are the file's own.
pub struct TermStream<R> {
    reader: R,
    what: &'static str,
    /// Lines read so far.
    lines: usize,
    /// Text of the terms not yet parsed, starting at line `buf_line`.
    buf: Vec<u8>,
    buf_line: usize,
    ready: std::collections::VecDeque<(usize, Term)>,
    /// Inside `"..."` or `'...'`: the quote, and whether a `\` precedes.
    quote: Option<u8>,
    escaped: bool,
    /// The last byte outside quotes and comments that is not white space.
    last: Option<u8>,
    done: bool,
}

impl<R: std::io::BufRead> TermStream<R> {
    /// Terms of `reader`; `what` names the input in errors (`"event file"`).
    pub fn new(reader: R, what: &'static str) -> Self {
        TermStream {
            reader,
            what,
            lines: 0,
            buf: Vec::new(),
            buf_line: 1,
            ready: std::collections::VecDeque::new(),
            quote: None,
            escaped: false,
            last: None,
            done: false,
        }
    }

    /// The next term and its 1-based line, or `None` at the end.
    pub fn next_term(&mut self) -> Result<Option<(usize, Term)>> {
        loop {
            if let Some(t) = self.ready.pop_front() {
                return Ok(Some(t));
            }
            if !self.fill()? {
                return Ok(None);
            }
            self.parse_buffered()?;
        }
    }

    /// Reads lines into the buffer until it holds whole terms (its last
    /// line ends, outside quotes and comments, with a `.` or nothing) or
    /// the input ends; `false` once the input ended and was handed over.
    fn fill(&mut self) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        loop {
            let start = self.buf.len();
            let n = self
                .reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| Error::Read(format!("{} line {}: {e}", self.what, self.lines + 1)))?;
            if n == 0 {
                self.done = true;
                return Ok(true);
            }
            self.lines += 1;
            self.scan(start);
            if self.quote.is_none() && matches!(self.last, None | Some(b'.')) {
                return Ok(true);
            }
        }
    }

    /// Drops the buffered text, handed over whole, and starts the next
    /// term's text on the next line.
    fn consume(&mut self) {
        self.buf.clear();
        self.buf_line = self.lines + 1;
        self.last = None;
    }

    /// Follows quotes and comments over the line just read.
    fn scan(&mut self, from: usize) {
        let mut comment = false;
        for &b in &self.buf[from..] {
            if let Some(q) = self.quote {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == q {
                    self.quote = None;
                    self.last = Some(b);
                }
            } else if comment {
            } else {
                match b {
                    b'%' => comment = true,
                    b'"' | b'\'' => self.quote = Some(b),
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    _ => self.last = Some(b),
                }
            }
        }
    }

    fn parse_buffered(&mut self) -> Result<()> {
        let base = self.buf_line - 1;
        let shift = |e: Error| match e {
            Error::Format {
                what,
                line,
                col,
                msg,
            } => Error::Format {
                what,
                line: line + base,
                col,
                msg,
            },
            e => e,
        };
        let text = std::str::from_utf8(&self.buf).map_err(|e| {
            let line = self.buf[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            Error::Format {
                what: self.what,
                line: base + line + 1,
                col: 1,
                msg: "text is not UTF-8".into(),
            }
        })?;
        for (line, t) in read_terms(text, self.what).map_err(shift)? {
            self.ready.push_back((line + base, t));
        }
        self.consume();
        Ok(())
    }
}

/// Reads an event file one event at a time (see [`TermStream`] for what it
/// holds in memory).
pub struct EventStream<R>(TermStream<R>);

impl<R: std::io::BufRead> EventStream<R> {
    /// The events of `reader`.
    pub fn new(reader: R) -> Self {
        EventStream(TermStream::new(reader, "event file"))
    }

    /// The next event's values and its line, or `None` at the end.
    pub fn next_event(&mut self) -> Result<Option<(usize, Vec<bool>)>> {
        let mut values = Vec::new();
        Ok(self
            .next_event_into(&mut values)?
            .map(|line| (line, values)))
    }

    /// The next event's values written into `values` (its old contents
    /// replaced), and the event's line; `None` at the end. Reusing one
    /// `values` keeps a stream from allocating per event.
    ///
    /// A term in the layout the writers produce (one list of `0`, `1`,
    /// `true`, `false`, alone on its lines) is read straight from the
    /// buffered bytes; anything else (comments, several terms sharing a
    /// line, errors) goes through [`read_terms`], which defines what is
    /// accepted and every error. Reading events through the general terms
    /// cost `perfkit betree search` about 9% on top of the search on the
    /// dense reference workload; this way about 3.5%.
    pub fn next_event_into(&mut self, values: &mut Vec<bool>) -> Result<Option<usize>> {
        let s = &mut self.0;
        loop {
            if let Some((line, t)) = s.ready.pop_front() {
                *values = event_values(line, &t)?;
                return Ok(Some(line));
            }
            if s.buf.is_empty() && !s.done {
                // Straight from the reader's buffer when a whole plain
                // event is there: no copy of its lines, one pass over them
                // instead of three. A read error is left to `fill`, which
                // reports it (and retries an interrupted read).
                if let Ok(avail) = s.reader.fill_buf()
                    && let Some(p) = plain_event(avail, values)
                    && let Some(len) = p.line_end(avail)
                {
                    let line = s.lines + 1 + p.lines_before;
                    s.reader.consume(len);
                    s.lines += p.lines + 1;
                    s.consume();
                    return Ok(Some(line));
                }
            }
            if !s.fill()? {
                return Ok(None);
            }
            if let Some(p) = plain_event(&s.buf, values)
                && p.rest_blank(&s.buf)
            {
                let line = s.buf_line + p.lines_before;
                s.consume();
                return Ok(Some(line));
            }
            s.parse_buffered()?;
        }
    }
}

/// Where [`plain_event`] found an event's closing `.`.
struct Plain {
    /// Lines that ended before the `[`.
    lines_before: usize,
    /// Lines that ended before the `.`.
    lines: usize,
    /// Just past the `.`.
    end: usize,
}

impl Plain {
    /// Whether nothing but white space follows the event in `text` (a
    /// buffer of whole lines, as [`TermStream::fill`] gathers them).
    fn rest_blank(&self, text: &[u8]) -> bool {
        text[self.end..]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    }

    /// The length of the event's lines in `text` (read straight from the
    /// reader), if its last line ends there: after the `.` only spaces,
    /// tabs or `\r`, then a newline. Those are exactly the lines
    /// [`TermStream::fill`] would have gathered for it, since no line of a
    /// plain event but its last can end with a `.`.
    fn line_end(&self, text: &[u8]) -> Option<usize> {
        let rest = &text[self.end..];
        let n = rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\r'))?;
        (rest[n] == b'\n').then_some(self.end + n + 1)
    }
}

/// Reads the start of `text` as one event in the plain layout: white
/// space, `[`, values `0`/`1`/`true`/`false` separated by commas, `]`, `.`.
/// Fills `values` and says where the `.` is; `None` (with `values` in any
/// state) when `text` starts with anything else, which the general reader
/// then handles. Whatever it accepts, [`read_terms`] and [`event_values`]
/// read as the same values on the same line, provided nothing but white
/// space follows the `.` on its line ([`Plain::rest_blank`],
/// [`Plain::line_end`]).
fn plain_event(text: &[u8], values: &mut Vec<bool>) -> Option<Plain> {
    values.clear();
    let mut lines = 0;
    let mut i = 0;
    // White space (newlines counted) from `i`.
    let skip = |i: &mut usize, lines: &mut usize| {
        while let Some(&b) = text.get(*i) {
            match b {
                b'\n' => *lines += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => break,
            }
            *i += 1;
        }
    };
    skip(&mut i, &mut lines);
    let before = lines;
    if text.get(i) != Some(&b'[') {
        return None;
    }
    i += 1;
    skip(&mut i, &mut lines);
    if text.get(i) != Some(&b']') {
        loop {
            // The writers' layout, value after value: a digit, a comma (a
            // third of the loop below's time per value on the dense
            // reference events).
            while let Some(&[d @ (b'0' | b'1'), b',']) = text.get(i..i + 2) {
                values.push(d == b'1');
                i += 2;
            }
            skip(&mut i, &mut lines);
            let (v, len) = match text.get(i..) {
                Some([b'0', ..]) => (false, 1),
                Some([b'1', ..]) => (true, 1),
                Some([b't', b'r', b'u', b'e', ..]) => (true, 4),
                Some([b'f', b'a', b'l', b's', b'e', ..]) => (false, 5),
                _ => return None,
            };
            i += len;
            // What ends the value: white space, `,` or `]` (a digit, a
            // letter or a `.` would make it another term).
            if !matches!(
                text.get(i),
                Some(b' ' | b'\t' | b'\r' | b'\n' | b',' | b']')
            ) {
                return None;
            }
            values.push(v);
            skip(&mut i, &mut lines);
            match text.get(i) {
                Some(b',') => {
                    i += 1;
                    skip(&mut i, &mut lines);
                }
                Some(b']') => break,
                _ => return None,
            }
        }
    }
    i += 1;
    skip(&mut i, &mut lines);
    if text.get(i) != Some(&b'.') {
        return None;
    }
    Some(Plain {
        lines_before: before,
        lines,
        end: i + 1,
    })
}
