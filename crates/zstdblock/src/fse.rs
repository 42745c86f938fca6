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

/// Builds the decoding table of `dist` into `table` (1 << log entries).
pub(crate) fn build(dist: &Distribution, table: &mut [State]) {
    let size = 1usize << dist.log;
    debug_assert_eq!(table.len(), size);
    let counts = &dist.counts[..dist.symbols];
    // "Less than 1" symbols take the last cells, one each.
    let mut high = size - 1;
    let mut next = [0u16; 256];
    for (symbol, &count) in counts.iter().enumerate() {
        if count == -1 {
            table[high].symbol = symbol as u8;
            high = high.wrapping_sub(1);
            next[symbol] = 1;
        } else {
            next[symbol] = count as u16;
        }
    }
    // The others are spread with the spec's step, skipping those cells.
    let step = (size >> 1) + (size >> 3) + 3;
    let mask = size - 1;
    let mut position = 0usize;
    for (symbol, &count) in counts.iter().enumerate() {
        for _ in 0..count.max(0) {
            table[position].symbol = symbol as u8;
            position = (position + step) & mask;
            while position > high {
                position = (position + step) & mask;
            }
        }
    }
    for cell in table.iter_mut() {
        let symbol = cell.symbol as usize;
        let state = next[symbol];
        next[symbol] += 1;
        let bits = dist.log - (15 - state.leading_zeros());
        cell.bits = bits as u8;
        cell.base = ((u32::from(state) << bits) - size as u32) as u16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
