//! The blocking writer over `std::io::Write`.

use std::io::{self, Read, Seek, SeekFrom, Write};

use super::DRAIN_AT;
use super::core::{Core, Patch, Written};
use crate::entry::EntryOptions;
use crate::error::Result;

type Patcher<W> = fn(&mut W, &Patch) -> io::Result<()>;

fn patch_seek<W: Write + Seek>(w: &mut W, p: &Patch) -> io::Result<()> {
    let end = w.stream_position()?;
    w.seek(SeekFrom::Start(p.offset))?;
    w.write_all(&p.bytes)?;
    w.seek(SeekFrom::Start(end))?;
    Ok(())
}

/// Writes a ZIP archive to any [`Write`] sink.
///
/// [`ZipWriter::new`] streams (data descriptors, works on pipes and sockets);
/// [`ZipWriter::new_seekable`] patches local headers instead. Entry data is
/// written through [`Write`] between [`start_entry`](Self::start_entry) and
/// [`finish_entry`](Self::finish_entry), or in one call with the `add_*` methods.
pub struct ZipWriter<W: Write> {
    sink: W,
    core: Core,
    patcher: Option<Patcher<W>>,
    chunk: Vec<u8>,
}

impl<W: Write> ZipWriter<W> {
    /// A streaming writer: never seeks, uses data descriptors for large entries.
    pub fn new(sink: W) -> ZipWriter<W> {
        ZipWriter {
            sink,
            core: Core::new(false),
            patcher: None,
            chunk: Vec::new(),
        }
    }

    /// Sets the archive comment (written by [`finish`](Self::finish)).
    pub fn set_comment(&mut self, comment: &str) -> Result<()> {
        self.core.set_comment(comment)
    }

    /// Opens a new entry; the previous one must be finished.
    pub fn start_entry(&mut self, opts: EntryOptions) -> Result<()> {
        self.core.start(opts)
    }

    /// Adds data to the open entry.
    pub fn write_data(&mut self, data: &[u8]) -> Result<()> {
        self.core.write(data)?;
        self.drain(false)
    }

    /// Closes the open entry (writes its descriptor or patches its header).
    pub fn finish_entry(&mut self) -> Result<()> {
        let patch = self.core.finish_entry()?;
        if let Some(p) = patch {
            self.drain(true)?;
            let f = self.patcher.expect("only seekable writers produce patches");
            f(&mut self.sink, &p)?;
        }
        self.drain(false)
    }

    /// Opens an entry fed with pre-compressed blocks (parallel writer).
    pub(crate) fn start_raw(&mut self, opts: EntryOptions, method: crate::Method) -> Result<()> {
        self.core.start_raw(opts, method)
    }

    /// Appends pre-compressed bytes to a raw entry.
    pub(crate) fn write_raw(
        &mut self,
        comp: &[u8],
        raw_len: u64,
        crc: Option<u32>,
        whole: bool,
    ) -> Result<()> {
        self.core.write_raw(comp, raw_len, crc, whole)?;
        self.drain(false)
    }

    /// Copies entry `index` of `from` into this archive as it is stored
    /// there: headers, extra fields, CRC and compressed (or encrypted)
    /// bytes unchanged, nothing decoded, so no password is needed and the
    /// cost is that of moving the bytes (Info-ZIP's `zip -d` keeps its
    /// other entries so). Returns the compressed bytes copied.
    pub fn copy_entry<R: Read + Seek>(
        &mut self,
        from: &mut crate::ZipArchive<R>,
        index: usize,
    ) -> Result<u64> {
        let source = from.copy_source(index)?;
        let crate::CopySource {
            entry,
            local,
            central,
            local_zip64,
            mut data,
        } = source;
        let total = entry.compressed_size;
        let data_at = entry.header_offset + local.len() as u64;
        self.core.start_copy(entry, &local, central, local_zip64)?;
        // The header out first; then the data straight from the source to
        // the sink (file to file, std::io::copy uses copy_file_range).
        self.drain(true)?;
        let n = io::copy(&mut data, &mut self.sink)?;
        self.core.copied(n)?;
        if n != total {
            return Err(crate::Error::Truncated {
                offset: data_at + n,
            });
        }
        self.core.finish_copy()?;
        self.drain(false)?;
        Ok(total)
    }

    /// Writes a whole entry from memory, its length the size hint unless
    /// `opts` gives one ([`EntryOptions::size_hint`]).
    pub fn add_bytes(&mut self, opts: EntryOptions, data: &[u8]) -> Result<()> {
        self.start_entry(opts.sized(data.len()))?;
        self.write_data(data)?;
        self.finish_entry()
    }

    /// Writes a whole entry from a reader; returns the bytes read.
    pub fn add_reader<R: Read>(&mut self, opts: EntryOptions, reader: &mut R) -> Result<u64> {
        self.start_entry(opts)?;
        let mut chunk = std::mem::take(&mut self.chunk);
        chunk.resize(DRAIN_AT, 0);
        let mut total = 0u64;
        let res = loop {
            match reader.read(&mut chunk) {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    total += n as u64;
                    if let Err(e) = self.write_data(&chunk[..n]) {
                        break Err(e);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e.into()),
            }
        };
        self.chunk = chunk;
        res?;
        self.finish_entry()?;
        Ok(total)
    }

    /// Writes a directory entry.
    pub fn add_directory(&mut self, opts: EntryOptions) -> Result<()> {
        self.add_bytes(opts, &[])
    }

    /// Writes a symlink entry pointing at `target`.
    pub fn add_symlink(&mut self, opts: EntryOptions, target: &str) -> Result<()> {
        self.add_bytes(opts, target.as_bytes())
    }

    /// Number of finished entries.
    pub fn entries(&self) -> usize {
        self.core.entries()
    }

    /// The finished entry number `index` (from 0, in the order written),
    /// or None if it is not finished yet.
    pub fn written(&self, index: usize) -> Option<Written> {
        self.core.written(index)
    }

    /// Writes the central directory and returns the sink (flushed).
    pub fn finish(mut self) -> Result<W> {
        self.core.finish()?;
        self.drain(true)?;
        self.sink.flush()?;
        Ok(self.sink)
    }

    /// The sink.
    pub fn get_ref(&self) -> &W {
        &self.sink
    }

    fn drain(&mut self, all: bool) -> Result<()> {
        if !self.core.out.is_empty() && (all || self.core.out.len() >= DRAIN_AT) {
            self.sink.write_all(&self.core.out)?;
            self.core.out.clear();
        }
        Ok(())
    }
}

impl<W: Write + Seek> ZipWriter<W> {
    /// A writer for a seekable sink: local headers are patched in place, no
    /// data descriptors. Starts at the sink's current position.
    pub fn new_seekable(mut sink: W) -> Result<ZipWriter<W>> {
        let base = sink.stream_position()?;
        let mut core = Core::new(true);
        core.set_base_offset(base);
        Ok(ZipWriter {
            sink,
            core,
            patcher: Some(patch_seek::<W>),
            chunk: Vec::new(),
        })
    }

    /// A seekable writer for an archive that replaces `from` (an update
    /// of it, as `zip -d`, `-u`, `-f` write): `from`'s preamble (a
    /// self-extractor's stub, whatever is before its first local header)
    /// goes first, byte for byte, and every offset after it counts from
    /// the start of the file, as `zip -A` writes them, whether or not
    /// `from`'s did ([`ZipArchive::offsets_shift`]). `from`'s comment is
    /// kept unless [`set_comment`](Self::set_comment) replaces it; its
    /// entries are kept with [`copy_entry`](Self::copy_entry).
    ///
    /// [`ZipArchive::offsets_shift`]: crate::ZipArchive::offsets_shift
    pub fn rewriting<R: Read + Seek>(
        mut sink: W,
        from: &mut crate::ZipArchive<R>,
    ) -> Result<ZipWriter<W>> {
        from.copy_preamble(&mut sink)?;
        let mut w = ZipWriter::new_seekable(sink)?;
        w.core.set_comment_bytes(from.raw_comment())?;
        Ok(w)
    }
}

impl<W: Write> Write for ZipWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_data(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.drain(true)?;
        self.sink.flush()
    }
}
