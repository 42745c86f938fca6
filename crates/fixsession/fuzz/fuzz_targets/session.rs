#![no_main]
//! Session state machine: any script of messages, ticks and reconnects
//! leaves it sending only valid messages, never panicking.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fixsession::fuzzing::session_script(data));
