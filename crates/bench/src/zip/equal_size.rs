//! Equal work beside the peers (issue 64): the level of a peer's whose
//! entries' compressed bytes are nearest our sync writer's
//! ([`nearest_level`]), the CPU at our size when no level comes within
//! 1 % ([`interpolate`]), and what each row says it holds equal
//! ([`Held`]).
//!
//! What is held equal is deflate's output, the entries' compressed bytes
//! as the central directory gives them, not the archive: the writers'
//! headers differ by choices that are not compression work (ours adds
//! Info-ZIP's extended timestamp, and on a sink it cannot seek a data
//! descriptor past the first 64 KiB; the peers write neither), and on
//! small, dense entries those bytes outweigh the data, so matching
//! archives sent the peers to their cheapest levels.

use super::{Contender, Mode};
use crate::error::Result;
use crate::peer::{equal_size, size_verdict};

/// AES-256's bytes in each entry's compressed data (WinZip AE-2): a
/// 16-byte salt, a 2-byte password verifier and a 10-byte MAC. (Its
/// 11-byte extra fields are in the headers, which are not compared.)
const AES256_DATA_BYTES: u64 = 16 + 2 + 10;

/// The level a row's writer runs at on one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pairing {
    /// The deflate level.
    pub(super) level: u32,
    /// How a peer's level was found; `None` for our writers, which run at
    /// the bench's level.
    pub(super) searched: Option<Searched>,
    /// The entries' compressed bytes at `level`.
    pub(super) payload: u64,
}

/// The search behind a peer's level ([`nearest_level`]), for its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Searched {
    /// The peer's compressed bytes at the bench's level.
    at_start: u64,
    /// The lowest and highest levels tried.
    tried: (u32, u32),
    /// When no level came within 1 % of the target but two adjacent ones
    /// lie either side of it: the other of the two, and its compressed
    /// bytes. The row's CPU is interpolated between them.
    pub(super) other: Option<(u32, u64)>,
}

/// The level in 1..=9 whose compressed bytes are nearest `target`, `size`
/// giving them at a level, with its bytes and the search. The walk starts at `start` and
/// goes a level at a time toward the target (deeper while the archive is
/// larger) until the sizes cross it or the levels end. Deflate's sizes
/// mostly shrink level by level but not always (zlib's levels 1-3 use
/// another strategy than 4-9, and flat stretches are common), so the
/// nearest of the levels tried is kept, not the last; on a tie, the one
/// nearer `start`. When none is within 1 %
/// ([`crate::peer::EQUAL_SIZE_PERCENT`]) and the walk crossed the target, the two
/// levels either side of it are the answer (the nearer first), for the CPU
/// at the target to be interpolated.
pub(super) fn nearest_level(
    target: u64,
    start: u32,
    mut size: impl FnMut(u32) -> Result<u64>,
) -> Result<(u32, u64, Searched)> {
    let start = start.clamp(1, 9);
    let gap = |bytes: u64| bytes.abs_diff(target);
    let at_start = size(start)?;
    let deeper = at_start > target;
    let (mut best, mut best_bytes) = (start, at_start);
    let (mut level, mut bytes) = (start, at_start);
    let mut previous = None;
    let mut tried = (start, start);
    while bytes != target && (bytes > target) == deeper {
        let next = match (deeper, level) {
            (true, 9) | (false, 1) => break,
            (true, l) => l + 1,
            (false, l) => l - 1,
        };
        previous = Some((level, bytes));
        (level, bytes) = (next, size(next)?);
        tried = (tried.0.min(level), tried.1.max(level));
        if gap(bytes) < gap(best_bytes) {
            (best, best_bytes) = (level, bytes);
        }
    }
    let crossed = bytes != target && (bytes > target) != deeper;
    let mut searched = Searched {
        at_start,
        tried,
        other: None,
    };
    if let (false, true, Some(before)) = (equal_size(best_bytes, target), crossed, previous) {
        let last = (level, bytes);
        let (near, far) = if gap(last.1) < gap(before.1) {
            (last, before)
        } else {
            (before, last)
        };
        searched.other = Some(far);
        return Ok((near.0, near.1, searched));
    }
    Ok((best, best_bytes, searched))
}

/// The CPU at `target` bytes, on the line through (`a` bytes, `cpu_a`)
/// and (`b` bytes, `cpu_b`), two levels either side of it.
fn interpolate(target: u64, (a, cpu_a): (u64, f64), (b, cpu_b): (u64, f64)) -> f64 {
    if a == b {
        return cpu_a;
    }
    let t = (target as f64 - a as f64) / (b as f64 - a as f64);
    cpu_a + t * (cpu_b - cpu_a)
}

/// One row's sizes and CPU beside the sync writer's, for its
/// `held_equal` and `size_held` columns.
pub(super) struct Held {
    /// The row's writer.
    pub(super) contender: Contender,
    /// Its level and how it was found.
    pub(super) pairing: Pairing,
    /// The bench's level, the sync writer's.
    pub(super) bench_level: u32,
    /// Entries in the scenario (AES-256's bytes are per entry).
    pub(super) entries: u64,
    /// The row's archive and the sync writer's, in bytes.
    pub(super) out: u64,
    pub(super) sync_out: u64,
    /// The sync writer's compressed bytes (the row's are its pairing's).
    pub(super) sync_payload: u64,
    /// Median CPU per archive at the row's level, and at the other level
    /// of an interpolation, in seconds.
    pub(super) cpu: f64,
    pub(super) other_cpu: Option<f64>,
}

impl Held {
    /// The compressed bytes as they compare with the sync writer's: an
    /// AES-256 row's without the bytes encryption adds.
    fn compared(&self) -> u64 {
        let payload = self.pairing.payload;
        match self.contender {
            Contender::Here(Mode::Aes) => payload.saturating_sub(AES256_DATA_BYTES * self.entries),
            _ => payload,
        }
    }

    /// The row's CPU per archive at the sync writer's size: measured, or
    /// interpolated between a peer's two levels either side of it.
    pub(super) fn cpu(&self) -> f64 {
        match (self.pairing.searched.and_then(|s| s.other), self.other_cpu) {
            (Some((_, other)), Some(other_cpu)) => interpolate(
                self.sync_payload,
                (self.pairing.payload, self.cpu),
                (other, other_cpu),
            ),
            _ => self.cpu,
        }
    }

    /// [`super::SIZE_HELD`]'s value.
    pub(super) fn size_held(&self) -> &'static str {
        if equal_size(self.compared(), self.sync_payload) {
            "within 1 %"
        } else if self.other_cpu.is_some() {
            "interpolated"
        } else {
            "not equal"
        }
    }

    /// What the row holds equal with our sync writer, in words: the
    /// level, both writers' compressed bytes and whether they are within
    /// 1 % ([`crate::peer::EQUAL_SIZE_PERCENT`]), said either way, and
    /// both archives' sizes.
    pub(super) fn text(&self) -> String {
        let (level, target) = (self.bench_level, self.sync_payload);
        let (payload, compared) = (self.pairing.payload, self.compared());
        let ratio = compared as f64 / target.max(1) as f64;
        let verdict = size_verdict(compared, target);
        let archives = format!(
            "archives {} bytes and the sync writer's {}",
            self.out, self.sync_out
        );
        let sizes = format!(
            "compressed bytes {payload} and the sync writer's {target}, {ratio:.4}x, {verdict}; {archives}"
        );
        match (self.contender, self.pairing.searched) {
            (Contender::Here(Mode::Sync), _) => format!(
                "the reference: level {level}; compressed bytes {payload}, archive {} bytes",
                self.out
            ),
            (Contender::Here(Mode::Aes), _) => format!(
                "level {level} as the sync writer, then encrypted; compressed bytes {payload}, {compared} without AES-256's {AES256_DATA_BYTES} an entry (salt, verifier, MAC), and the sync writer's {target}, {ratio:.4}x, {verdict}; {archives}"
            ),
            (_, Some(found)) => {
                let at_start = format!(
                    "at level {level} it makes {} compressed bytes, {:.4}x",
                    found.at_start,
                    found.at_start as f64 / target.max(1) as f64
                );
                let (lo, hi) = found.tried;
                match (found.other, self.other_cpu) {
                    (Some((other_level, other_payload)), Some(other_cpu)) => format!(
                        "compressed bytes, interpolated: no level of this writer's comes within 1 % of the sync writer's {target} (levels {lo}-{hi} tried); level {} makes {payload} in {:.3} ms, level {other_level} {other_payload} in {:.3} ms, so the CPU at {target} is {:.3} ms, on the line between them (the other columns are level {}'s); {at_start}; {archives}",
                        self.pairing.level,
                        self.cpu * 1e3,
                        other_cpu * 1e3,
                        self.cpu() * 1e3,
                        self.pairing.level
                    ),
                    _ => format!(
                        "compressed bytes: level {} is this writer's level nearest the sync writer's at level {level} (levels {lo}-{hi} tried); {sizes}; {at_start}",
                        self.pairing.level
                    ),
                }
            }
            _ => format!("level {level} as the sync writer; {sizes}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`nearest_level`] over a table of sizes by level (index 0 unused),
    /// with the levels it asked for; the bytes it gives for its level must
    /// be the table's.
    fn search(target: u64, sizes: [u64; 10]) -> ((u32, Searched), Vec<u32>) {
        let mut asked = Vec::new();
        let (level, bytes, searched) = nearest_level(target, 6, |l| {
            asked.push(l);
            Ok(sizes[l as usize])
        })
        .unwrap();
        assert_eq!(bytes, sizes[level as usize], "level {level}");
        ((level, searched), asked)
    }

    #[test]
    fn the_peer_runs_at_its_level_nearest_our_size_or_between_two() {
        // Deeper levels shrink the archive: 8 is within 1 % of 1000, and
        // the walk stops where the sizes cross the target.
        let sizes = [0, 1300, 1200, 1150, 1100, 1060, 1030, 1015, 1004, 990];
        let ((level, found), asked) = search(1000, sizes);
        assert_eq!((level, found.other), (8, None));
        assert_eq!(asked, [6, 7, 8, 9]);
        assert_eq!((found.at_start, found.tried), (1030, (6, 9)));
        // Ours smaller than every level: the deepest, not within 1 %, and
        // nothing to interpolate with.
        let ((level, found), _) = search(900, sizes);
        assert_eq!((level, found.other), (9, None));
        assert!(!equal_size(sizes[9], 900));
        // Ours larger than the bench level's: the walk goes shallower.
        let ((level, found), asked) = search(1145, sizes);
        assert_eq!((level, found.other), (3, None));
        assert_eq!(asked, [6, 5, 4, 3]);
        // None within 1 %, two either side: the nearer, and the other to
        // interpolate with.
        let gap = [0, 900, 900, 900, 900, 900, 1500, 700, 690, 680];
        let ((level, found), _) = search(1000, gap);
        assert_eq!((level, found.other), (7, Some((6, 1500))));
        // Equal sizes at several levels: the one nearest the start.
        let flat = [0, 2000, 2000, 2000, 2000, 2000, 1100, 1000, 1000, 1000];
        assert_eq!(search(1000, flat).0.0, 7);
    }

    #[test]
    fn the_cpu_between_two_levels_lies_on_their_line() {
        // 538 bytes is 62 of the 349 from 476 (0.145 ms) to 825 (0.036 ms).
        let cpu = interpolate(538, (476, 0.145), (825, 0.036));
        assert!(
            (cpu - (0.145 - 62.0 / 349.0 * 0.109)).abs() < 1e-12,
            "{cpu}"
        );
        assert_eq!(interpolate(5, (5, 1.0), (5, 2.0)), 1.0);
    }

    /// A row of `payload` compressed bytes beside the sync writer's
    /// `sync_payload`, with archives `headers` bytes larger.
    fn held(
        contender: Contender,
        (payload, sync_payload): (u64, u64),
        headers: (u64, u64),
        entries: u64,
    ) -> Held {
        Held {
            contender,
            pairing: Pairing {
                level: 6,
                searched: None,
                payload,
            },
            bench_level: 6,
            entries,
            out: payload + headers.0,
            sync_out: sync_payload + headers.1,
            sync_payload,
            cpu: 1.0,
            other_cpu: None,
        }
    }

    #[test]
    fn a_row_off_our_compressed_bytes_by_more_than_one_percent_says_so() {
        let h = held(Contender::Here(Mode::Parallel), (494, 538), (90, 90), 1);
        assert_eq!(h.size_held(), "not equal");
        assert!(
            h.text().contains("NOT equal: 8.2 % smaller"),
            "{}",
            h.text()
        );
        let h = held(Contender::Here(Mode::Parallel), (1009, 1000), (90, 90), 1);
        assert_eq!(h.size_held(), "within 1 %");
        // AES-256's own bytes in the data do not count against it, but
        // only those.
        let aes = |extra: u64| {
            held(
                Contender::Here(Mode::Aes),
                (10_702 + extra, 10_702),
                (0, 0),
                50,
            )
        };
        let h = aes(50 * 28);
        assert_eq!(h.size_held(), "within 1 %", "{}", h.text());
        let h = aes(50 * 40);
        assert_eq!(h.size_held(), "not equal", "{}", h.text());
    }

    #[test]
    fn headers_that_differ_do_not_unequal_the_compressed_bytes() {
        // A peer's archive 9 % smaller for want of our timestamp fields and
        // descriptors is at our work when its data is.
        let h = held(Contender::Here(Mode::ZipCrate), (364, 364), (100, 146), 1);
        assert_eq!(h.size_held(), "within 1 %", "{}", h.text());
        assert!(
            h.text()
                .contains("archives 464 bytes and the sync writer's 510"),
            "{}",
            h.text()
        );
    }
}
