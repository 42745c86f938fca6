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
