//! The one error type: every variant names the frame (its index in the
//! input, skippable frames counted) and the input byte offset where the
//! input went wrong, so a caller can report both without knowing which
//! stage found the fault.

/// Why a frame could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The input ends inside a frame (a header, a block or the checksum).
    #[error("frame {frame} at byte {offset}: the input ends inside the frame")]
    Truncated {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the missing bytes.
        offset: usize,
    },
    /// Neither a zstd frame nor a skippable frame starts here.
    #[error("frame {frame} at byte {offset}: unknown magic number {magic:#010x}")]
    BadMagic {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the magic number.
        offset: usize,
        /// The four bytes read, little-endian.
        magic: u32,
    },
    /// The frame header is malformed (reserved bit set, window log past 31).
    #[error("frame {frame} at byte {offset}: bad frame header: {what}")]
    FrameHeader {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the frame header descriptor.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// The frame's window is larger than the caller allows (zstd's
    /// `--memory`).
    #[error(
        "frame {frame} at byte {offset}: window of {window} bytes exceeds the limit of {limit} bytes"
    )]
    WindowTooLarge {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the frame.
        offset: usize,
        /// The window the frame needs.
        window: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// The frame was compressed with a dictionary; hand it to libzstd.
    #[error("frame {frame} at byte {offset}: needs dictionary {dictionary_id}")]
    NeedsDictionary {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the frame.
        offset: usize,
        /// The dictionary ID from the frame header.
        dictionary_id: u32,
    },
    /// A block header with the reserved block type 3.
    #[error("frame {frame} at byte {offset}: reserved block type")]
    ReservedBlockType {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the block header.
        offset: usize,
    },
    /// A block (compressed, or decompressed) larger than the frame's
    /// maximum block size, min(window, 128 KiB).
    #[error("frame {frame} at byte {offset}: block of {size} bytes exceeds the maximum of {max}")]
    BlockTooLarge {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the block header.
        offset: usize,
        /// The size found.
        size: usize,
        /// The frame's maximum block size.
        max: usize,
    },
    /// The entropy-coded content of a compressed block is invalid.
    #[error("frame {frame} at byte {offset}: corrupt block: {what}")]
    Corrupt {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the faulty section, as near as known.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// A match reaches before the frame's first byte or past its window.
    #[error(
        "frame {frame} at byte {offset}: sequence {sequence} copies from {distance} bytes back, only {available} available"
    )]
    OffsetOutOfRange {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the block.
        offset: usize,
        /// Index of the sequence in its block.
        sequence: usize,
        /// The match offset (0 for an invalid repeat offset).
        distance: u64,
        /// min(bytes produced in the frame, window size).
        available: u64,
    },
    /// The frame produced another size than its header declares.
    #[error(
        "frame {frame} at byte {offset}: header declares {declared} bytes, blocks produce {produced}"
    )]
    ContentSize {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the frame's end.
        offset: usize,
        /// Frame_Content_Size from the header.
        declared: u64,
        /// Bytes the blocks produced.
        produced: u64,
    },
    /// The XXH64 content checksum does not match.
    #[error(
        "frame {frame} at byte {offset}: checksum {stored:#010x}, content hashes to {computed:#010x}"
    )]
    Checksum {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the stored checksum.
        offset: usize,
        /// The checksum in the frame.
        stored: u32,
        /// The low 32 bits of the content's XXH64.
        computed: u32,
    },
    /// Decoding would produce more than the caller's output limit.
    #[error("frame {frame} at byte {offset}: output would exceed the limit of {limit} bytes")]
    OutputLimit {
        /// Index of the frame.
        frame: usize,
        /// Input offset of the block that would pass the limit.
        offset: usize,
        /// The caller's limit.
        limit: u64,
    },
}

impl Error {
    /// The same error `by` bytes further into the input: for a fault
    /// found in a buffer that holds the input from byte `by` on.
    pub(crate) fn rebased(mut self, by: usize) -> Error {
        match &mut self {
            Error::Truncated { offset, .. }
            | Error::BadMagic { offset, .. }
            | Error::FrameHeader { offset, .. }
            | Error::WindowTooLarge { offset, .. }
            | Error::NeedsDictionary { offset, .. }
            | Error::ReservedBlockType { offset, .. }
            | Error::BlockTooLarge { offset, .. }
            | Error::Corrupt { offset, .. }
            | Error::OffsetOutOfRange { offset, .. }
            | Error::ContentSize { offset, .. }
            | Error::Checksum { offset, .. }
            | Error::OutputLimit { offset, .. } => *offset += by,
        }
        self
    }

    /// Whether libzstd's one-shot decoder may accept the input this error
    /// refuses: the RFC's rules that libzstd does not enforce. Its 4-stream
    /// Huffman fast loop and its double-symbol tail do not check that a
    /// stream ends exactly where its last symbol does; it checks a match
    /// against the frame's start, not its window; it bounds a raw, RLE or
    /// decompressed block by its output buffer, not the maximum block
    /// size. A caller that must answer as libzstd does hands such input to
    /// libzstd; encoders never write it.
    pub fn libzstd_may_accept(&self) -> bool {
        match self {
            Error::Corrupt { what, .. } => *what == crate::huffman::STREAM_END_MISMATCH,
            Error::OffsetOutOfRange { .. } | Error::BlockTooLarge { .. } => true,
            _ => false,
        }
    }
}

/// A fault inside a block, before the caller adds the frame index and
/// the block's input offset: the inner stages know only their slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fault {
    /// Offset from the start of the block's content.
    pub at: usize,
    pub what: &'static str,
}

impl Fault {
    pub(crate) fn new(at: usize, what: &'static str) -> Self {
        Fault { at, what }
    }

    pub(crate) fn into_error(self, frame: usize, block_content: usize) -> Error {
        Error::Corrupt {
            frame,
            offset: block_content + self.at,
            what: self.what,
        }
    }
}
