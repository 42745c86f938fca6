//! Finite State Entropy: the table description (normalized counts) and
//! the decoding table built from it (RFC 8878 section 4.1).

use crate::bits::ForwardBits;

/// The largest accuracy log any zstd FSE table may use (libzstd's
/// absolute maximum when reading a description).
const ABSOLUTE_MAX_LOG: u32 = 15;

/// Normalized counts read from a table description.
#[derive(Clone, Debug)]
pub(crate) struct Distribution {
    /// Count per symbol; -1 is "less than 1".
    pub counts: [i16; 256],
    /// Symbols described: the highest is `symbols - 1`.
    pub symbols: usize,
    pub log: u32,
}

/// Reads an FSE table description from the start of `data`: the
/// distribution and the bytes it took. `max_symbol` is the largest
/// symbol the table may have, `max_log` its largest accuracy log.
pub(crate) fn read_distribution(
    data: &[u8],
    max_symbol: usize,
    max_log: u32,
) -> Result<(Distribution, usize), &'static str> {
    let mut bits = ForwardBits::new(data);
    let log = bits.read(4) + 5;
    if log > ABSOLUTE_MAX_LOG || log > max_log {
        return Err("FSE accuracy log too large");
    }
    let mut counts = [0i16; 256];
    let mut remaining: i32 = (1 << log) + 1;
    let mut threshold: i32 = 1 << log;
    let mut nb_bits = log + 1;
    let mut symbol = 0usize;
    let mut previous_zero = false;
    let limit = max_symbol + 1;
    loop {
        if previous_zero {
            // Two-bit repeat fields; 3 means three more zeros and another field.
            loop {
                let repeat = bits.read(2) as usize;
                symbol += repeat;
                if repeat != 3 {
                    break;
                }
                if symbol > limit {
                    return Err("FSE description has too many symbols");
                }
            }
            if symbol >= limit {
                break;
            }
        }
        // Values below `max` fit in one bit less (the spec's "small values").
        let max = (2 * threshold - 1) - remaining;
        let low = bits.peek(nb_bits - 1) as i32;
        let mut count;
        if low < max {
            count = low;
            bits.consume(nb_bits - 1);
        } else {
            count = bits.peek(nb_bits) as i32;
            if count >= threshold {
                count -= max;
            }
            bits.consume(nb_bits);
        }
        count -= 1;
        remaining -= count.abs();
        counts[symbol] = count as i16;
        symbol += 1;
        previous_zero = count == 0;
        if remaining < threshold {
            if remaining <= 1 {
                break;
            }
            nb_bits = 32 - (remaining as u32).leading_zeros();
            threshold = 1 << (nb_bits - 1);
        }
        if symbol >= limit {
            break;
        }
    }
    if remaining != 1 {
        return Err("FSE description does not add up");
    }
    if symbol > limit {
        return Err("FSE description has too many symbols");
    }
    let used = bits.bytes_used();
    if used > data.len() {
        return Err("FSE description runs past its section");
    }
    Ok((
        Distribution {
            counts,
            symbols: symbol,
            log,
        },
        used,
    ))
}

/// One decoding table state: the symbol it emits, and how the next state
/// follows (`base` plus `bits` read from the stream).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct State {
    pub symbol: u8,
    pub bits: u8,
    pub base: u16,
}

/// The most cells a table of this crate has: accuracy log 9 (literal and
/// match lengths; offsets take 8 and Huffman weights 6).
pub(crate) const MAX_CELLS: usize = 1 << 9;

/// Builds the decoding table of `dist` into `table` (1 << log entries).
pub(crate) fn build(dist: &Distribution, table: &mut [State]) {
    let mut symbols = [0u8; MAX_CELLS];
    let symbols = &mut symbols[..table.len()];
    spread(dist, symbols);
    let mut next = NextStates::new(dist);
    for (cell, &symbol) in table.iter_mut().zip(symbols.iter()) {
        let (bits, base) = next.take(symbol);
        *cell = State { symbol, bits, base };
    }
}

/// Places the symbols of `dist` in the cells of its table (`symbols`
/// has `1 << log` entries), as RFC 8878 section 4.1.1 spreads them.
pub(crate) fn spread(dist: &Distribution, symbols: &mut [u8]) {
    let size = symbols.len();
    debug_assert!(size == 1 << dist.log && size <= MAX_CELLS);
    let counts = &dist.counts[..dist.symbols];
    // "Less than 1" symbols take the last cells, one each.
    let mut high = size - 1;
    for (symbol, &count) in counts.iter().enumerate() {
        if count == -1 {
            symbols[high] = symbol as u8;
            high = high.wrapping_sub(1);
        }
    }
    // The others are spread with the spec's step, skipping those cells.
    let step = (size >> 1) + (size >> 3) + 3;
    let mask = size - 1;
    let mut position = 0usize;
    if high == size - 1 {
        // None is "less than 1", so no cell is skipped: the symbols are
        // laid out in runs first and then dealt with the step, one loop
        // of fixed length where a loop per symbol, of the symbol's count,
        // mispredicted its end at almost every symbol (libzstd's fast
        // path does the same). A valid distribution's counts sum to the
        // table's size; a run past it is cut rather than trusted.
        let mut runs = [0u8; MAX_CELLS];
        let mut at = 0;
        for (symbol, &count) in counts.iter().enumerate() {
            let end = (at + count.max(0) as usize).min(size);
            runs[at..end].fill(symbol as u8);
            at = end;
        }
        for &symbol in &runs[..size] {
            symbols[position] = symbol;
            position = (position + step) & mask;
        }
        return;
    }
    for (symbol, &count) in counts.iter().enumerate() {
        for _ in 0..count.max(0) {
            symbols[position] = symbol as u8;
            position = (position + step) & mask;
            while position > high {
                position = (position + step) & mask;
            }
        }
    }
}

/// The next-state rule of a table being built, taken cell by cell in
/// order (RFC 8878 section 4.1.1): a symbol's cells count up from its
/// normalized count, and each says how many bits the next state reads
/// and what it adds them to.
pub(crate) struct NextStates {
    next: [u16; 256],
    log: u32,
}

impl NextStates {
    /// The rule for `dist`, before its first cell.
    pub(crate) fn new(dist: &Distribution) -> Self {
        let mut next = [0u16; 256];
        for (slot, &count) in next.iter_mut().zip(&dist.counts[..dist.symbols]) {
            *slot = if count == -1 { 1 } else { count as u16 };
        }
        NextStates {
            next,
            log: dist.log,
        }
    }

    /// The next cell's bits and base, given the symbol it holds.
    #[inline(always)]
    pub(crate) fn take(&mut self, symbol: u8) -> (u8, u16) {
        let state = self.next[usize::from(symbol)];
        self.next[usize::from(symbol)] = state.wrapping_add(1);
        let bits = self
            .log
            .wrapping_sub(15u32.wrapping_sub(state.leading_zeros()));
        let base = (u32::from(state) << (bits & 31)).wrapping_sub(1 << self.log);
        (bits as u8, base as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spread as RFC 8878 section 4.1.1 words it, cell by cell.
    fn spread_by_the_spec(counts: &[i16], log: u32) -> Vec<u8> {
        let size = 1usize << log;
        let mut cells = vec![0u8; size];
        let mut high = size - 1;
        for (symbol, &count) in counts.iter().enumerate() {
            if count == -1 {
                cells[high] = symbol as u8;
                high = high.wrapping_sub(1);
            }
        }
        let mut position = 0;
        for (symbol, &count) in counts.iter().enumerate() {
            for _ in 0..count.max(0) {
                cells[position] = symbol as u8;
                loop {
                    position = (position + (size >> 1) + (size >> 3) + 3) & (size - 1);
                    if position <= high {
                        break;
                    }
                }
            }
        }
        cells
    }

    #[test]
    fn the_spread_without_low_symbols_places_them_as_the_spec_does() {
        // Counts summing to the table's size, none "less than 1", with
        // runs of every length up to a whole table, at logs 5 to 9.
        let mut seed = 0x9e37_79b9_u32;
        for log in 5..=9u32 {
            for round in 0..50 {
                let size = 1usize << log;
                let symbols = 1 + round % 40;
                let mut counts = vec![0i16; symbols];
                let mut left = size;
                for (i, count) in counts.iter_mut().enumerate() {
                    seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    let take = if i + 1 == symbols {
                        left
                    } else {
                        (seed >> 8) as usize % (left + 1)
                    };
                    *count = take as i16;
                    left -= take;
                }
                let mut dist = Distribution {
                    counts: [0; 256],
                    symbols,
                    log,
                };
                dist.counts[..symbols].copy_from_slice(&counts);
                let mut cells = vec![0u8; size];
                spread(&dist, &mut cells);
                assert_eq!(
                    cells,
                    spread_by_the_spec(&counts, log),
                    "log {log}, {counts:?}"
                );
            }
        }
    }

    #[test]
    fn a_predefined_literal_length_table_matches_the_spec_appendix() {
        let mut dist = Distribution {
            counts: [0; 256],
            symbols: 36,
            log: 6,
        };
        let ll: [i16; 36] = [
            4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1,
            1, 1, 1, -1, -1, -1, -1,
        ];
        dist.counts[..36].copy_from_slice(&ll);
        let mut table = vec![State::default(); 64];
        build(&dist, &mut table);
        // RFC 8878 Appendix A, literal length table: states 0, 1, 2, 63.
        assert_eq!((table[0].symbol, table[0].bits, table[0].base), (0, 4, 0));
        assert_eq!((table[1].symbol, table[1].bits, table[1].base), (0, 4, 16));
        assert_eq!((table[2].symbol, table[2].bits, table[2].base), (1, 5, 32));
        assert_eq!(
            (table[63].symbol, table[63].bits, table[63].base),
            (32, 6, 0)
        );
    }
}
