//! Bit readers. zstd's entropy streams (Huffman, FSE) are written forwards
//! and read backwards, from the last byte, whose highest set bit marks
//! where the data starts; table descriptions are read forwards.

/// Whether the CPU shifts by a count in any register (BMI2's `shlx` and
/// `shrx`, with BMI1 and LZCNT), checked once and cached by std. The hot
/// loops that read backward streams (sequences, Huffman literals) are
/// compiled twice and pick the BMI2 copy when this holds, as libzstd
/// does: every read is two or three shifts by a variable count, which
/// without BMI2 must go through `cl`, and the moves that takes make the
/// loops spill registers. It made the entropy stage 7-9 % faster here
/// (see the commit).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn variable_shifts() -> bool {
    #[cfg(test)]
    if tests::PORTABLE.get() {
        return false;
    }
    std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt")
}

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

/// The eight bytes at `data[pos..]`, unchecked: the reload is in the
/// hottest loops, and its bounds check kept the slice's length in a
/// register they are short of.
///
/// # Safety
///
/// `pos + 8 <= data.len()`.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn load(data: &[u8], pos: usize) -> u64 {
    debug_assert!(pos + 8 <= data.len());
    // SAFETY: the caller keeps the eight bytes inside `data`.
    let word = unsafe { data.as_ptr().add(pos).cast::<[u8; 8]>().read_unaligned() };
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
            // SAFETY: `pos + 8` is the length.
            #[allow(unsafe_code)]
            let container = unsafe { load(data, pos) };
            Some(BackwardBits {
                data,
                pos,
                container,
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
            // SAFETY: `pos` only falls (it stays above 0 here), from
            // `len - 8` in a stream of eight bytes or more; a shorter one
            // has `pos` 0 from the start and never comes here.
            #[allow(unsafe_code)]
            let container = unsafe { load(self.data, self.pos) };
            self.container = container;
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
            // SAFETY: `pos` was above 0, so the stream has more than
            // eight bytes (`pos` starts at `len - 8`, or 0 when shorter).
            #[allow(unsafe_code)]
            let container = unsafe { load(self.data, 0) };
            self.container = container;
        }
    }

    /// The stream in [`MarkedBits`] form, from a reader just reloaded
    /// (at most 7 bits consumed).
    #[inline(always)]
    pub(crate) fn marked(&self) -> MarkedBits {
        debug_assert!(self.consumed <= 7);
        MarkedBits {
            // From the whole stream's pointer, whose provenance covers
            // the bytes below `pos` the window moves down to.
            window: self.data.as_ptr().wrapping_add(self.pos),
            bits: (self.container | 1) << self.consumed,
        }
    }

    /// Bytes the window of a [`MarkedBits`] made now may move down and
    /// stay in the stream; 0 for a stream under 8 bytes (which has no
    /// window to move) or a reader not just reloaded.
    #[inline(always)]
    pub(crate) fn marked_room(&self) -> usize {
        if self.data.len() < 8 || self.consumed > 7 {
            return 0;
        }
        self.pos
    }

    /// Takes up where `marked` (made from this reader) stopped.
    #[inline(always)]
    pub(crate) fn resume(&mut self, marked: &MarkedBits) {
        // The window never left the stream (see `MarkedBits::reload`).
        self.pos = marked.window as usize - self.data.as_ptr() as usize;
        // SAFETY: `pos` is inside the stream, and `pos + 8` too, as
        // every window the marked reader loaded was.
        #[allow(unsafe_code)]
        let container = unsafe { load(self.data, self.pos) };
        self.container = container;
        self.consumed = marked.bits.trailing_zeros();
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

/// A backward stream in the form libzstd's fast Huffman loop reads: the
/// window's pointer and its bits shifted left as they are consumed, over
/// a marker bit whose trailing zeros count the bits consumed. Two
/// registers a stream where [`BackwardBits`] takes five, so four streams
/// fit in registers together. It reads no further than its caller's
/// bound (see [`MarkedBits::reload`]) and goes back to a [`BackwardBits`]
/// for the stream's last bytes and its end check.
pub(crate) struct MarkedBits {
    window: *const u8,
    bits: u64,
}

impl MarkedBits {
    /// Bits that may be consumed between two reloads: the window keeps
    /// its lowest bit for the marker and up to 7 bits consumed before it
    /// was loaded.
    pub(crate) const READ: u32 = 56;
    /// Bytes a reload moves the window down by at most, when at most
    /// [`MarkedBits::READ`] bits were consumed since the last: with up to
    /// 7 carried over, `(7 + READ) / 8`.
    pub(crate) const STEP: usize = (Self::READ as usize).div_ceil(8);

    /// The next `n` bits (1 to 32) as an index.
    #[inline(always)]
    pub(crate) fn top(&self, n: u32) -> usize {
        (self.bits >> (64 - n)) as usize
    }

    /// Consumes `cell & 63` bits: a shift by a register takes only its
    /// low six bits, so a table cell with the length in its low byte is
    /// the count as it is, and the length's extraction stays off the
    /// chain from one symbol to the next.
    #[inline(always)]
    pub(crate) fn consume_by(&mut self, cell: u16) {
        self.bits = self.bits.wrapping_shl(u32::from(cell));
    }

    /// Moves the window down by the whole bytes consumed.
    ///
    /// # Safety
    ///
    /// At most [`MarkedBits::READ`] bits were consumed since the last
    /// reload (or since the reader was made), and in all at most 8 ×
    /// [`BackwardBits::marked_room`] of the reader it was made from, so
    /// the window stays in its stream.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) unsafe fn reload(&mut self) {
        let consumed = self.bits.trailing_zeros();
        // SAFETY: the caller's bound keeps the eight bytes in the stream.
        unsafe {
            self.window = self.window.sub((consumed >> 3) as usize);
            let word = u64::from_le_bytes(self.window.cast::<[u8; 8]>().read_unaligned());
            self.bits = (word | 1) << (consumed & 7);
        }
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
pub(crate) mod tests {
    use std::cell::Cell;

    use zstd_safe::{CCtx, CParameter};

    use super::*;

    thread_local! {
        /// Makes [`variable_shifts`] say no on this thread, so a test runs
        /// the portable copies of the hot loops on a CPU that has BMI2.
        pub(crate) static PORTABLE: Cell<bool> = const { Cell::new(false) };
    }

    /// Text of words from a small vocabulary with random repeats: its
    /// literals are Huffman-coded and its matches reach far back.
    fn text(len: usize, seed: u64) -> Vec<u8> {
        const WORDS: [&str; 12] = [
            "the ",
            "frame ",
            "block ",
            "zstd ",
            "offset ",
            "literal ",
            "match ",
            "window ",
            "1986 ",
            "Huffman ",
            "sequence\n",
            "FSE ",
        ];
        let mut state = seed;
        let mut out = Vec::with_capacity(len + 16);
        while out.len() < len {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let pick = (state >> 33) as usize;
            if pick.is_multiple_of(7) && out.len() > 64 {
                // A repeat of an earlier stretch, near or far.
                let from = pick % (out.len() - 32);
                let run = 8 + pick % 24;
                out.extend_from_within(from..from + run);
            } else {
                out.extend_from_slice(WORDS[pick % WORDS.len()].as_bytes());
            }
        }
        out.truncate(len);
        out
    }

    fn compress(data: &[u8], level: i32, block: usize) -> Vec<u8> {
        let mut cctx = CCtx::create();
        cctx.set_parameter(CParameter::CompressionLevel(level))
            .unwrap();
        cctx.set_parameter(CParameter::MaxBlockSize(block as u32))
            .unwrap();
        let mut frame = vec![0u8; zstd_safe::compress_bound(data.len())];
        let n = cctx.compress2(&mut frame[..], data).unwrap();
        frame.truncate(n);
        frame
    }

    /// The BMI2 copies of the hot loops and the portable ones decode the
    /// same frames to libzstd's input: one- and four-stream literals (small
    /// and large blocks), FSE, predefined and repeated tables (levels 1 to
    /// 19), and offsets long enough to need the second reload.
    #[test]
    fn the_portable_and_the_bmi2_loops_decode_alike() {
        for (level, block, len) in [
            (1, 1 << 17, 3 << 20),
            (3, 1 << 10, 1 << 19),
            (19, 1 << 17, 3 << 20),
        ] {
            let data = text(len, level as u64);
            let frame = compress(&data, level, block);
            for portable in [false, true] {
                PORTABLE.set(portable);
                let out = crate::decode_all(&frame, 1 << 27);
                PORTABLE.set(false);
                assert!(
                    out.as_deref() == Ok(&data[..]),
                    "level {level}, blocks of {block}, portable {portable}: wrong output"
                );
            }
        }
    }

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
