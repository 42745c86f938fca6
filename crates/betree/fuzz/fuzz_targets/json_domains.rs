//! JSON domain file reader: arbitrary bytes must give a typed error, never a
//! panic; accepted domains must survive the Erlang domain list.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| betree::fuzzing::json_domains(data));
