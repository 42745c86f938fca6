//! Stage 2, the entropy stage of one compressed block: literals and
//! sequences, with no reference to the window or to earlier output. What
//! a block inherits from the earlier blocks of its frame is an explicit
//! [`EntropyState`], so a worker can start a range of blocks from a copy.

use crate::error::Error;
use crate::frame::Block;
use crate::literals::{self, Tree};
use crate::sequences::{self, Sequence, Tables};

/// The tables a compressed block may reuse from the earlier blocks of its
/// frame: the last Huffman tree (for Treeless literals) and the last
/// literal length, offset and match length tables (for Repeat mode).
/// A new frame starts from [`EntropyState::default`]. Cloning is cheap
/// (the tables are shared).
#[derive(Clone, Debug, Default)]
pub struct EntropyState {
    pub(crate) huffman: Option<Tree>,
    pub(crate) tables: Tables,
}

/// A compressed block after the entropy stage: its literals and its
/// sequences, offsets not yet resolved (see [`Sequence`]).
#[derive(Clone, Debug, Default)]
pub struct DecodedBlock {
    /// The literals, followed by padding (see [`DecodedBlock::literals`]).
    literals: Vec<u8>,
    literal_count: usize,
    /// The sequences, in the first `sequence_count` entries (the buffer
    /// keeps its length across blocks, see `sequences::decode`).
    sequences: Vec<Sequence>,
    sequence_count: usize,
    pub(crate) output_size: usize,
    /// The last decode succeeded: only then do the literals, sequences
    /// and output size agree, which execution relies on.
    pub(crate) valid: bool,
}

impl DecodedBlock {
    /// The block's literal bytes.
    pub fn literals(&self) -> &[u8] {
        &self.literals[..self.literal_count]
    }

    /// The block's sequences in order.
    pub fn sequences(&self) -> &[Sequence] {
        &self.sequences[..self.sequence_count]
    }

    /// Bytes the block produces: all literals plus all match lengths.
    pub fn output_size(&self) -> usize {
        self.output_size
    }

    /// Stage 3 for this block: turns the offset values into distances
    /// (see [`crate::resolve_offsets`]), in block order within a frame.
    pub fn resolve_offsets(&mut self, repeats: &mut [u32; 3]) {
        crate::offsets::resolve_offsets(&mut self.sequences[..self.sequence_count], repeats);
    }

    /// Gives the buffers room for the largest block of `block_max` bytes
    /// at once, so they are allocated once and never grown: growing by
    /// doubling copied each buffer and touched it twice, which page
    /// faults made a tenth of the pipeline's CPU (it now holds a range's
    /// blocks' buffers per worker and one more set, see
    /// `parallel::DECODED_AHEAD`, where it held them for every range in
    /// flight). Pages reserved and not written cost no memory. A valid
    /// block has at most a sequence per 3 bytes (a match is 3 bytes at
    /// least); a corrupt count larger than that grows the buffer and then
    /// fails.
    pub(crate) fn make_room(&mut self, block_max: usize) {
        let literals = block_max + literals::LITERAL_SLACK;
        if self.literals.capacity() < literals {
            self.literals.reserve_exact(literals - self.literals.len());
        }
        let sequences = block_max / 3;
        if self.sequences.capacity() < sequences {
            self.sequences
                .reserve_exact(sequences - self.sequences.len());
        }
    }

    /// The literals with the padding execution copies in fixed pieces.
    pub(crate) fn padded_literals(&self) -> &[u8] {
        &self.literals
    }

    /// A block made of `literals` and `sequences` (offsets already
    /// distances), as the entropy stage would leave it, so execution can
    /// be tested on sequences no encoder would choose.
    #[cfg(test)]
    pub(crate) fn from_parts(literals: &[u8], sequences: Vec<Sequence>) -> Self {
        let mut padded = literals.to_vec();
        padded.resize(literals.len() + literals::LITERAL_SLACK, 0xA5);
        let matched: usize = sequences.iter().map(|s| s.match_length as usize).sum();
        DecodedBlock {
            literals: padded,
            literal_count: literals.len(),
            sequence_count: sequences.len(),
            sequences,
            output_size: literals.len() + matched,
            valid: true,
        }
    }
}

/// Decodes the literals and sequences of the compressed `block` of
/// `input` (as listed by [`crate::walk`]) into `out`, reading and updating
/// `state`. A block whose sequences need more literals than it has, or
/// that would produce more than its frame's maximum block size, is an
/// error here, so execution never has to check either.
pub fn decode_block(
    input: &[u8],
    block: &Block,
    state: &mut EntropyState,
    out: &mut DecodedBlock,
) -> Result<(), Error> {
    decode_content(&input[block.content.clone()], block, state, out)
}

/// [`decode_block`] given the block's content, `content`, wherever it is
/// held (the pipeline holds the input a range of blocks at a time);
/// errors still name the block's offsets in the input.
pub(crate) fn decode_content(
    content: &[u8],
    block: &Block,
    state: &mut EntropyState,
    out: &mut DecodedBlock,
) -> Result<(), Error> {
    let origin = block.content.start;
    let frame = block.frame;
    // Not valid, and of no size, until the checks below pass: execution
    // trusts the size of a valid block and refuses any other.
    out.valid = false;
    out.output_size = 0;
    out.sequence_count = 0;
    out.make_room(block.block_max);
    let (count, used) = literals::decode(
        content,
        block.block_max,
        &mut state.huffman,
        &mut out.literals,
        true,
    )
    .map_err(|f| f.into_error(frame, origin))?;
    out.literal_count = count;
    let decoded = sequences::decode(
        &content[used..],
        used,
        &mut state.tables,
        &mut out.sequences,
        true,
    )
    .map_err(|f| f.into_error(frame, origin))?;
    out.sequence_count = decoded.count;
    // In u64: on a 32-bit target a corrupt block's sums could wrap.
    if decoded.literals > count as u64 {
        return Err(Error::Corrupt {
            frame,
            offset: origin,
            what: "sequences need more literals than the block has",
        });
    }
    let size = count as u64 + decoded.matches;
    if size > block.block_max as u64 {
        return Err(Error::BlockTooLarge {
            frame,
            offset: block.header,
            size: usize::try_from(size).unwrap_or(usize::MAX),
            max: block.block_max,
        });
    }
    out.output_size = count + decoded.matches as usize;
    out.valid = true;
    Ok(())
}

/// Brings `state` past the compressed `block` without decoding it: reads
/// its literals header and sequence table descriptions, not the
/// bitstreams (a few hundred bytes of a block's tens of kilobytes), and
/// keeps its Huffman tree and tables as descriptions, built only by a
/// decode that uses them (so a table the walk skips is built once, where
/// it is used; a fault inside a tree description is the decode's to
/// find). A worker that starts at block `k` runs this over blocks `0..k`
/// of the frame first, and then decodes exactly as a single thread would.
pub fn skip_block(input: &[u8], block: &Block, state: &mut EntropyState) -> Result<(), Error> {
    skip_content(&input[block.content.clone()], block, state).map(|_| ())
}

/// [`skip_block`] given the block's content (see [`decode_content`]);
/// returns the bytes its decode will hold, literals and sequences, as its
/// headers declare them.
pub(crate) fn skip_content(
    content: &[u8],
    block: &Block,
    state: &mut EntropyState,
) -> Result<usize, Error> {
    let origin = block.content.start;
    let mut scratch = Vec::new();
    let (literal_count, used) = literals::decode(
        content,
        block.block_max,
        &mut state.huffman,
        &mut scratch,
        false,
    )
    .map_err(|f| f.into_error(block.frame, origin))?;
    let mut none = Vec::new();
    let sequences = sequences::decode(&content[used..], used, &mut state.tables, &mut none, false)
        .map_err(|f| f.into_error(block.frame, origin))?;
    Ok(literal_count.saturating_add(
        sequences
            .count
            .saturating_mul(std::mem::size_of::<Sequence>()),
    ))
}
