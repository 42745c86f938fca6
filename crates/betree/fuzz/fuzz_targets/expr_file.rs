//! Reference expression file reader (Erlang terms): arbitrary bytes must give
//! a typed error, never a panic; what reads must write back the same.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| betree::fuzzing::expr_file(data));
