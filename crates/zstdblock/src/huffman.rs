//! Huffman-coded literals: the tree description (weights, direct or
//! FSE-compressed) and the 1- and 4-stream decoders (RFC 8878 section 4.2).

use crate::bits::{BackwardBits, MarkedBits};
use crate::fse;

/// libzstd accepts trees up to 12 bits deep (the RFC says 11; zstd's own
/// decoder table takes 12, and we decode what it decodes).
pub(crate) const MAX_BITS: u32 = 12;
const TABLE_SIZE: usize = 1 << MAX_BITS;
/// The fault of a stream whose last symbol does not end it exactly.
pub(crate) const STREAM_END_MISMATCH: &str = "Huffman stream not consumed exactly";

/// A single-symbol decoding table: indexed by the next [`MAX_BITS`] bits
/// of the stream, each cell holds the code's length (low byte, where a
/// shift's count is, so [`MarkedBits::consume_by`] takes the cell as it
/// is) and the symbol (high byte); `bits` is the tree's depth.
#[derive(Clone)]
pub struct HuffmanTable {
    cells: Box<[u16; TABLE_SIZE]>,
    bits: u32,
}

impl std::fmt::Debug for HuffmanTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HuffmanTable")
            .field("bits", &self.bits)
            .finish_non_exhaustive()
    }
}

/// Reads a Huffman tree description from the start of `data`: the table
/// and the bytes it took.
pub(crate) fn read_table(data: &[u8]) -> Result<(HuffmanTable, usize), &'static str> {
    let Some(&header) = data.first() else {
        return Err("missing Huffman tree description");
    };
    let mut weights = [0u8; 256];
    let (count, used) = if header >= 128 {
        // Direct: four bits per weight.
        let count = usize::from(header) - 127;
        let bytes = count.div_ceil(2);
        if bytes + 1 > data.len() {
            return Err("Huffman tree description runs past the literals");
        }
        for i in 0..count {
            let byte = data[1 + i / 2];
            weights[i] = if i % 2 == 0 { byte >> 4 } else { byte & 15 };
        }
        (count, bytes + 1)
    } else {
        let size = usize::from(header);
        if size + 1 > data.len() {
            return Err("Huffman tree description runs past the literals");
        }
        let count = read_fse_weights(&data[1..1 + size], &mut weights)?;
        (count, size + 1)
    };
    Ok((build(&weights, count)?, used))
}

/// The bytes the Huffman tree description at the start of `data` takes,
/// read from its header byte alone, as [`read_table`] would find them.
pub(crate) fn description_size(data: &[u8]) -> Result<usize, &'static str> {
    let Some(&header) = data.first() else {
        return Err("missing Huffman tree description");
    };
    let used = if header >= 128 {
        (usize::from(header) - 127).div_ceil(2) + 1
    } else {
        usize::from(header) + 1
    };
    if used > data.len() {
        return Err("Huffman tree description runs past the literals");
    }
    Ok(used)
}

/// Weights compressed with FSE: two states interleaved on one stream.
/// Returns the number of weights (up to 255; the last is implied).
fn read_fse_weights(data: &[u8], weights: &mut [u8; 256]) -> Result<usize, &'static str> {
    let (dist, used) = fse::read_distribution(data, 255, 6)?;
    let mut table = [fse::State::default(); 64];
    let table = &mut table[..1 << dist.log];
    fse::build(&dist, table);
    let Some(mut bits) = BackwardBits::new(&data[used..]) else {
        return Err("bad Huffman weight stream");
    };
    let log = dist.log;
    let mut state1 = bits.read(log) as usize;
    let mut state2 = bits.read(log) as usize;
    bits.reload();
    if bits.overflowed() {
        return Err("Huffman weight stream too short");
    }
    // The stream ends when a state update reads past its start: the other
    // state's symbol is the last weight (libzstd's FSE_decompress tail).
    let mut count = 0usize;
    loop {
        if count > 253 {
            return Err("too many Huffman weights");
        }
        let cell = table[state1];
        weights[count] = cell.symbol;
        count += 1;
        state1 = usize::from(cell.base) + bits.read(u32::from(cell.bits)) as usize;
        bits.reload();
        if bits.overflowed() {
            weights[count] = table[state2].symbol;
            count += 1;
            break;
        }
        if count > 253 {
            return Err("too many Huffman weights");
        }
        let cell = table[state2];
        weights[count] = cell.symbol;
        count += 1;
        state2 = usize::from(cell.base) + bits.read(u32::from(cell.bits)) as usize;
        bits.reload();
        if bits.overflowed() {
            weights[count] = table[state1].symbol;
            count += 1;
            break;
        }
    }
    Ok(count)
}

/// The decoding table from `count` explicit weights; the last symbol's
/// weight is what makes the total a power of two.
fn build(weights: &[u8; 256], count: usize) -> Result<HuffmanTable, &'static str> {
    if count >= 256 {
        return Err("too many Huffman weights");
    }
    let mut rank = [0u32; 16];
    let mut total = 0u32;
    for &w in &weights[..count] {
        if u32::from(w) > MAX_BITS {
            return Err("Huffman weight too large");
        }
        rank[usize::from(w)] += 1;
        total += (1 << w) >> 1;
    }
    if total == 0 {
        return Err("Huffman weights all zero");
    }
    let bits = 32 - total.leading_zeros();
    if bits > MAX_BITS {
        return Err("Huffman tree too deep");
    }
    let rest = (1u32 << bits) - total;
    if !rest.is_power_of_two() {
        return Err("Huffman weights do not complete a tree");
    }
    let last = rest.trailing_zeros() + 1;
    let mut weights = *weights;
    weights[count] = last as u8;
    rank[last as usize] += 1;
    if rank[1] < 2 || rank[1] % 2 == 1 {
        return Err("Huffman tree has an odd number of deepest codes");
    }
    // Cells by ascending weight, then by symbol: the canonical code. The
    // table always has MAX_BITS of index, a shallower tree's cells
    // repeated to fill it (as libzstd's fast loop rescales its tables),
    // so the loops shift by a constant.
    let scale = (MAX_BITS - bits) as usize;
    let mut start = [0usize; 16];
    let mut next = 0usize;
    for w in 1..=MAX_BITS as usize {
        start[w] = next;
        next += (rank[w] as usize) << (w - 1 + scale);
    }
    let mut cells = Box::new([0u16; TABLE_SIZE]);
    for (symbol, &w) in weights[..=count].iter().enumerate() {
        if w == 0 {
            continue;
        }
        let w = usize::from(w);
        let span = 1usize << (w - 1 + scale);
        let length = bits + 1 - w as u32;
        let cell = length as u16 | ((symbol as u16) << 8);
        cells[start[w]..start[w] + span].fill(cell);
        start[w] += span;
    }
    Ok(HuffmanTable { cells, bits })
}

impl HuffmanTable {
    #[inline(always)]
    fn decode(&self, bits: &mut BackwardBits<'_>) -> u8 {
        let cell = self.cells[bits.index(64 - MAX_BITS) & (TABLE_SIZE - 1)];
        bits.consume(u32::from(cell & 0xFF));
        (cell >> 8) as u8
    }

    /// The four streams' bulk in libzstd's fast loop: each reader in
    /// [`MarkedBits`] form (two registers, so the four fit together), `N`
    /// symbols a stream between reloads (5 for trees up to 11 deep, 4 for
    /// 12, as many as a reload leaves bits for), and the rounds counted
    /// ahead so that no window leaves its stream and no output its
    /// quarter, with no check inside. Returns the symbols decoded into
    /// each quarter; the readers take up where it stopped, and the caller
    /// decodes the rest and checks the ends.
    #[inline(always)]
    fn decode_4_marked<const N: usize>(
        &self,
        readers: [&mut BackwardBits<'_>; 4],
        mut outs: [&mut [u8]; 4],
    ) -> usize {
        const { assert!(N as u32 * (MAX_BITS - 1) <= MarkedBits::READ && N >= 4) };
        // The bound the unsafe loop below stands on, checked once a call
        // (not only in debug builds): the caller picks `N` by depth.
        assert!(N as u32 * self.bits <= MarkedBits::READ);
        let [b1, b2, b3, b4] = readers;
        // The fourth quarter is the shortest.
        let room = outs[3].len();
        let mut done = 0;
        loop {
            for b in [&mut *b1, &mut *b2, &mut *b3, &mut *b4] {
                b.reload();
            }
            let rounds = [&*b1, &*b2, &*b3, &*b4]
                .map(|b| b.marked_room() / MarkedBits::STEP)
                .into_iter()
                .min()
                .unwrap_or(0)
                .min((room - done) / N);
            if rounds == 0 {
                return done;
            }
            let mut marked = [b1.marked(), b2.marked(), b3.marked(), b4.marked()];
            let [m1, m2, m3, m4] = &mut marked;
            let cells = &*self.cells;
            // SAFETY: each quarter has room for `done + N * rounds` bytes
            // (the fourth is the shortest); a round reads at most
            // `MarkedBits::READ` bits a stream, so its reload moves the
            // window at most `STEP` bytes, `rounds * STEP` at most the
            // room each reader gave.
            #[allow(unsafe_code)]
            unsafe {
                let mut out = outs.each_mut().map(|o| o.as_mut_ptr().add(done));
                for _ in 0..rounds {
                    m1.reload();
                    m2.reload();
                    m3.reload();
                    m4.reload();
                    for _ in 0..N {
                        for (m, o) in [&mut *m1, &mut *m2, &mut *m3, &mut *m4]
                            .into_iter()
                            .zip(&mut out)
                        {
                            let cell = cells[m.top(MAX_BITS)];
                            o.write((cell >> 8) as u8);
                            *o = o.add(1);
                            m.consume_by(cell);
                        }
                    }
                }
            }
            for (b, m) in [&mut *b1, &mut *b2, &mut *b3, &mut *b4]
                .into_iter()
                .zip(&marked)
            {
                b.resume(m);
            }
            done += N * rounds;
        }
    }

    /// Decodes one stream into all of `out`, in the BMI2 copy where the
    /// CPU has it (see [`crate::bits::variable_shifts`]).
    pub(crate) fn decode_1(&self, stream: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
        #[cfg(target_arch = "x86_64")]
        if crate::bits::variable_shifts() {
            // SAFETY: the CPU has the features the copy is compiled for.
            #[allow(unsafe_code)]
            return unsafe { self.decode_1_bmi2(stream, out) };
        }
        self.decode_1_body(stream, out)
    }

    /// [`HuffmanTable::decode_1_body`] compiled for BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi1,bmi2,lzcnt")]
    fn decode_1_bmi2(&self, stream: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
        self.decode_1_body(stream, out)
    }

    #[inline(always)]
    fn decode_1_body(&self, stream: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
        let mut bits = BackwardBits::new(stream).ok_or("bad Huffman stream")?;
        let mut chunks = out.chunks_exact_mut(4);
        for chunk in &mut chunks {
            bits.reload();
            // Four codes of at most 12 bits fit in the 57 bits a reload leaves.
            chunk[0] = self.decode(&mut bits);
            chunk[1] = self.decode(&mut bits);
            chunk[2] = self.decode(&mut bits);
            chunk[3] = self.decode(&mut bits);
        }
        for byte in chunks.into_remainder() {
            bits.reload();
            *byte = self.decode(&mut bits);
        }
        bits.reload();
        if !bits.finished() {
            return Err(STREAM_END_MISMATCH);
        }
        Ok(())
    }

    /// Decodes the four streams (after the 6-byte jump table in `data`)
    /// into the four quarters of `out`, in the BMI2 copy where the CPU has
    /// it (see [`crate::bits::variable_shifts`]).
    pub(crate) fn decode_4(&self, data: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
        #[cfg(target_arch = "x86_64")]
        if crate::bits::variable_shifts() {
            // SAFETY: the CPU has the features the copy is compiled for.
            #[allow(unsafe_code)]
            return unsafe { self.decode_4_bmi2(data, out) };
        }
        self.decode_4_body(data, out)
    }

    /// [`HuffmanTable::decode_4_body`] compiled for BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi1,bmi2,lzcnt")]
    fn decode_4_bmi2(&self, data: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
        self.decode_4_body(data, out)
    }

    #[inline(always)]
    fn decode_4_body(&self, data: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
        if data.len() < 10 {
            return Err("4-stream Huffman literals too short");
        }
        if out.len() < 6 {
            return Err("too few literals for 4 streams");
        }
        let l1 = usize::from(u16::from_le_bytes([data[0], data[1]]));
        let l2 = usize::from(u16::from_le_bytes([data[2], data[3]]));
        let l3 = usize::from(u16::from_le_bytes([data[4], data[5]]));
        let body = &data[6..];
        if l1 + l2 + l3 > body.len() {
            return Err("Huffman jump table past the literals");
        }
        let (s1, rest) = body.split_at(l1);
        let (s2, rest) = rest.split_at(l2);
        let (s3, s4) = rest.split_at(l3);
        // libzstd's fast loop reads a stream without its end mark (as if
        // the mark were past it), so this is the same lax-in-libzstd fault
        // as a stream that does not end exactly.
        let mut b1 = BackwardBits::new(s1).ok_or(STREAM_END_MISMATCH)?;
        let mut b2 = BackwardBits::new(s2).ok_or(STREAM_END_MISMATCH)?;
        let mut b3 = BackwardBits::new(s3).ok_or(STREAM_END_MISMATCH)?;
        let mut b4 = BackwardBits::new(s4).ok_or(STREAM_END_MISMATCH)?;
        let segment = out.len().div_ceil(4);
        let (o1, rest) = out.split_at_mut(segment);
        let (o2, rest) = rest.split_at_mut(segment);
        let (o3, o4) = rest.split_at_mut(segment);
        // All four streams in step while the shortest (the fourth) has
        // four symbols left: independent dependency chains overlap.
        let readers = [&mut b1, &mut b2, &mut b3, &mut b4];
        let fast = if self.bits < MAX_BITS {
            self.decode_4_marked::<5>(readers, [o1, o2, o3, o4])
        } else {
            self.decode_4_marked::<4>(readers, [o1, o2, o3, o4])
        };
        let steps = (o4.len() - fast) / 4;
        for i in 0..steps {
            let at = fast + i * 4;
            b1.reload();
            b2.reload();
            b3.reload();
            b4.reload();
            let c1 = &mut o1[at..at + 4];
            let c2 = &mut o2[at..at + 4];
            let c3 = &mut o3[at..at + 4];
            let c4 = &mut o4[at..at + 4];
            for k in 0..4 {
                c1[k] = self.decode(&mut b1);
                c2[k] = self.decode(&mut b2);
                c3[k] = self.decode(&mut b3);
                c4[k] = self.decode(&mut b4);
            }
        }
        let done = fast + steps * 4;
        for (bits, out) in [
            (&mut b1, &mut o1[done..]),
            (&mut b2, &mut o2[done..]),
            (&mut b3, &mut o3[done..]),
            (&mut b4, &mut o4[done..]),
        ] {
            for byte in out.iter_mut() {
                bits.reload();
                *byte = self.decode(bits);
            }
            bits.reload();
            if !bits.finished() {
                return Err(STREAM_END_MISMATCH);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree `depth` deep: symbol `i` of `depth - 1` has a code of
    /// `i + 1` bits, and the last two share the deepest length.
    fn skewed(depth: u32) -> HuffmanTable {
        let mut weights = [0u8; 256];
        for (i, w) in weights.iter_mut().take(depth as usize).enumerate() {
            *w = (depth as usize - i).max(1) as u8;
        }
        // The last symbol (weight 1) is implied.
        let table = build(&weights, depth as usize).unwrap();
        assert_eq!(table.bits, depth);
        table
    }

    /// Each symbol's code and length, read off the table's cells: the
    /// cells a code covers start at the code followed by zeros.
    fn codes(table: &HuffmanTable) -> Vec<(u64, u32)> {
        let mut codes = vec![(0, 0); 256];
        for (index, &cell) in table.cells.iter().enumerate().rev() {
            let length = u32::from(cell & 0xFF);
            codes[usize::from(cell >> 8)] = ((index >> (MAX_BITS - length)) as u64, length);
        }
        codes
    }

    /// A backward stream of `symbols`, as an encoder writes it: the last
    /// symbol first, each code's first bit highest, then the end mark.
    fn encode(symbols: &[u8], codes: &[(u64, u32)]) -> Vec<u8> {
        let mut bits = Vec::new();
        for &symbol in symbols.iter().rev() {
            let (code, length) = codes[usize::from(symbol)];
            // Lowest first; the decoder reads the highest first.
            bits.extend((0..length).map(|k| (code >> k) & 1 == 1));
        }
        bits.push(true);
        let mut out = vec![0u8; bits.len().div_ceil(8)];
        for (at, &bit) in bits.iter().enumerate() {
            out[at / 8] |= u8::from(bit) << (at % 8);
        }
        out
    }

    /// Four streams through `decode_4`, the fast loop's both widths (5
    /// codes of up to 11 bits a reload, 4 of 12) and the portable and BMI2
    /// copies, against symbols encoded from the table's own codes: long
    /// literals (the fast loop's rounds, its resumes and the tail) and
    /// short ones (no round at all).
    #[test]
    fn four_streams_decode_to_what_was_encoded_at_every_depth() {
        for depth in [5, 11, 12] {
            let table = skewed(depth);
            let codes = codes(&table);
            let mut state = u64::from(depth);
            for len in [7usize, 10, 40, 1000, 65_537] {
                let symbols: Vec<u8> = (0..len)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(7);
                        ((state >> 40) % u64::from(depth + 1)) as u8
                    })
                    .collect();
                let segment = len.div_ceil(4);
                let streams: Vec<Vec<u8>> = symbols
                    .chunks(segment)
                    .map(|part| encode(part, &codes))
                    .collect();
                assert_eq!(streams.len(), 4);
                let mut data = Vec::new();
                for stream in &streams[..3] {
                    data.extend_from_slice(&(stream.len() as u16).to_le_bytes());
                }
                for stream in &streams {
                    data.extend_from_slice(stream);
                }
                for portable in [false, true] {
                    crate::bits::tests::PORTABLE.set(portable);
                    let mut out = vec![0u8; len];
                    let decoded = table.decode_4(&data, &mut out);
                    crate::bits::tests::PORTABLE.set(false);
                    assert_eq!(
                        decoded,
                        Ok(()),
                        "depth {depth}, {len} symbols, portable {portable}"
                    );
                    assert!(
                        out == symbols,
                        "depth {depth}, {len} symbols, portable {portable}: wrong symbols"
                    );
                }
            }
        }
    }
}
