//! gzip, the other format a zstd-like tool writes and reads (through
//! flate2): one member written, every member read, as gzip does.

use std::io::{self, BufRead, Read, Write};

use super::{Outcome, ReadAhead, WRITE_SIZE, WriteBehind, pump};
use crate::error::JobError;

/// The first bytes of every gzip member.
pub(super) const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Writes the input as one gzip member at `level`; returns the bytes read.
pub(super) fn encode(
    level: u32,
    input: Box<dyn Read + Send>,
    out: &mut WriteBehind,
    progress: &mut dyn FnMut(u64),
) -> Result<u64, JobError> {
    let level = flate2::Compression::new(backend_level(level));
    let mut enc = flate2::write::GzEncoder::new(out, level);
    let read = pump(input, &mut enc, progress)?;
    enc.try_finish().map_err(JobError::Output)?;
    Ok(read)
}

/// The zlib-rs level that stands for zlib's `level`: the same, but at
/// the two ends, where zlib-rs follows zlib-ng. Its level 1 is a quick
/// single-pass coder whose output is 20-30 % larger than zlib's level 1
/// (and its level 2 smaller); its level 9 can be larger than its 8, by
/// 2.6 % on base64 text and 9 % on a Cargo.lock. So 1 runs as 2 and 9
/// as 8: a zstd user's `--format=gzip -1`/`-9` gets no larger a file
/// than zstd's zlib gives (`crates/cli/tests/zstd_options.rs` checks it).
fn backend_level(level: u32) -> u32 {
    match level {
        1 => 2,
        9 => 8,
        l => l,
    }
}

/// Decodes gzip members (every one, as gzip does) into `out` (`None`:
/// discard).
pub(super) fn decode(
    input: ReadAhead,
    mut out: Option<WriteBehind>,
    progress: &mut dyn FnMut(u64),
) -> Result<Outcome, JobError> {
    let counted = Counted {
        inner: input,
        read: 0,
    };
    let mut dec = flate2::bufread::MultiGzDecoder::new(counted);
    let mut buf = vec![0u8; WRITE_SIZE];
    let mut decoded = 0u64;
    loop {
        let n = match dec.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(JobError::Gzip(e)),
        };
        if let Some(w) = out.as_mut() {
            w.write_all(&buf[..n]).map_err(JobError::Output)?;
        }
        decoded += n as u64;
        progress(dec.get_ref().read);
    }
    let written = match out {
        Some(w) => w.finish().map_err(JobError::Output)?,
        None => decoded,
    };
    Ok(Outcome {
        read: dec.get_ref().read,
        written,
        parallel: None,
    })
}

/// A reader that counts what was taken from it, for the sizes a gzip input
/// reports.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.read += n as u64;
        self.inner.consume(n);
    }
}
