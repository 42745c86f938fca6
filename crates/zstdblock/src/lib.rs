//! zstd frames decoded block by block, in separable stages.
//!
//! A decoder of the zstd format (RFC 8878) written from the
//! specification, split where libzstd fuses, so that the costly entropy
//! stage of many blocks can run on several threads and the cheap
//! sequential parts in order on one:
//!
//! 1. [`walk`] ([`walk_frame`], [`frame_header`], [`block_header`]): the
//!    frames (zstd and skippable) and the byte range of every block, no
//!    block decoded; a window over the caller's limit is refused.
//! 2. [`decode_block`]: a compressed block's literals and sequences, from
//!    an explicit [`EntropyState`] (the Huffman tree and FSE tables it may
//!    reuse), independent of the output; [`skip_block`] brings a state
//!    past a block reading only its tables, so a worker can start anywhere.
//! 3. [`resolve_offsets`] / [`DecodedBlock::resolve_offsets`]: the three
//!    repeat offsets carried from block to block.
//! 4. [`Output::execute`]: literals and matches through the window, every
//!    offset checked.
//! 5. [`checksum`]: the frame's XXH64 content checksum.
//!
//! [`decode_all`] runs them in order on one thread. Frames with a
//! dictionary are refused ([`Error::NeedsDictionary`]): libzstd takes them.
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
//! keeps to the RFC and fails: a match reaching past the window (libzstd
//! checks only the frame's start), a block over the maximum block size
//! (raw, RLE or decompressed; libzstd checks only its output buffer).
//! Encoders never write either.

#![forbid(unsafe_code)]

mod bits;
mod entropy;
mod error;
mod execute;
mod frame;
mod fse;
mod huffman;
mod literals;
mod offsets;
mod sequences;

pub use entropy::{DecodedBlock, EntropyState, decode_block, skip_block};
pub use error::Error;
pub use execute::Output;
pub use frame::{
    BLOCK_SIZE_MAX, Block, BlockKind, Frame, FrameHeader, FrameKind, MAGIC, block_header,
    frame_header, walk, walk_frame,
};
pub use offsets::{INITIAL_REPEATS, resolve_offsets};
pub use sequences::Sequence;

/// The low 32 bits of XXH64 (seed 0), as a frame's checksum stores them.
pub fn checksum(content: &[u8]) -> u32 {
    xxhash_rust::xxh64::xxh64(content, 0) as u32
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
    let frames = walk(input, window_limit)?;
    // Reserve what the headers promise, but no more than the blocks can
    // produce, nor an untrusted header's word alone past 1 GiB.
    let mut promised = 0u64;
    for frame in &frames {
        if let FrameKind::Zstd(header) = &frame.kind {
            let bound: u64 = frame
                .blocks
                .iter()
                .map(|b| b.known_size.unwrap_or(b.block_max) as u64)
                .sum();
            promised = promised.saturating_add(header.content_size.unwrap_or(0).min(bound));
        }
    }
    let capacity = promised.min(max_output).min(1 << 30) as usize;
    let mut out = Output::with_capacity(capacity);
    let mut decoder = FrameDecoder::default();
    for frame in &frames {
        decoder.decode(input, frame, &mut out, max_output)?;
    }
    Ok(out.into_vec())
}

/// Decodes whole frames one after another, reusing its buffers.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    block: DecodedBlock,
}

impl FrameDecoder {
    /// Appends the content of `frame` (from [`walk`]) to `out`, checking
    /// its content size and checksum; a skippable frame adds nothing.
    pub fn decode(
        &mut self,
        input: &[u8],
        frame: &Frame,
        out: &mut Output,
        max_output: u64,
    ) -> Result<(), Error> {
        let header = match &frame.kind {
            FrameKind::Skippable { .. } => return Ok(()),
            FrameKind::Zstd(header) => header,
        };
        if header.dictionary_id != 0 {
            return Err(Error::NeedsDictionary {
                frame: frame.index,
                offset: frame.range.start,
                dictionary_id: header.dictionary_id,
            });
        }
        let start = out.len();
        let mut state = EntropyState::default();
        let mut repeats = INITIAL_REPEATS;
        let mut hasher = header
            .has_checksum
            .then(|| xxhash_rust::xxh64::Xxh64::new(0));
        for block in &frame.blocks {
            let before = out.len();
            let size = match block.kind {
                BlockKind::Compressed => {
                    decode_block(input, block, &mut state, &mut self.block)?;
                    self.block.output_size
                }
                _ => block.known_size.unwrap_or(0),
            };
            if (before + size) as u64 > max_output {
                return Err(Error::OutputLimit {
                    frame: frame.index,
                    offset: block.header,
                    limit: max_output,
                });
            }
            match block.kind {
                BlockKind::Raw => out.push_raw(&input[block.content.clone()]),
                BlockKind::Rle => out.push_rle(input[block.content.start], size),
                BlockKind::Compressed => {
                    self.block.resolve_offsets(&mut repeats);
                    out.execute(&self.block, block, start, header.window_size)?;
                }
            }
            if let Some(hasher) = hasher.as_mut() {
                hasher.update(&out.as_slice()[before..]);
            }
        }
        let produced = (out.len() - start) as u64;
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
        if let (Some(hasher), Some(stored)) = (hasher, frame.checksum) {
            let computed = hasher.digest() as u32;
            if computed != stored {
                return Err(Error::Checksum {
                    frame: frame.index,
                    offset: frame.range.end - 4,
                    stored,
                    computed,
                });
            }
        }
        Ok(())
    }
}
