#![no_main]
//! `perfkit report merge` on one interval log of any bytes: a report or a
//! typed error, never a panic, an abort or memory past libFuzzer's limit.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfkit_report::fuzzing::hlog_merge(data));
