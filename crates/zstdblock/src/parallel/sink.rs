//! The last two stages: the hasher, which checks each frame's XXH64, and
//! the writer, on the caller's thread, which waits at a checksummed
//! frame's end for the hasher's verdict; and the buffers both hand back
//! to the executor.

use std::io::{self, Write};
use std::sync::Arc;

use crossbeam::channel::{Receiver, Sender};

use crate::StreamError;
use crate::error::Error;

/// A buffer of output handed on: bytes `..len` of it.
pub(super) struct Chunk {
    pub(super) buf: Vec<u8>,
    pub(super) len: usize,
}

/// What the executor sends the hasher.
pub(super) enum ToHasher {
    /// Make the executor's second output buffer, this long, its pages
    /// touched, and put it in the pool (see [`spare`]).
    Spare(usize),
    Data(Arc<Chunk>),
    End {
        index: usize,
        offset: usize,
        stored: u32,
    },
}

/// What the executor sends the writer.
pub(super) enum ToWriter {
    Data(Arc<Chunk>),
    /// Wait for the hasher's verdict on the frame just written.
    Verify,
    Fail(Error),
    Unreadable(io::Error),
}

/// The hasher: each checksummed frame's XXH64, a verdict at its end.
pub(super) fn hash(
    chunks: Receiver<ToHasher>,
    verdicts: Sender<Result<(), Error>>,
    pool: Sender<Vec<u8>>,
) {
    let mut hasher = xxhash_rust::xxh64::Xxh64::new(0);
    for message in chunks {
        match message {
            // The executor may have finished already (a short frame):
            // the verdicts still to come are wanted all the same.
            ToHasher::Spare(size) => {
                let _ = pool.send(spare(size));
            }
            ToHasher::Data(chunk) => {
                hasher.update(&chunk.buf[..chunk.len]);
                recycle(chunk, &pool);
            }
            ToHasher::End {
                index,
                offset,
                stored,
            } => {
                let computed = hasher.digest() as u32;
                hasher = xxhash_rust::xxh64::Xxh64::new(0);
                let verdict = if computed == stored {
                    Ok(())
                } else {
                    Err(Error::Checksum {
                        frame: index,
                        offset,
                        stored,
                        computed,
                    })
                };
                if verdicts.send(verdict).is_err() {
                    return;
                }
            }
        }
    }
}

/// A buffer of `size` bytes with every page written once. The first write
/// to a fresh page faults (the kernel zeroes it): tens of megabytes of
/// faults are milliseconds, which the hasher, idle until the executor's
/// first hand-off, takes off the executor, the pipeline's slowest stage.
/// What the bytes hold does not matter: the executor reads none it has
/// not written.
fn spare(size: usize) -> Vec<u8> {
    // Never empty: an empty buffer in the pool is the writer's word that
    // it stopped (see `write`).
    let mut buf = crate::execute::zeroed(size.max(1));
    // Not 0: a store of the zero a fresh allocation is known to hold may
    // be optimised away.
    buf.iter_mut().step_by(4096).for_each(|b| *b = 1);
    buf
}

/// Gives a chunk's buffer back to the executor once its last holder is
/// done with it. `Arc::into_inner`, not `try_unwrap`: when the hasher and
/// the writer let go at once, both `try_unwrap`s can fail (each sees the
/// other's count before it drops), the buffer is lost, and the executor
/// waits for it for ever; `into_inner` gives it to exactly one of them.
fn recycle(chunk: Arc<Chunk>, pool: &Sender<Vec<u8>>) {
    if let Some(chunk) = Arc::into_inner(chunk) {
        let _ = pool.send(chunk.buf);
    }
}

/// The writer, on the caller's thread.
pub(super) fn write<W: Write>(
    writer: &mut W,
    chunks: Receiver<ToWriter>,
    verdicts: Receiver<Result<(), Error>>,
    pool: Sender<Vec<u8>>,
) -> Result<u64, StreamError<io::Error>> {
    let written = write_chunks(writer, chunks, verdicts, &pool);
    // Stopping early, the writer may have dropped a buffer it held alone
    // (a frame without a checksum is not shared with the hasher), and the
    // executor may be waiting for it: an empty buffer, which no stage
    // sends otherwise, wakes it to find the writer gone (`chunks` is
    // dropped by now). After a full run nobody takes it.
    let _ = pool.send(Vec::new());
    written
}

/// [`write`]'s loop: the chunks written in order, each frame's checksum
/// verdict awaited where the executor asks.
fn write_chunks<W: Write>(
    writer: &mut W,
    chunks: Receiver<ToWriter>,
    verdicts: Receiver<Result<(), Error>>,
    pool: &Sender<Vec<u8>>,
) -> Result<u64, StreamError<io::Error>> {
    let mut written = 0u64;
    for message in chunks {
        match message {
            ToWriter::Data(chunk) => {
                // In pieces: a chunk is up to 16 MiB (see `hugepages`).
                hugepages::write_all_in_pieces(writer, &chunk.buf[..chunk.len])
                    .map_err(StreamError::Sink)?;
                written += chunk.len as u64;
                recycle(chunk, pool);
            }
            ToWriter::Verify => match verdicts.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(StreamError::Decode(e)),
                // The hasher gives a verdict for every checksummed frame
                // and ends only after the executor; only a panic there
                // (which the scope then raises) leaves none.
                Err(_) => {
                    return Err(StreamError::Sink(io::Error::other(
                        "the checksum stage stopped",
                    )));
                }
            },
            ToWriter::Fail(e) => return Err(StreamError::Decode(e)),
            ToWriter::Unreadable(e) => return Err(StreamError::Input(e)),
        }
    }
    Ok(written)
}
