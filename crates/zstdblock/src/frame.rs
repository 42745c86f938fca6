//! Stage 1, the header walk: frames (zstd and skippable, several in a
//! row), frame headers and block headers, with every size checked, and
//! no block decoded (RFC 8878 sections 3.1 and 3.1.1).

use std::ops::Range;

use crate::error::Error;

/// The zstd frame magic number.
pub const MAGIC: u32 = 0xFD2F_B528;
/// The largest block content, and the largest block output (128 KiB).
pub const BLOCK_SIZE_MAX: usize = 128 * 1024;
/// libzstd's largest window log on 64-bit machines.
const WINDOW_LOG_MAX: u32 = 31;

/// A zstd frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// Bytes of history matches may reach back (the content size for a
    /// single-segment frame).
    pub window_size: u64,
    /// The dictionary needed, 0 for none.
    pub dictionary_id: u32,
    /// Frame_Content_Size, when the header has it.
    pub content_size: Option<u64>,
    /// The frame is one segment: no window descriptor, the window is the
    /// content size.
    pub single_segment: bool,
    /// The frame ends with the low 32 bits of its content's XXH64.
    pub has_checksum: bool,
    /// Bytes of the header, magic number included.
    pub header_size: usize,
}

impl FrameHeader {
    /// min(window, 128 KiB): the largest block of this frame, compressed
    /// or decompressed.
    pub fn block_max(&self) -> usize {
        self.window_size.min(BLOCK_SIZE_MAX as u64) as usize
    }
}

/// How a block's content is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// Stored bytes.
    Raw,
    /// One byte repeated `Block::rle_size` times.
    Rle,
    /// Literals and sequences.
    Compressed,
}

/// One block of a frame, located but not decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Index of the block's frame in the input.
    pub frame: usize,
    /// Input offset of the block's 3-byte header.
    pub header: usize,
    /// The block's content in the input (one byte for RLE).
    pub content: Range<usize>,
    /// Raw, RLE or compressed.
    pub kind: BlockKind,
    /// The frame's last block.
    pub last: bool,
    /// The decompressed size of a raw or RLE block (unknown for a
    /// compressed one until its entropy stage).
    pub known_size: Option<usize>,
    /// The frame's maximum block size.
    pub block_max: usize,
}

/// What a frame is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A zstd frame.
    Zstd(FrameHeader),
    /// A skippable frame: its magic number's low nibble and its size.
    Skippable {
        /// 0 to 15.
        variant: u8,
        /// Bytes of user data after its 8-byte header.
        size: u32,
    },
}

/// One frame of the input, its blocks located.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Index in the input, skippable frames counted.
    pub index: usize,
    /// Input range of the whole frame.
    pub range: Range<usize>,
    /// zstd or skippable.
    pub kind: FrameKind,
    /// The blocks of a zstd frame, in order (none for a skippable frame).
    pub blocks: Vec<Block>,
    /// The stored checksum, for a frame with one.
    pub checksum: Option<u32>,
}

impl Frame {
    /// The skippable frame at `range` whose header gives `magic` (zstd's
    /// 0x184D2A5?) and `size`: its bytes are never looked at.
    pub(crate) fn skippable(index: usize, range: Range<usize>, magic: u32, size: u32) -> Frame {
        Frame {
            index,
            range,
            kind: FrameKind::Skippable {
                variant: (magic & 15) as u8,
                size,
            },
            blocks: Vec::new(),
            checksum: None,
        }
    }
}

/// Whether `magic` starts a skippable frame (any low nibble).
pub(crate) fn is_skippable(magic: u32) -> bool {
    magic & 0xFFFF_FFF0 == 0x184D_2A50
}

fn read_u32(input: &[u8], at: usize) -> Option<u32> {
    let bytes = input.get(at..at + 4)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// Parses the zstd frame header at `input[offset..]` (magic included).
/// `Ok(None)` when the magic number is not zstd's.
pub fn frame_header(
    input: &[u8],
    offset: usize,
    frame: usize,
) -> Result<Option<FrameHeader>, Error> {
    let truncated = |at| Error::Truncated { frame, offset: at };
    let magic = read_u32(input, offset).ok_or(truncated(offset))?;
    if magic != MAGIC {
        return Ok(None);
    }
    let at = offset + 4;
    let &descriptor = input.get(at).ok_or(truncated(at))?;
    if descriptor & 0x08 != 0 {
        return Err(Error::FrameHeader {
            frame,
            offset: at,
            what: "reserved bit set",
        });
    }
    let fcs_flag = descriptor >> 6;
    let single_segment = descriptor & 0x20 != 0;
    let has_checksum = descriptor & 0x04 != 0;
    let dict_size = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let fcs_size = match fcs_flag {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let window_size_bytes = usize::from(!single_segment);
    let size = 5 + window_size_bytes + dict_size + fcs_size;
    let header = input
        .get(offset..offset + size)
        .ok_or(truncated(input.len()))?;
    let mut pos = 5;
    let mut window_size = 0u64;
    if !single_segment {
        let w = header[pos];
        let log = 10 + u32::from(w >> 3);
        if log > WINDOW_LOG_MAX {
            return Err(Error::FrameHeader {
                frame,
                offset: offset + pos,
                what: "window log above 31",
            });
        }
        let base = 1u64 << log;
        window_size = base + (base >> 3) * u64::from(w & 7);
        pos += 1;
    }
    let mut dictionary_id = 0u32;
    for (i, &b) in header[pos..pos + dict_size].iter().enumerate() {
        dictionary_id |= u32::from(b) << (8 * i);
    }
    pos += dict_size;
    let declared = if fcs_size == 0 {
        None
    } else {
        let mut value = 0u64;
        for (i, &b) in header[pos..pos + fcs_size].iter().enumerate() {
            value |= u64::from(b) << (8 * i);
        }
        Some(if fcs_size == 2 { value + 256 } else { value })
    };
    if single_segment {
        window_size = declared.unwrap_or(0);
    }
    // 2^64 - 1 is libzstd's "unknown" (ZSTD_CONTENTSIZE_UNKNOWN): it
    // decodes such a frame as one without a size (its window, in a single
    // segment, still that value), and so does this.
    let content_size = declared.filter(|&n| n != u64::MAX);
    Ok(Some(FrameHeader {
        window_size,
        dictionary_id,
        content_size,
        single_segment,
        has_checksum,
        header_size: size,
    }))
}

/// Parses the 3-byte block header at `input[at..]` of frame `frame`.
pub fn block_header(
    input: &[u8],
    at: usize,
    frame: usize,
    block_max: usize,
) -> Result<Block, Error> {
    let truncated = Error::Truncated {
        frame,
        offset: input.len(),
    };
    let bytes = input.get(at..at + 3).ok_or(truncated.clone())?;
    let block = block_at([bytes[0], bytes[1], bytes[2]], at, frame, block_max)?;
    if input.len() - block.content.start < block.content.len() {
        return Err(truncated);
    }
    Ok(block)
}

/// The block whose 3-byte header, `bytes`, is at input offset `at` of
/// frame `frame`: [`block_header`] without the input around it, its
/// content not looked for.
pub fn block_at(bytes: [u8; 3], at: usize, frame: usize, block_max: usize) -> Result<Block, Error> {
    let word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], 0]);
    let last = word & 1 == 1;
    let size = (word >> 3) as usize;
    let start = at + 3;
    let (kind, stored, known_size) = match (word >> 1) & 3 {
        0 => (BlockKind::Raw, size, Some(size)),
        1 => (BlockKind::Rle, 1, Some(size)),
        2 => (BlockKind::Compressed, size, None),
        _ => return Err(Error::ReservedBlockType { frame, offset: at }),
    };
    if size > block_max {
        return Err(Error::BlockTooLarge {
            frame,
            offset: at,
            size,
            max: block_max,
        });
    }
    Ok(Block {
        frame,
        header: at,
        content: start..start + stored,
        kind,
        last,
        known_size,
        block_max,
    })
}

/// Reads the frame starting at `input[offset..]` up to its first block:
/// a skippable frame whole, a zstd frame's header, refused if its window
/// is over `window_limit`. For a zstd frame the result has no blocks yet,
/// `range.end` is its first block header and `checksum` is unread: the
/// caller reads the blocks ([`block_header`]) then [`frame_end`].
pub fn frame_start(
    input: &[u8],
    offset: usize,
    index: usize,
    window_limit: u64,
) -> Result<Frame, Error> {
    let truncated = Error::Truncated {
        frame: index,
        offset: input.len(),
    };
    let magic = read_u32(input, offset).ok_or(truncated.clone())?;
    if is_skippable(magic) {
        let size = read_u32(input, offset + 4).ok_or(truncated.clone())?;
        let end = (offset + 8)
            .checked_add(size as usize)
            .filter(|&end| end <= input.len());
        let Some(end) = end else {
            return Err(truncated);
        };
        return Ok(Frame::skippable(index, offset..end, magic, size));
    }
    let Some(header) = frame_header(input, offset, index)? else {
        return Err(Error::BadMagic {
            frame: index,
            offset,
            magic,
        });
    };
    // zstd's streaming decoder measures the window at 1 KiB or more.
    let window = header.window_size.max(1 << 10);
    if window > window_limit {
        return Err(Error::WindowTooLarge {
            frame: index,
            offset,
            window: header.window_size,
            limit: window_limit,
        });
    }
    Ok(Frame {
        index,
        range: offset..offset + header.header_size,
        kind: FrameKind::Zstd(header),
        blocks: Vec::new(),
        checksum: None,
    })
}

/// Completes `frame` (from [`frame_start`]) once its last block ends at
/// `at`: reads the checksum, if it has one, and sets `range.end`.
pub fn frame_end(input: &[u8], frame: &mut Frame, at: usize) -> Result<(), Error> {
    let FrameKind::Zstd(header) = &frame.kind else {
        return Ok(());
    };
    let mut end = at;
    if header.has_checksum {
        frame.checksum = Some(read_u32(input, at).ok_or(Error::Truncated {
            frame: frame.index,
            offset: input.len(),
        })?);
        end += 4;
    }
    frame.range.end = end;
    Ok(())
}

/// Walks the frame starting at `input[offset..]`: its header, every block
/// header, the checksum. `window_limit` refuses a frame whose window is
/// larger, before any block is looked at.
pub fn walk_frame(
    input: &[u8],
    offset: usize,
    index: usize,
    window_limit: u64,
) -> Result<Frame, Error> {
    let mut frame = frame_start(input, offset, index, window_limit)?;
    let FrameKind::Zstd(header) = &frame.kind else {
        return Ok(frame);
    };
    let block_max = header.block_max();
    let mut at = frame.range.end;
    loop {
        let block = block_header(input, at, index, block_max)?;
        at = block.content.end;
        let last = block.last;
        frame.blocks.push(block);
        if last {
            break;
        }
    }
    frame_end(input, &mut frame, at)?;
    Ok(frame)
}

/// Walks every frame of `input` (see [`walk_frame`]).
pub fn walk(input: &[u8], window_limit: u64) -> Result<Vec<Frame>, Error> {
    let mut frames = Vec::new();
    let mut offset = 0;
    while offset < input.len() {
        let frame = walk_frame(input, offset, frames.len(), window_limit)?;
        offset = frame.range.end;
        frames.push(frame);
    }
    Ok(frames)
}
