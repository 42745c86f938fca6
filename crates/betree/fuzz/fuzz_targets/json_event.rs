//! JSON event reader: arbitrary bytes must give a typed error, never a panic.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| betree::fuzzing::json_event(data));
