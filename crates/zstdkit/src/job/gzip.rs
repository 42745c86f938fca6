//! gzip, the other format a zstd-like tool writes and reads (through
//! flate2): one member written, every member read, as gzip does, headers
//! of any length streamed past.

use std::io::{self, BufRead, Read};

use super::{Outcome, ReadAhead, WRITE_SIZE, WriteBehind, copy_through, is_frame_magic, pump};
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
/// discard). Each member's header is skipped as it streams by, whatever
/// the length of its name, comment or extra field (gzip takes names of
/// any length; flate2's own parser refuses those of 64 KiB and more), so
/// no header is ever held whole; the deflate data goes to flate2, and the
/// trailer's CRC-32 and length are checked here.
pub(super) fn decode(
    input: ReadAhead,
    mut out: Option<WriteBehind>,
    pass_through: bool,
    progress: &mut dyn FnMut(u64),
) -> Result<Outcome, JobError> {
    let counted = Counted {
        inner: input,
        read: 0,
    };
    // One inflater for every member, reset between them.
    let mut body = flate2::bufread::DeflateDecoder::new(counted);
    let mut scratch = Vec::new();
    let mut decoded = 0u64;
    loop {
        skip_header(body.get_mut()).map_err(JobError::Gzip)?;
        body.reset_data();
        let mut crc = flate2::Crc::new();
        loop {
            // Inflate straight into the writer's buffer: no copy.
            let room = match out.as_mut() {
                Some(w) => w.spare().map_err(JobError::Output)?,
                None => {
                    scratch.resize(WRITE_SIZE, 0);
                    &mut scratch[..]
                }
            };
            let n = match body.read(room) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(JobError::Gzip(e)),
            };
            crc.update(&room[..n]);
            if let Some(w) = out.as_mut() {
                w.advance(n);
            }
            decoded += n as u64;
            progress(body.get_ref().read);
        }
        let input = body.get_mut();
        check_trailer(input, &crc).map_err(JobError::Gzip)?;
        // As gzip: what follows a member is another member; with
        // pass-through, what is neither gzip nor zstd is copied as it is,
        // as zstd copies it.
        let next = input.fill_buf().map_err(JobError::Gzip)?;
        if next.is_empty() {
            break;
        }
        if pass_through && !next.starts_with(&MAGIC) && !is_frame_magic(next) {
            let discarding = out.is_none();
            let rest = body.into_inner();
            let mut tail = copy_through(rest.inner, Vec::new(), rest.read, out, progress)?;
            if discarding {
                // `-t`: the copy counted the copied bytes alone.
                tail.written += decoded;
            }
            return Ok(tail);
        }
    }
    let read = body.get_ref().read;
    let written = match out {
        Some(w) => w.finish().map_err(JobError::Output)?,
        None => decoded,
    };
    Ok(Outcome {
        read,
        written,
        parallel: None,
        passed_through: false,
    })
}

/// The header flags RFC 1952 defines (FTEXT, bit 0, says nothing to a
/// decoder).
const FHCRC: u8 = 1 << 1;
const FEXTRA: u8 = 1 << 2;
const FNAME: u8 = 1 << 3;
const FCOMMENT: u8 = 1 << 4;
const FRESERVED: u8 = 0b1110_0000;

/// Reads past one member's header (RFC 1952, 2.3.1), checking its
/// CRC-16 when it has one. The optional fields stream through: a name or
/// comment of any length costs no memory, and one cut short is an
/// [`io::ErrorKind::UnexpectedEof`], never a wait.
fn skip_header(input: &mut impl BufRead) -> io::Result<()> {
    let mut crc = flate2::Crc::new();
    let mut fixed = [0u8; 10];
    take_exact(input, &mut fixed, &mut crc)?;
    let flags = fixed[3];
    // 8: deflate, the only method gzip defines.
    if fixed[..2] != MAGIC || fixed[2] != 8 || flags & FRESERVED != 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "invalid gzip header",
        ));
    }
    if flags & FEXTRA != 0 {
        let mut len = [0u8; 2];
        take_exact(input, &mut len, &mut crc)?;
        skip_bytes(input, u16::from_le_bytes(len).into(), &mut crc)?;
    }
    if flags & FNAME != 0 {
        skip_to_nul(input, &mut crc)?;
    }
    if flags & FCOMMENT != 0 {
        skip_to_nul(input, &mut crc)?;
    }
    if flags & FHCRC != 0 {
        let sum = crc.sum();
        let mut stored = [0u8; 2];
        take_exact(input, &mut stored, &mut flate2::Crc::new())?;
        if u16::from_le_bytes(stored) != sum as u16 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the gzip header's CRC-16 does not match it",
            ));
        }
    }
    Ok(())
}

/// Checks a member's trailer, its data's CRC-32 and length (mod 2^32),
/// against what was decoded (`crc`).
fn check_trailer(input: &mut impl BufRead, crc: &flate2::Crc) -> io::Result<()> {
    let mut trailer = [0u8; 8];
    take_exact(input, &mut trailer, &mut flate2::Crc::new())?;
    let stored_crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let stored_len = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
    if stored_crc != crc.sum() || stored_len != crc.amount() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the data does not match the member's CRC-32 and length",
        ));
    }
    Ok(())
}

/// The input cut inside a member's header or trailer.
fn cut_short() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the input ends inside a gzip member",
    )
}

/// Fills `buf` from `input`, adding what was read to `crc`.
fn take_exact(input: &mut impl BufRead, buf: &mut [u8], crc: &mut flate2::Crc) -> io::Result<()> {
    let mut at = 0;
    while at < buf.len() {
        let have = fill(input)?;
        let n = have.len().min(buf.len() - at);
        buf[at..at + n].copy_from_slice(&have[..n]);
        crc.update(&have[..n]);
        input.consume(n);
        at += n;
    }
    Ok(())
}

/// Skips `n` bytes of `input`, adding them to `crc`.
fn skip_bytes(input: &mut impl BufRead, mut n: usize, crc: &mut flate2::Crc) -> io::Result<()> {
    while n > 0 {
        let have = fill(input)?;
        let k = have.len().min(n);
        crc.update(&have[..k]);
        input.consume(k);
        n -= k;
    }
    Ok(())
}

/// Skips a NUL-terminated field, its NUL included, adding it to `crc`.
fn skip_to_nul(input: &mut impl BufRead, crc: &mut flate2::Crc) -> io::Result<()> {
    loop {
        let have = fill(input)?;
        match have.iter().position(|&b| b == 0) {
            Some(at) => {
                crc.update(&have[..=at]);
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let k = have.len();
                crc.update(have);
                input.consume(k);
            }
        }
    }
}

/// The next bytes of `input`, at least one: its end here is a member cut
/// short.
fn fill(input: &mut impl BufRead) -> io::Result<&[u8]> {
    loop {
        match input.fill_buf() {
            Ok([]) => return Err(cut_short()),
            // A second borrow, for the borrow checker: the buffer is the
            // one just filled.
            Ok(_) => return input.fill_buf(),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
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
