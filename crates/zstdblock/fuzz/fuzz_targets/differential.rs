//! Untrusted bytes into zstdblock (one thread, and its pipeline on two,
//! and its survey of a file's headers) and libzstd's one-shot decoder
//! (`ZSTD_decompressDCtx`): the same output, or both an error. The one
//! allowance is input zstdblock refuses by the RFC where libzstd is laxer
//! (`Error::libzstd_may_accept`), and legacy frames, which libzstd still
//! reads and zstdblock does not.
//!
//! Run without leak detection (`-detect_leaks=0`, as `cargo xtask fuzz`
//! runs it): the pipeline's threads free their thread-locals as the OS
//! thread exits, after the pipeline has returned, and a leak check in
//! between reports them; the crate allocates only through safe Rust (its
//! one unsafe block is a prefetch), with no leak to find.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zstdblock::StreamError;

/// A writer refusing more than [`MAX_OUTPUT`] bytes in all.
struct Bounded(Vec<u8>);

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MAX_OUTPUT {
            return Err(std::io::Error::other("past the output limit"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The fuzzed bytes read by position, as [`zstdblock::survey`] reads a
/// file.
struct ByPosition<'a>(&'a [u8]);

impl std::os::unix::fs::FileExt for ByPosition<'_> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let start = usize::try_from(offset).map_or(self.0.len(), |o| o.min(self.0.len()));
        let n = buf.len().min(self.0.len() - start);
        buf[..n].copy_from_slice(&self.0[start..start + n]);
        Ok(n)
    }

    fn write_at(&self, _: &[u8], _: u64) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// More output than this is refused by both (ours: `OutputLimit`; libzstd:
/// its buffer is full), so an RLE-heavy input cannot exhaust memory.
const MAX_OUTPUT: usize = 8 << 20;

/// The pipeline with two workers whatever the input's size.
const PIPELINE: zstdblock::parallel::Parallel = zstdblock::parallel::Parallel {
    threads: 2,
    window_limit: u64::MAX,
    min_input: 0,
};

fuzz_target!(|data: &[u8]| {
    let ours = zstdblock::decode_all_bounded(data, u64::MAX, MAX_OUTPUT as u64);
    // The streaming shape, holding a window, agrees with the one-shot one.
    let mut streamed = Vec::new();
    let stream = zstdblock::decode_to(data, u64::MAX, |bytes| {
        if streamed.len() + bytes.len() > MAX_OUTPUT {
            return Err(());
        }
        streamed.extend_from_slice(bytes);
        Ok(())
    });
    match (&ours, &stream) {
        (Ok(all), Ok(_)) => assert!(*all == streamed, "decode_to differs from decode_all"),
        (Ok(_), Err(e)) => panic!("decode_all succeeds, decode_to fails: {e:?}"),
        (Err(_), Err(_)) => {}
        // Past the output limit only decode_all stops on its own.
        (Err(zstdblock::Error::OutputLimit { .. }), Ok(_)) => {}
        (Err(e), Ok(_)) => panic!("decode_all fails ({e}), decode_to succeeds"),
    }
    // The pipeline (two entropy workers, whatever the input's size) gives
    // the one-thread bytes, or the one-thread error.
    let mut piped = Bounded(Vec::new());
    let piped_result = PIPELINE.decode(data, &mut piped);
    match (piped_result, &stream) {
        (Ok(_), Ok(_)) => assert!(piped.0 == streamed, "the pipeline differs from decode_to"),
        (Err(StreamError::Decode(a)), Err(StreamError::Decode(b))) => {
            assert_eq!(&a, b, "the pipeline fails otherwise than decode_to")
        }
        (Ok(_), Err(StreamError::Decode(e))) => {
            panic!("decode_to fails ({e}), the pipeline succeeds")
        }
        (Err(StreamError::Decode(e)), Ok(_)) => {
            panic!("the pipeline fails ({e}), decode_to succeeds")
        }
        // Past the output limit: where each stops depends on its buffering.
        (Err(StreamError::Sink(_)), _) | (_, Err(StreamError::Sink(_))) => {}
        (Err(StreamError::Input(e)), _) => panic!("reading a slice failed: {e}"),
        (_, Err(StreamError::Input(e))) => panic!("reading a slice failed: {e}"),
    }
    // The survey (headers read by position) never panics; a first frame
    // the decoder took whole surveys, declaring what libzstd reads.
    let surveyed = zstdblock::survey(&ByPosition(data), data.len() as u64, u64::MAX, |_| u64::MAX)
        .expect("reading a slice by position");
    if data.starts_with(&zstdblock::MAGIC.to_le_bytes()) {
        if ours.is_ok() {
            assert!(
                surveyed.is_some(),
                "the decoder takes what the survey refuses"
            );
        }
        if let (Some(s), Ok(declared)) = (surveyed, zstd_safe::get_frame_content_size(data)) {
            assert_eq!(
                s.declared, declared,
                "the survey and libzstd read other sizes"
            );
        }
    }
    let mut theirs = Vec::with_capacity(MAX_OUTPUT);
    let verdict = zstd_safe::DCtx::create().decompress(&mut theirs, data);
    match (ours, verdict) {
        (Ok(ours), Ok(_)) => assert!(ours == theirs, "both succeed with different bytes"),
        (Err(_), Err(_)) => {}
        (Err(e), Ok(_)) => assert!(
            e.libzstd_may_accept()
                || matches!(
                    e,
                    zstdblock::Error::BadMagic {
                        magic: 0xFD2F_B51E..=0xFD2F_B527,
                        ..
                    }
                ),
            "ours fails ({e}), libzstd succeeds"
        ),
        (Ok(ours), Err(code)) => panic!(
            "ours succeeds ({} bytes), libzstd fails ({})",
            ours.len(),
            zstd_safe::get_error_name(code)
        ),
    }
});
