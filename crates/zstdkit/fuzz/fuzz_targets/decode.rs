//! Untrusted bytes into both decoders (`zstdkit::fuzzing::decode`):
//! neither may panic, and a one-shot success must be matched by the
//! streaming decoder.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zstdkit::fuzzing::decode(data));
