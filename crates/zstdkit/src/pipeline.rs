//! Pipelined I/O: a reader thread that reads ahead and a writer thread that
//! writes behind, so the CPU work of a [`job`](crate::job) (compression,
//! decoding) overlaps its input and output, as zstd's CLI does with its
//! asynchronous I/O.
//!
//! Both sides move data in a small, fixed pool of buffers that circulate
//! between the threads through bounded channels: memory stays at
//! `buffers x size` whatever the input's length, and a side that runs ahead
//! waits for a buffer to come back instead of growing.
//!
//! - [`ReadAhead`] is a [`BufRead`] over a reader that a thread drains into
//!   the pool; the consumer reads the filled buffers in place.
//! - [`WriteBehind`] is a [`Write`] whose full buffers a thread writes to the
//!   sink; [`WriteBehind::spare`] / [`WriteBehind::advance`] let a producer
//!   (a decoder) write straight into a buffer, without a copy.
//!
//! Errors cross the threads intact: a read error comes out of
//! [`BufRead::fill_buf`], and a write error (a broken pipe, a full disk)
//! out of the next write or [`WriteBehind::finish`], with its original
//! [`io::ErrorKind`], so callers treat them as they would a direct call's.

use std::io::{self, BufRead, Read, Write};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::thread::JoinHandle;

/// A buffer in flight and how many of its bytes hold data.
struct Chunk {
    buf: Vec<u8>,
    len: usize,
}

/// A [`BufRead`] fed by a thread that reads its source ahead of the
/// consumer, into `buffers` buffers of `size` bytes.
///
/// The thread fills each buffer completely (or up to the end of the input)
/// before handing it over, so a pipe that delivers a few KiB at a time
/// still gives the consumer large blocks.
///
/// Dropping a `ReadAhead` early does not wait for its thread, which may be
/// blocked reading a terminal or an idle pipe: the thread ends by itself at
/// its next hand-over.
pub struct ReadAhead {
    filled: Receiver<io::Result<Chunk>>,
    free: SyncSender<Vec<u8>>,
    current: Option<Chunk>,
    pos: usize,
    state: State,
}

/// Where a [`ReadAhead`]'s input stands once its current chunk is used up.
#[derive(Debug, Clone, Copy)]
enum State {
    /// More chunks may come.
    Open,
    /// The end marker arrived.
    Ended,
    /// The reader failed (or died) with this kind of error.
    Failed(io::ErrorKind),
}

impl ReadAhead {
    /// Starts the reading thread over `source`.
    pub fn new(source: Box<dyn Read + Send>, buffers: usize, size: usize) -> io::Result<Self> {
        assert!(buffers > 0 && size > 0, "a read-ahead needs buffers");
        let (free_tx, free_rx) = mpsc::sync_channel(buffers);
        let (filled_tx, filled_rx) = mpsc::sync_channel(buffers);
        for _ in 0..buffers {
            free_tx
                .try_send(vec![0u8; size])
                .expect("the free channel holds every buffer");
        }
        std::thread::Builder::new()
            .name("read-ahead".into())
            .spawn(move || read_loop(source, &free_rx, &filled_tx))?;
        Ok(ReadAhead {
            filled: filled_rx,
            free: free_tx,
            current: None,
            pos: 0,
            state: State::Open,
        })
    }
}

/// The reading thread: fills free buffers until the end of the input, a
/// read error, or the consumer going away. The end is an empty chunk, so
/// that a thread that dies (its channel closing without one) is never
/// mistaken for the end of the input.
fn read_loop(
    mut source: Box<dyn Read + Send>,
    free: &Receiver<Vec<u8>>,
    filled: &SyncSender<io::Result<Chunk>>,
) {
    while let Ok(mut buf) = free.recv() {
        let sent = match fill(&mut *source, &mut buf) {
            Ok(len) => {
                let end = len < buf.len();
                let mut ok = filled.send(Ok(Chunk { buf, len })).is_ok();
                if end && len > 0 {
                    ok = ok
                        && filled
                            .send(Ok(Chunk {
                                buf: Vec::new(),
                                len: 0,
                            }))
                            .is_ok();
                }
                ok && !end
            }
            Err(e) => {
                let _ = filled.send(Err(e));
                false
            }
        };
        if !sent {
            return;
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn fill(source: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl Read for ReadAhead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let data = self.fill_buf()?;
        let n = data.len().min(out.len());
        out[..n].copy_from_slice(&data[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ReadAhead {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let exhausted = self.current.as_ref().is_none_or(|c| self.pos >= c.len);
        if exhausted {
            match self.state {
                State::Open => {}
                State::Ended => return Ok(&[]),
                // The thread has stopped: a later call must not read its
                // closed channel as a clean end.
                State::Failed(kind) => return Err(io::Error::new(kind, "an earlier read failed")),
            }
            if let Some(done) = self.current.take() {
                // Never blocks: the channel has room for every buffer.
                let _ = self.free.try_send(done.buf);
            }
            self.pos = 0;
            match self.filled.recv() {
                Ok(Ok(chunk)) if chunk.len == 0 => self.state = State::Ended,
                Ok(Ok(chunk)) => self.current = Some(chunk),
                Ok(Err(e)) => {
                    self.state = State::Failed(e.kind());
                    return Err(e);
                }
                Err(_) => {
                    self.state = State::Failed(io::ErrorKind::Other);
                    return Err(io::Error::other("the input reader stopped unexpectedly"));
                }
            }
        }
        Ok(match &self.current {
            Some(c) => &c.buf[self.pos..c.len],
            None => &[],
        })
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

/// A [`Write`] whose data a thread writes to the sink behind the producer,
/// from a pool of at most `buffers` buffers of `size` bytes.
///
/// Call [`finish`](WriteBehind::finish) to learn whether everything was
/// written. Dropping a `WriteBehind` without it still writes what was
/// handed over and waits for the thread, so outputs written one after the
/// other to the same sink (stdout) never interleave.
pub struct WriteBehind {
    to_writer: Option<SyncSender<Chunk>>,
    free: Receiver<Vec<u8>>,
    current: Vec<u8>,
    len: usize,
    size: usize,
    /// Buffers allocated so far; at most `buffers`.
    allocated: usize,
    buffers: usize,
    written: u64,
    /// The writing thread, which gives the sink back when it is done.
    thread: Option<JoinHandle<io::Result<Box<dyn Write + Send>>>>,
}

impl WriteBehind {
    /// Starts the writing thread over `sink`.
    pub fn new(sink: Box<dyn Write + Send>, buffers: usize, size: usize) -> io::Result<Self> {
        assert!(buffers > 0 && size > 0, "a write-behind needs buffers");
        let (to_writer, from_producer) = mpsc::sync_channel::<Chunk>(buffers);
        let (free_tx, free_rx) = mpsc::sync_channel(buffers);
        let thread = std::thread::Builder::new()
            .name("write-behind".into())
            .spawn(move || write_loop(sink, &from_producer, &free_tx))?;
        Ok(WriteBehind {
            to_writer: Some(to_writer),
            free: free_rx,
            current: vec![0u8; size],
            len: 0,
            size,
            allocated: 1,
            buffers,
            written: 0,
            thread: Some(thread),
        })
    }

    /// Bytes accepted so far (written, or queued to be).
    pub fn accepted(&self) -> u64 {
        self.written
    }

    /// Room in the current buffer to write into directly, never empty;
    /// follow with [`advance`](WriteBehind::advance) by the bytes used.
    pub fn spare(&mut self) -> io::Result<&mut [u8]> {
        if self.len == self.size {
            self.hand_over()?;
        }
        Ok(&mut self.current[self.len..])
    }

    /// Counts `n` bytes written into [`spare`](WriteBehind::spare)'s room.
    pub fn advance(&mut self, n: usize) {
        assert!(self.len + n <= self.size, "advanced past the buffer");
        self.len += n;
        self.written += n as u64;
    }

    /// Hands the current buffer to the thread and takes a free one: one the
    /// thread returned, a new one while the pool is not full, else waits for
    /// the thread to return one.
    fn hand_over(&mut self) -> io::Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        let next = match self.free.try_recv() {
            Ok(buf) => Some(buf),
            Err(TryRecvError::Empty) if self.allocated < self.buffers => {
                self.allocated += 1;
                Some(vec![0u8; self.size])
            }
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => return Err(self.writer_failure()),
        };
        let full = Chunk {
            buf: std::mem::take(&mut self.current),
            len: std::mem::take(&mut self.len),
        };
        let sender = self.to_writer.as_ref().expect("open until finish");
        if sender.send(full).is_err() {
            return Err(self.writer_failure());
        }
        self.current = match next {
            Some(buf) => buf,
            None => match self.free.recv() {
                Ok(buf) => buf,
                Err(_) => return Err(self.writer_failure()),
            },
        };
        Ok(())
    }

    /// The thread stopped early: its error, with its original kind.
    fn writer_failure(&mut self) -> io::Error {
        self.to_writer = None;
        match self.join() {
            Err(e) => e,
            Ok(_) => io::Error::other("the output writer stopped unexpectedly"),
        }
    }

    fn join(&mut self) -> io::Result<Box<dyn Write + Send>> {
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the output writer panicked"))),
            None => Err(io::Error::other("the output writer already stopped")),
        }
    }

    /// Writes what is left, waits for the thread and returns the bytes
    /// written, or the first error the sink gave.
    pub fn finish(self) -> io::Result<u64> {
        self.into_sink().map(|(_, written)| written)
    }

    /// As [`finish`](WriteBehind::finish), and gives the sink back (flushed)
    /// for the caller to write to directly.
    pub fn into_sink(mut self) -> io::Result<(Box<dyn Write + Send>, u64)> {
        self.hand_over()?;
        self.to_writer = None;
        let sink = self.join()?;
        Ok((sink, self.written))
    }
}

/// The writing thread: writes each chunk and returns its buffer, then
/// flushes the sink once the producer is done and gives it back. The
/// first error ends it; the producer learns of it when its next
/// hand-over finds the channels closed.
fn write_loop(
    mut sink: Box<dyn Write + Send>,
    chunks: &Receiver<Chunk>,
    free: &SyncSender<Vec<u8>>,
) -> io::Result<Box<dyn Write + Send>> {
    for chunk in chunks {
        sink.write_all(&chunk.buf[..chunk.len])?;
        // Never blocks: the channel has room for every buffer.
        let _ = free.try_send(chunk.buf);
    }
    sink.flush()?;
    Ok(sink)
}

impl Write for WriteBehind {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = self.spare()?;
        let n = room.len().min(data.len());
        room[..n].copy_from_slice(&data[..n]);
        self.advance(n);
        Ok(n)
    }

    /// Hands what is buffered to the thread, without waiting for it to be
    /// written: [`WriteBehind::finish`] is the point at which all of it is.
    fn flush(&mut self) -> io::Result<()> {
        self.hand_over()
    }
}

impl Drop for WriteBehind {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.hand_over();
            self.to_writer = None;
            let _ = self.join();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};

    /// Bytes `0..len` of a fixed pseudo-random sequence.
    fn data(len: usize) -> Vec<u8> {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    /// A source that returns at most 1, 2, 3 … 7 bytes per read, in turn,
    /// as a pipe delivering small writes would.
    struct Dribble {
        data: Vec<u8>,
        pos: usize,
        turn: usize,
    }

    impl Read for Dribble {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.turn = self.turn % 7 + 1;
            let n = self.turn.min(out.len()).min(self.data.len() - self.pos);
            out[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    /// Gives `ok` bytes, then fails with `kind` (or panics).
    struct FailAfter {
        ok: usize,
        kind: Option<io::ErrorKind>,
    }

    impl Read for FailAfter {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.ok == 0 {
                match self.kind {
                    Some(kind) => return Err(io::Error::new(kind, "source failed")),
                    None => panic!("source panicked (expected by the test)"),
                }
            }
            let n = self.ok.min(out.len());
            out[..n].fill(7);
            self.ok -= n;
            Ok(n)
        }
    }

    #[test]
    fn read_ahead_delivers_every_byte_at_every_boundary() {
        let size = 64;
        for len in [0, 1, size - 1, size, size + 1, 2 * size, 5 * size + 3] {
            for buffers in [1, 2, 4] {
                let want = data(len);
                let source = Dribble {
                    data: want.clone(),
                    pos: 0,
                    turn: 0,
                };
                let mut r = ReadAhead::new(Box::new(source), buffers, size).unwrap();
                let mut got = Vec::new();
                // Through fill_buf/consume in odd steps, as a decoder does.
                loop {
                    let chunk = r.fill_buf().unwrap();
                    if chunk.is_empty() {
                        break;
                    }
                    let n = chunk.len().min(5);
                    got.extend_from_slice(&chunk[..n]);
                    r.consume(n);
                }
                assert_eq!(got, want, "len {len}, {buffers} buffers");
                assert!(r.fill_buf().unwrap().is_empty(), "the end stays the end");
            }
        }
    }

    #[test]
    fn read_error_keeps_its_kind_after_the_data_before_it() {
        let source = FailAfter {
            ok: 100,
            kind: Some(io::ErrorKind::PermissionDenied),
        };
        let mut r = ReadAhead::new(Box::new(source), 2, 64).unwrap();
        let mut got = Vec::new();
        let err = r.read_to_end(&mut got).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(err.to_string(), "source failed");
        // The 64-byte buffer that filled before the error was delivered.
        assert_eq!(got, vec![7; 64]);
        let again = r.fill_buf().unwrap_err();
        assert_eq!(
            again.kind(),
            io::ErrorKind::PermissionDenied,
            "never a clean end"
        );
    }

    #[test]
    fn a_reader_that_dies_is_an_error_not_the_end() {
        let source = FailAfter { ok: 10, kind: None };
        let mut r = ReadAhead::new(Box::new(source), 2, 64).unwrap();
        let err = r.read_to_end(&mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("stopped unexpectedly"), "{err}");
    }

    /// A sink shared with the test, to see what the thread (or a job)
    /// wrote.
    #[derive(Clone, Default)]
    pub(crate) struct Shared(pub(crate) Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn write_behind_writes_every_byte_in_order() {
        let want = data(10_000);
        for (buffers, size) in [(1, 1), (1, 64), (3, 64), (4, 4096)] {
            let sink = Shared::default();
            let mut w = WriteBehind::new(Box::new(sink.clone()), buffers, size).unwrap();
            let mut pos = 0;
            let mut turn = 0;
            while pos < want.len() {
                turn = turn % 200 + 1;
                let n = turn.min(want.len() - pos);
                if turn % 2 == 0 {
                    w.write_all(&want[pos..pos + n]).unwrap();
                    pos += n;
                } else {
                    // Straight into the buffer, as the decoder writes.
                    let room = w.spare().unwrap();
                    let n = n.min(room.len());
                    room[..n].copy_from_slice(&want[pos..pos + n]);
                    w.advance(n);
                    pos += n;
                }
            }
            assert_eq!(w.finish().unwrap(), want.len() as u64);
            assert_eq!(*sink.0.lock().unwrap(), want, "{buffers} x {size}");
        }
    }

    #[test]
    fn dropping_without_finish_still_writes_what_was_given() {
        let sink = Shared::default();
        let mut w = WriteBehind::new(Box::new(sink.clone()), 2, 64).unwrap();
        w.write_all(&data(1000)).unwrap();
        drop(w);
        assert_eq!(*sink.0.lock().unwrap(), data(1000));
    }

    /// Accepts `room` bytes, then fails every write with `kind`.
    struct Refuses {
        room: usize,
        kind: io::ErrorKind,
    }

    impl Write for Refuses {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::new(self.kind, "sink refused"));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_sink_error_reaches_the_producer_with_its_kind() {
        // Early: a later write fails; late: only finish can tell.
        for (room, total) in [(100, 100_000), (900, 1000)] {
            let sink = Refuses {
                room,
                kind: io::ErrorKind::BrokenPipe,
            };
            let mut w = WriteBehind::new(Box::new(sink), 2, 64).unwrap();
            let err = match w.write_all(&data(total)) {
                Err(e) => e,
                Ok(()) => w.finish().unwrap_err(),
            };
            assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "{err}");
        }
    }

    /// Blocks every write until the test lets it go.
    struct Stalled(Arc<Mutex<()>>);

    impl Write for Stalled {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let _gate = self.0.lock().unwrap();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stalled_sink_holds_the_producer_to_the_pool() {
        let (buffers, size) = (3, 1024);
        let gate = Arc::new(Mutex::new(()));
        let held = gate.lock().unwrap();
        let accepted = Arc::new(AtomicU64::new(0));
        let producer = {
            let (gate, accepted) = (Arc::clone(&gate), Arc::clone(&accepted));
            std::thread::spawn(move || {
                let mut w = WriteBehind::new(Box::new(Stalled(gate)), buffers, size).unwrap();
                for _ in 0..100 {
                    w.write_all(&[1; 1024]).unwrap();
                    accepted.store(w.accepted(), Ordering::SeqCst);
                }
                w.finish().unwrap()
            })
        };
        // Give the producer every chance to run ahead of the stalled sink.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let ahead = accepted.load(Ordering::SeqCst);
        // The pool's buffers plus the one the stalled write holds.
        assert!(
            ahead <= ((buffers + 1) * size) as u64,
            "{ahead} bytes accepted past a stalled sink"
        );
        drop(held);
        assert_eq!(producer.join().unwrap(), 100 * 1024);
    }
}
