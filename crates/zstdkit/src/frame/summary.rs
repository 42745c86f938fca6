//! What a whole `.zst` stream's frames add up to, from their headers alone:
//! the figures `zstd --list` prints.

use std::io::Read;

use super::{FrameWalker, Unit};
use crate::error::{Error, Result};

/// What one stream's frames add up to.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    /// zstd frames.
    pub frames: u64,
    /// Skippable frames.
    pub skips: u64,
    /// The stream's size, every frame included.
    pub compressed: u64,
    /// The sum of the frames' content sizes; `None` when a frame does not
    /// record its own.
    pub decompressed: Option<u64>,
    /// How many zstd frames carry a content checksum.
    pub checked: u64,
    /// The last frame's checksum (the low 32 bits of its XXH64).
    pub last_checksum: Option<u32>,
    /// The first frame's dictionary id (0: none).
    pub dict_id: u32,
    /// The first frame's window size (what `zstd -lv` shows).
    pub window: u64,
}

impl Summary {
    /// zstd's Check column: `XXH64` when every zstd frame carries a
    /// checksum, `None` when none (or only some) does.
    pub fn check(&self) -> &'static str {
        if self.frames > 0 && self.checked == self.frames {
            "XXH64"
        } else {
            "None"
        }
    }

    /// Walks every frame of `r` (headers only; block contents are skipped,
    /// so memory stays one buffer) and adds them up. A stream with no frame
    /// at all is [`Error::NoFrame`].
    pub fn read(r: impl Read) -> Result<Summary> {
        let mut s = Summary {
            decompressed: Some(0),
            ..Summary::default()
        };
        let mut walker = FrameWalker::new(r);
        while let Some(walked) = walker.take(None)? {
            let h = match walked.unit {
                Unit::Skippable { .. } => {
                    s.skips += 1;
                    continue;
                }
                Unit::Frame(h) => h,
            };
            if s.frames == 0 {
                s.dict_id = h.dict_id;
                s.window = h.window;
            }
            if h.checksum {
                s.last_checksum = walked.checksum;
                s.checked += 1;
            }
            s.frames += 1;
            s.decompressed = match (s.decompressed, h.content_size) {
                (Some(a), Some(b)) => a.checked_add(b),
                _ => None,
            };
        }
        if walker.taken() == 0 {
            return Err(Error::NoFrame);
        }
        s.compressed = walker.offset();
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_and_skippable_frames_add_up() {
        let mut data = crate::compress(b"hello hello hello", crate::Recipe::Fast).unwrap();
        let one = data.len() as u64;
        // A skippable frame: magic, length 3, three bytes.
        data.extend_from_slice(&0x184D_2A50u32.to_le_bytes());
        data.extend_from_slice(&3u32.to_le_bytes());
        data.extend_from_slice(b"abc");
        data.extend(crate::compress(b"world", crate::Recipe::Fast).unwrap());
        let s = Summary::read(&data[..]).unwrap();
        assert_eq!((s.frames, s.skips), (2, 1));
        assert_eq!(s.decompressed, Some(17 + 5));
        assert_eq!(s.compressed, data.len() as u64);
        assert!(s.compressed > one);
    }

    #[test]
    fn a_stream_of_one_skippable_frame_has_no_zstd_frame() {
        let mut skippable = 0x184D_2A53u32.to_le_bytes().to_vec();
        skippable.extend(3u32.to_le_bytes());
        skippable.extend(b"abc");
        let s = Summary::read(&skippable[..]).unwrap();
        assert_eq!((s.frames, s.skips, s.compressed), (0, 1, 11));
        assert_eq!(s.check(), "None");
        assert!(Summary::read(&skippable[..9]).is_err());
    }

    #[test]
    fn no_frame_cut_frames_and_other_formats_are_errors() {
        let data = crate::compress(b"hello", crate::Recipe::Fast).unwrap();
        assert!(matches!(Summary::read(&b""[..]), Err(Error::NoFrame)));
        assert!(Summary::read(&data[..data.len() - 2]).is_err());
        assert!(matches!(
            Summary::read(&b"PK\x03\x04"[..]),
            Err(Error::UnknownFormat { offset: 0 })
        ));
    }
}
