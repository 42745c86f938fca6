//! Untrusted bytes into both decoders: neither may panic, and when both
//! succeed they must agree; a one-shot success must be matched by the
//! streaming decoder.
#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let one_shot = zstdkit::decompress(data);
    let mut streamed = Vec::new();
    let stream = zstdkit::Decoder::new(data)
        .expect("context")
        .read_to_end(&mut streamed)
        .map_err(zstdkit::Error::from_io);
    match (one_shot, stream) {
        (Ok(a), Ok(_)) => assert_eq!(a, streamed),
        (Ok(a), Err(e)) => panic!("one-shot decoded {} bytes, streaming failed: {e}", a.len()),
        _ => {}
    }
});
