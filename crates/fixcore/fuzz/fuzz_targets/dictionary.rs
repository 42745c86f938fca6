#![no_main]
//! Data dictionary reader: any bytes give a typed result, never a panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fixcore::fuzzing::dictionary_xml(data));
