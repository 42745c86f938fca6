//! The last stage: the writer, on the caller's thread, which reads the
//! executor's chunks in place, hashes each frame's (XXH64) and checks its
//! checksum before the frame's last bytes go on, and tells the executor
//! when it lets go of each chunk. It also faults in the executor's ring
//! ahead of it (see `executor` for why these are not the executor's).

use std::io::{self, Write};

use crossbeam::channel::{Receiver, Sender};
use xxhash_rust::xxh64::Xxh64;

use super::ring::{Ahead, Chunk};
use super::stages::{Clock, Stretch, timed};
use crate::error::Error;
use crate::{StoredChecksum, StreamError};

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
    /// A frame starts; `has_checksum`: it ends with one, so its bytes are
    /// hashed.
    FrameStart {
        has_checksum: bool,
    },
    Data(Chunk),
    /// The frame ends: its last bytes (at least one, unless it is empty),
    /// written only if its checksum, if it has one, holds.
    FrameEnd {
        last: Option<Chunk>,
        check: Option<StoredChecksum>,
    },
    /// Ring the executor will write next: faulted in here, off its thread.
    Ahead(Ahead),
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
    clock: Option<&Clock>,
) -> Result<u64, StreamError<io::Error>> {
    let written = write_chunks(writer, chunks, &released, clock);
    // Stopping early, the writer drops the chunks it holds without a
    // word, and the executor may be waiting for their release: this wakes
    // it to stop. After a full run nobody reads it.
    let _ = released.send(Released::Stopped);
    written
}

/// [`write()`]'s loop: the chunks written in order.
fn write_chunks<W: Write>(
    writer: &mut W,
    chunks: Receiver<ToWriter>,
    released: &Sender<Released>,
    clock: Option<&Clock>,
) -> Result<u64, StreamError<io::Error>> {
    let mut written = 0u64;
    // The XXH64 of the current frame's bytes so far, if it has a checksum.
    let mut hasher = None;
    let mut pass = |chunk: Chunk, hasher: &mut Option<Xxh64>| -> io::Result<()> {
        if let Some(hasher) = hasher {
            hasher.update(chunk.bytes());
        }
        // In pieces: a frame's last chunk may be a few MiB (see
        // `hugepages`).
        hugepages::write_all_in_pieces(writer, chunk.bytes())?;
        written += chunk.len() as u64;
        drop(chunk);
        let _ = released.send(Released::Chunk);
        Ok(())
    };
    while let Ok(message) = timed(clock, Stretch::WriterWaiting, || chunks.recv()) {
        match message {
            ToWriter::FrameStart { has_checksum } => {
                hasher = has_checksum.then(|| Xxh64::new(0));
            }
            ToWriter::Data(chunk) => pass(chunk, &mut hasher).map_err(StreamError::Sink)?,
            ToWriter::FrameEnd { last, check } => {
                if let (Some(mut hasher), Some(check)) = (hasher.take(), check) {
                    if let Some(last) = &last {
                        hasher.update(last.bytes());
                    }
                    check.verify(hasher).map_err(StreamError::Decode)?;
                }
                if let Some(last) = last {
                    // Hashed above already.
                    pass(last, &mut None).map_err(StreamError::Sink)?;
                }
            }
            ToWriter::Ahead(ahead) => {
                timed(clock, Stretch::WriterFaultingAhead, || ahead.populate());
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
