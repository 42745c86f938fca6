//! Parallel compression: entries and blocks compressed on worker threads,
//! written in order by the caller's thread with bounded buffering.
//!
//! Input is cut into blocks (1 MiB by default). Each block is deflated on a
//! worker independently, as one libdeflate piece (the private `codec::piece` module):
//! with no dictionary (libdeflate takes none; at 1 MiB that costs under
//! 0.4 % of size on sources, less on binaries), and ended on a byte boundary
//! with its stream still open, as pigz's sync flush does, so the blocks
//! concatenate into one valid deflate stream. The last block of an entry
//! ends the stream. CRCs are computed per block
//! and combined (not at all for an AE-2 entry, which stores none). A block that does not shrink is re-emitted as deflate
//! stored blocks; an entry that fits in one block and does not shrink is
//! written with the stored method.
//!
//! At most `window` blocks are in flight, and entries written as is (not
//! deflated here) wait behind them only while they hold at most `window ×
//! block_size` bytes together, each at most a block (a larger one is
//! streamed once the work before it is out), so memory is bounded by about
//! `window × 3 × block_size` whatever the input size.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::thread::JoinHandle;

use crossbeam::channel::{Receiver, Sender, bounded};

use crate::codec::piece::FINAL_EMPTY_STORED;
use crate::codec::{DENSE_IN, Deflater, DenseStream, WINDOW, put_stored};

use crate::entry::{EntryKind, EntryOptions, Method};
use crate::error::{Error, Result};
use crate::write::sync::ZipWriter;

/// Settings for [`ParallelZipWriter`].
#[derive(Debug, Clone, Copy)]
pub struct ParallelOptions {
    /// Worker threads.
    pub jobs: usize,
    /// Input bytes per block.
    pub block_size: usize,
    /// Blocks in flight (compressing or waiting to be written).
    pub window: usize,
}

impl ParallelOptions {
    /// `jobs` workers, 1 MiB blocks, a window of `2 × jobs + 1` blocks.
    /// Each block is one deflate piece, half the one-thread writer's,
    /// since the window holds that many blocks with their output.
    pub fn new(jobs: usize) -> ParallelOptions {
        let jobs = jobs.max(1);
        ParallelOptions {
            jobs,
            block_size: 1 << 20,
            window: 2 * jobs + 1,
        }
    }
}

struct Job {
    data: Vec<u8>,
    /// The previous block's last [`WINDOW`] bytes (none for an entry's
    /// first), for a dense block's stream to start from.
    dict: Vec<u8>,
    level: u32,
    /// Whether the entry keeps a CRC; an AE-2 entry does not, so its blocks
    /// are not hashed.
    crc: bool,
    last: bool,
    whole: bool,
    reply: Sender<Done>,
}

struct Done {
    data: Vec<u8>,
    comp: Vec<u8>,
    /// The block's CRC, if the job asked for one.
    crc: Option<u32>,
    shrank: bool,
}

enum Pending {
    Start(Box<EntryOptions>),
    Block {
        rx: Receiver<Done>,
        whole: bool,
    },
    /// An entry of at most a block, written as is.
    Plain(Box<EntryOptions>, Vec<u8>),
    End,
}

/// A ZIP writer that compresses on worker threads. Entries are written in
/// the order they were added; output bytes differ from [`ZipWriter`]'s
/// (block boundaries) but any reader decodes them identically.
pub struct ParallelZipWriter<W: Write> {
    inner: Option<ZipWriter<W>>,
    opts: ParallelOptions,
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
    queue: VecDeque<Pending>,
    in_flight: usize,
    /// Bytes of the entries written as is that wait in `queue`.
    plain_held: usize,
    spare: Vec<Vec<u8>>,
}

impl<W: Write> ParallelZipWriter<W> {
    /// Wraps a writer (streaming or seekable) and starts the workers.
    pub fn new(inner: ZipWriter<W>, opts: ParallelOptions) -> ParallelZipWriter<W> {
        let (tx, rx) = bounded::<Job>(opts.window.max(1));
        let workers = (0..opts.jobs.max(1))
            .map(|_| {
                let rx = rx.clone();
                std::thread::spawn(move || worker(rx))
            })
            .collect();
        ParallelZipWriter {
            inner: Some(inner),
            opts,
            jobs: Some(tx),
            workers,
            queue: VecDeque::new(),
            in_flight: 0,
            plain_held: 0,
            spare: Vec::new(),
        }
    }

    fn w(&mut self) -> &mut ZipWriter<W> {
        self.inner.as_mut().expect("present until finish")
    }

    fn buffer(&mut self) -> Vec<u8> {
        // Buffers grow to the block size only when an entry is that large,
        // and are recycled, so small entries do not pay for 1 MiB each.
        let mut b = self.spare.pop().unwrap_or_default();
        b.clear();
        b
    }

    /// Adds an entry read from `reader`; returns the bytes read.
    pub fn add_reader<R: Read>(&mut self, opts: EntryOptions, reader: &mut R) -> Result<u64> {
        if opts.kind != EntryKind::File || opts.method != Method::Deflate || opts.level == 0 {
            // Written as is. One of at most a block (a directory, a link,
            // a small file) waits in memory behind the blocks in flight,
            // which keep going; a larger one is streamed from the reader
            // once they are out, never held whole (a stored file, or
            // stdin, of any size).
            let limit = self.opts.block_size as u64;
            let mut head = Vec::new();
            (&mut *reader).take(limit + 1).read_to_end(&mut head)?;
            if head.len() as u64 <= limit {
                let n = head.len() as u64;
                // What waits so is bounded as the blocks in flight are: past
                // a window of blocks' worth, everything is written first.
                self.plain_held += head.len();
                let full = self.plain_held > self.opts.window * self.opts.block_size;
                self.queue.push_back(Pending::Plain(Box::new(opts), head));
                self.pump(full)?;
                return Ok(n);
            }
            self.pump(true)?;
            return self.w().add_reader(opts, &mut (&head[..]).chain(reader));
        }
        let level = opts.level;
        let crc = opts.keeps_crc();
        self.queue.push_back(Pending::Start(Box::new(opts)));
        let mut total = 0u64;
        let mut cur = self.buffer();
        fill(reader, &mut cur, self.opts.block_size)?;
        let mut first = true;
        let mut dict = Vec::new();
        loop {
            let mut next = self.buffer();
            if cur.len() == self.opts.block_size {
                fill(reader, &mut next, self.opts.block_size)?;
            }
            let last = next.is_empty();
            total += cur.len() as u64;
            let (reply, rx) = bounded(1);
            let tail = cur[cur.len().saturating_sub(WINDOW)..].to_vec();
            let job = Job {
                data: cur,
                dict: std::mem::replace(&mut dict, tail),
                level,
                crc,
                last,
                whole: first && last,
                reply,
            };
            self.queue.push_back(Pending::Block {
                rx,
                whole: first && last,
            });
            self.in_flight += 1;
            self.jobs
                .as_ref()
                .expect("workers run until finish")
                .send(job)
                .map_err(|_| Error::State("worker pool stopped"))?;
            self.pump(false)?;
            first = false;
            if last {
                self.spare.push(next);
                break;
            }
            cur = next;
        }
        self.queue.push_back(Pending::End);
        self.pump(false)?;
        Ok(total)
    }

    /// Adds an entry from memory, its length the size hint unless `opts`
    /// gives one ([`EntryOptions::size_hint`]).
    pub fn add_bytes(&mut self, opts: EntryOptions, data: &[u8]) -> Result<()> {
        self.add_reader(opts.sized(data.len()), &mut &data[..])
            .map(|_| ())
    }

    /// Copies entry `index` of `from` as it is stored there, after every
    /// entry added before it ([`ZipWriter::copy_entry`]); returns the
    /// compressed bytes copied.
    pub fn copy_entry<R: Read + std::io::Seek>(
        &mut self,
        from: &mut crate::ZipArchive<R>,
        index: usize,
    ) -> Result<u64> {
        self.pump(true)?;
        self.w().copy_entry(from, index)
    }

    /// Waits until every entry added so far is written, so that
    /// [`written`](Self::written) knows them all.
    pub fn settle(&mut self) -> Result<()> {
        self.pump(true)
    }

    /// The finished entry number `index` (from 0, in the order added), or
    /// None if its compression has not finished yet.
    pub fn written(&self, index: usize) -> Option<crate::Written> {
        self.inner.as_ref()?.written(index)
    }

    /// Writes completed work in order; with `all`, waits for everything.
    fn pump(&mut self, all: bool) -> Result<()> {
        while let Some(front) = self.queue.front() {
            let must_wait = all || self.in_flight > self.opts.window;
            match front {
                Pending::Start(_) => {
                    // A one-block entry is written with exact sizes once its
                    // block is done; otherwise the header goes out now.
                    let whole =
                        matches!(self.queue.get(1), Some(Pending::Block { whole: true, .. }));
                    if whole {
                        let Some(Pending::Block { rx, .. }) = self.queue.get(1) else {
                            unreachable!()
                        };
                        let done = if must_wait {
                            rx.recv().map_err(|_| Error::State("worker pool stopped"))?
                        } else {
                            match rx.try_recv() {
                                Ok(d) => d,
                                Err(_) => return Ok(()),
                            }
                        };
                        let Some(Pending::Start(opts)) = self.queue.pop_front() else {
                            unreachable!()
                        };
                        self.queue.pop_front();
                        self.in_flight -= 1;
                        let (method, body) = if done.shrank {
                            (Method::Deflate, &done.comp)
                        } else {
                            (Method::Stored, &done.data)
                        };
                        self.w().start_raw(*opts, method)?;
                        self.w()
                            .write_raw(body, done.data.len() as u64, done.crc, true)?;
                        self.spare.push(done.data);
                        self.spare.push(done.comp);
                    } else if matches!(self.queue.get(1), Some(Pending::Block { .. })) {
                        let Some(Pending::Start(opts)) = self.queue.pop_front() else {
                            unreachable!()
                        };
                        self.w().start_raw(*opts, Method::Deflate)?;
                    } else {
                        return Ok(());
                    }
                }
                Pending::Block { rx, .. } => {
                    let done = if must_wait {
                        rx.recv().map_err(|_| Error::State("worker pool stopped"))?
                    } else {
                        match rx.try_recv() {
                            Ok(d) => d,
                            Err(_) => return Ok(()),
                        }
                    };
                    self.queue.pop_front();
                    self.in_flight -= 1;
                    self.w()
                        .write_raw(&done.comp, done.data.len() as u64, done.crc, false)?;
                    self.spare.push(done.data);
                    self.spare.push(done.comp);
                }
                Pending::End => {
                    self.queue.pop_front();
                    self.w().finish_entry()?;
                }
                Pending::Plain(..) => {
                    let Some(Pending::Plain(opts, data)) = self.queue.pop_front() else {
                        unreachable!()
                    };
                    self.plain_held -= data.len();
                    self.w().add_bytes(*opts, &data)?;
                }
            }
            self.spare.truncate(2 * self.opts.window);
        }
        Ok(())
    }

    /// Waits for all work, writes the central directory, stops the workers
    /// and returns the sink.
    pub fn finish(mut self) -> Result<W> {
        self.pump(true)?;
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        self.inner
            .take()
            .expect("finish consumes the writer")
            .finish()
    }
}

impl<W: Write> Drop for ParallelZipWriter<W> {
    fn drop(&mut self) {
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

fn fill<R: Read>(r: &mut R, buf: &mut Vec<u8>, want: usize) -> Result<()> {
    while buf.len() < want {
        let start = buf.len();
        // Grow geometrically from 64 KiB so a short input stays small.
        let step = (start.max(64 * 1024)).min(want - start);
        buf.resize(start + step, 0);
        match r.read(&mut buf[start..]) {
            Ok(0) => {
                buf.truncate(start);
                return Ok(());
            }
            Ok(n) => buf.truncate(start + n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => buf.truncate(start),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn worker(rx: Receiver<Job>) {
    let mut engines: Vec<Option<Deflater>> = (0..=9).map(|_| None).collect();
    while let Ok(job) = rx.recv() {
        let crc = job.crc.then(|| crc32fast::hash(&job.data));
        let engine =
            engines[job.level.min(9) as usize].get_or_insert_with(|| Deflater::new(job.level));
        let mut comp = Vec::with_capacity(job.data.len() / 2 + 1024);
        // As the one-thread writer does: 64 KiB stretches that look
        // incompressible go out as stored blocks, the rest as pieces.
        engine.encode(&job.data, &mut comp);
        if job.last {
            engine.finish(&mut comp);
        } else {
            engine.end_stretch(&mut comp);
        }
        if comp.len() * DENSE_IN <= job.data.len() && !job.dict.is_empty() {
            // Dense data: the block again in a stream primed with the end
            // of the previous one, as pigz primes its blocks, since here
            // relearning the data is most of a fresh piece's size (one
            // 4 KiB random block repeated: 30 % larger in 1 MiB pieces).
            let mut z = DenseStream::new(job.level, &job.dict);
            let mut primed = Vec::with_capacity(comp.len() + 1024);
            z.put(&job.data, &mut primed);
            if job.last {
                z.finish(&mut primed);
            } else {
                z.sync(&mut primed);
            }
            if primed.len() < comp.len() {
                comp = primed;
            }
        }
        let shrank = comp.len() < job.data.len();
        // Stored blocks cost 5 bytes per 64 KiB over the data (and 5 for the
        // end): a block that came out larger than that is stored instead.
        let stored_len = job.data.len() + 5 * (job.data.len().div_ceil(0xFFFF) + 1);
        if comp.len() > stored_len && !job.whole {
            // Keep the stream valid but cheap: deflate stored blocks.
            comp.clear();
            put_stored(&job.data, &mut comp);
            if job.last {
                comp.extend_from_slice(&FINAL_EMPTY_STORED);
            }
        }
        let _ = job.reply.send(Done {
            data: job.data,
            comp,
            crc,
            shrank,
        });
    }
}
