#![no_main]
//! Stream framer fed in data-dependent chunks, then the parser on each frame.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fixcore::fuzzing::frame_stream(data));
