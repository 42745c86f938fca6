#![no_main]
//! QuickFIX file store reader: any four files give a typed result, never
//! a panic, and a repaired store keeps what is stored in it next.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fixsession::fuzzing::store_files(data));
