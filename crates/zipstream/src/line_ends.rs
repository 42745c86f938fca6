//! Info-ZIP zip's `-l` and `-ll`: a text file stored with DOS or Unix
//! line ends, converted as it is read; a file that looks binary is
//! stored as it is.
//!
//! ```
//! use std::io::Read;
//! use zipstream::line_ends::{Converting, LineEnds};
//!
//! let mut dos = Vec::new();
//! Converting::new(&b"a\nb\n"[..], LineEnds::ToDos, || {}).read_to_end(&mut dos)?;
//! assert_eq!(dos, b"a\r\nb\r\n");
//! let mut unix = Vec::new();
//! Converting::new(&dos[..], LineEnds::ToUnix, || {}).read_to_end(&mut unix)?;
//! assert_eq!(unix, b"a\nb\n");
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, Read};

/// Info-ZIP's `-l` and `-ll`: the line ends a text file is stored with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnds {
    /// `-l`: every LF becomes CR LF (as Info-ZIP's, a CR LF too: CR CR LF).
    ToDos,
    /// `-ll`: every CR LF becomes LF.
    ToUnix,
}

/// A text file's data with its line ends converted ([`LineEnds`]), unless its
/// first block looks binary (a NUL, or another control character that
/// text does not hold), which Info-ZIP leaves as it is, with a warning.
pub struct Converting<R> {
    inner: R,
    to: LineEnds,
    /// Decided on the first block: convert or pass through.
    convert: Option<bool>,
    /// Converted bytes not handed out yet, from `at`.
    out: Vec<u8>,
    at: usize,
    /// `-ll`: the last block ended in a CR, held back.
    cr: bool,
    raw: Vec<u8>,
    warn: Box<dyn Fn()>,
}

impl<R: Read> Converting<R> {
    /// `inner`'s data with its line ends converted `to`; `warn` is
    /// called once, before any data, if the first block looks binary and
    /// the data passes through as it is (Info-ZIP's `has binary so -l
    /// ignored` warning).
    pub fn new(inner: R, to: LineEnds, warn: impl Fn() + 'static) -> Self {
        Converting {
            inner,
            to,
            convert: None,
            out: Vec::new(),
            at: 0,
            cr: false,
            raw: Vec::new(),
            warn: Box::new(warn),
        }
    }
}

impl<R: Read> Read for Converting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.out.len() {
            self.out.clear();
            self.at = 0;
            self.raw.resize(64 << 10, 0);
            let n = self.inner.read(&mut self.raw)?;
            let block = &self.raw[..n];
            let convert = *self.convert.get_or_insert_with(|| {
                let binary = block.iter().any(|&b| {
                    b == 0 || (b < 32 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1a))
                });
                if binary {
                    (self.warn)();
                }
                !binary
            });
            if n == 0 {
                if std::mem::take(&mut self.cr) {
                    self.out.push(b'\r');
                    continue;
                }
                return Ok(0);
            }
            if !convert {
                self.out.extend_from_slice(block);
                continue;
            }
            for &b in block {
                match self.to {
                    LineEnds::ToDos => {
                        if b == b'\n' {
                            self.out.push(b'\r');
                        }
                        self.out.push(b);
                    }
                    LineEnds::ToUnix => {
                        if std::mem::take(&mut self.cr) && b != b'\n' {
                            self.out.push(b'\r');
                        }
                        if b == b'\r' {
                            self.cr = true;
                        } else {
                            self.out.push(b);
                        }
                    }
                }
            }
        }
        let n = buf.len().min(self.out.len() - self.at);
        buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    fn convert(data: &[u8], to: LineEnds) -> (Vec<u8>, bool) {
        let warned = Rc::new(Cell::new(false));
        let w = warned.clone();
        let mut out = Vec::new();
        Converting::new(data, to, move || w.set(true))
            .read_to_end(&mut out)
            .unwrap();
        (out, warned.get())
    }

    #[test]
    fn info_zips_conversions() {
        // -l turns a CR LF into CR CR LF, as Info-ZIP's zip 3.0 does.
        assert_eq!(
            convert(b"a\r\nb", LineEnds::ToDos),
            (b"a\r\r\nb".to_vec(), false)
        );
        // -ll keeps a lone CR, and a CR at the very end.
        assert_eq!(
            convert(b"a\rb\r\nc\r", LineEnds::ToUnix),
            (b"a\rb\nc\r".to_vec(), false)
        );
        // A NUL in the first block: stored as it is, with the warning.
        assert_eq!(
            convert(b"a\n\0b\n", LineEnds::ToDos),
            (b"a\n\0b\n".to_vec(), true)
        );
    }

    #[test]
    fn a_cr_lf_across_blocks_is_one_line_end() {
        let mut data = vec![b'x'; (64 << 10) - 1];
        data.extend_from_slice(b"\r\ny");
        let (out, _) = convert(&data, LineEnds::ToUnix);
        assert_eq!(&out[out.len() - 3..], b"x\ny");
        assert_eq!(out.len(), data.len() - 1);
    }
}
