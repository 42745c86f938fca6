//! Extraction: any bytes, no panic, and nothing outside the destination
//! changes (no file, no link that resolves outside it).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| zipstream::fuzzing::extract_confined(data));
