//! A run's settings, mapped to each input's [`Job`] as zstd's file tool
//! maps its flags: a reference makes every job a patch (made or applied),
//! `--seekable` wins over the format when compressing, and decoding takes
//! the window limit, threads and checksum checking as given.
//!
//! ```
//! use zstdkit::job::settings::{Direction, Settings};
//! use zstdkit::job::{Compress, Job, WindowLimit};
//!
//! let settings = Settings {
//!     direction: Direction::Compress { gzip: Some(6), seekable: None },
//!     params: zstdkit::Params::for_level(3),
//!     threads: 1,
//!     window: WindowLimit::Default,
//!     verify_checksums: true,
//!     dictionary: None,
//!     reference: None,
//! };
//! assert!(matches!(settings.job(false), Job::Compress(Compress::Gzip { level: 6 })));
//! ```

use super::{Compress, Decompress, Job, Seekable, WindowLimit};
use crate::recipe::Params;

/// Which way a run codes its inputs, and what compressing writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Compress every input.
    Compress {
        /// gzip at this level (1 to 9) instead of zstd frames.
        gzip: Option<u32>,
        /// zstd's seekable format, whatever `gzip` says.
        seekable: Option<Seekable>,
    },
    /// Decompress (or check) every input.
    Decompress,
}

/// What a run asks of each of its inputs, held once for the run.
#[derive(Debug, Clone, Copy)]
pub struct Settings<'a> {
    /// Which way, in which format.
    pub direction: Direction,
    /// The compression parameters (level, strategy, window, workers).
    pub params: Params,
    /// Threads for seekable frames and for decoding several frames.
    pub threads: usize,
    /// The largest window decoding accepts.
    pub window: WindowLimit,
    /// Check frames' checksums when decoding.
    pub verify_checksums: bool,
    /// A dictionary for both directions.
    pub dictionary: Option<&'a [u8]>,
    /// The reference every input is a patch against (`--patch-from`).
    pub reference: Option<&'a [u8]>,
}

impl<'a> Settings<'a> {
    /// The job for one input; `pass_through`: when decoding, an input that
    /// is no zstd or gzip data is copied through (zstd's rule for it
    /// depends on the input's output, so it is asked per input).
    pub fn job(&self, pass_through: bool) -> Job<'a> {
        let params = self.params;
        match (self.direction, self.reference) {
            (Direction::Compress { .. }, Some(reference)) => {
                Job::Compress(Compress::Patch { params, reference })
            }
            (Direction::Compress { gzip, seekable }, None) => {
                Job::Compress(match (seekable, gzip) {
                    (Some(frames), _) => Compress::Seekable {
                        params,
                        frames,
                        threads: self.threads,
                    },
                    (None, Some(level)) => Compress::Gzip { level },
                    (None, None) => Compress::Zstd {
                        params,
                        dictionary: self.dictionary,
                    },
                })
            }
            (Direction::Decompress, Some(reference)) => {
                Job::Decompress(Decompress::Patch { reference })
            }
            (Direction::Decompress, None) => Job::Decompress(Decompress::Frames {
                window: self.window,
                dictionary: self.dictionary,
                threads: self.threads,
                verify_checksums: self.verify_checksums,
                pass_through,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Direction, Settings};
    use crate::job::{Compress, Decompress, Job, Seekable, WindowLimit};

    #[test]
    fn a_reference_makes_a_patch_and_seekable_wins_over_gzip() {
        let frames = Seekable {
            frame_size: 1 << 20,
            checksums: true,
        };
        let mut s = Settings {
            direction: Direction::Compress {
                gzip: Some(9),
                seekable: Some(frames),
            },
            params: crate::Params::for_level(3),
            threads: 2,
            window: WindowLimit::Default,
            verify_checksums: true,
            dictionary: None,
            reference: None,
        };
        assert!(matches!(
            s.job(false),
            Job::Compress(Compress::Seekable { threads: 2, .. })
        ));
        s.reference = Some(b"old");
        assert!(matches!(
            s.job(false),
            Job::Compress(Compress::Patch { .. })
        ));
        s.direction = Direction::Decompress;
        assert!(matches!(
            s.job(false),
            Job::Decompress(Decompress::Patch { .. })
        ));
        s.reference = None;
        assert!(matches!(
            s.job(true),
            Job::Decompress(Decompress::Frames {
                pass_through: true,
                threads: 2,
                ..
            })
        ));
    }
}
