//! A file's first frame surveyed where it lies: its header and block
//! headers read a few bytes at a time with positioned reads, nothing
//! decoded, for a caller deciding how to decode the file. A read per
//! block is cheaper than mapping the file to look at the same headers,
//! which faulted in a page (and the pages around it) per block and tore
//! the mapping down after (docs/compress.md).

use std::io;
use std::os::unix::fs::FileExt;

use crate::frame::{FrameKind, block_at, frame_start, is_skippable};

/// What a survey found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Survey {
    /// The first zstd frame's declared content size.
    pub declared: Option<u64>,
    /// Bytes of compressed blocks (neither raw nor RLE) in the first zstd
    /// frame, counted until they were enough.
    pub compressed: u64,
    /// What follows the first zstd frame.
    pub after: After,
}

/// What follows a surveyed frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// Not looked at: the compressed blocks counted were enough first.
    Unknown,
    /// Nothing but skippable frames: the file is one zstd frame.
    Nothing,
    /// Something else: another zstd frame, or bytes that are not one.
    More,
}

/// Surveys the first zstd frame of `file` (`size` bytes; a [`std::fs::File`],
/// or anything read by position), skippable
/// frames before it skipped, counting its compressed blocks until
/// `enough(declared)` bytes of them are counted or the frame ends; then
/// looks past it for another zstd frame. `Ok(None)`: headers that do not
/// walk (not zstd, a window over `window_limit`, a cut), which a decode
/// reports in its own words.
pub fn survey<F: FileExt>(
    file: &F,
    size: u64,
    window_limit: u64,
    enough: impl Fn(Option<u64>) -> u64,
) -> io::Result<Option<Survey>> {
    let reader = Headers { file, size };
    let Some(mut at) = reader.past_skippable(0)? else {
        return Ok(None);
    };
    if at == size {
        return Ok(None);
    }
    // The longest zstd frame header: magic, descriptor, window, a 4-byte
    // dictionary ID and an 8-byte content size.
    let mut head = [0u8; 18];
    let Some(head) = reader.read(at, &mut head)? else {
        return Ok(None);
    };
    // Not skippable (those were passed over), so a zstd frame or nothing.
    let Ok(frame) = frame_start(head, 0, 0, window_limit) else {
        return Ok(None);
    };
    let FrameKind::Zstd(header) = frame.kind else {
        return Ok(None);
    };
    let header_size = frame.range.end as u64;
    let enough = enough(header.content_size);
    let mut found = Survey {
        declared: header.content_size,
        compressed: 0,
        after: After::Unknown,
    };
    at += header_size;
    loop {
        let mut bytes = [0u8; 3];
        match reader.read(at, &mut bytes)? {
            Some(b) if b.len() == 3 => {}
            _ => return Ok(None),
        }
        let Ok(block) = block_at(bytes, 0, 0, header.block_max()) else {
            return Ok(None);
        };
        let stored = block.content.len() as u64;
        if block.kind == crate::frame::BlockKind::Compressed {
            found.compressed += stored;
        }
        at += 3 + stored;
        if at > size {
            return Ok(None);
        }
        if found.compressed >= enough {
            return Ok(Some(found));
        }
        if block.last {
            break;
        }
    }
    if header.has_checksum {
        at += 4;
    }
    found.after = match reader.past_skippable(at)? {
        Some(end) if end == size => After::Nothing,
        Some(_) => After::More,
        None => return Ok(None),
    };
    Ok(Some(found))
}

/// Positioned reads of a file's headers, never past the size it had.
struct Headers<'f, F> {
    file: &'f F,
    size: u64,
}

impl<F: FileExt> Headers<'_, F> {
    /// As much of `buf` as the file holds from offset `at` on (less only
    /// where it ends), or `None` if it shrank since its size was taken.
    fn read<'b>(&self, at: u64, buf: &'b mut [u8]) -> io::Result<Option<&'b [u8]>> {
        let n = self.size.saturating_sub(at).min(buf.len() as u64) as usize;
        match self.file.read_exact_at(&mut buf[..n], at) {
            Ok(()) => Ok(Some(&buf[..n])),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The offset past the skippable frames from `at` on: the file's end,
    /// or where something else starts. `None` when a skippable frame runs
    /// past the end.
    fn past_skippable(&self, mut at: u64) -> io::Result<Option<u64>> {
        while at < self.size {
            let mut bytes = [0u8; 8];
            let Some(b) = self.read(at, &mut bytes)? else {
                return Ok(None);
            };
            let Some(magic) = b.first_chunk::<4>() else {
                return Ok(Some(at));
            };
            if !is_skippable(u32::from_le_bytes(*magic)) {
                return Ok(Some(at));
            }
            let Some(&[_, _, _, _, a, b, c, d]) = b.first_chunk::<8>() else {
                return Ok(None);
            };
            at += 8 + u64::from(u32::from_le_bytes([a, b, c, d]));
        }
        Ok((at == self.size).then_some(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zstd frame made by libzstd (`zstd-safe`), at `level`.
    fn frame(data: &[u8], level: i32) -> Vec<u8> {
        let mut out = vec![0u8; zstd_safe::compress_bound(data.len())];
        let n = zstd_safe::compress(&mut out[..], data, level).unwrap();
        out.truncate(n);
        out
    }

    fn skippable(payload: &[u8]) -> Vec<u8> {
        let mut f = 0x184D_2A50u32.to_le_bytes().to_vec();
        f.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        f.extend_from_slice(payload);
        f
    }

    fn surveyed(bytes: &[u8], enough: u64) -> Option<Survey> {
        let mut f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
        survey(&f, bytes.len() as u64, 1 << 27, |_| enough).unwrap()
    }

    /// RFC 8878's layout read here apart from zstdblock's parser, and held
    /// to libzstd's own answer for where the frame ends: (bytes of
    /// compressed blocks, blocks).
    fn compressed_blocks(frame: &[u8]) -> (usize, usize) {
        let descriptor = frame[4];
        let single = usize::from(descriptor >> 5 & 1);
        let size_field = [single, 2, 4, 8][usize::from(descriptor >> 6)];
        let id_field = [0, 1, 2, 4][usize::from(descriptor & 3)];
        let mut at = 5 + (1 - single) + id_field + size_field;
        let (mut compressed, mut blocks) = (0, 0);
        loop {
            let word = u32::from_le_bytes([frame[at], frame[at + 1], frame[at + 2], 0]) as usize;
            let (kind, size) = (word >> 1 & 3, word >> 3);
            compressed += if kind == 2 { size } else { 0 };
            at += 3 + if kind == 1 { 1 } else { size };
            blocks += 1;
            if word & 1 == 1 {
                break;
            }
        }
        at += if descriptor & 4 != 0 { 4 } else { 0 };
        assert_eq!(Ok(at), zstd_safe::find_frame_compressed_size(frame));
        (compressed, blocks)
    }

    /// The survey agrees with the frame's layout read apart (and libzstd's
    /// word for its declared size and its end): the compressed blocks'
    /// bytes, and whether another frame follows; it stops counting once it
    /// has enough, and headers that do not walk give `None`.
    #[test]
    fn a_survey_reads_what_the_frame_holds() {
        let text: Vec<u8> = (0..400_000u32)
            .flat_map(|i| format!("line {} of {}\n", i % 977, i % 13).into_bytes())
            .collect();
        let one = frame(&text, 3);
        let (compressed, blocks) = compressed_blocks(&one);
        let declared = zstd_safe::get_frame_content_size(&one).unwrap();
        assert_eq!(declared, Some(text.len() as u64));
        assert!(compressed > 0 && blocks > 4);
        let whole = Survey {
            declared,
            compressed: compressed as u64,
            after: After::Nothing,
        };
        assert_eq!(surveyed(&one, u64::MAX), Some(whole));
        let mut around = skippable(b"before");
        around.extend_from_slice(&one);
        around.extend(skippable(b"after"));
        assert_eq!(surveyed(&around, u64::MAX), Some(whole));
        let mut two = one.clone();
        two.extend(frame(b"second", 1));
        let after = After::More;
        assert_eq!(surveyed(&two, u64::MAX), Some(Survey { after, ..whole }));
        let early = surveyed(&one, 1).unwrap();
        assert_eq!(early.after, After::Unknown);
        assert!(early.compressed >= 1 && early.compressed < compressed as u64);
        for cut in [3, 10, one.len() / 2, one.len() - 1] {
            assert_eq!(surveyed(&one[..cut], u64::MAX), None, "cut at {cut}");
        }
        assert_eq!(surveyed(b"not zstd at all", u64::MAX), None);
        assert_eq!(surveyed(b"", u64::MAX), None);
    }
}
