//! Which decoder takes an input, and perfkit's own ([`zstdblock`]) when it
//! does: one ordinary zstd frame decoded on several threads, its blocks'
//! entropy stage in parallel and their execution in order.
//!
//! An input of up to [`MAX_HELD_TO_DECIDE`] bytes is read whole to walk
//! its frames; a larger one is read as the block decoder goes (its first
//! MiB decides), so the memory it takes is the window and the blocks in
//! flight, whatever the file's size.
//!
//! libzstd (through [`zstdkit::job`]) keeps everything the block decoder
//! cannot do better or at all: `-T1` by default, stdin, gzip and
//! pass-through, `-D` and frames that name a dictionary, patches, inputs
//! of several frames that zstdkit decodes a frame per thread, inputs too
//! small for threads to pay, and anything whose headers do not walk (a
//! window over `--memory`, a bad magic number), so those are answered
//! exactly as before. A decode that fails on what libzstd may accept
//! ([`zstdblock::Error::libzstd_may_accept`], or a wrong checksum under
//! `--no-check`) is run again by libzstd, whose output past the bytes
//! already written continues the output: both decoders agree on every
//! block before the failing one.

use std::io::{self, Read, Write};

use zstdkit::job::WindowLimit;

use super::{Mode, Options};

/// Which zstd decoder `decompress` uses (`--decoder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decoder {
    /// perfkit's block decoder for one large frame with `-T2` or more
    /// (`-T0` included), libzstd otherwise.
    #[default]
    Auto,
    /// perfkit's block decoder wherever it applies, on one thread too
    /// (for tests and benchmarks).
    Perfkit,
    /// libzstd always, as before the block decoder.
    Libzstd,
}

/// The most of an input read to decide, before the rest is read: enough
/// for a frame header.
const HEAD: usize = 64 << 10;

/// The largest input read whole only to learn whether it is one frame
/// (zstdkit's frame-parallel path holds as much in flight).
const MAX_HELD_TO_DECIDE: u64 = zstdkit::parallel::MAX_PARALLEL_FRAME;

/// Where one input goes.
pub(super) enum Route {
    /// To libzstd, as before, with a line for `-v` saying why when the
    /// block decoder was asked for and could not take it.
    Libzstd {
        input: Box<dyn Read + Send>,
        note: Option<String>,
    },
    /// To the block decoder.
    Blocks { input: BlockInput },
}

/// An input the block decoder takes.
pub(super) enum BlockInput {
    /// Whole, in memory: at most [`MAX_HELD_TO_DECIDE`] bytes.
    Held(Vec<u8>),
    /// Read as it goes: a regular file larger than [`MAX_HELD_TO_DECIDE`]
    /// of `size` bytes, never read past the size it had when opened.
    Streamed {
        input: Box<dyn Read + Send>,
        size: u64,
    },
}

/// The largest window a frame may have under `window`, as zstdkit's
/// decompressor enforces it.
pub(super) fn window_bytes(window: WindowLimit) -> u64 {
    match window {
        WindowLimit::Default => 1 << zstdkit::DEFAULT_WINDOW_LOG_MAX,
        WindowLimit::Bytes(n) => n,
        WindowLimit::Log(w) => 1u64 << w.min(63),
    }
}

/// Decides where `input` (`size` bytes when a regular file) goes, reading
/// as much of it as that takes; what was read stays part of the input
/// whichever way it goes. `dictionary`: `-D` was given; `reference`:
/// `--patch-from` was.
pub(super) fn route(
    o: &Options,
    dictionary: bool,
    reference: bool,
    mut input: Box<dyn Read + Send>,
    size: Option<u64>,
) -> io::Result<Route> {
    let libzstd = |input, note: Option<String>| Ok(Route::Libzstd { input, note });
    let explicit = o.decoder == Decoder::Perfkit;
    let wanted = match o.decoder {
        Decoder::Libzstd => false,
        Decoder::Perfkit => true,
        Decoder::Auto => o.threads >= 2,
    };
    if o.mode == Mode::Compress || reference || !wanted {
        return libzstd(input, None);
    }
    if dictionary {
        let note = "-D: decoded by libzstd, which holds the dictionary";
        return libzstd(input, Some(note.into()));
    }
    let Some(size) = size else {
        let note = explicit.then(|| "not a regular file: decoded by libzstd".to_string());
        return libzstd(input, note);
    };
    // Too small for threads to pay: libzstd's one thread is faster.
    if !explicit && size < zstdblock::parallel::MIN_PARALLEL_INPUT as u64 {
        return libzstd(input, None);
    }
    let mut head = Vec::with_capacity(HEAD);
    (&mut input).take(HEAD as u64).read_to_end(&mut head)?;
    let rest = |head: Vec<u8>, input| -> Box<dyn Read + Send> {
        Box::new(io::Cursor::new(head).chain(input))
    };
    match zstdblock::frame_start(&head, 0, 0, u64::MAX) {
        Ok(frame) => match frame.kind {
            zstdblock::FrameKind::Zstd(h) if h.dictionary_id != 0 => {
                let note = format!(
                    "frame 0 needs dictionary {}: decoded by libzstd",
                    h.dictionary_id
                );
                return libzstd(rest(head, input), Some(note));
            }
            // A large input that starts with a frame small enough for
            // zstdkit to hand to a thread of its own (or with a skippable
            // frame, as pzstd's) is one of many frames: not read whole.
            // A smaller one is, and its walk tells.
            zstdblock::FrameKind::Zstd(h)
                if !explicit
                    && size > MAX_HELD_TO_DECIDE
                    && h.content_size
                        .is_some_and(|n| n <= zstdkit::parallel::MAX_PARALLEL_FRAME) =>
            {
                return libzstd(rest(head, input), None);
            }
            zstdblock::FrameKind::Skippable { .. } if !explicit && size > MAX_HELD_TO_DECIDE => {
                return libzstd(rest(head, input), None);
            }
            _ => {}
        },
        // gzip, pass-through, a bad header: libzstd's path says it.
        Err(_) => return libzstd(rest(head, input), None),
    }
    let limit = window_bytes(o.window);
    if size > MAX_HELD_TO_DECIDE {
        // Too large to hold: the first frame's header and the first MiB
        // decide, and the block decoder reads the rest as it goes.
        if let Err(e) = zstdblock::frame_start(&head, 0, 0, limit) {
            let note = explicit.then(|| format!("{e}: decoded by libzstd"));
            return libzstd(rest(head, input), note);
        }
        let parallel = zstdblock::parallel::Parallel::new(o.threads, limit);
        let mut probe = head;
        (&mut input)
            .take((parallel.probe() - probe.len()) as u64)
            .read_to_end(&mut probe)?;
        if !explicit && !parallel.pipelines(&probe) {
            return libzstd(rest(probe, input), None);
        }
        let left = size.saturating_sub(probe.len() as u64);
        let input = rest(probe, Box::new(input.take(left)));
        return Ok(Route::Blocks {
            input: BlockInput::Streamed { input, size },
        });
    }
    let mut whole = Vec::new();
    whole
        .try_reserve_exact(usize::try_from(size).unwrap_or(usize::MAX))
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    whole.extend_from_slice(&head);
    // Never past the size it had when opened: a growing file is read as
    // it was.
    input
        .take(size.saturating_sub(head.len() as u64))
        .read_to_end(&mut whole)?;
    let frames = match zstdblock::walk(&whole, limit) {
        Ok(frames) => frames,
        Err(e) => {
            // libzstd words every refusal as before (a window over
            // --memory with the flags that admit it).
            let note = explicit.then(|| format!("{e}: decoded by libzstd"));
            return libzstd(Box::new(io::Cursor::new(whole)), note);
        }
    };
    if let Some((index, id)) = frames.iter().find_map(|f| match &f.kind {
        zstdblock::FrameKind::Zstd(h) if h.dictionary_id != 0 => Some((f.index, h.dictionary_id)),
        _ => None,
    }) {
        let note = format!("frame {index} needs dictionary {id}: decoded by libzstd");
        return libzstd(Box::new(io::Cursor::new(whole)), Some(note));
    }
    if !explicit {
        let zstd_frames = frames
            .iter()
            .filter(|f| matches!(f.kind, zstdblock::FrameKind::Zstd(_)))
            .count();
        let pipelines = zstdblock::parallel::Parallel::new(o.threads, limit).pipelines(&whole);
        // Several frames zstdkit hands out a thread each, or blocks too
        // few (or stored) for threads to pay.
        if (zstd_frames > 1 && zstdkit::parallel::splits(&whole)) || !pipelines {
            return libzstd(Box::new(io::Cursor::new(whole)), None);
        }
    }
    Ok(Route::Blocks {
        input: BlockInput::Held(whole),
    })
}

/// Whether libzstd decides about an input the block decoder refused with
/// `e`: libzstd may accept it, or it is only a checksum and checksums are
/// not checked (`--no-check`).
pub(super) fn libzstd_decides(e: &zstdblock::Error, verify_checksums: bool) -> bool {
    e.libzstd_may_accept() || (!verify_checksums && matches!(e, zstdblock::Error::Checksum { .. }))
}

/// A writer that counts what it passes on.
pub(super) struct Counting<W> {
    pub(super) inner: W,
    pub(super) written: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A writer that drops the first `skip` bytes written to it: libzstd's
/// run again over an input whose first bytes are written already.
pub(super) struct Skipping<W> {
    pub(super) inner: W,
    pub(super) skip: u64,
}

impl<W: Write> Write for Skipping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let dropped = usize::try_from(self.skip)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        self.skip -= dropped as u64;
        if dropped == buf.len() {
            return Ok(buf.len());
        }
        self.inner.write(&buf[dropped..]).map(|n| n + dropped)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipping_drops_exactly_the_first_bytes_across_writes() {
        let mut w = Skipping {
            inner: Vec::new(),
            skip: 5,
        };
        w.write_all(b"abc").unwrap();
        w.write_all(b"defg").unwrap();
        w.write_all(b"hi").unwrap();
        assert_eq!(w.inner, b"fghi");
    }
}
