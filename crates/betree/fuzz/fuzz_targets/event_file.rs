//! Reference event file reader (Erlang lists of 0/1 or booleans): arbitrary
//! bytes must give a typed error, never a panic; what reads must write back
//! the same.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| betree::fuzzing::event_file(data));
