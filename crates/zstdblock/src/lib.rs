//! zstd frames decoded block by block, in separable stages.
//!
//! A decoder of the zstd format (RFC 8878) written from the
//! specification, split where libzstd fuses, so that the costly entropy
//! stage of many blocks can run on several threads and the cheap
//! sequential parts in order on one:
//!
//! 1. [`walk`] ([`walk_frame`]; piecewise [`frame_start`],
//!    [`block_header`], [`frame_end`]): the frames (zstd and skippable)
//!    and the byte range of every block, no block decoded; a window over
//!    the caller's limit is refused.
//! 2. [`decode_block`]: a compressed block's literals and sequences, from
//!    an explicit [`EntropyState`] (the Huffman tree and FSE tables it may
//!    reuse), independent of the output; [`skip_block`] brings a state
//!    past a block reading only its tables, so a worker can start anywhere.
//! 3. [`resolve_offsets`] / [`DecodedBlock::resolve_offsets`]: the three
//!    repeat offsets carried from block to block.
//! 4. [`Output::execute`]: literals and matches through the window, every
//!    offset checked ([`Output::execute_resolving`] does stage 3 in the
//!    same pass, as this crate's decoders do).
//! 5. [`checksum`]: the frame's XXH64 content checksum.
//!
//! [`decode_all`] runs them in order on one thread, [`decode_to`] too but
//! holding only about two windows and a block; [`FrameDecoder`] is the
//! block-by-block loop under both. [`parallel::Parallel`] runs them as a
//! pipeline: the entropy stage of block ranges on several threads, the
//! rest in order, each stage its own thread, memory bounded by the window
//! and the blocks in flight. Frames with a dictionary are refused
//! ([`Error::NeedsDictionary`]): libzstd takes them.
//!
//! ```
//! // One frame: single segment, content size 5, one raw last block.
//! let mut frame = vec![0x28, 0xB5, 0x2F, 0xFD, 0x20, 5, (5 << 3) | 1, 0, 0];
//! frame.extend_from_slice(b"hello");
//! let frames = zstdblock::walk(&frame, 1 << 27).unwrap();
//! assert_eq!(frames[0].blocks.len(), 1);
//! assert_eq!(zstdblock::decode_all(&frame, 1 << 27).unwrap(), b"hello");
//! ```
//!
//! Where libzstd's one-shot decoder is laxer than the RFC, this decoder
//! keeps to the RFC and fails ([`Error::libzstd_may_accept`] names these):
//! a Huffman stream that does not end exactly with its last symbol, a
//! match reaching past the window (libzstd checks only the frame's
//! start), a block over the maximum block size (raw, RLE or decompressed;
//! libzstd checks only its output buffer). Encoders write none of them.

// One `unsafe` block, execute.rs's prefetch, allowed where it is.
#![deny(unsafe_code)]

mod bits;
mod entropy;
mod error;
mod execute;
mod frame;
mod fse;
mod huffman;
mod literals;
mod mapped;
mod offsets;
pub mod parallel;
mod sequences;
mod source;
#[cfg(unix)]
mod survey;

pub use entropy::{DecodedBlock, EntropyState, decode_block, skip_block};
pub use error::Error;
pub use execute::Output;
pub use frame::{
    BLOCK_SIZE_MAX, Block, BlockKind, Frame, FrameHeader, FrameKind, MAGIC, block_at, block_header,
    frame_end, frame_header, frame_start, walk, walk_frame,
};
pub use mapped::MappedFile;
pub use offsets::{INITIAL_REPEATS, resolve_offsets};
pub use sequences::Sequence;
#[cfg(unix)]
pub use survey::{After, Survey, survey};

/// The low 32 bits of XXH64 (seed 0), as a frame's checksum stores them.
pub fn checksum(content: &[u8]) -> u32 {
    xxhash_rust::xxh64::xxh64(content, 0) as u32
}

/// A frame's stored checksum and where it lies, for the one check both
/// decoders make at a frame's end (the pipeline's on its writer's thread).
pub(crate) struct StoredChecksum {
    /// The frame's index.
    pub(crate) frame: usize,
    /// The frame's end: the checksum is its last four bytes.
    pub(crate) end: usize,
    /// The checksum as the frame stores it.
    pub(crate) stored: u32,
}

impl StoredChecksum {
    /// Compares the XXH64 of the frame's bytes with the stored checksum.
    pub(crate) fn verify(&self, hasher: xxhash_rust::xxh64::Xxh64) -> Result<(), Error> {
        let computed = hasher.digest() as u32;
        if computed == self.stored {
            return Ok(());
        }
        Err(Error::Checksum {
            frame: self.frame,
            offset: self.end - 4,
            stored: self.stored,
            computed,
        })
    }
}

/// Decodes every frame of `input` (skippable frames skipped) on one
/// thread. A frame whose window exceeds `window_limit` bytes is refused.
pub fn decode_all(input: &[u8], window_limit: u64) -> Result<Vec<u8>, Error> {
    decode_all_bounded(input, window_limit, u64::MAX)
}

/// [`decode_all`], refusing to produce more than `max_output` bytes.
pub fn decode_all_bounded(
    input: &[u8],
    window_limit: u64,
    max_output: u64,
) -> Result<Vec<u8>, Error> {
    let mut out = Output::new();
    let run = decode_frames(input, window_limit, max_output, &mut out, |out, step| {
        if let Step::FrameStart(header, rest) = step {
            // Room for what the header promises, but no more than the
            // rest of the input can make (a 4-byte RLE block makes at most
            // a block), nor past the limit, nor 1 GiB on its word alone.
            let can_make = (rest as u64 / 4 + 1).saturating_mul(BLOCK_SIZE_MAX as u64);
            let room = header
                .content_size
                .unwrap_or(0)
                .min(can_make)
                .min(max_output.saturating_sub(out.position()))
                .min(1 << 30);
            out.reserve(room as usize);
        }
        Ok::<(), std::convert::Infallible>(())
    });
    match run {
        Ok(()) => Ok(out.into_vec()),
        Err(StreamError::Decode(e)) => Err(e),
        Err(StreamError::Sink(never)) => match never {},
        Err(StreamError::Input(_)) => unreachable!("decode_all reads a slice"),
    }
}

/// Where [`decode_frames`] is when it calls its hook.
enum Step<'a> {
    /// A zstd frame's header is read; the input after it is this long.
    FrameStart(&'a FrameHeader, usize),
    /// A block is decoded; matches reach this far back.
    BlockDone(usize),
    /// A frame is decoded and checked.
    FrameDone,
}

/// Decodes every frame of `input` into `out`, reading block headers as it
/// goes (its memory does not grow with the number of blocks), and calls
/// `hook` at each step, which may reserve or drain the output.
fn decode_frames<E>(
    input: &[u8],
    window_limit: u64,
    max_output: u64,
    out: &mut Output,
    mut hook: impl FnMut(&mut Output, Step<'_>) -> Result<(), E>,
) -> Result<(), StreamError<E>> {
    let mut decoder = FrameDecoder::default();
    let mut offset = 0;
    let mut index = 0;
    while offset < input.len() {
        let mut frame =
            frame_start(input, offset, index, window_limit).map_err(StreamError::Decode)?;
        if let FrameKind::Zstd(header) = frame.kind.clone() {
            decoder.begin(&frame, out).map_err(StreamError::Decode)?;
            hook(
                out,
                Step::FrameStart(&header, input.len() - frame.range.end),
            )
            .map_err(StreamError::Sink)?;
            let keep = usize::try_from(header.window_size).unwrap_or(usize::MAX);
            let mut at = frame.range.end;
            loop {
                let block = block_header(input, at, index, header.block_max())
                    .map_err(StreamError::Decode)?;
                decoder
                    .block(input, &block, out, max_output)
                    .map_err(StreamError::Decode)?;
                hook(out, Step::BlockDone(keep)).map_err(StreamError::Sink)?;
                at = block.content.end;
                if block.last {
                    break;
                }
            }
            frame_end(input, &mut frame, at).map_err(StreamError::Decode)?;
            decoder.finish(&frame, out).map_err(StreamError::Decode)?;
            hook(out, Step::FrameDone).map_err(StreamError::Sink)?;
        }
        offset = frame.range.end;
        index += 1;
    }
    Ok(())
}

/// Decodes frames block by block, reusing its buffers: [`begin`], then
/// [`block`] for each of the frame's blocks in order, then [`finish`]; or
/// [`decode`] for all three. Between blocks the caller may
/// [`Output::drain`] all but the frame's window.
///
/// [`begin`]: FrameDecoder::begin
/// [`block`]: FrameDecoder::block
/// [`finish`]: FrameDecoder::finish
/// [`decode`]: FrameDecoder::decode
#[derive(Default)]
pub struct FrameDecoder {
    decoded: DecodedBlock,
    state: EntropyState,
    repeats: [u32; 3],
    hasher: Option<xxhash_rust::xxh64::Xxh64>,
    /// [`Output::position`] of the frame's first byte.
    start: u64,
    window: u64,
}

impl std::fmt::Debug for FrameDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameDecoder")
            .field("start", &self.start)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl FrameDecoder {
    /// Starts the zstd `frame` (from [`walk`]) at the end of `out`.
    /// A frame with a dictionary is refused.
    pub fn begin(&mut self, frame: &Frame, out: &Output) -> Result<(), Error> {
        let FrameKind::Zstd(header) = &frame.kind else {
            return Ok(());
        };
        if header.dictionary_id != 0 {
            return Err(Error::NeedsDictionary {
                frame: frame.index,
                offset: frame.range.start,
                dictionary_id: header.dictionary_id,
            });
        }
        self.state = EntropyState::default();
        self.repeats = INITIAL_REPEATS;
        self.hasher = header
            .has_checksum
            .then(|| xxhash_rust::xxh64::Xxh64::new(0));
        self.start = out.position();
        self.window = header.window_size;
        Ok(())
    }

    /// Decodes the next `block` of the frame into `out`: entropy stage,
    /// repeat offsets, execution, checksum update. Past `max_output`
    /// bytes of output (counted from the output's start) it stops.
    pub fn block(
        &mut self,
        input: &[u8],
        block: &Block,
        out: &mut Output,
        max_output: u64,
    ) -> Result<(), Error> {
        let before = out.len();
        let size = match block.kind {
            BlockKind::Compressed => {
                decode_block(input, block, &mut self.state, &mut self.decoded)?;
                self.decoded.output_size
            }
            _ => block.known_size.unwrap_or(0),
        };
        if out.position() + size as u64 > max_output {
            return Err(Error::OutputLimit {
                frame: block.frame,
                offset: block.header,
                limit: max_output,
            });
        }
        match block.kind {
            BlockKind::Raw => out.push_raw(&input[block.content.clone()]),
            BlockKind::Rle => out.push_rle(input[block.content.start], size),
            BlockKind::Compressed => {
                out.execute_resolving(
                    &self.decoded,
                    &mut self.repeats,
                    block,
                    self.start,
                    self.window,
                )?;
            }
        }
        if let Some(hasher) = self.hasher.as_mut() {
            hasher.update(&out.as_slice()[before..]);
        }
        Ok(())
    }

    /// Ends `frame`: checks its content size and checksum.
    pub fn finish(&mut self, frame: &Frame, out: &Output) -> Result<(), Error> {
        let FrameKind::Zstd(header) = &frame.kind else {
            return Ok(());
        };
        let produced = out.position().saturating_sub(self.start);
        if let Some(declared) = header.content_size
            && declared != produced
        {
            return Err(Error::ContentSize {
                frame: frame.index,
                offset: frame.range.end,
                declared,
                produced,
            });
        }
        if let (Some(hasher), Some(stored)) = (self.hasher.take(), frame.checksum) {
            let check = StoredChecksum {
                frame: frame.index,
                end: frame.range.end,
                stored,
            };
            check.verify(hasher)?;
        }
        Ok(())
    }

    /// Appends the content of `frame` (from [`walk`]) to `out`, checking
    /// its content size and checksum; a skippable frame adds nothing.
    pub fn decode(
        &mut self,
        input: &[u8],
        frame: &Frame,
        out: &mut Output,
        max_output: u64,
    ) -> Result<(), Error> {
        self.begin(frame, out)?;
        for block in &frame.blocks {
            self.block(input, block, out, max_output)?;
        }
        self.finish(frame, out)
    }
}

/// Why [`decode_to`] stopped.
#[derive(Debug)]
pub enum StreamError<E> {
    /// The input is not a valid zstd stream (or needs a dictionary, or a
    /// larger window).
    Decode(Error),
    /// The sink failed.
    Sink(E),
    /// Reading the input failed ([`parallel::Parallel::decode_reader`]).
    Input(std::io::Error),
}

impl<E: std::fmt::Display> std::fmt::Display for StreamError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamError::Decode(e) => e.fmt(f),
            StreamError::Sink(e) => write!(f, "writing the output: {e}"),
            StreamError::Input(e) => write!(f, "reading the input: {e}"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for StreamError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StreamError::Decode(e) => Some(e),
            StreamError::Sink(e) => Some(e),
            StreamError::Input(e) => Some(e),
        }
    }
}

/// Decodes every frame of `input` into `sink` on one thread, holding at
/// most about twice a frame's window plus a block rather than the whole
/// output, and reading block headers as it goes, so its memory does not
/// grow with the number of blocks either. Returns the bytes produced. A
/// frame that fails to decode stops it, but the bytes before it may have
/// been handed to `sink`.
pub fn decode_to<E>(
    input: &[u8],
    window_limit: u64,
    mut sink: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<u64, StreamError<E>> {
    let mut out = Output::new();
    decode_frames(
        input,
        window_limit,
        u64::MAX,
        &mut out,
        |out, step| match step {
            // The most held before a drain, allocated once (its pages
            // touched only as written) rather than grown by doubling; no
            // more than the frame says it makes, nor gigabytes on a
            // window's word alone.
            Step::FrameStart(header, _) => {
                let most = header
                    .window_size
                    .saturating_mul(2)
                    .saturating_add(2 * BLOCK_SIZE_MAX as u64)
                    .min(
                        header
                            .content_size
                            .map_or(u64::MAX, |n| n.saturating_add(BLOCK_SIZE_MAX as u64)),
                    )
                    .min(512 << 20);
                out.reserve(most as usize);
                Ok(())
            }
            // Drain when the history is twice the window, so the bytes kept
            // are moved at most once per window produced.
            Step::BlockDone(keep) => {
                if out.len() >= keep.saturating_mul(2).saturating_add(BLOCK_SIZE_MAX) {
                    out.drain(keep, &mut sink)
                } else {
                    Ok(())
                }
            }
            Step::FrameDone => out.drain(0, &mut sink),
        },
    )?;
    Ok(out.position())
}
