//! Decoding on several threads, frame by frame: each frame to a worker,
//! written in order ([`frames`]), or, from a pipe, the first frame as one
//! thread decodes it and only the frames after it to the workers
//! ([`first_alone`]).

use std::io::{self, Read, Write};

use super::{DECODE_READ_SIZE, JobError, Outcome, PIPE_BUFFERS, behind, finish};
use crate::context::Decompressor;
use crate::error::Error;
use crate::frame::FrameWalker;
use crate::parallel::{self, Decoded};
use crate::pipeline::ReadAhead;

/// Each frame decoded by one of `threads` threads, written in order
/// straight to `output` (the workers' buffers are the write-behind).
pub(super) fn frames(
    input: impl Read,
    output: Option<Box<dyn Write + Send>>,
    threads: usize,
    make: impl Fn() -> Result<Decompressor, Error>,
    progress: &mut dyn FnMut(u64),
) -> Result<Outcome, JobError> {
    let mut sink: Box<dyn Write + Send> = output.unwrap_or_else(|| Box::new(io::sink()));
    let done = parallel::decode(input, &mut *sink, threads, make, progress).map_err(codec)?;
    sink.flush().map_err(JobError::Output)?;
    Ok(Outcome {
        read: done.read,
        written: done.written,
        parallel: Some(done),
        passed_through: false,
    })
}

/// An input from a pipe that starts with a zstd frame, which is then most
/// likely its only one: its blocks depend on each other, so no worker
/// could share it. It is decoded on this thread as it comes, as one
/// thread decodes it, and written behind; only frames after it, if any,
/// go to the workers. Handed to a worker instead, such a frame was held
/// whole and decoded into a buffer of its size written only at its end,
/// with nothing overlapped: 0.5-0.8x the time of `-T1` on frames of 8-32
/// MiB from a pipe (see the commit).
pub(super) fn first_alone(
    input: impl Read + Send + 'static,
    output: Option<Box<dyn Write + Send>>,
    threads: usize,
    make: impl Fn() -> Result<Decompressor, Error>,
    progress: &mut dyn FnMut(u64),
) -> Result<Outcome, JobError> {
    // Read ahead on a thread of its own, as one thread reads: a 2:1 frame
    // read on the decoding thread waited on its writer (docs to
    // `/dev/null`: 19.5 ms of wall for 15.0 of CPU, against 15.8 at `-T1`).
    let input = ReadAhead::new(Box::new(input), PIPE_BUFFERS, DECODE_READ_SIZE)
        .map_err(JobError::ReaderThread)?;
    let mut walker = FrameWalker::new(input);
    let mut out = behind(output)?;
    let decompressor = make()?;
    let (_, first_written) = match out.as_mut() {
        Some(w) => parallel::stream_frame(&mut walker, &[], decompressor, w, progress),
        None => {
            let mut sink = io::sink();
            let mut discard = parallel::Copied::new(&mut sink);
            parallel::stream_frame(&mut walker, &[], decompressor, &mut discard, progress)
        }
    }
    .map_err(codec)?;
    // What cannot be read after it fails in the workers' walk, which
    // names the unit and its offset.
    if matches!(walker.peek(), Ok(None)) {
        return Ok(Outcome {
            read: walker.offset(),
            written: finish(out, first_written)?,
            parallel: None,
            passed_through: false,
        });
    }
    // More follows: the workers take it, written straight to the sink as
    // `decode_parallel` writes (through the write-behind, each byte would
    // be copied once more).
    let (mut sink, first_written) = match out {
        Some(w) => w.into_sink().map_err(JobError::Output)?,
        None => (Box::new(io::sink()) as Box<dyn Write + Send>, first_written),
    };
    let done = parallel::decode_rest(walker, &mut *sink, threads, make, progress).map_err(codec)?;
    sink.flush().map_err(JobError::Output)?;
    Ok(Outcome {
        read: done.read,
        written: first_written + done.written,
        parallel: Some(Decoded {
            streamed: done.streamed + 1,
            ..done
        }),
        passed_through: false,
    })
}

/// A frame decoder's error as the job's: the frame walker's reads and the
/// writes share [`Error::Io`].
fn codec(e: Error) -> JobError {
    match e {
        Error::Io(e) => JobError::InputOrOutput(e),
        other => JobError::Codec(other),
    }
}
