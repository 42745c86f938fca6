//! Stage 3, repeat-offset resolution: the one sequential dependency the
//! entropy stage leaves. It is cheap (a few operations per sequence), so
//! blocks can be entropy-decoded out of order and resolved in order.

use crate::sequences::Sequence;

/// The three repeat offsets a frame starts with (RFC 8878 3.1.2.5).
pub const INITIAL_REPEATS: [u32; 3] = [1, 4, 8];

/// Turns each sequence's offset value into a distance, updating
/// `repeats` (carried from block to block within a frame).
///
/// A repeat that resolves to 0 (`repeats[0] - 1` when `repeats[0]` is 1)
/// is left as distance 0, which execution refuses.
pub fn resolve_offsets(sequences: &mut [Sequence], repeats: &mut [u32; 3]) {
    let mut r = *repeats;
    for sequence in sequences {
        sequence.offset = resolve_one(&mut r, sequence.offset, sequence.literal_length);
    }
    *repeats = r;
}

/// The distance of one sequence's offset `value` (with `literal_length`
/// literals before its match), `repeats` updated: [`resolve_offsets`]
/// one sequence at a time, for a loop that resolves as it executes.
#[inline(always)]
pub(crate) fn resolve_one(repeats: &mut [u32; 3], value: u32, literal_length: u32) -> u32 {
    let [r0, r1, r2] = *repeats;
    let new = value > 3;
    // With no literals before the match, the repeat codes shift by
    // one: 1 names the second repeat offset, 3 the first minus one.
    let index = (value.wrapping_sub(1) + u32::from(literal_length == 0)) & 3;
    let odd = index & 1 == 1;
    let low = if odd { r1 } else { r0 };
    let high = if odd { r0.wrapping_sub(1) } else { r2 };
    let named = if index & 2 == 0 { low } else { high };
    // Selects, not branches: whether a sequence repeats is data, and
    // a mispredicted branch here costs more than the whole update.
    let distance = if new { value - 3 } else { named };
    let same = !new && index == 0;
    let swap = !new && index == 1;
    let r2 = if same || swap { r2 } else { r1 };
    let r1 = if same { r1 } else { r0 };
    *repeats = [distance, r1, r2];
    distance
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(literal_length: u32, offset: u32) -> Sequence {
        Sequence {
            literal_length,
            match_length: 3,
            offset,
        }
    }

    #[test]
    fn repeat_codes_follow_rfc_8878() {
        let mut repeats = INITIAL_REPEATS;
        let mut seqs = [
            seq(1, 1),
            seq(1, 2),
            seq(1, 3),
            seq(0, 1),
            seq(0, 3),
            seq(1, 103),
        ];
        resolve_offsets(&mut seqs, &mut repeats);
        let distances: Vec<u32> = seqs.iter().map(|s| s.offset).collect();
        // 1 -> r0 = 1; 2 -> r1 = 4 (swap: 4,1,8); 3 -> r2 = 8 (8,4,1);
        // ll 0, 1 -> r1 = 4 (4,8,1); ll 0, 3 -> r0 - 1 = 3 (3,4,8); 100.
        assert_eq!(distances, [1, 4, 8, 4, 3, 100]);
        assert_eq!(repeats, [100, 3, 4]);
    }
}
