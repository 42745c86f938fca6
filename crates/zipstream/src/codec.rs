//! Compression engines behind one buffer-to-buffer interface, so the writer
//! core and both readers drive store, deflate and zstd the same way.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use crate::entry::Method;

/// How much spare room to give the encoder per call; large enough that
/// zlib-rs works on long runs, small enough to keep memory flat.
const OUT_STEP: usize = 64 * 1024;

/// A streaming compressor writing raw method bytes (no zlib/zstd wrappers beyond
/// what the ZIP method defines).
pub(crate) enum Encoder {
    /// Copies input.
    Store,
    /// Raw deflate (no zlib header) via flate2 + zlib-rs.
    Deflate(Box<Compress>),
}

impl Encoder {
    /// Builds the encoder for `method` at `level`.
    pub(crate) fn new(method: Method, level: u32) -> Encoder {
        match method {
            Method::Stored => Encoder::Store,
            Method::Deflate => Encoder::Deflate(Box::new(Compress::new(
                Compression::new(level.min(9)),
                false,
            ))),
        }
    }

    /// Compresses all of `input`, appending whatever output is ready to `out`.
    pub(crate) fn encode(&mut self, input: &[u8], out: &mut Vec<u8>) {
        match self {
            Encoder::Store => out.extend_from_slice(input),
            Encoder::Deflate(c) => deflate_into(c, input, out, FlushCompress::None),
        }
    }

    /// Compresses `input` then emits a sync point: the output so far is a
    /// complete prefix, byte-aligned, so its length is exact.
    pub(crate) fn encode_sync(&mut self, input: &[u8], out: &mut Vec<u8>) {
        match self {
            Encoder::Store => out.extend_from_slice(input),
            Encoder::Deflate(c) => deflate_into(c, input, out, FlushCompress::Sync),
        }
    }

    /// Ends the stream.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        match self {
            Encoder::Store => {}
            Encoder::Deflate(c) => deflate_into(c, &[], out, FlushCompress::Finish),
        }
    }
}

fn deflate_into(c: &mut Compress, mut input: &[u8], out: &mut Vec<u8>, flush: FlushCompress) {
    loop {
        if out.capacity() - out.len() < 1024 {
            out.reserve(OUT_STEP.max(input.len() / 2));
        }
        let before_in = c.total_in();
        // A raw in-memory deflate only fails on a misuse of the API (e.g. a
        // stream already finished), which this module never does.
        let status = c
            .compress_vec(input, out, flush)
            .expect("deflate stream state is valid");
        input = &input[(c.total_in() - before_in) as usize..];
        if flush == FlushCompress::Finish {
            if status == Status::StreamEnd {
                return;
            }
        } else if input.is_empty() && out.capacity() > out.len() {
            // zlib semantics: a flush is complete when the call returns with
            // output space left over.
            return;
        }
    }
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

/// A streaming decompressor.
pub(crate) enum Decoder {
    /// Copies input; the caller bounds it by the compressed size.
    Store,
    /// Raw inflate.
    Deflate(Box<Decompress>),
}

impl Decoder {
    /// Builds the decoder for a ZIP method id, or None if unsupported.
    pub(crate) fn for_method(method: u16) -> Option<Decoder> {
        match method {
            crate::format::METHOD_STORED => Some(Decoder::Store),
            crate::format::METHOD_DEFLATE => {
                Some(Decoder::Deflate(Box::new(Decompress::new(false))))
            }
            _ => None,
        }
    }

    /// Whether the stream marks its own end (so no size is needed to find it).
    pub(crate) fn self_terminating(&self) -> bool {
        !matches!(self, Decoder::Store)
    }

    /// Decodes from `input` into `out`. Errors are the decoder's message.
    pub(crate) fn step(&mut self, input: &[u8], out: &mut [u8]) -> Result<Step, String> {
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
                    .map_err(|e| e.to_string())?;
                Ok(Step {
                    consumed: (d.total_in() - i0) as usize,
                    produced: (d.total_out() - o0) as usize,
                    done: st == Status::StreamEnd,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inflate_all(data: &[u8]) -> Vec<u8> {
        let mut d = Decoder::for_method(8).unwrap();
        let mut out = vec![0u8; 1 << 20];
        let mut pos = 0;
        let mut inp = data;
        loop {
            let s = d.step(inp, &mut out[pos..]).unwrap();
            inp = &inp[s.consumed..];
            pos += s.produced;
            if s.done {
                break;
            }
            assert!(s.consumed + s.produced > 0, "no progress");
        }
        out.truncate(pos);
        out
    }

    #[test]
    fn deflate_round_trip_in_chunks_and_sync_points() {
        let data: Vec<u8> = (0..300_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 977) as u8)
            .collect();
        let mut e = Encoder::new(Method::Deflate, 6);
        let mut out = Vec::new();
        e.encode_sync(&data[..70_000], &mut out);
        // A sync flush leaves the stream ending in an empty stored block.
        assert_eq!(&out[out.len() - 4..], &[0, 0, 0xff, 0xff]);
        for c in data[70_000..].chunks(9_999) {
            e.encode(c, &mut out);
        }
        e.finish(&mut out);
        assert!(out.len() < data.len());
        assert_eq!(inflate_all(&out), data);
    }
}
