//! The limits every reading path decodes under: entry count, total
//! uncompressed size and compression ratio, counted on the data as it is
//! decoded (declared sizes are not trusted).

use super::ExtractOptions;
use crate::entry::Entry;
use crate::error::{Error, Result};

/// The one limit policy (entry count, total uncompressed size, ratio),
/// applied as data is decoded by every reading path: extraction, and the
/// [`read_archive_data`](super::read_archive_data)/
/// [`read_stream_data`](super::read_stream_data) front ends behind
/// `unzip -p` and `unzip -t`.
pub(super) struct Limiter<'a> {
    opts: &'a ExtractOptions,
    entries: u64,
    /// Uncompressed bytes of the entries finished so far.
    bytes: u64,
}

impl<'a> Limiter<'a> {
    pub(super) fn new(opts: &'a ExtractOptions) -> Limiter<'a> {
        Limiter {
            opts,
            entries: 0,
            bytes: 0,
        }
    }

    /// Counts one more entry, and refuses it early if its declared size
    /// alone would exceed the budget (declared sizes are not trusted
    /// otherwise: [`Limiter::data`] checks what is really decoded).
    pub(super) fn entry(&mut self, e: &Entry, declared: bool) -> Result<()> {
        self.entries += 1;
        if self.entries > self.opts.max_entries {
            return Err(Error::Limit {
                name: e.name.clone(),
                what: "entry count",
                limit: self.opts.max_entries,
                actual: self.entries,
            });
        }
        if declared && e.size > self.opts.max_total_bytes.saturating_sub(self.bytes) {
            return Err(Error::Limit {
                name: e.name.clone(),
                what: "total uncompressed size",
                limit: self.opts.max_total_bytes,
                actual: self.bytes.saturating_add(e.size),
            });
        }
        Ok(())
    }

    /// Checks an entry in progress: `n` bytes of it decoded so far, from
    /// `consumed` compressed bytes producing `produced`.
    pub(super) fn data(&self, e: &Entry, n: u64, consumed: u64, produced: u64) -> Result<()> {
        let total = self.bytes.saturating_add(n);
        if total > self.opts.max_total_bytes {
            return Err(Error::Limit {
                name: e.name.clone(),
                what: "total uncompressed size",
                limit: self.opts.max_total_bytes,
                actual: total,
            });
        }
        if produced > self.opts.ratio_floor && produced / consumed.max(1) > self.opts.max_ratio {
            return Err(Error::Limit {
                name: e.name.clone(),
                what: "compression ratio",
                limit: self.opts.max_ratio,
                actual: produced / consumed.max(1),
            });
        }
        Ok(())
    }

    /// Records a finished entry of `n` bytes.
    pub(super) fn done(&mut self, n: u64) {
        self.bytes = self.bytes.saturating_add(n);
    }
}
