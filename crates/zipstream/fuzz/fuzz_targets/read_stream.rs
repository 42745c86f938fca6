//! Streaming reader: any bytes, no panic.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| zipstream::fuzzing::streaming(data));
