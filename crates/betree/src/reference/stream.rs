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
            if self.done {
                return Ok(None);
            }
            let start = self.buf.len();
            let n = self
                .reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| Error::Read(format!("{} line {}: {e}", self.what, self.lines + 1)))?;
            if n == 0 {
                self.done = true;
                self.parse_buffered()?;
                continue;
            }
            self.lines += 1;
            self.scan(start);
            if self.quote.is_none() && matches!(self.last, None | Some(b'.')) {
                self.parse_buffered()?;
            }
        }
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
        self.buf.clear();
        self.buf_line = self.lines + 1;
        self.last = None;
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
        match self.0.next_term()? {
            Some((line, t)) => Ok(Some((line, event_values(line, &t)?))),
            None => Ok(None),
        }
    }
}
