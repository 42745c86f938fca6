//! Dictionaries: training one from samples. Use the result with
//! [`Compressor::with_dictionary`](crate::Compressor::with_dictionary) and
//! [`Decompressor::with_dictionary`](crate::Decompressor::with_dictionary).

use crate::error::{Error, Result};

/// The dictionary size the `zstd` CLI trains by default (110 KiB).
pub const DEFAULT_DICT_SIZE: usize = 112_640;

/// Trains a dictionary of at most `max_size` bytes from `samples`, as
/// `zstd --train` does. zstd needs a fair number of samples (dozens at
/// least, ideally hundreds) totalling well over `max_size`; too little
/// material is reported as [`Error::Train`].
pub fn train<S: AsRef<[u8]>>(samples: &[S], max_size: usize) -> Result<Vec<u8>> {
    let sizes: Vec<usize> = samples.iter().map(|s| s.as_ref().len()).collect();
    let mut joined = Vec::with_capacity(sizes.iter().sum());
    for s in samples {
        joined.extend_from_slice(s.as_ref());
    }
    let mut dict = Vec::with_capacity(max_size);
    zstd_safe::train_from_buffer(&mut dict, &joined, &sizes)
        .map_err(|code| Error::Train(zstd_safe::get_error_name(code)))?;
    Ok(dict)
}

/// The id a trained dictionary declares (frames made with it carry the same
/// id), or `None` for raw-content dictionaries.
pub fn dictionary_id(dict: &[u8]) -> Option<u32> {
    zstd_safe::get_dict_id(dict).map(|id| id.get())
}
