//! Compression engines behind one buffer-to-buffer interface, so the writer
//! core and both readers drive store, deflate and zstd the same way.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use crate::entry::Method;
use crate::error::Error;

pub(crate) mod estimate;
pub(crate) mod piece;

/// A streaming compressor writing raw method bytes (no zlib/zstd wrappers beyond
/// what the ZIP method defines).
pub(crate) enum Encoder {
    /// Copies input.
    Store,
    /// Raw deflate (no zlib header) in libdeflate pieces.
    Deflate(Box<Deflater>),
    /// A zstd frame through zstdkit.
    Zstd(Box<ZstdEncoder>),
}

/// zstdkit's streaming encoder writes to a `Write`; this one hands its
/// output back to the core's buffer after every call.
pub(crate) struct ZstdEncoder {
    enc: Option<zstdkit::Encoder<Spill>>,
    spill: Spill,
}

/// A shared output buffer (the encoder owns one handle, we keep the other).
#[derive(Clone, Default)]
pub(crate) struct Spill(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Spill {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl ZstdEncoder {
    fn new(params: zstdkit::Params) -> std::result::Result<ZstdEncoder, zstdkit::Error> {
        let spill = Spill::default();
        Ok(ZstdEncoder {
            enc: Some(zstdkit::Encoder::new(spill.clone(), params)?),
            spill,
        })
    }

    fn step(&mut self, input: &[u8], mode: zstdkit::FlushMode, out: &mut Vec<u8>) {
        match mode {
            zstdkit::FlushMode::End => {
                if let Some(e) = self.enc.take() {
                    // In-memory zstd only fails on a context misuse or OOM.
                    e.finish().expect("zstd frame end");
                }
            }
            m => {
                if let Some(e) = self.enc.as_mut() {
                    e.write_with(input, m).expect("zstd in-memory compression");
                }
            }
        }
        let mut s = self.spill.0.lock().unwrap_or_else(|p| p.into_inner());
        out.extend_from_slice(&s);
        s.clear();
    }
}

/// Deflate in libdeflate pieces ([`piece`]) that skips incompressible
/// stretches: input is gathered into pieces of [`piece::PIECE`] bytes, each
/// compressed on its own and chained into the entry's one deflate stream;
/// each chunk of at least [`DECIDE_MIN`] bytes whose byte entropy is near 8
/// bits is written as deflate stored blocks instead of being searched for
/// matches (the pending piece is ended first, so the stream is
/// byte-aligned). Pieces start with no dictionary, so leaving a stored
/// stretch costs nothing more than any piece boundary.
///
/// Dense data (a piece that came out [`DENSE_IN`] times smaller or more)
/// goes on in one zlib-rs stream ([`DenseStream`]) primed with the piece's
/// last 32 KiB, until a piece comes out less than [`DENSE_OUT`] times
/// smaller: there a piece's own blocks are tens of bytes, and what each
/// fresh libdeflate piece pays to learn its data again is most of its size
/// (16 MiB of one 4 KiB random block repeated: 133,128 bytes in 2 MiB
/// pieces, 102,233 for zlib's -6, and for zlib-rs's level 7 in one stream).
pub(crate) struct Deflater {
    engine: piece::PieceDeflater,
    /// zip's level, for the dense stream.
    level: u32,
    /// Input gathered for the next piece.
    pending: Vec<u8>,
    /// The dense stream, while the data is dense; it is open, not
    /// byte-aligned, between pieces.
    dense: Option<Box<DenseStream>>,
    storing: bool,
    /// Chunks to deflate before probing again: while data compresses, the
    /// probe runs every 256 KiB, so fast-compressing data barely pays for it.
    skip: u32,
    /// A piece its sample's probe found dense came out less than
    /// [`DENSE_OUT`] times smaller: the probe (a sixty-fourth of the
    /// piece) misjudged this data, so the rest of the stream goes into
    /// the dense stream only by a libdeflate piece's own ratio. Data dense
    /// at every piece's middle and not around it (zeros padding each
    /// record of 2 MiB) otherwise went through zlib-rs's 7 piece after
    /// piece: 1.12-1.17x the CPU of the same bytes with the zeros elsewhere.
    probe_misled: bool,
}

/// Chunks shorter than this keep the current mode (too few bytes to judge).
const DECIDE_MIN: usize = 16 * 1024;
/// Decision granularity.
const DECIDE_CHUNK: usize = 64 * 1024;

/// A libdeflate piece this many times smaller than its input or more
/// starts the dense stream: 16 MiB of zeros, one sentence or one 4 KiB
/// block repeated come out 160-1000 times smaller; log files 8-16 times,
/// sources 4-8 times.
pub(crate) const DENSE_IN: usize = 64;
/// A piece of the dense stream less than this many times smaller than its
/// input ends it, the stream byte-aligned, and pieces take over again.
const DENSE_OUT: usize = 32;
/// Deflate's window: what the dense stream is primed with.
pub(crate) const WINDOW: usize = 32 << 10;

/// A zlib-rs raw deflate stream for dense data, primed with what the
/// decoder holds before it. zlib-rs's level 7 and up (zlib's lazy
/// "slow" strategy) are taken: its levels 2-6 (zlib-ng's "fast" and
/// "medium") came out 45-100 % larger than zlib's -6 on repeated data,
/// its 7 the same size at 0.55x zlib's CPU.
pub(crate) struct DenseStream(Compress);

impl DenseStream {
    /// A stream at zip's `level` continuing a deflate stream whose
    /// decoded data ends with `dict` (at most [`WINDOW`] bytes).
    pub(crate) fn new(level: u32, dict: &[u8]) -> DenseStream {
        let mut c = Compress::new(Compression::new(level.clamp(7, 9)), false);
        if !dict.is_empty() {
            // Refused only on a stream already started; this one is new.
            // Unprimed it would only be larger.
            let _ = c.set_dictionary(&dict[dict.len().saturating_sub(WINDOW)..]);
        }
        DenseStream(c)
    }

    /// Whether the stream has been given input (and so may hold output).
    fn started(&self) -> bool {
        self.0.total_in() > 0
    }

    /// Compresses `input` as the stream's next bytes.
    pub(crate) fn put(&mut self, input: &[u8], out: &mut Vec<u8>) {
        self.drive(input, FlushCompress::None, out);
    }

    /// Ends the stream's output on a byte boundary with the deflate stream
    /// still open (zlib's sync flush: an empty stored block).
    pub(crate) fn sync(&mut self, out: &mut Vec<u8>) {
        self.drive(&[], FlushCompress::Sync, out);
    }

    /// Ends the deflate stream.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        self.drive(&[], FlushCompress::Finish, out);
    }

    fn drive(&mut self, mut input: &[u8], flush: FlushCompress, out: &mut Vec<u8>) {
        loop {
            if out.capacity() - out.len() < 4096 {
                out.reserve(input.len() / 8 + 8192);
            }
            let before = self.0.total_in();
            // zlib-rs fails only on a stream in an inconsistent state,
            // which this one, driven only from here, never is.
            let status = self
                .0
                .compress_vec(input, out, flush)
                .expect("zlib-rs deflate of an open stream");
            input = &input[(self.0.total_in() - before) as usize..];
            let room_left = out.len() < out.capacity();
            let done = match flush {
                FlushCompress::Finish => status == Status::StreamEnd,
                _ => input.is_empty() && room_left,
            };
            if done {
                return;
            }
        }
    }
}

impl Encoder {
    /// Builds the encoder for `method` at `level` (zstd: `zstd` params win).
    #[cfg(test)]
    pub(crate) fn new(method: Method, level: u32) -> Encoder {
        Encoder::with_zstd(method, level, None).expect("default zstd parameters are valid")
    }

    /// As [`Encoder::new`], with explicit zstd parameters.
    pub(crate) fn with_zstd(
        method: Method,
        level: u32,
        zstd: Option<zstdkit::Params>,
    ) -> std::result::Result<Encoder, zstdkit::Error> {
        Ok(match method {
            Method::Zstd => {
                let params =
                    zstd.unwrap_or_else(|| zstdkit::Params::for_level(level.clamp(1, 22) as i32));
                Encoder::Zstd(Box::new(ZstdEncoder::new(params)?))
            }
            Method::Stored => Encoder::Store,
            Method::Deflate => Encoder::Deflate(Box::new(Deflater::new(level))),
        })
    }

    /// Compresses all of `input`, appending whatever output is ready to `out`.
    pub(crate) fn encode(&mut self, input: &[u8], out: &mut Vec<u8>) {
        match self {
            Encoder::Store => out.extend_from_slice(input),
            Encoder::Deflate(d) => d.encode(input, out),
            Encoder::Zstd(z) => z.step(input, zstdkit::FlushMode::Continue, out),
        }
    }

    /// Compresses `input` then emits a sync point: the output so far is a
    /// complete prefix, byte-aligned, so its length is exact.
    #[cfg(test)]
    pub(crate) fn encode_sync(&mut self, input: &[u8], out: &mut Vec<u8>) {
        match self {
            Encoder::Store => out.extend_from_slice(input),
            Encoder::Deflate(d) => {
                d.encode(input, out);
                d.end_piece(out);
            }
            Encoder::Zstd(z) => z.step(input, zstdkit::FlushMode::Flush, out),
        }
    }

    /// Ends the stream.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        match self {
            Encoder::Store => {}
            Encoder::Deflate(d) => d.finish(out),
            Encoder::Zstd(z) => z.step(&[], zstdkit::FlushMode::End, out),
        }
    }
}

impl Deflater {
    /// A deflater at zip's `level` (1-9) for a new stream.
    pub(crate) fn new(level: u32) -> Deflater {
        Deflater {
            engine: piece::PieceDeflater::new(level),
            level,
            pending: Vec::new(),
            dense: None,
            storing: false,
            skip: 0,
            probe_misled: false,
        }
    }

    /// Compresses `input` as the stream's next bytes, appending to `out`
    /// whatever pieces and stored blocks are complete.
    pub(crate) fn encode(&mut self, input: &[u8], out: &mut Vec<u8>) {
        for chunk in input.chunks(DECIDE_CHUNK) {
            if !self.storing && self.skip > 0 {
                self.skip -= 1;
            } else if chunk.len() >= DECIDE_MIN {
                let store = looks_incompressible(chunk);
                if !store {
                    self.skip = 3;
                } else if !self.storing {
                    // Byte-align the stream so stored blocks can follow.
                    self.end_piece(out);
                }
                self.storing = store;
            }
            if self.storing {
                put_stored(chunk, out);
            } else {
                self.gather(chunk, out);
            }
        }
    }

    /// Adds `data` to the pending piece, compressing each piece once full.
    fn gather(&mut self, mut data: &[u8], out: &mut Vec<u8>) {
        while !data.is_empty() {
            let take = (piece::PIECE - self.pending.len()).min(data.len());
            if self.pending.capacity() - self.pending.len() < take {
                // At first room for what is at hand, up to a piece: short
                // entries stay as short as they are. Past that, the whole
                // piece at once: grown by doubling, a 500 kB entry's
                // pending piece was copied at 64, 128 and 256 KiB, each
                // copy into fresh pages (47 page faults of the corpus's
                // JSON); reserved, the pages are touched only as written.
                let want = if self.pending.capacity() == 0 {
                    data.len().min(piece::PIECE)
                } else {
                    piece::PIECE
                };
                self.pending.reserve_exact(want - self.pending.len());
            }
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() == piece::PIECE {
                self.emit(false, out);
            }
        }
    }

    /// Compresses the pending piece, as the stream's end when `last`: into
    /// the dense stream while there is one, else as a libdeflate piece
    /// (ending byte-aligned), starting the dense stream after it when it
    /// came out dense.
    fn emit(&mut self, last: bool, out: &mut Vec<u8>) {
        let start = out.len();
        let probed_dense = self.dense.is_none()
            && !self.probe_misled
            && self.engine.dense(&self.pending, DENSE_IN);
        if probed_dense {
            // Dense by its sample's probe (which choosing a level takes
            // anyway): into the dense stream now, not after a libdeflate
            // piece of it. On repeated data libdeflate's 7 spends 1.3x
            // zlib-rs's CPU a byte, and its check more. Unprimed: the
            // pieces before are gone, and at an entry's start there are
            // none.
            self.dense = Some(Box::new(DenseStream::new(self.level, &[])));
        }
        if let Some(z) = self.dense.as_mut() {
            z.put(&self.pending, out);
            if last {
                z.finish(out);
                self.dense = None;
            } else if (out.len() - start) * DENSE_OUT > self.pending.len() {
                // zlib-rs holds back at most a block, so this lags a
                // little; it only chooses the engine.
                z.sync(out);
                self.dense = None;
                self.probe_misled |= probed_dense;
            }
        } else if !self.pending.is_empty() {
            self.engine.piece(&self.pending, last, out);
            if !last && (out.len() - start) * DENSE_IN <= self.pending.len() {
                self.dense = Some(Box::new(DenseStream::new(self.level, &self.pending)));
            }
        } else if last {
            out.extend_from_slice(&piece::FINAL_EMPTY_STORED);
        }
        self.pending.clear();
    }

    /// Writes the pending piece as a non-final one, so the stream so far is
    /// a byte-aligned prefix; what follows starts afresh (stored blocks, or
    /// another deflater's stretch), so a dense stream ends here.
    pub(crate) fn end_piece(&mut self, out: &mut Vec<u8>) {
        self.emit(false, out);
        // A stream not yet given input has written nothing: the stream is
        // byte-aligned after the piece that started it.
        if let Some(mut z) = self.dense.take()
            && z.started()
        {
            z.sync(out);
        }
    }

    /// Ends the stream: the pending piece as the final one (or an empty
    /// final block: the stream is byte-aligned between pieces and stored
    /// blocks, and at its start). The deflater is then ready for a new
    /// stream.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        self.emit(true, out);
        self.engine.new_stream();
        self.storing = false;
        self.skip = 0;
        self.probe_misled = false;
    }

    /// Ends a stretch of a stream that another deflater continues (the
    /// parallel writer's blocks): the pending piece ends byte-aligned and
    /// the next stretch starts judged afresh.
    pub(crate) fn end_stretch(&mut self, out: &mut Vec<u8>) {
        self.end_piece(out);
        // The next stretch may go to another worker: what it may spend
        // must not depend on which stretches this deflater saw before.
        self.engine.new_stream();
        self.storing = false;
        self.skip = 0;
        self.probe_misled = false;
    }
}

/// Appends non-final deflate stored blocks holding `data`; the stream must be byte-aligned.
pub(crate) fn put_stored(data: &[u8], out: &mut Vec<u8>) {
    for piece in data.chunks(0xFFFF) {
        let n = piece.len() as u16;
        out.push(0x00);
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&(!n).to_le_bytes());
        out.extend_from_slice(piece);
    }
}

/// Compressed, encrypted or random data: order-0 entropy near 8 bits per
/// byte *and* almost no repeated 4-byte strings (uniform byte histograms
/// also come from structured data that LZ compresses well).
pub(crate) fn looks_incompressible(chunk: &[u8]) -> bool {
    high_entropy(chunk) && few_repeats(&chunk[..chunk.len().min(16 * 1024)])
}

fn few_repeats(s: &[u8]) -> bool {
    if s.len() < 8 {
        return false;
    }
    let mut table = [0u16; 4096];
    let mut repeats = 0usize;
    for i in 0..s.len() - 3 {
        let v = u32::from_le_bytes([s[i], s[i + 1], s[i + 2], s[i + 3]]);
        let h = (v.wrapping_mul(2_654_435_761) >> 20) as usize;
        let prev = usize::from(table[h]);
        if prev != 0 && s[prev - 1..prev + 3] == s[i..i + 4] {
            repeats += 1;
        }
        table[h] = (i + 1) as u16;
    }
    repeats * 64 < s.len()
}

fn high_entropy(chunk: &[u8]) -> bool {
    // About 4096 evenly spread samples: a few microseconds per 64 KiB chunk,
    // which matters when the data deflates at gigabytes per second.
    let mut hist = [0u32; 256];
    let mut n = 0u32;
    for b in chunk.iter().step_by((chunk.len() / 4096).max(1)) {
        hist[usize::from(*b)] += 1;
        n += 1;
    }
    let nf = f64::from(n);
    let bits: f64 = hist
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / nf;
            -p * p.log2()
        })
        .sum();
    // A small sample cannot show 8 bits: its maximum is log2(n). Compare
    // with the expectation for uniform bytes at this sample size instead.
    let ceiling = 8.0 - 255.0 / (2.0 * nf * std::f64::consts::LN_2);
    bits > ceiling - 0.1
}

/// Outcome of one decoder step.
pub(crate) struct Step {
    /// Input bytes consumed.
    pub consumed: usize,
    /// Output bytes produced.
    pub produced: usize,
    /// The compressed stream ended.
    pub done: bool,
}

/// Why a decoder step failed.
#[derive(Debug)]
pub(crate) enum DecodeError {
    /// inflate's message.
    Deflate(String),
    /// zstdkit's error, positioned in the entry's compressed data.
    Zstd(zstdkit::Error),
}

impl DecodeError {
    /// The crate error for this failure in entry `name`.
    pub(crate) fn in_entry(self, name: String) -> Error {
        match self {
            DecodeError::Deflate(detail) => Error::Corrupt { name, detail },
            DecodeError::Zstd(source) => Error::Zstd { name, source },
        }
    }
}

/// A streaming decompressor.
pub(crate) enum Decoder {
    /// Copies input; the caller bounds it by the compressed size.
    Store,
    /// Raw inflate.
    Deflate(Box<Decompress>),
    /// zstd through zstdkit's sans-I/O step, with zstdkit's default memory
    /// limit (a 128 MiB window, as the `zstd` CLI's), checked on every
    /// frame before it is decoded.
    Zstd(Box<zstdkit::RawDecoder>),
}

impl Decoder {
    /// Builds the decoder for a ZIP method id, or None if unsupported.
    /// A deflate decoder reuses `spare` (reset) when there is one: its
    /// state and 32 KiB window are 46 KiB, and a fresh one per entry, freed
    /// between long-lived small allocations, left glibc's heap growing by
    /// that much per entry (RSS of 490 MB extracting 26,000 files).
    pub(crate) fn for_method(method: u16, spare: Option<Box<Decompress>>) -> Option<Decoder> {
        match method {
            crate::format::METHOD_STORED => Some(Decoder::Store),
            crate::format::METHOD_DEFLATE => Some(Decoder::Deflate(match spare {
                Some(mut d) => {
                    d.reset(false);
                    d
                }
                None => Box::new(Decompress::new(false)),
            })),
            // zstdkit fails here only when it cannot allocate a context.
            crate::format::METHOD_ZSTD => {
                Some(Decoder::Zstd(Box::new(zstdkit::RawDecoder::new().ok()?)))
            }
            _ => None,
        }
    }

    /// The deflate state inside, for the next entry's decoder to reuse.
    pub(crate) fn into_inflater(self) -> Option<Box<Decompress>> {
        match self {
            Decoder::Deflate(d) => Some(d),
            _ => None,
        }
    }

    /// Whether the stream marks its own end (so no size is needed to find it).
    pub(crate) fn self_terminating(&self) -> bool {
        !matches!(self, Decoder::Store)
    }

    /// Decodes from `input` into `out`.
    pub(crate) fn step(&mut self, input: &[u8], out: &mut [u8]) -> Result<Step, DecodeError> {
        match self {
            Decoder::Store => {
                let n = input.len().min(out.len());
                out[..n].copy_from_slice(&input[..n]);
                Ok(Step {
                    consumed: n,
                    produced: n,
                    done: false,
                })
            }
            Decoder::Deflate(d) => {
                let (i0, o0) = (d.total_in(), d.total_out());
                let st = d
                    .decompress(input, out, FlushDecompress::None)
                    .map_err(|e| DecodeError::Deflate(e.to_string()))?;
                Ok(Step {
                    consumed: (d.total_in() - i0) as usize,
                    produced: (d.total_out() - o0) as usize,
                    done: st == Status::StreamEnd,
                })
            }
            Decoder::Zstd(d) => {
                let step = d.decode(input, out).map_err(DecodeError::Zstd)?;
                // The entry's data ends with its first frame (once all of
                // its output is out), as it always has; what follows is read
                // as whatever follows entry data (a data descriptor, or a
                // compressed-size mismatch).
                Ok(Step {
                    consumed: step.consumed,
                    produced: step.produced,
                    done: step.frame_ended,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests;
