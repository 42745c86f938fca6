//! Bit readers. zstd's entropy streams (Huffman, FSE) are written forwards
//! and read backwards, from the last byte, whose highest set bit marks
//! where the data starts; table descriptions are read forwards.

/// A backward bitstream over `data`, read from its end.
///
/// An eight-byte window of the stream sits in `container`, read from its
/// top: `consumed` counts the bits already taken from the top. `reload`
/// moves the window down by the whole bytes consumed, so after it at most
/// 7 bits are consumed and at least 57 are readable until the window
/// reaches the stream's first byte. There the window stops and `consumed`
/// grows past 64: reads then return garbage, and `overflowed` says so.
/// Callers check the end exactly (`finished`), as libzstd does, so garbage
/// never leaves a successful decode.
pub(crate) struct BackwardBits<'a> {
    data: &'a [u8],
    /// Start of the window in `data` (0 for a stream under eight bytes).
    pos: usize,
    container: u64,
    consumed: u32,
}

#[inline(always)]
fn load(data: &[u8], pos: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&data[pos..pos + 8]);
    u64::from_le_bytes(word)
}

impl<'a> BackwardBits<'a> {
    /// None for an empty stream or one whose last byte has no end mark.
    pub(crate) fn new(data: &'a [u8]) -> Option<Self> {
        let last = *data.last()?;
        if last == 0 {
            return None;
        }
        // The mark and the zeros above it.
        let padding = last.leading_zeros() + 1;
        if data.len() >= 8 {
            let pos = data.len() - 8;
            Some(BackwardBits {
                data,
                pos,
                container: load(data, pos),
                consumed: padding,
            })
        } else {
            // A short stream sits in the low bytes; the missing high bytes
            // count as consumed, so the end check is the same.
            let mut word = [0u8; 8];
            word[..data.len()].copy_from_slice(data);
            Some(BackwardBits {
                data,
                pos: 0,
                container: u64::from_le_bytes(word),
                consumed: padding + (8 - data.len() as u32) * 8,
            })
        }
    }

    /// The next `n` bits (n <= 56 after a reload) without consuming them.
    #[inline(always)]
    pub(crate) fn peek(&self, n: u32) -> u64 {
        // Two shifts so that n == 0 gives 0 without a branch.
        (self.container.wrapping_shl(self.consumed) >> 1) >> (63 - n)
    }

    /// The next bits as an index into a table of `1 << (64 - shift)`
    /// entries: `shift` is 64 minus the table log, which is at least 1.
    #[inline(always)]
    pub(crate) fn index(&self, shift: u32) -> usize {
        (self.container.wrapping_shl(self.consumed) >> shift) as usize
    }

    #[inline(always)]
    pub(crate) fn consume(&mut self, n: u32) {
        self.consumed += n;
    }

    #[inline(always)]
    pub(crate) fn read(&mut self, n: u32) -> u64 {
        let value = self.peek(n);
        self.consumed += n;
        value
    }

    /// Refills the window so that at least 57 bits are readable, unless
    /// the stream's first byte is already in it.
    #[inline(always)]
    pub(crate) fn reload(&mut self) {
        let bytes = (self.consumed >> 3) as usize;
        if self.pos > bytes {
            self.pos -= bytes;
            self.consumed &= 7;
            self.container = load(self.data, self.pos);
        } else {
            self.reload_at_start();
        }
    }

    // Inline, not a cold call: a call would keep the reader in memory
    // instead of registers throughout the hot loops.
    #[inline(always)]
    fn reload_at_start(&mut self) {
        if self.pos > 0 {
            self.consumed -= (self.pos as u32) * 8;
            self.pos = 0;
            self.container = load(self.data, 0);
        }
    }

    /// Bits not yet read; negative once reads went past the stream's start.
    #[inline(always)]
    pub(crate) fn remaining(&self) -> i64 {
        (self.pos as i64) * 8 + 64 - i64::from(self.consumed)
    }

    /// Reads went past the stream's start.
    #[inline(always)]
    pub(crate) fn overflowed(&self) -> bool {
        self.remaining() < 0
    }

    /// Every bit read, and none past the start.
    pub(crate) fn finished(&self) -> bool {
        self.remaining() == 0
    }
}

/// A forward bit reader for FSE table descriptions: bits are taken from
/// the least significant end of each byte, bytes past the end read as 0
/// (the caller checks the bytes used against the length, as libzstd's
/// padded copy does).
pub(crate) struct ForwardBits<'a> {
    data: &'a [u8],
    bit: usize,
}

impl<'a> ForwardBits<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        ForwardBits { data, bit: 0 }
    }

    /// The next `n` bits (n <= 25) without consuming them.
    pub(crate) fn peek(&self, n: u32) -> u32 {
        let byte = self.bit / 8;
        let mut word = [0u8; 8];
        let end = self.data.len().min(byte + 8);
        if byte < end {
            word[..end - byte].copy_from_slice(&self.data[byte..end]);
        }
        let value = u64::from_le_bytes(word) >> (self.bit % 8);
        (value & ((1u64 << n) - 1)) as u32
    }

    pub(crate) fn consume(&mut self, n: u32) {
        self.bit += n as usize;
    }

    pub(crate) fn read(&mut self, n: u32) -> u32 {
        let value = self.peek(n);
        self.bit += n as usize;
        value
    }

    /// Bytes touched so far, the last one partly.
    pub(crate) fn bytes_used(&self) -> usize {
        self.bit.div_ceil(8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backward_reads_from_the_mark_down_and_ends_exactly() {
        // 0b0000_0101: mark at bit 2, then bits 0 and 1 are "01".
        let data = [0xAB, 0x05];
        let mut bits = BackwardBits::new(&data).unwrap();
        assert_eq!(bits.read(2), 0b01);
        assert_eq!(bits.read(8), 0xAB);
        assert!(bits.finished());
        bits.read(1);
        assert!(bits.overflowed());
    }

    #[test]
    fn backward_long_stream_reloads_across_the_start() {
        let data: Vec<u8> = (1..=20u8).collect();
        let mut bits = BackwardBits::new(&data).unwrap();
        // Last byte 20 = 0b10100: mark at bit 4.
        assert_eq!(bits.read(4), 0b0100);
        for byte in (0..19).rev() {
            bits.reload();
            assert_eq!(bits.read(8), u64::from(data[byte]));
        }
        bits.reload();
        assert!(bits.finished());
    }

    #[test]
    fn forward_reads_low_bits_first_and_pads_with_zeros() {
        let data = [0b1010_0110];
        let mut bits = ForwardBits::new(&data);
        assert_eq!(bits.read(4), 0b0110);
        assert_eq!(bits.read(4), 0b1010);
        assert_eq!(bits.read(8), 0);
        assert_eq!(bits.bytes_used(), 2);
    }
}
