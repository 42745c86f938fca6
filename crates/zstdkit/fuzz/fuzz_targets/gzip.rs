//! Untrusted bytes after gzip's magic through the file tool's gzip
//! decoder (`zstdkit::fuzzing::gzip`): it must never panic, and must
//! agree with flate2's own reader wherever that one decodes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zstdkit::fuzzing::gzip(data));
