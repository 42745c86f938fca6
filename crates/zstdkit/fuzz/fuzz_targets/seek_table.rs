//! Untrusted bytes as a seekable file's tail (`zstdkit::fuzzing::seek_table`):
//! reading the seek table must never panic, and what it reads must encode
//! back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zstdkit::fuzzing::seek_table(data));
