//! What producers put in blocks: random UUID text (as the original
//! experiment did) or slices of a file, each block a size drawn uniformly
//! from `[min, max]`.

use std::sync::Arc;

use crate::error::{Error, Result};

/// The length of one hyphenated UUID in text.
const UUID_LEN: usize = 36;

/// The kind of bytes in each block.
#[derive(Debug, Clone)]
pub enum Content {
    /// Concatenated random version-4 UUIDs in lower-case hyphenated text
    /// (`0b5c…-…`), cut at the block size.
    Uuids,
    /// Slices of this data, starting at a random offset (wrapping around).
    File(Arc<[u8]>),
}

/// Block content and the size range.
#[derive(Debug, Clone)]
pub struct Workload {
    /// What goes in the blocks.
    pub content: Content,
    /// Smallest block, in bytes.
    pub min_size: usize,
    /// Largest block, in bytes (inclusive).
    pub max_size: usize,
}

impl Default for Workload {
    /// The original experiment's blocks: 2 KiB of UUID text.
    fn default() -> Self {
        Workload {
            content: Content::Uuids,
            min_size: 2048,
            max_size: 2048,
        }
    }
}

impl Workload {
    /// Blocks of UUID text with sizes in `[min_size, max_size]`.
    pub fn uuids(min_size: usize, max_size: usize) -> Workload {
        Workload {
            content: Content::Uuids,
            min_size,
            max_size,
        }
    }

    /// Blocks sliced out of `data`.
    pub fn file(data: impl Into<Arc<[u8]>>, min_size: usize, max_size: usize) -> Workload {
        Workload {
            content: Content::File(data.into()),
            min_size,
            max_size,
        }
    }

    /// Reads `path` for a file workload.
    pub fn from_path(path: &std::path::Path, min_size: usize, max_size: usize) -> Result<Workload> {
        let data = std::fs::read(path).map_err(|e| Error::Input {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        if data.is_empty() {
            return Err(Error::Input {
                path: path.display().to_string(),
                detail: "the file is empty; blocks need bytes to slice".into(),
            });
        }
        Ok(Workload::file(data, min_size, max_size))
    }

    /// Checks the sizes and content.
    pub fn validate(&self) -> Result<()> {
        if self.min_size == 0 || self.min_size > self.max_size {
            return Err(Error::Config(format!(
                "block sizes must satisfy 0 < min ({}) <= max ({})",
                self.min_size, self.max_size
            )));
        }
        if let Content::File(d) = &self.content
            && d.is_empty()
        {
            return Err(Error::Config("the input data is empty".into()));
        }
        Ok(())
    }

    /// A generator of blocks for one producer, deterministic for a seed.
    pub fn source(&self, seed: u64) -> BlockSource {
        BlockSource {
            workload: self.clone(),
            rng: fastrand::Rng::with_seed(seed),
        }
    }
}

/// One producer's generator: fills a reused buffer with the next block, so
/// the steady state allocates nothing.
#[derive(Debug, Clone)]
pub struct BlockSource {
    workload: Workload,
    rng: fastrand::Rng,
}

impl BlockSource {
    /// Replaces the contents of `block` with a fresh block.
    pub fn fill(&mut self, block: &mut Vec<u8>) {
        let w = &self.workload;
        let size = self.rng.usize(w.min_size..=w.max_size);
        block.clear();
        match &w.content {
            Content::Uuids => {
                // Write whole UUIDs straight into the buffer, then cut the
                // last one at the block size.
                let whole = size.div_ceil(UUID_LEN) * UUID_LEN;
                block.resize(whole, 0);
                for slot in block.chunks_exact_mut(UUID_LEN) {
                    let slot: &mut [u8; UUID_LEN] = slot.try_into().expect("exact chunk");
                    text::uuid_v4(self.rng.u128(..), slot);
                }
                block.truncate(size);
            }
            Content::File(data) => {
                let mut at = self.rng.usize(..data.len());
                while block.len() < size {
                    let take = (size - block.len()).min(data.len() - at);
                    block.extend_from_slice(&data[at..at + take]);
                    at = 0;
                }
            }
        }
    }
}

/// UUID text without a per-call formatter: generating blocks must cost
/// little next to compressing them (a formatter per UUID was 13 % of a
/// saturated run's CPU).
mod text {
    /// Lower-case hex digits of every byte value.
    static HEX: [[u8; 2]; 256] = {
        let digits = *b"0123456789abcdef";
        let mut t = [[0u8; 2]; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = [digits[i >> 4], digits[i & 15]];
            i += 1;
        }
        t
    };

    /// Byte ranges of the five hyphen-separated groups.
    const GROUPS: [(usize, usize); 5] = [(0, 4), (4, 6), (6, 8), (8, 10), (10, 16)];

    /// Writes the random bits as a version-4 (RFC 9562) UUID in
    /// hyphenated lower-case text.
    pub(super) fn uuid_v4(random: u128, out: &mut [u8; 36]) {
        let mut b = random.to_be_bytes();
        b[6] = (b[6] & 0x0f) | 0x40; // version 4
        b[8] = (b[8] & 0x3f) | 0x80; // variant 10
        let mut at = 0;
        for (g, (start, end)) in GROUPS.into_iter().enumerate() {
            if g > 0 {
                out[at] = b'-';
                at += 1;
            }
            for &byte in &b[start..end] {
                out[at..at + 2].copy_from_slice(&HEX[byte as usize]);
                at += 2;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Independent check of the text form: 8-4-4-4-12 lower-case hex
    /// groups, version nibble 4, variant 10xx.
    fn is_v4_uuid(s: &[u8]) -> bool {
        let groups: Vec<&[u8]> = s.split(|&b| b == b'-').collect();
        let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
        lens == [8, 4, 4, 4, 12]
            && groups.iter().all(|g| {
                g.iter()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            })
            && groups[2][0] == b'4'
            && b"89ab".contains(&groups[3][0])
    }

    #[test]
    fn uuid_text_matches_the_uuid_crate_for_the_same_bits() {
        let mut rng = fastrand::Rng::with_seed(11);
        for _ in 0..1000 {
            let r = rng.u128(..);
            let mut ours = [0u8; 36];
            text::uuid_v4(r, &mut ours);
            let text = std::str::from_utf8(&ours).unwrap();
            let theirs = uuid::Builder::from_random_bytes(r.to_be_bytes()).into_uuid();
            assert_eq!(text, theirs.hyphenated().to_string());
            let parsed = uuid::Uuid::try_parse(text).unwrap();
            assert_eq!(parsed.get_version_num(), 4);
            assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122);
        }
    }

    #[test]
    fn uuid_blocks_have_the_drawn_size_and_are_uuid_text() {
        let mut src = Workload::uuids(100, 300).source(7);
        let mut buf = Vec::new();
        let mut sizes = std::collections::BTreeSet::new();
        for _ in 0..200 {
            src.fill(&mut buf);
            assert!((100..=300).contains(&buf.len()));
            sizes.insert(buf.len());
            for whole in buf.chunks_exact(UUID_LEN) {
                assert!(is_v4_uuid(whole), "{:?}", String::from_utf8_lossy(whole));
            }
        }
        assert!(sizes.len() > 50, "sizes are spread over the range");
    }

    #[test]
    fn consecutive_blocks_are_fresh() {
        let mut src = Workload::default().source(1);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        src.fill(&mut a);
        src.fill(&mut b);
        assert_eq!(a.len(), 2048);
        assert_ne!(a, b);
    }

    #[test]
    fn file_blocks_are_slices_of_the_file_wrapping_around() {
        let data: Vec<u8> = (0..=255u8).collect();
        let mut src = Workload::file(data.clone(), 10, 600).source(3);
        let mut buf = Vec::new();
        for _ in 0..100 {
            src.fill(&mut buf);
            // Each byte is its predecessor + 1 (mod 256) in the cyclic file.
            for w in buf.windows(2) {
                assert_eq!(w[1], w[0].wrapping_add(1));
            }
        }
    }

    #[test]
    fn bad_sizes_are_rejected() {
        assert!(Workload::uuids(0, 10).validate().is_err());
        assert!(Workload::uuids(20, 10).validate().is_err());
        assert!(Workload::uuids(10, 10).validate().is_ok());
    }
}
