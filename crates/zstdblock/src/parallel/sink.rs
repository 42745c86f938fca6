//! The last two stages: the hasher, which checks each frame's XXH64, and
//! the writer, on the caller's thread, which waits at a checksummed
//! frame's end for the hasher's verdict; both read the executor's chunks
//! in place and tell it when they let go of each.

use std::io::{self, Write};
use std::sync::Arc;

use crossbeam::channel::{Receiver, Sender};

use super::ring::Chunk;
use crate::StreamError;
use crate::error::Error;

/// What the hasher and the writer tell the executor.
pub(super) enum Released {
    /// The oldest chunk handed on was let go of by both (chunks are
    /// released in order).
    Chunk,
    /// The writer stopped: the executor stops too.
    Stopped,
}

/// What the executor sends the hasher.
pub(super) enum ToHasher {
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
    /// The executor's ring could not be mapped.
    Memory(io::Error),
}

/// The hasher: each checksummed frame's XXH64, a verdict at its end.
pub(super) fn hash(
    chunks: Receiver<ToHasher>,
    verdicts: Sender<Result<(), Error>>,
    released: Sender<Released>,
) {
    let mut hasher = xxhash_rust::xxh64::Xxh64::new(0);
    for message in chunks {
        match message {
            // The executor may have finished already (a short frame):
            // the verdicts still to come are wanted all the same.
            ToHasher::Data(chunk) => {
                hasher.update(chunk.bytes());
                release(chunk, &released);
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

/// Lets go of a chunk, and tells the executor once its last holder has.
/// `Arc::into_inner`, not `try_unwrap`: when the hasher and the writer
/// let go at once, both `try_unwrap`s can fail (each sees the other's
/// count before it drops), the release is never told, and the executor
/// waits for it for ever; `into_inner` gives it to exactly one of them.
fn release(chunk: Arc<Chunk>, released: &Sender<Released>) {
    if Arc::into_inner(chunk).is_some() {
        let _ = released.send(Released::Chunk);
    }
}

/// The writer, on the caller's thread.
pub(super) fn write<W: Write>(
    writer: &mut W,
    chunks: Receiver<ToWriter>,
    verdicts: Receiver<Result<(), Error>>,
    released: Sender<Released>,
) -> Result<u64, StreamError<io::Error>> {
    let written = write_chunks(writer, chunks, verdicts, &released);
    // Stopping early, the writer may have dropped a chunk it held alone
    // (a frame without a checksum is not shared with the hasher) without
    // a word, and the executor may be waiting for its release: this wakes
    // it to stop. After a full run nobody reads it.
    let _ = released.send(Released::Stopped);
    written
}

/// [`write`]'s loop: the chunks written in order, each frame's checksum
/// verdict awaited where the executor asks.
fn write_chunks<W: Write>(
    writer: &mut W,
    chunks: Receiver<ToWriter>,
    verdicts: Receiver<Result<(), Error>>,
    released: &Sender<Released>,
) -> Result<u64, StreamError<io::Error>> {
    let mut written = 0u64;
    for message in chunks {
        match message {
            ToWriter::Data(chunk) => {
                // In pieces: a frame's last chunk may be a few MiB (see
                // `hugepages`).
                hugepages::write_all_in_pieces(writer, chunk.bytes()).map_err(StreamError::Sink)?;
                written += chunk.len() as u64;
                release(chunk, released);
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
            ToWriter::Memory(e) => {
                return Err(StreamError::Sink(io::Error::new(
                    e.kind(),
                    format!("no memory for the decoding window: {e}"),
                )));
            }
        }
    }
    Ok(written)
}
