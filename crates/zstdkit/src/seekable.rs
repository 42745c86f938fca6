//! zstd's seekable format (`contrib/seekable_format` in the zstd
//! repository): independent frames, each of a bounded amount of input,
//! followed by a seek table in a skippable frame, so that a reader can
//! find and decompress any byte range without the frames before it, and
//! frames can be decompressed in parallel. Every zstd decoder reads the
//! file as ordinary multi-frame zstd (the table is a skippable frame).
//!
//! - [`SeekTable`]: the table, encoded ([`SeekTable::encode`]) and read
//!   back from a file's tail ([`SeekTable::parse`]), sans-I/O;
//! - [`SeekableWriter`]: a `Write` that cuts its input into frames of
//!   [`SeekableWriter::frame_size`] bytes and ends with the table;
//! - [`SeekableReader`]: `Read + Seek` over a seekable file, which
//!   decompresses only the frames a read touches.
//!
//! ```
//! use std::io::Write;
//! let mut w = zstdkit::seekable::SeekableWriter::new(Vec::new(), zstdkit::Recipe::Fast, 1 << 10, true)?;
//! w.write_all(&b"seekable ".repeat(1000))?;
//! let file = w.finish()?;
//! let table = zstdkit::seekable::SeekTable::parse(&file)?;
//! assert_eq!(table.entries.len(), 9);
//! assert_eq!(zstdkit::decompress(&file)?, b"seekable ".repeat(1000));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Read, Seek, SeekFrom, Write};

use crate::context::Compressor;
use crate::error::{Error, Result};
use crate::parallel::Pool;
use crate::raw::{DecodeStep, RawDecoder};
use crate::recipe::Params;

/// The skippable frame magic the seek table's frame uses.
pub const SKIPPABLE_MAGIC: u32 = 0x184D_2A5E;
/// The magic that ends every seekable file.
pub const SEEKABLE_MAGIC: u32 = 0x8F92_EAB1;
/// The footer's length: frame count, descriptor, magic.
pub const FOOTER_LEN: usize = 9;
/// The descriptor bit that says entries carry checksums.
const CHECKSUM_FLAG: u8 = 0x80;
/// The descriptor bits a reader must find clear.
const RESERVED_BITS: u8 = 0x7C;

/// One frame of a seekable file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The frame's size in the file.
    pub compressed: u32,
    /// The size of what it decompresses to.
    pub decompressed: u32,
    /// The low 32 bits of the XXH64 of what it decompresses to.
    pub checksum: Option<u32>,
}

/// A seekable file's seek table: its frames in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeekTable {
    /// The frames, first to last.
    pub entries: Vec<Entry>,
    /// Whether every entry has a checksum.
    pub checksums: bool,
}

/// Little-endian `u32` at `at` (the caller checked the length).
fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A damaged or absent seek table: what is wrong, where.
fn bad(offset: u64, why: impl Into<String>) -> Error {
    Error::SeekTable {
        offset,
        why: why.into(),
    }
}

impl SeekTable {
    /// The whole skippable frame: header, entries, footer.
    pub fn encode(&self) -> Vec<u8> {
        let per = if self.checksums { 12 } else { 8 };
        let body = self.entries.len() * per + FOOTER_LEN;
        let mut out = Vec::with_capacity(8 + body);
        out.extend_from_slice(&SKIPPABLE_MAGIC.to_le_bytes());
        out.extend_from_slice(&(body as u32).to_le_bytes());
        for e in &self.entries {
            out.extend_from_slice(&e.compressed.to_le_bytes());
            out.extend_from_slice(&e.decompressed.to_le_bytes());
            if self.checksums {
                out.extend_from_slice(&e.checksum.unwrap_or(0).to_le_bytes());
            }
        }
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        out.push(if self.checksums { CHECKSUM_FLAG } else { 0 });
        out.extend_from_slice(&SEEKABLE_MAGIC.to_le_bytes());
        out
    }

    /// How many bytes at a file's end the table of `tail`'s footer
    /// occupies: read the last [`FOOTER_LEN`] bytes, then this many.
    pub fn len_from_footer(footer: &[u8]) -> Result<usize> {
        if footer.len() < FOOTER_LEN {
            return Err(bad(0, "no seek table: the file is shorter than its footer"));
        }
        let f = &footer[footer.len() - FOOTER_LEN..];
        if le32(f, 5) != SEEKABLE_MAGIC {
            return Err(bad(
                0,
                "no seek table: the file does not end with the seekable magic",
            ));
        }
        let per = if f[4] & CHECKSUM_FLAG != 0 { 12 } else { 8 };
        (le32(f, 0) as usize)
            .checked_mul(per)
            .and_then(|n| n.checked_add(8 + FOOTER_LEN))
            .ok_or_else(|| bad(0, "a seek table too large to hold"))
    }

    /// Reads the table at the end of `tail` (the whole file, or at least
    /// its last [`SeekTable::len_from_footer`] bytes). `file_len` checks:
    /// the frames the table lists must fill the file up to the table;
    /// `None` leaves that to the caller.
    pub fn parse_with_len(tail: &[u8], file_len: Option<u64>) -> Result<SeekTable> {
        let len = SeekTable::len_from_footer(tail)?;
        let table_at = file_len.map_or(0, |n| n.saturating_sub(len as u64));
        if tail.len() < len {
            return Err(bad(table_at, "the seek table is cut short"));
        }
        let t = &tail[tail.len() - len..];
        if le32(t, 0) != SKIPPABLE_MAGIC {
            return Err(bad(
                table_at,
                "the seek table's frame has no skippable-frame magic",
            ));
        }
        if le32(t, 4) as usize != len - 8 {
            return Err(bad(
                table_at,
                format!(
                    "the seek table's frame says {} bytes, its footer {}",
                    le32(t, 4),
                    len - 8
                ),
            ));
        }
        let footer = &t[len - FOOTER_LEN..];
        let descriptor = footer[4];
        if descriptor & RESERVED_BITS != 0 {
            return Err(bad(
                table_at,
                "reserved bits set in the seek table's descriptor",
            ));
        }
        let checksums = descriptor & CHECKSUM_FLAG != 0;
        let per = if checksums { 12 } else { 8 };
        let entries: Vec<Entry> = t[8..len - FOOTER_LEN]
            .chunks_exact(per)
            .map(|e| Entry {
                compressed: le32(e, 0),
                decompressed: le32(e, 4),
                checksum: checksums.then(|| le32(e, 8)),
            })
            .collect();
        let table = SeekTable { entries, checksums };
        if file_len.is_some() {
            let frames = table.compressed_len();
            if frames != table_at {
                return Err(bad(
                    table_at,
                    format!(
                        "the seek table's frames add up to {frames} bytes, but {table_at} precede it"
                    ),
                ));
            }
        }
        Ok(table)
    }

    /// [`SeekTable::parse_with_len`] on a whole file.
    pub fn parse(file: &[u8]) -> Result<SeekTable> {
        SeekTable::parse_with_len(file, Some(file.len() as u64))
    }

    /// The bytes the frames take, the table excluded.
    pub fn compressed_len(&self) -> u64 {
        self.entries.iter().map(|e| u64::from(e.compressed)).sum()
    }

    /// The size of the decompressed data.
    pub fn decompressed_len(&self) -> u64 {
        self.entries.iter().map(|e| u64::from(e.decompressed)).sum()
    }
}

/// A checksum as the seekable format keeps it.
pub fn checksum(data: &[u8]) -> u32 {
    xxhash_rust::xxh64::xxh64(data, 0) as u32
}

/// A `Write` that compresses into seekable frames: every `frame_size`
/// bytes of input become one frame, and [`SeekableWriter::finish`] adds
/// the seek table. Memory is one frame's input and its output, or with
/// [`workers`](SeekableWriter::workers) `N`, at most `2N + 1` of each.
pub struct SeekableWriter<W: Write> {
    out: W,
    engine: Engine,
    frame_size: usize,
    pending: Vec<u8>,
    table: SeekTable,
}

/// One frame's input and the buffer its compressed bytes go to.
type FrameJob = (Vec<u8>, Vec<u8>);

/// What a worker gives back: the frame's table entry (or why not), its
/// input buffer and its compressed bytes.
type FrameDone = (Result<Entry>, Vec<u8>, Vec<u8>);

/// Who compresses the frames.
enum Engine {
    /// The calling thread, into one reused buffer.
    Inline {
        compressor: Compressor,
        frame: Vec<u8>,
    },
    /// Worker threads; buffers of written frames are reused.
    Pool {
        pool: Pool<FrameJob, FrameDone>,
        spare: Vec<FrameJob>,
    },
}

/// Compresses `input` as one frame into `frame` and says what the table
/// records for it.
fn compress_frame(
    compressor: &mut Compressor,
    input: &[u8],
    frame: &mut Vec<u8>,
    checksums: bool,
) -> Result<Entry> {
    compressor.compress_into(input, frame)?;
    let compressed = u32::try_from(frame.len())
        .map_err(|_| Error::Zstd("a seekable frame compressed to over 4 GiB"))?;
    Ok(Entry {
        compressed,
        decompressed: input.len() as u32,
        checksum: checksums.then(|| checksum(input)),
    })
}

impl<W: Write> std::fmt::Debug for SeekableWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeekableWriter")
            .field("frame_size", &self.frame_size)
            .field("frames", &self.table.entries.len())
            .finish()
    }
}

/// The largest frame input: its size must fit the table's 32 bits, and
/// its compressed size (at most a little over it) too.
pub const MAX_FRAME_SIZE: usize = 1 << 30;

impl<W: Write> SeekableWriter<W> {
    /// A writer into `out` with `params`, `frame_size` bytes of input per
    /// frame (1 to [`MAX_FRAME_SIZE`]), and checksums in the table when
    /// `checksums`.
    pub fn new(
        out: W,
        params: impl Into<Params>,
        frame_size: usize,
        checksums: bool,
    ) -> Result<Self> {
        if !(1..=MAX_FRAME_SIZE).contains(&frame_size) {
            return Err(Error::Zstd("a seekable frame size is 1 byte to 1 GiB"));
        }
        Ok(SeekableWriter {
            out,
            engine: Engine::Inline {
                compressor: Compressor::new(params)?,
                frame: Vec::new(),
            },
            frame_size,
            pending: Vec::new(),
            table: SeekTable {
                entries: Vec::new(),
                checksums,
            },
        })
    }

    /// The input bytes each frame holds.
    pub fn frame_size(&self) -> usize {
        self.frame_size
    }

    /// Compresses frames on `n` threads (1: on the calling thread), up to
    /// `2n` of them in flight; the output is the same bytes either way.
    /// Call before writing.
    pub fn workers(mut self, n: usize) -> Result<Self> {
        let Engine::Inline { compressor, .. } = &self.engine else {
            return Ok(self);
        };
        if n <= 1 {
            return Ok(self);
        }
        // Each frame is compressed by one thread: zstd's own workers in
        // every context would only add hand-offs.
        let params = compressor.params().workers(0);
        let states = (0..n)
            .map(|_| Compressor::new(params))
            .collect::<Result<Vec<_>>>()?;
        let checksums = self.table.checksums;
        let pool = Pool::new(
            states,
            move |c: &mut Compressor, (input, mut frame): FrameJob| {
                let entry = compress_frame(c, &input, &mut frame, checksums);
                (entry, input, frame)
            },
        )?;
        self.engine = Engine::Pool {
            pool,
            spare: Vec::new(),
        };
        Ok(self)
    }

    /// Compresses what is pending as one frame and writes it (with
    /// workers: hands it out, writing what is done once `2N` are in
    /// flight).
    fn cut(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        match &mut self.engine {
            Engine::Inline { compressor, frame } => {
                let entry = compress_frame(compressor, &self.pending, frame, self.table.checksums)
                    .map_err(io::Error::other)?;
                self.table.entries.push(entry);
                self.out.write_all(frame)?;
                self.pending.clear();
            }
            Engine::Pool { pool, spare } => {
                let (mut next, frame) = spare.pop().unwrap_or_default();
                next.clear();
                let input = std::mem::replace(&mut self.pending, next);
                pool.submit((input, frame)).map_err(io::Error::other)?;
            }
        }
        while self.pool_full() && self.write_done()? {}
        Ok(())
    }

    /// Whether workers hold as many frames as they may (`2N`).
    fn pool_full(&self) -> bool {
        matches!(&self.engine, Engine::Pool { pool, .. } if pool.in_flight() >= 2 * pool.workers() as u64)
    }

    /// Writes the oldest frame a worker has (or will have) finished;
    /// false when none is in flight.
    fn write_done(&mut self) -> io::Result<bool> {
        let Engine::Pool { pool, spare } = &mut self.engine else {
            return Ok(false);
        };
        let Some((entry, input, frame)) = pool.next().map_err(io::Error::other)? else {
            return Ok(false);
        };
        self.table.entries.push(entry.map_err(io::Error::other)?);
        self.out.write_all(&frame)?;
        spare.push((input, frame));
        Ok(true)
    }

    /// Writes the last frame and the seek table; returns the output and
    /// the table.
    pub fn finish_with_table(mut self) -> io::Result<(W, SeekTable)> {
        self.cut()?;
        while self.write_done()? {}
        self.out.write_all(&self.table.encode())?;
        self.out.flush()?;
        Ok((self.out, self.table))
    }

    /// Writes the last frame and the seek table; returns the output.
    pub fn finish(self) -> io::Result<W> {
        Ok(self.finish_with_table()?.0)
    }
}

impl<W: Write> Write for SeekableWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.frame_size - self.pending.len();
        let n = buf.len().min(room);
        self.pending.extend_from_slice(&buf[..n]);
        if self.pending.len() == self.frame_size {
            self.cut()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// `Read + Seek` over a seekable file: the table is read once, from the
/// source's end; a read decodes only the frame under the position, as a
/// stream from the frame's start to the last byte asked for, so memory is
/// zstd's window and two 64 KiB buffers whatever the frame's size (a
/// frame may hold up to 4 GiB). Reading on continues the stream; a read
/// behind it starts the frame again. A frame decoded to its end is checked
/// against the table's size and checksum (a range that stops inside a
/// frame cannot check its checksum, as zstd's own seekable reader cannot).
pub struct SeekableReader<R: Read + Seek> {
    source: R,
    table: SeekTable,
    /// Where each frame starts: (in the file, in the data), and one past
    /// the last.
    starts: Vec<(u64, u64)>,
    decoder: RawDecoder,
    /// The frame being decoded, if any.
    stream: Option<FrameStream>,
    /// Compressed bytes read from the source and not yet decoded:
    /// `input[taken..]`.
    input: Vec<u8>,
    taken: usize,
    /// Where decoded bytes before the position go.
    skip: Vec<u8>,
    /// The position in the decompressed data.
    pos: u64,
    /// Bytes of the source read so far (the table included).
    source_read: u64,
}

/// How far the frame being decoded has got.
struct FrameStream {
    index: usize,
    /// Bytes of the frame decoded so far.
    out: u64,
    /// Compressed bytes of the frame not yet read from the source.
    unread: u64,
    /// The XXH64 of what was decoded, for the table's checksum.
    hash: xxhash_rust::xxh64::Xxh64,
    /// zstd said the frame ended.
    ended: bool,
}

/// How much of the source one read takes, and how much is decoded (and
/// dropped) at a time before the position.
const CHUNK: usize = 64 << 10;

impl<R: Read + Seek> std::fmt::Debug for SeekableReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeekableReader")
            .field("frames", &self.table.entries.len())
            .field("pos", &self.pos)
            .finish()
    }
}

impl<R: Read + Seek> SeekableReader<R> {
    /// Reads the seek table at the end of `source`. A file without one,
    /// or whose table does not describe it, is an [`Error::SeekTable`].
    pub fn new(mut source: R) -> Result<Self> {
        let len = source.seek(SeekFrom::End(0)).map_err(Error::Io)?;
        let footer_at = len
            .checked_sub(FOOTER_LEN as u64)
            .ok_or_else(|| bad(0, "no seek table: the file is shorter than its footer"))?;
        let mut footer = [0u8; FOOTER_LEN];
        source.seek(SeekFrom::Start(footer_at)).map_err(Error::Io)?;
        source.read_exact(&mut footer).map_err(Error::Io)?;
        let table_len = SeekTable::len_from_footer(&footer)? as u64;
        let table_at = len
            .checked_sub(table_len)
            .ok_or_else(|| bad(0, "the seek table is longer than the file"))?;
        let mut tail = vec![0u8; table_len as usize];
        source.seek(SeekFrom::Start(table_at)).map_err(Error::Io)?;
        source.read_exact(&mut tail).map_err(Error::Io)?;
        let table = SeekTable::parse_with_len(&tail, Some(len))?;
        let mut starts = Vec::with_capacity(table.entries.len() + 1);
        let (mut c, mut d) = (0u64, 0u64);
        for e in &table.entries {
            starts.push((c, d));
            c += u64::from(e.compressed);
            d += u64::from(e.decompressed);
        }
        starts.push((c, d));
        Ok(SeekableReader {
            source,
            table,
            starts,
            decoder: RawDecoder::new()?,
            stream: None,
            input: Vec::new(),
            taken: 0,
            skip: Vec::new(),
            pos: 0,
            source_read: FOOTER_LEN as u64 + table_len,
        })
    }

    /// The seek table.
    pub fn table(&self) -> &SeekTable {
        &self.table
    }

    /// The decompressed data's length.
    pub fn len(&self) -> u64 {
        self.starts.last().map_or(0, |s| s.1)
    }

    /// Whether the data is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the source read so far, the table included: what a
    /// range cost.
    pub fn source_read(&self) -> u64 {
        self.source_read
    }

    /// The frame holding decompressed offset `pos` (< len).
    fn frame_of(&self, pos: u64) -> usize {
        // The last frame starting at or before pos; empty frames are
        // skipped by taking the last such start.
        self.starts.partition_point(|s| s.1 <= pos) - 1
    }

    /// An error about frame `i`.
    fn frame_err(&self, i: usize, why: String) -> Error {
        Error::SeekTable {
            offset: self.starts[i].0,
            why: format!("frame {i}: {why}"),
        }
    }

    /// Starts decoding frame `i` from its first byte.
    fn begin(&mut self, i: usize) -> Result<()> {
        self.source
            .seek(SeekFrom::Start(self.starts[i].0))
            .map_err(Error::Io)?;
        self.decoder.reset();
        self.input.clear();
        self.taken = 0;
        self.stream = Some(FrameStream {
            index: i,
            out: 0,
            unread: u64::from(self.table.entries[i].compressed),
            hash: xxhash_rust::xxh64::Xxh64::new(0),
            ended: false,
        });
        Ok(())
    }

    /// One decoder call on the current frame `i`: reads its next
    /// compressed bytes (up to [`CHUNK`]) when none are left in hand,
    /// decodes into `out`, and notes what was consumed and whether the
    /// frame ended. Also says whether every compressed byte of the frame
    /// is now consumed.
    fn step(&mut self, i: usize, out: &mut [u8]) -> Result<(DecodeStep, bool)> {
        let s = self.stream.as_mut().expect("a frame is begun");
        if self.taken == self.input.len() && s.unread > 0 {
            let n = CHUNK.min(s.unread as usize);
            self.input.resize(n, 0);
            self.source.read_exact(&mut self.input).map_err(Error::Io)?;
            self.taken = 0;
            s.unread -= n as u64;
            self.source_read += n as u64;
        }
        let step = self
            .decoder
            .decode(&self.input[self.taken..], out)
            .map_err(|e| Error::SeekTable {
                offset: self.starts[i].0,
                why: format!("frame {i}: {e}"),
            })?;
        self.taken += step.consumed;
        s.ended |= step.frame_ended;
        Ok((step, self.taken == self.input.len() && s.unread == 0))
    }

    /// Decodes the next bytes of the current frame into `out` (at most
    /// what is left of the frame), reading the source as needed; checks
    /// the frame against the table when its last byte is out.
    fn decode_into(&mut self, out: &mut [u8]) -> Result<usize> {
        let s = self.stream.as_ref().expect("a frame is begun");
        let i = s.index;
        let size = u64::from(self.table.entries[i].decompressed);
        let want = out.len().min((size - s.out) as usize);
        if want == 0 {
            return Ok(0);
        }
        loop {
            let (step, drained) = self.step(i, &mut out[..want])?;
            let s = self.stream.as_mut().expect("a frame is begun");
            if step.produced > 0 {
                s.hash.update(&out[..step.produced]);
                s.out += step.produced as u64;
                if s.out == size {
                    self.check_end(i)?;
                }
                return Ok(step.produced);
            }
            if step.consumed == 0 && drained {
                let got = s.out;
                return Err(
                    self.frame_err(i, format!("decodes to {got} bytes, the table says {size}"))
                );
            }
        }
    }

    /// The current frame `i` has given all the bytes the table promises:
    /// it must end there, its compressed bytes with it, with the table's
    /// checksum.
    fn check_end(&mut self, i: usize) -> Result<()> {
        let mut extra = [0u8; 1];
        while !self.stream.as_ref().expect("a frame is begun").ended {
            let (step, drained) = self.step(i, &mut extra)?;
            if step.produced > 0 {
                let size = self.table.entries[i].decompressed;
                return Err(
                    self.frame_err(i, format!("decodes to more bytes than the table's {size}"))
                );
            }
            if !step.frame_ended && step.consumed == 0 && drained {
                return Err(self.frame_err(i, "its compressed bytes end inside it".into()));
            }
        }
        let s = self.stream.as_ref().expect("a frame is begun");
        let left = (self.input.len() - self.taken) as u64 + s.unread;
        if left > 0 {
            return Err(self.frame_err(
                i,
                format!("{left} compressed bytes follow its end within the table's size"),
            ));
        }
        if let Some(sum) = self.table.entries[i].checksum
            && s.hash.digest() as u32 != sum
        {
            return Err(self.frame_err(i, "its checksum does not match the table's".into()));
        }
        Ok(())
    }

    /// Checks the frame the last read ended in, if it stopped inside one:
    /// decodes the rest of it (dropping the bytes) and checks its size and
    /// checksum against the table. A range that ends inside a frame is
    /// only known to be right once this passes; `perfkit decompress
    /// --range` calls it before it keeps the output.
    pub fn verify(&mut self) -> Result<()> {
        let Some(s) = &self.stream else {
            return Ok(());
        };
        let i = s.index;
        let size = u64::from(self.table.entries[i].decompressed);
        let mut skip = std::mem::take(&mut self.skip);
        skip.resize(CHUNK, 0);
        let mut result = Ok(());
        while self.stream.as_ref().is_some_and(|s| s.out < size) {
            if let Err(e) = self.decode_into(&mut skip) {
                result = Err(e);
                break;
            }
        }
        self.skip = skip;
        // Decoded to its end (and checked there), or failed: either way
        // the next read starts the frame again.
        self.stream = None;
        result
    }
}

impl<R: Read + Seek> Read for SeekableReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() || self.pos >= self.len() {
            return Ok(0);
        }
        let i = self.frame_of(self.pos);
        let within = self.pos - self.starts[i].1;
        let resume = matches!(&self.stream, Some(s) if s.index == i && s.out <= within);
        if !resume {
            self.begin(i).map_err(io::Error::other)?;
        }
        // Up to the position, decoded and dropped.
        let mut skip = std::mem::take(&mut self.skip);
        skip.resize(CHUNK, 0);
        while self.stream.as_ref().is_some_and(|s| s.out < within) {
            let behind = within - self.stream.as_ref().map_or(0, |s| s.out);
            let n = (behind as usize).min(CHUNK);
            if let Err(e) = self.decode_into(&mut skip[..n]) {
                self.skip = skip;
                self.stream = None;
                return Err(io::Error::other(e));
            }
        }
        self.skip = skip;
        match self.decode_into(buf) {
            Ok(n) => {
                self.pos += n as u64;
                Ok(n)
            }
            Err(e) => {
                self.stream = None;
                Err(io::Error::other(e))
            }
        }
    }
}

impl<R: Read + Seek> Seek for SeekableReader<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len().checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        match target {
            Some(p) => {
                self.pos = p;
                Ok(p)
            }
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a seek to before the start",
            )),
        }
    }
}

#[cfg(test)]
mod tests;
