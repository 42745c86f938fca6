//! Streaming readers: walk local headers front to back over a plain `Read`
//! or tokio `AsyncRead` (stdin, a socket), decoding entries with data
//! descriptors. They never seek and hold one 64 KiB read-ahead buffer.
//!
//! A streaming reader cannot see the central directory, so it trusts local
//! headers; the CRC, sizes and (for AES) the authentication code are checked
//! when an entry's data ends, and a failed check is returned by the final
//! `read` instead of end-of-file. Callers that act on the data (extraction)
//! must treat the entry as good only after reading to end-of-file.

use std::io::Read;

#[cfg(feature = "tokio")]
use tokio::io::{AsyncRead, AsyncReadExt};

use super::InBuf;
use super::data::{DataState, Plan, Progress};
use super::header::{parse_central, parse_local};
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::format::*;

/// What the header scanner found next.
enum Next {
    Entry(Box<Entry>, Box<DataState>),
    End,
    NeedInput,
}

/// The state shared by the sync and async streaming readers.
struct Walker {
    inb: InBuf,
    cur: Option<Box<DataState>>,
    password: Option<Vec<u8>>,
    ended: bool,
    scratch: Vec<u8>,
    seen: u64,
    /// Central directory records read so far.
    central: u64,
    /// Names the central directory marks as symlinks (local headers carry
    /// no file type), known once the stream has ended.
    links: Vec<String>,
    /// The deflate state of the last entry read, for the next.
    spare_inflater: Option<Box<flate2::Decompress>>,
}

impl Walker {
    fn new() -> Walker {
        Walker {
            inb: InBuf::new(0),
            cur: None,
            password: None,
            ended: false,
            scratch: Vec::new(),
            seen: 0,
            central: 0,
            links: Vec::new(),
            spare_inflater: None,
        }
    }

    fn scan_header(&mut self) -> Result<Next> {
        let at = self.inb.offset;
        let d = self.inb.data();
        if d.len() < 4 {
            if self.inb.eof {
                // An archive cut right after an entry: no central directory.
                return Err(Error::Truncated {
                    offset: at + d.len() as u64,
                });
            }
            return Ok(Next::NeedInput);
        }
        match le32(d, 0) {
            LOCAL_SIG => match parse_local(d, at)? {
                None if self.inb.eof => Err(Error::Truncated {
                    offset: at + d.len() as u64,
                }),
                None => Ok(Next::NeedInput),
                Some(local) => {
                    self.inb.consume(local.len);
                    self.seen += 1;
                    let state = DataState::new(Plan {
                        entry: &local.entry,
                        sizes_known: false,
                        local_zip64: local.zip64,
                        password: self.password.as_deref(),
                        spare_inflater: if local.entry.method == crate::format::METHOD_DEFLATE {
                            self.spare_inflater.take()
                        } else {
                            None
                        },
                    });
                    match state {
                        Ok(s) => Ok(Next::Entry(Box::new(local.entry), Box::new(s))),
                        Err(e) => Err(e),
                    }
                }
            },
            CENTRAL_SIG | EOCD_SIG | ZIP64_EOCD_SIG | ZIP64_LOCATOR_SIG => self.scan_trailer(),
            other => Err(Error::Malformed {
                offset: at,
                what: format!("expected a local header, found signature {other:#010x}"),
            }),
        }
    }

    /// Walks the central directory and end records so that a stream cut
    /// short after its last entry is reported as truncated, and the entry
    /// count is checked against the local headers seen.
    fn scan_trailer(&mut self) -> Result<Next> {
        loop {
            let at = self.inb.offset;
            let d = self.inb.data();
            let need = |n: usize| -> Result<Option<Next>> {
                if d.len() >= n {
                    Ok(None)
                } else if self.inb.eof {
                    Err(Error::Truncated {
                        offset: at + d.len() as u64,
                    })
                } else {
                    Ok(Some(Next::NeedInput))
                }
            };
            if let Some(n) = need(4)? {
                return Ok(n);
            }
            let len = match le32(d, 0) {
                CENTRAL_SIG => {
                    if let Some(n) = need(CENTRAL_LEN)? {
                        return Ok(n);
                    }
                    CENTRAL_LEN
                        + usize::from(le16(d, 28))
                        + usize::from(le16(d, 30))
                        + usize::from(le16(d, 32))
                }
                ZIP64_EOCD_SIG => {
                    if let Some(n) = need(12)? {
                        return Ok(n);
                    }
                    let l = le64(d, 4);
                    if l > 1 << 20 {
                        return Err(Error::Malformed {
                            offset: at,
                            what: "ZIP64 end record larger than 1 MiB".into(),
                        });
                    }
                    12 + l as usize
                }
                ZIP64_LOCATOR_SIG => ZIP64_LOCATOR_LEN,
                EOCD_SIG => {
                    if let Some(n) = need(EOCD_LEN)? {
                        return Ok(n);
                    }
                    let total = le16(d, 10);
                    if self.central != self.seen {
                        return Err(Error::Malformed {
                            offset: at,
                            what: format!(
                                "the central directory lists {} entries but {} local headers were read",
                                self.central, self.seen
                            ),
                        });
                    }
                    if total != 0xFFFF && u64::from(total) != self.seen % 0x1_0000 {
                        return Err(Error::Malformed {
                            offset: at,
                            what: format!(
                                "end record lists {total} entries but {} local headers were read",
                                self.seen
                            ),
                        });
                    }
                    EOCD_LEN + usize::from(le16(d, 20))
                }
                other => {
                    return Err(Error::Malformed {
                        offset: at,
                        what: format!(
                            "unexpected signature {other:#010x} in the central directory"
                        ),
                    });
                }
            };
            if let Some(n) = need(len)? {
                return Ok(n);
            }
            let end = le32(d, 0) == EOCD_SIG;
            if le32(d, 0) == CENTRAL_SIG {
                self.central += 1;
                // A record this reader cannot parse was not needed to read
                // the data; it only loses the chance to see a link.
                if let Ok((e, _)) = parse_central(&d[..len], at)
                    && e.kind() == crate::entry::EntryKind::Symlink
                {
                    self.links.push(e.name);
                }
            }
            self.inb.consume(len);
            if end {
                return Ok(Next::End);
            }
        }
    }

    /// Reads entry data; `Ok(None)` asks the caller to refill.
    fn read(&mut self, out: &mut [u8]) -> Result<Option<usize>> {
        let Some(state) = self.cur.as_mut() else {
            return Ok(Some(0));
        };
        if out.is_empty() {
            return Ok(Some(0));
        }
        loop {
            match state.step(&mut self.inb, out)? {
                Progress::Data(0) => {}
                Progress::Data(n) => return Ok(Some(n)),
                Progress::NeedInput => return Ok(None),
                Progress::Done => {
                    if let Some(d) = self.cur.take().and_then(|mut s| s.take_inflater()) {
                        self.spare_inflater = Some(d);
                    }
                    return Ok(Some(0));
                }
            }
        }
    }
}

/// A streaming reader over any [`Read`].
///
/// ```
/// # fn main() -> zipstream::Result<()> {
/// let mut w = zipstream::ZipWriter::new(Vec::new());
/// w.add_bytes(zipstream::EntryOptions::file("a.txt"), b"alpha")?;
/// let zip = w.finish()?;
/// let mut r = zipstream::ZipStreamReader::new(&zip[..]);
/// while let Some(entry) = r.next_entry()? {
///     let mut data = Vec::new();
///     std::io::Read::read_to_end(&mut r, &mut data)?;
///     assert_eq!((entry.name.as_str(), &data[..]), ("a.txt", &b"alpha"[..]));
/// }
/// # Ok(())
/// # }
/// ```
pub struct ZipStreamReader<R: Read> {
    src: R,
    w: Walker,
}

impl<R: Read> ZipStreamReader<R> {
    /// Wraps a reader positioned at the start of an archive.
    pub fn new(src: R) -> ZipStreamReader<R> {
        ZipStreamReader {
            src,
            w: Walker::new(),
        }
    }

    /// Password for AES entries that follow.
    pub fn set_password(&mut self, password: Option<&[u8]>) {
        self.w.password = password.map(<[u8]>::to_vec);
    }

    /// Limits the uncompressed bytes of the current entry (bomb defence).
    pub fn limit_current(&mut self, max_output: u64) {
        if let Some(s) = self.w.cur.as_mut() {
            s.max_output = max_output;
        }
    }

    /// Compressed and uncompressed bytes of the current entry so far.
    pub fn current_counts(&self) -> Option<(u64, u64)> {
        self.w.cur.as_ref().map(|s| (s.consumed(), s.produced()))
    }

    /// The entries the central directory marks as symlinks, by name. Local
    /// headers carry no file type, so this is only known once
    /// [`next_entry`](Self::next_entry) has returned `None`; extraction
    /// uses it to turn those entries (written as files holding the target)
    /// into links, under the same confinement as random-access extraction.
    pub fn directory_symlinks(&self) -> &[String] {
        &self.w.links
    }

    /// Advances to the next entry, skipping (and verifying) the rest of the
    /// current one. `Ok(None)` at the central directory.
    pub fn next_entry(&mut self) -> Result<Option<Entry>> {
        if self.w.ended {
            return Ok(None);
        }
        let mut scratch = std::mem::take(&mut self.w.scratch);
        scratch.resize(64 * 1024, 0);
        while self.w.cur.is_some() {
            self.read_data(&mut scratch)?;
        }
        self.w.scratch = scratch;
        loop {
            match self.w.scan_header()? {
                Next::Entry(e, s) => {
                    self.w.cur = Some(s);
                    return Ok(Some(*e));
                }
                Next::End => {
                    self.w.ended = true;
                    return Ok(None);
                }
                Next::NeedInput => self.w.inb.fill_from(&mut self.src)?,
            }
        }
    }

    /// Reads data of the current entry; 0 at its end (after verification).
    pub fn read_data(&mut self, out: &mut [u8]) -> Result<usize> {
        loop {
            match self.w.read(out)? {
                Some(n) => return Ok(n),
                None => self.w.inb.fill_from(&mut self.src)?,
            }
        }
    }

    /// Reads the rest of the current entry `e` (as
    /// [`next_entry`](Self::next_entry) returned it), checking it, and
    /// gives `e` the sizes and CRC-32 its data showed when its local header
    /// could not say them (a data descriptor follows the data): what a
    /// listing of a stream shows. An AE-2 entry keeps its CRC of 0, as its
    /// headers say.
    pub fn read_through(&mut self, e: &mut Entry) -> Result<()> {
        let mut buf = std::mem::take(&mut self.w.scratch);
        buf.resize(64 * 1024, 0);
        let mut crc = flate2::Crc::new();
        let mut counts = self.current_counts();
        let res = loop {
            match self.read_data(&mut buf) {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    crc.update(&buf[..n]);
                    counts = self.current_counts().or(counts);
                }
                Err(err) => break Err(err),
            }
        };
        self.w.scratch = buf;
        res?;
        if e.flags & 0x08 != 0 {
            if let Some((consumed, produced)) = counts {
                (e.compressed_size, e.size) = (consumed, produced);
            }
            if e.aes.is_none() {
                e.crc32 = crc.sum();
            }
        }
        Ok(())
    }
}

impl<R: Read> Read for ZipStreamReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(self.read_data(buf)?)
    }
}

/// The async streaming reader over a tokio [`AsyncRead`]. Decoding runs
/// inline (it is the same code as the sync reader); only refills await.
#[cfg(feature = "tokio")]
pub struct AsyncZipStreamReader<R: AsyncRead + Unpin> {
    src: R,
    w: Walker,
}

#[cfg(feature = "tokio")]
impl<R: AsyncRead + Unpin> AsyncZipStreamReader<R> {
    /// Wraps an async reader positioned at the start of an archive.
    pub fn new(src: R) -> AsyncZipStreamReader<R> {
        AsyncZipStreamReader {
            src,
            w: Walker::new(),
        }
    }

    /// Password for AES entries that follow.
    pub fn set_password(&mut self, password: Option<&[u8]>) {
        self.w.password = password.map(<[u8]>::to_vec);
    }

    async fn fill(&mut self) -> Result<()> {
        let n = self.src.read(self.w.inb.spare()).await?;
        self.w.inb.filled(n);
        Ok(())
    }

    /// Advances to the next entry; `Ok(None)` at the central directory.
    pub async fn next_entry(&mut self) -> Result<Option<Entry>> {
        if self.w.ended {
            return Ok(None);
        }
        let mut scratch = std::mem::take(&mut self.w.scratch);
        scratch.resize(64 * 1024, 0);
        while self.w.cur.is_some() {
            self.read_data(&mut scratch).await?;
        }
        self.w.scratch = scratch;
        loop {
            match self.w.scan_header()? {
                Next::Entry(e, s) => {
                    self.w.cur = Some(s);
                    return Ok(Some(*e));
                }
                Next::End => {
                    self.w.ended = true;
                    return Ok(None);
                }
                Next::NeedInput => self.fill().await?,
            }
        }
    }

    /// Reads data of the current entry; 0 at its end (after verification).
    pub async fn read_data(&mut self, out: &mut [u8]) -> Result<usize> {
        loop {
            match self.w.read(out)? {
                Some(n) => return Ok(n),
                None => self.fill().await?,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EntryOptions, ZipArchive, ZipWriter};

    #[test]
    fn reading_through_gives_a_streamed_entry_the_sizes_its_directory_records() {
        // Written to a sink that cannot seek: an entry past the 64 KiB the
        // writer holds back has its sizes and CRC after its data, in a
        // data descriptor; a small one has them in its header.
        let mut w = ZipWriter::new(Vec::new());
        let text = b"hello, hello, hello, world".repeat(10_000);
        w.add_bytes(EntryOptions::file("a.txt"), &text).unwrap();
        w.add_bytes(EntryOptions::file("empty"), b"").unwrap();
        let bytes = w.finish().unwrap();
        // The oracle: the central directory, read by the other reader.
        let held = ZipArchive::new(std::io::Cursor::new(bytes.clone())).unwrap();
        let mut r = ZipStreamReader::new(&bytes[..]);
        let mut n = 0;
        while let Some(mut e) = r.next_entry().unwrap() {
            assert_eq!(e.flags & 0x08 != 0, n == 0, "a data descriptor follows");
            r.read_through(&mut e).unwrap();
            let d = &held.entries()[n];
            assert_eq!(
                (e.size, e.compressed_size, e.crc32),
                (d.size, d.compressed_size, d.crc32)
            );
            n += 1;
        }
        assert_eq!(n, 2);
        assert_eq!(held.entries()[0].size, text.len() as u64);
    }
}
