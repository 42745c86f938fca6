//! Untrusted bytes as an input of several frames
//! (`zstdkit::fuzzing::frames`): the parallel decoder must never panic and
//! must agree with the one-shot decoder whenever that one decodes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zstdkit::fuzzing::frames(data));
