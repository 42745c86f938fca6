#![no_main]
//! Parser: any bytes give a typed result, never a panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fixcore::fuzzing::parse_one(data));
