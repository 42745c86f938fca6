//! Expression parser and checker: arbitrary text must give a typed error,
//! never a panic; what parses must also evaluate.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| betree::fuzzing::expression(data));
