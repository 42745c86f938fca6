#![no_main]
//! Settings reader: any bytes give a typed result, never a panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fixsession::fuzzing::settings_text(data));
