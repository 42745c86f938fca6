//! Dictionaries: training one from samples. Use the result with
//! [`Compressor::with_dictionary`](crate::Compressor::with_dictionary) and
//! [`Decompressor::with_dictionary`](crate::Decompressor::with_dictionary).

use crate::error::{Error, Result};

/// The dictionary size the `zstd` CLI trains by default (110 KiB).
pub const DEFAULT_DICT_SIZE: usize = 112_640;

/// The largest `max_size` [`train`] accepts: zstd's trainer counts in
/// 32-bit sizes (and draws the dictionary from samples of at most 4 GiB).
pub const MAX_DICT_SIZE: usize = u32::MAX as usize;

/// The largest dictionary a coder reads (`-D`): zstd's CLI refuses a
/// larger one ("Dictionary file ... is too large (> 33554432 bytes)"),
/// and zstd copies a dictionary into each context it loads it in.
pub const MAX_READ_SIZE: u64 = 32 << 20;

/// The most sample bytes [`train`] takes in all: zstd's trainers index
/// their samples with 32-bit positions (`COVER_MAX_SAMPLES_SIZE`).
pub const MAX_SAMPLES_SIZE: u64 = u32::MAX as u64;

/// The fewest samples zstd's trainer takes.
pub const MIN_SAMPLES: usize = 5;

/// zstd 1.5.4's warning (dibio.c), word for word, before it refuses fewer
/// than [`MIN_SAMPLES`] samples.
pub const TOO_FEW_SAMPLES_WARNING: &str = "!  Warning : nb of samples too low for proper processing ! \n\
     !  Please provide _one file per sample_. \n\
     !  Alternatively, split files into fixed-size blocks representative of samples, with -B# \n";

/// zstd 1.5.4's warning (dibio.c), word for word, when the samples hold
/// less than 8 times the dictionary's size.
pub const SMALL_SAMPLES_WARNING: &str = "!  Warning : data size of samples too small for target dictionary size \n\
     !  Samples should be about 100x larger than target dictionary size \n";

/// Fewer samples than zstd's trainer takes ([`MIN_SAMPLES`]).
#[derive(Debug, thiserror::Error)]
#[error(
    "nb of samples too low: {count} given, {bytes} bytes in all; the trainer needs at least 5, one file per sample"
)]
pub struct TooFewSamples {
    /// The samples given.
    pub count: usize,
    /// Their bytes in all.
    pub bytes: usize,
}

/// zstd's checks of `samples` before it trains a dictionary of at most
/// `max_size` bytes: fewer than [`MIN_SAMPLES`] are refused (zstd says
/// [`TOO_FEW_SAMPLES_WARNING`] first), too little data is only warned of
/// ([`SMALL_SAMPLES_WARNING`], returned for the caller to say).
pub fn check_samples<S: AsRef<[u8]>>(
    samples: &[S],
    max_size: usize,
) -> std::result::Result<Option<&'static str>, TooFewSamples> {
    if samples.len() < MIN_SAMPLES {
        let bytes: usize = samples.iter().map(|s| s.as_ref().len()).sum();
        return Err(TooFewSamples {
            count: samples.len(),
            bytes,
        });
    }
    let total: u64 = samples.iter().map(|s| s.as_ref().len() as u64).sum();
    Ok((total < 8 * max_size as u64).then_some(SMALL_SAMPLES_WARNING))
}

/// Trains a dictionary of at most `max_size` bytes from `samples`, as
/// `zstd --train` does. zstd needs a fair number of samples (dozens at
/// least, ideally hundreds) totalling well over `max_size`; too little
/// material is reported as [`Error::Train`], a `max_size` above
/// [`MAX_DICT_SIZE`] as [`Error::Parameter`].
pub fn train<S: AsRef<[u8]>>(samples: &[S], max_size: usize) -> Result<Vec<u8>> {
    if max_size > MAX_DICT_SIZE {
        return Err(Error::Parameter {
            name: "max_dict_size",
            detail: "above 4 GiB, the most zstd's trainer handles",
        });
    }
    let sizes: Vec<usize> = samples.iter().map(|s| s.as_ref().len()).collect();
    let mut joined = Vec::with_capacity(sizes.iter().sum());
    for s in samples {
        joined.extend_from_slice(s.as_ref());
    }
    // zstd writes the dictionary into this buffer and never grows it; the
    // size comes from the caller, so an allocation failure is an error.
    let mut dict = Vec::new();
    dict.try_reserve_exact(max_size)
        .map_err(|_| Error::Parameter {
            name: "max_dict_size",
            detail: "cannot allocate a buffer of the maximum dictionary size",
        })?;
    zstd_safe::train_from_buffer(&mut dict, &joined, &sizes).map_err(|code| Error::Train {
        why: zstd_safe::get_error_name(code),
        samples: sizes.len(),
        bytes: joined.len(),
    })?;
    Ok(dict)
}

/// The id a trained dictionary declares (frames made with it carry the same
/// id), or `None` for raw-content dictionaries.
pub fn dictionary_id(dict: &[u8]) -> Option<u32> {
    zstd_safe::get_dict_id(dict).map(|id| id.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_checked_as_zstds_trainer_checks_them() {
        let four = [b"abc".as_slice(); 4];
        let e = check_samples(&four, 1024).unwrap_err();
        assert_eq!((e.count, e.bytes), (4, 12));
        // Five samples of 8 KiB in all: below 8 × 1 KiB warns, at it not.
        let five = vec![vec![0u8; 1600]; 5];
        assert_eq!(
            check_samples(&five, 1024).unwrap(),
            Some(SMALL_SAMPLES_WARNING)
        );
        assert_eq!(check_samples(&five, 1000).unwrap(), None);
    }
}
