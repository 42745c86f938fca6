//! The literals section of a compressed block: raw, RLE, Huffman-coded
//! with a new tree, or Treeless (the previous block's tree), in one or
//! four streams (RFC 8878 section 3.1.1.3.1).

use std::sync::Arc;

use crate::error::Fault;
use crate::huffman::{self, HuffmanTable};

/// The Huffman tree a block leaves to the next ones of its frame (for
/// Treeless literals): built, or only described, as a state that skips a
/// block leaves it, so that a tree is built once, by the thread that
/// decodes with it.
#[derive(Clone, Debug)]
pub(crate) enum Tree {
    Built(Arc<HuffmanTable>),
    /// The tree description's bytes (at most 129).
    Described(Arc<[u8]>),
}

/// Bytes kept readable past the last literal, so execution can copy
/// literals in fixed 16-byte pieces without a bounds branch per length.
pub(crate) const LITERAL_SLACK: usize = 32;

/// Decodes the literals section at the start of `block` (a compressed
/// block's content) into `out[..count]`, `out` at least `LITERAL_SLACK`
/// bytes longer (what lies past the literals is scratch). Returns the
/// number of literals and the bytes the section took. Without
/// `decode_streams`, only the section's size and its Huffman tree are
/// read (for a state that skips a block), and `out` is untouched.
pub(crate) fn decode(
    block: &[u8],
    block_max: usize,
    huffman: &mut Option<Tree>,
    out: &mut Vec<u8>,
    decode_streams: bool,
) -> Result<(usize, usize), Fault> {
    // libzstd needs two bytes (a literals and a sequences header) first.
    if block.len() < 2 {
        return Err(Fault::new(0, "compressed block under 2 bytes"));
    }
    let b0 = block[0];
    let kind = b0 & 3;
    let size_format = (b0 >> 2) & 3;
    // Grown, never cleared: zeroing 128 KiB a block would cost more than
    // a raw block's copy.
    let room = |out: &mut Vec<u8>, size: usize| {
        if out.len() < size + LITERAL_SLACK {
            out.resize(size + LITERAL_SLACK, 0);
        }
    };
    match kind {
        0 | 1 => {
            let (header, size) = match size_format {
                0 | 2 => (1, usize::from(b0 >> 3)),
                1 => (2, usize::from(u16::from_le_bytes([b0, block[1]]) >> 4)),
                _ => {
                    if block.len() < 3 {
                        return Err(Fault::new(0, "literals header past the block"));
                    }
                    (
                        3,
                        (u32::from_le_bytes([b0, block[1], block[2], 0]) >> 4) as usize,
                    )
                }
            };
            if size > block_max {
                return Err(Fault::new(0, "more literals than a block holds"));
            }
            if !decode_streams {
                let used = if kind == 0 { header + size } else { header + 1 };
                if used > block.len() {
                    return Err(Fault::new(header, "literals past the block"));
                }
                return Ok((size, used));
            }
            if kind == 0 {
                let Some(bytes) = block.get(header..header + size) else {
                    return Err(Fault::new(header, "raw literals past the block"));
                };
                room(out, size);
                out[..size].copy_from_slice(bytes);
                Ok((size, header + size))
            } else {
                let Some(&byte) = block.get(header) else {
                    return Err(Fault::new(header, "RLE literal past the block"));
                };
                room(out, size);
                out[..size].fill(byte);
                Ok((size, header + 1))
            }
        }
        _ => {
            if block.len() < 5 {
                // libzstd reads a 5-byte header window for any size format.
                return Err(Fault::new(
                    0,
                    "compressed literals in a block under 5 bytes",
                ));
            }
            let word = u32::from_le_bytes([b0, block[1], block[2], block[3]]);
            let (header, size, compressed, streams) = match size_format {
                0 | 1 => (
                    3,
                    (word >> 4) & 0x3FF,
                    (word >> 14) & 0x3FF,
                    if size_format == 0 { 1 } else { 4 },
                ),
                2 => (4, (word >> 4) & 0x3FFF, word >> 18, 4),
                _ => (
                    5,
                    (word >> 4) & 0x3_FFFF,
                    (word >> 22) | (u32::from(block[4]) << 10),
                    4,
                ),
            };
            let (size, compressed) = (size as usize, compressed as usize);
            if size > block_max {
                return Err(Fault::new(0, "more literals than a block holds"));
            }
            if streams == 4 && size < 6 {
                return Err(Fault::new(0, "too few literals for 4 streams"));
            }
            let Some(data) = block.get(header..header + compressed) else {
                return Err(Fault::new(header, "compressed literals past the block"));
            };
            // A new tree replaces the frame's last one; Treeless reuses it.
            // Skipping, the tree is only described (its bytes kept), for
            // the thread that decodes a Treeless block with it to build.
            let mut tree_size = 0;
            if kind == 2 {
                let fault = |what| Fault::new(header, what);
                let used = if decode_streams {
                    let (table, used) = huffman::read_table(data).map_err(fault)?;
                    *huffman = Some(Tree::Built(Arc::new(table)));
                    used
                } else {
                    let used = huffman::description_size(data).map_err(fault)?;
                    *huffman = Some(Tree::Described(data[..used].into()));
                    used
                };
                if used >= data.len() {
                    return Err(Fault::new(header, "Huffman tree leaves no stream"));
                }
                tree_size = used;
            }
            let table = match huffman.as_ref() {
                None => {
                    return Err(Fault::new(0, "Treeless literals without a previous tree"));
                }
                Some(_) if !decode_streams => return Ok((size, header + compressed)),
                Some(Tree::Built(table)) => table.clone(),
                Some(Tree::Described(description)) => {
                    // A description the skipping walk left: its own block,
                    // decoded in order before this one, reports its faults.
                    let (table, _) =
                        huffman::read_table(description).map_err(|what| Fault::new(0, what))?;
                    let table = Arc::new(table);
                    *huffman = Some(Tree::Built(table.clone()));
                    table
                }
            };
            room(out, size);
            let streams_data = &data[tree_size..];
            let at = header + tree_size;
            if streams == 1 {
                table
                    .decode_1(streams_data, &mut out[..size])
                    .map_err(|what| Fault::new(at, what))?;
            } else {
                table
                    .decode_4(streams_data, &mut out[..size])
                    .map_err(|what| Fault::new(at, what))?;
            }
            Ok((size, header + compressed))
        }
    }
}
