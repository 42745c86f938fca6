//! The last stage: the writer, on the caller's thread, which reads the
//! executor's chunks in place and tells it when it lets go of each.
//! (The executor checks each frame's XXH64 itself, as it hands the
//! frame's bytes on; see `executor`.)

use std::io::{self, Write};

use crossbeam::channel::{Receiver, Sender};

use super::ring::Chunk;
use crate::StreamError;
use crate::error::Error;

/// What the writer tells the executor.
pub(super) enum Released {
    /// The oldest chunk handed on was written and let go of (chunks are
    /// released in order).
    Chunk,
    /// The writer stopped: the executor stops too.
    Stopped,
}

/// What the executor sends the writer.
pub(super) enum ToWriter {
    Data(Chunk),
    Fail(Error),
    Unreadable(io::Error),
    /// The executor's ring could not be mapped.
    Memory(io::Error),
}

/// The writer, on the caller's thread.
pub(super) fn write<W: Write>(
    writer: &mut W,
    chunks: Receiver<ToWriter>,
    released: Sender<Released>,
) -> Result<u64, StreamError<io::Error>> {
    let written = write_chunks(writer, chunks, &released);
    // Stopping early, the writer drops the chunks it holds without a
    // word, and the executor may be waiting for their release: this wakes
    // it to stop. After a full run nobody reads it.
    let _ = released.send(Released::Stopped);
    written
}

/// [`write`]'s loop: the chunks written in order.
fn write_chunks<W: Write>(
    writer: &mut W,
    chunks: Receiver<ToWriter>,
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
                drop(chunk);
                let _ = released.send(Released::Chunk);
            }
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
