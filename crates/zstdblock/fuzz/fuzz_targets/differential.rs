//! Untrusted bytes into zstdblock and libzstd's one-shot decoder
//! (`ZSTD_decompressDCtx`): the same output, or both an error. The one
//! allowance is input zstdblock refuses by the RFC where libzstd is laxer
//! (`Error::libzstd_may_accept`), and legacy frames, which libzstd still
//! reads and zstdblock does not.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// More output than this is refused by both (ours: `OutputLimit`; libzstd:
/// its buffer is full), so an RLE-heavy input cannot exhaust memory.
const MAX_OUTPUT: usize = 8 << 20;

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
