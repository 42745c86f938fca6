//! A batch's matching ids as text lines, made as the search finds them.

use crate::MatchSink;

/// A batch's output lines, written as the search finds the ids
/// ([`MatchSink`]): a bit-parallel search finds the ids of 512 events
/// expression by expression, and formatting each event's list once the
/// batch was done waited on reading back lists that had left the cache
/// (10 MB of ids per batch on the dense reference profile, where that
/// formatting was 9 % of the search's samples).
#[derive(Default)]
pub(super) struct IdLines {
    table: IdTable,
    /// Per event of the batch, a space and its text before each id; the
    /// lists are kept (with their capacity) from batch to batch.
    lines: Vec<Vec<u8>>,
    /// Ids pushed since the stream began.
    pub(super) pushed: u64,
}

impl IdLines {
    /// Ends event `i`'s line, and gives it: its ids separated by spaces,
    /// then a newline. Once per event of a batch.
    pub(super) fn finish(&mut self, i: usize) -> &[u8] {
        let line = &mut self.lines[i];
        line.push(b'\n');
        // Every id wrote a separating space before it; the first has none.
        &line[usize::from(line.len() > 1)..]
    }
}

impl MatchSink for IdLines {
    fn start(&mut self, events: usize) {
        self.lines.truncate(events);
        for line in &mut self.lines {
            line.clear();
        }
        self.lines.resize_with(events, Vec::new);
    }

    #[inline]
    fn push(&mut self, event: usize, id: u64) {
        self.pushed += 1;
        self.table.put(&mut self.lines[event], id);
    }

    /// One event's ids at once (a search event by event gives them so):
    /// its line is found and grown once, not once per id.
    fn push_all(&mut self, event: usize, ids: &[u64]) {
        self.pushed += ids.len() as u64;
        let line = &mut self.lines[event];
        line.reserve(ids.len() * 8);
        for &id in ids {
            self.table.put(line, id);
        }
    }
}

/// Ids as text fast: ids below [`IdTable::LEN`] (every id of most indexes)
/// are copied from a table of " 1234" texts, eight bytes at a time, instead
/// of being formatted one by one.
#[derive(Default)]
struct IdTable {
    /// Per id, as little-endian bytes: a space, its digits, zero padding,
    /// and in the last byte how many bytes are text (six at most), so one
    /// eight-byte load gives both.
    texts: Vec<u64>,
}

impl IdTable {
    /// Ids with an entry at most: five digits, so space + digits fit.
    const LEN: u64 = 1 << 16;

    /// Appends a space and `id` to `line`.
    #[inline(always)]
    fn put(&mut self, line: &mut Vec<u8>, id: u64) {
        let text = match usize::try_from(id).ok().and_then(|i| self.texts.get(i)) {
            Some(&text) => text,
            None if id < IdTable::LEN => self.grow(id),
            None => {
                line.push(b' ');
                line.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
                return;
            }
        };
        // The whole entry, then back to the end of its text: a fixed
        // eight-byte copy instead of a variable-length one.
        let at = line.len();
        line.extend_from_slice(&text.to_le_bytes());
        line.truncate(at + (text >> 56) as usize);
    }

    /// Grows the table to hold `id` (below [`IdTable::LEN`]) and gives its
    /// entry. The table holds the ids seen so far, rounded up to a power
    /// of two: all 65,536 entries took half a millisecond to make, about
    /// 1 % of a 2,000-event dense search with 5,000 expressions.
    #[cold]
    fn grow(&mut self, id: u64) -> u64 {
        let want = (id + 1).next_power_of_two().min(IdTable::LEN);
        let mut num = itoa::Buffer::new();
        let from = self.texts.len() as u64;
        self.texts.extend((from..want).map(|id| {
            let digits = num.format(id).as_bytes();
            let mut text = [0u8; 8];
            text[0] = b' ';
            text[1..=digits.len()].copy_from_slice(digits);
            text[7] = digits.len() as u8 + 1;
            u64::from_le_bytes(text)
        }));
        self.texts[id as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::IdLines;
    use crate::MatchSink;

    /// The oracle: std's formatting, joined.
    fn want(ids: &[u64]) -> String {
        let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
        format!("{}\n", ids.join(" "))
    }

    #[test]
    fn lines_are_the_ids_as_decimal_text() {
        let cases: [&[u64]; 6] = [
            &[],
            &[0],
            &[1, 9, 10, 99, 100, 999, 1000, 9999, 10000],
            &[65534, 65535, 65536, 65537],
            &[u64::MAX, 7, u64::from(u32::MAX) + 1],
            &[42; 3],
        ];
        let mut t = IdLines::default();
        // Twice: the second batch's lines must not keep the first's text.
        for _ in 0..2 {
            t.start(cases.len());
            // Interleaved across events, as a bit-parallel pass gives them.
            for k in 0..10 {
                for (e, ids) in cases.iter().enumerate() {
                    if let Some(&id) = ids.get(k) {
                        t.push(e, id);
                    }
                }
            }
            for (e, ids) in cases.iter().enumerate() {
                assert_eq!(t.finish(e), want(ids).as_bytes(), "{ids:?}");
            }
        }
        let ids: usize = cases.iter().map(|c| c.len()).sum();
        assert_eq!(t.pushed, 2 * ids as u64);
        // A shorter batch after a longer one, and a line grown by many ids
        // past the table after short ones.
        let ids: Vec<u64> = (0..50).chain((0..500).map(|k| u64::MAX - k)).collect();
        t.start(1);
        t.push_all(0, &ids);
        assert_eq!(t.finish(0), want(&ids).as_bytes());
        assert_eq!(t.lines.len(), 1);
    }

    #[test]
    fn the_table_holds_the_ids_seen_and_push_all_is_push_in_turn() {
        let ids: Vec<u64> = (0..100).chain([70_000, 99, 3]).collect();
        let (mut all, mut each) = (IdLines::default(), IdLines::default());
        all.start(1);
        each.start(1);
        all.push_all(0, &ids);
        for &id in &ids {
            each.push(0, id);
        }
        // 0..=99 rounded up to a power of two; 70,000 is past the table.
        assert_eq!(all.table.texts.len(), 128);
        assert_eq!(all.pushed, ids.len() as u64);
        assert_eq!(each.pushed, ids.len() as u64);
        assert_eq!(all.finish(0), want(&ids).as_bytes());
        assert_eq!(each.finish(0), want(&ids).as_bytes());
    }
}
