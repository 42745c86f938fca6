//! Untrusted bytes as a patch against a fixed reference
//! (`zstdkit::fuzzing::patch`): applying it must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zstdkit::fuzzing::patch(data));
