//! Writing the archive: the steps of a plan added, in order, to one of
//! zipstream's writers (inline or parallel, streamed or seekable).

use std::fs;
use std::io::{self, BufWriter, Read, Write};

use anyhow::{Context, Result, anyhow};
use zipstream::{
    EntryOptions, Method, ParallelOptions, ParallelZipWriter, Written, ZipArchive, ZipWriter,
};

use super::announce::Announcer;
use super::items::{Item, mtime, open_item};
use super::{Options, Step, Update};

/// The options of `item`'s entry: its kind, time and mode as listed, the
/// method and level asked for, and AES when encrypting (not directories).
pub(super) fn entry_options(
    item: &Item,
    opts: &Options,
    password: &Option<Vec<u8>>,
) -> Result<EntryOptions> {
    use std::os::unix::fs::MetadataExt;
    let m = &item.meta;
    let mtime = mtime(m);
    let mut o = if item.path.as_os_str() == "-" {
        EntryOptions::file("-")
    } else if m.is_dir() {
        EntryOptions::directory(&item.name)
    } else if m.file_type().is_symlink() {
        EntryOptions::symlink(&item.name)
    } else {
        // -l can double a file's size (every byte a LF); -ll only shrinks.
        let most = if opts.line_ends == Some(super::items::LineEnds::ToDos) {
            m.len().saturating_mul(2)
        } else {
            m.len()
        };
        EntryOptions::file(&item.name).size_hint(most)
    };
    o = o
        .mtime(mtime)
        .unix_mode(if m.is_file() || m.is_dir() || m.file_type().is_symlink() {
            m.mode() & 0o7777
        } else {
            0o644
        })
        .level(opts.level);
    o = match opts.method {
        // Info-ZIP's -0 stores; a deflate stream at level 0 would only
        // wrap the same bytes in block headers.
        Method::Deflate if opts.level == 0 => o.method(Method::Stored),
        m => o.method(m),
    };
    // -n: names with these endings are stored; the case counts, as in
    // Info-ZIP on Unix (`.JPG` is not a `.jpg`).
    if m.is_file() && opts.store_suffixes.iter().any(|x| item.name.ends_with(x)) {
        o = o.method(Method::Stored);
    }
    if opts.no_extra {
        o = o.no_timestamp_extra();
    }
    if opts.dos_names {
        o = o.made_on_dos();
    }
    if let Some(c) = opts.entry_comments.get(&item.name) {
        o = o.comment(c.clone());
    }
    if let (Some(strength), Some(pw)) = (opts.encrypt, password)
        && !m.is_dir()
    {
        o = o.encrypt(strength, pw.clone());
    }
    Ok(o)
}

/// The archive an update reads its kept entries from.
type Source = ZipArchive<io::BufReader<fs::File>>;

/// What the entry writers have in common for the tool.
pub(super) trait Sink {
    fn add(&mut self, opts: EntryOptions, r: &mut dyn Read) -> Result<()>;
    /// Copies entry `index` of `from` as it is stored (a kept entry).
    fn copy(&mut self, from: &mut Source, index: usize) -> Result<()>;
    /// What the writer knows of finished entry `index`.
    fn written(&self, index: usize) -> Option<Written>;
    /// Waits until every entry added is finished.
    fn settle(&mut self) -> Result<()>;
}

/// A reader that advances the progress bar by what it reads.
pub(super) struct Counting<'a, R> {
    pub(super) inner: R,
    pub(super) bar: &'a indicatif::ProgressBar,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}

impl<W: Write> Sink for ZipWriter<W> {
    fn add(&mut self, opts: EntryOptions, r: &mut dyn Read) -> Result<()> {
        self.add_reader(opts, &mut { r })?;
        Ok(())
    }

    fn copy(&mut self, from: &mut Source, index: usize) -> Result<()> {
        self.copy_entry(from, index)?;
        Ok(())
    }

    fn written(&self, index: usize) -> Option<Written> {
        ZipWriter::written(self, index)
    }

    fn settle(&mut self) -> Result<()> {
        Ok(())
    }
}

impl<W: Write> Sink for ParallelZipWriter<W> {
    fn add(&mut self, opts: EntryOptions, r: &mut dyn Read) -> Result<()> {
        self.add_reader(opts, &mut { r })?;
        Ok(())
    }

    fn copy(&mut self, from: &mut Source, index: usize) -> Result<()> {
        self.copy_entry(from, index)?;
        Ok(())
    }

    fn written(&self, index: usize) -> Option<Written> {
        ParallelZipWriter::written(self, index)
    }

    fn settle(&mut self) -> Result<()> {
        Ok(ParallelZipWriter::settle(self)?)
    }
}

/// Adds every step to `sink` in order (an item from its file, a kept
/// entry from the archive being updated), announcing each entry as the
/// writer finishes it.
pub(super) fn write_all_items(
    sink: &mut dyn Sink,
    steps: &[Step<'_>],
    update: Option<&mut Update>,
    opts: &Options,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    announcer: &mut Announcer,
) -> Result<()> {
    let mut update = update;
    for step in steps {
        // Output errors (a closed pipe) surface when the archive itself
        // is written; a lost message line must not fail it.
        let _ = announcer.catch_up(|i| sink.written(i));
        match step {
            Step::Item(item) => {
                let entry = entry_options(item, opts, pw)?;
                let mut r = Counting {
                    inner: open_item(item, opts)?,
                    bar,
                };
                sink.add(entry, &mut r)
                    .with_context(|| format!("adding {}", item.path.display()))?;
            }
            Step::Kept(i) => {
                let u = update.as_deref_mut().ok_or_else(|| {
                    anyhow!("internal: a kept entry without an archive to update")
                })?;
                // Copied as it is stored, as Info-ZIP keeps entries: no
                // decoding, no password, the compressed bytes unchanged.
                let name = u.archive.entries()[*i].name.clone();
                sink.copy(&mut u.archive, *i)
                    .with_context(|| format!("{}: keeping entry {name:?}", u.path.display()))?;
            }
        }
    }
    sink.settle()?;
    let _ = announcer.catch_up(|i| sink.written(i));
    Ok(())
}

/// Writes the archive as a stream (data descriptors, no seeking) to `out`:
/// stdout, or a device or FIFO written in place.
pub(super) fn stream_archive(
    out: impl Write,
    steps: &[Step<'_>],
    opts: &Options,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    popts: ParallelOptions,
    announcer: &mut Announcer,
) -> Result<()> {
    let out = BufWriter::with_capacity(128 << 10, out);
    write_archive(
        ZipWriter::new(out),
        steps,
        None,
        opts,
        pw,
        bar,
        popts,
        announcer,
    )?
    .flush()?;
    Ok(())
}

/// Adds every step to `w` (streamed or seekable), through a
/// [`ParallelZipWriter`] when `--jobs` is above 1, and finishes the
/// archive; returns the sink, for the caller to flush.
#[allow(clippy::too_many_arguments)] // one call site each, all of them needed
pub(super) fn write_archive<W: Write>(
    w: ZipWriter<W>,
    steps: &[Step<'_>],
    update: Option<&mut Update>,
    opts: &Options,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    popts: ParallelOptions,
    announcer: &mut Announcer,
) -> Result<W> {
    if opts.jobs > 1 {
        let mut w = ParallelZipWriter::new(w, popts);
        write_all_items(&mut w, steps, update, opts, pw, bar, announcer)?;
        Ok(w.finish()?)
    } else {
        let mut w = w;
        write_all_items(&mut w, steps, update, opts, pw, bar, announcer)?;
        Ok(w.finish()?)
    }
}
