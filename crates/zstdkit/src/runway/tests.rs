use std::io::Cursor;
use std::sync::atomic::{AtomicBool, Ordering};

use perfkit_testkit::noise::noise;

use super::*;
use crate::{Decompressor, Strategy};

/// Stretches of noise, text with long repeats and zeros: every kind of
/// block, and matches that reach back across whole windows.
fn mixed(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    let mut seed = 1;
    while v.len() < len {
        v.extend_from_slice(&noise(100_000, seed));
        let line = format!("record {seed} of a repetitive text, ");
        v.extend_from_slice(line.repeat(3_000).as_bytes());
        v.extend(std::iter::repeat_n(0u8, 50_000));
        seed += 1;
    }
    v.truncate(len);
    v
}

fn compress_all(mut enc: RunwayEncoder) -> (Vec<u8>, RunwayEncoder) {
    let mut out = Vec::new();
    // An odd buffer size splits frame headers and blocks across calls.
    let mut buf = vec![0u8; 7_001];
    loop {
        let n = enc.compress(&mut buf).expect("compresses");
        if n == 0 {
            return (out, enc);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

fn frames(mut src: &[u8]) -> usize {
    let mut n = 0;
    while !src.is_empty() {
        let len = zstd_safe::find_frame_compressed_size(src).expect("a whole frame");
        src = &src[len..];
        n += 1;
    }
    n
}

#[test]
fn every_strategy_round_trips_while_pages_are_given_back() {
    // A 1 KiB window: pages fall out of it as soon as the margin is
    // passed, so a read behind the window would fault here.
    let data = mixed(6 << 20);
    for strategy in Strategy::ALL {
        let params = Params::for_level(3)
            .strategy(Some(strategy))
            .window_log(Some(10));
        let size = Some(data.len() as u64);
        let runway = Runway::reserve(size).expect("address space");
        let source = Box::new(Cursor::new(data.clone()));
        let enc = RunwayEncoder::new(runway, params, None, size, source).unwrap();
        let (frame, enc) = compress_all(enc);
        assert!(enc.released > 0, "{strategy:?}: nothing was given back");
        assert_eq!(enc.consumed(), data.len() as u64);
        assert_eq!(frames(&frame), 1);
        assert!(crate::decompress(&frame).unwrap() == data, "{strategy:?}");
    }
}

#[test]
fn pages_fallen_out_of_the_window_are_moved_ahead_not_faulted_anew() {
    // 20 MiB through a 1 KiB window: after the first few steps, every step
    // the reader commits can take the pages of one the encoder let go.
    let data = mixed(20 << 20);
    let params = Params::for_level(1).window_log(Some(10));
    let size = Some(data.len() as u64);
    let runway = Runway::reserve(size).expect("address space");
    let source = Box::new(Cursor::new(data.clone()));
    let enc = RunwayEncoder::new(runway, params, None, size, source).unwrap();
    let (frame, enc) = compress_all(enc);
    let steps = (data.len() / STEP) as u64;
    assert!(
        enc.recycled() + 4 >= steps,
        "{} of {steps} steps recycled",
        enc.recycled()
    );
    assert!(crate::decompress(&frame).unwrap() == data);
}

#[test]
fn levels_and_long_mode_round_trip_from_an_unknown_size() {
    let data = mixed(5 << 20);
    for params in [
        Params::for_level(-5),
        Params::for_level(1),
        Params::for_level(9),
        Params::for_level(3).long(Some(20)).checksum(false),
    ] {
        let runway = Runway::reserve(None).expect("address space");
        let source = Box::new(Cursor::new(data.clone()));
        let (frame, _) =
            compress_all(RunwayEncoder::new(runway, params, None, None, source).unwrap());
        assert!(crate::decompress(&frame).unwrap() == data, "{params:?}");
    }
}

#[test]
fn an_input_longer_than_the_runway_continues_in_new_frames() {
    let data = mixed(21 << 20);
    let runway = Runway::map(8 << 20).expect("address space");
    let source = Box::new(Cursor::new(data.clone()));
    let enc = RunwayEncoder::new(runway, Params::for_level(1), None, None, source).unwrap();
    let (out, enc) = compress_all(enc);
    assert_eq!(enc.consumed(), data.len() as u64);
    assert_eq!(frames(&out), 3, "8 + 8 + 5 MiB");
    assert!(crate::decompress(&out).unwrap() == data);
}

#[test]
fn a_dictionary_is_used_and_needed() {
    let dict = b"record of a repetitive text, ".repeat(200);
    let data = mixed(3 << 20);
    let runway = Runway::reserve(None).expect("address space");
    let source = Box::new(Cursor::new(data.clone()));
    let params = Params::for_level(3);
    let (frame, _) =
        compress_all(RunwayEncoder::new(runway, params, Some(&dict), None, source).unwrap());
    assert!(
        crate::decompress(&frame).is_err(),
        "decoded without its dictionary"
    );
    let mut d = Decompressor::with_dictionary(&dict).unwrap();
    assert!(d.decompress(&frame).unwrap() == data);
}

#[test]
fn an_input_of_another_size_than_declared_is_an_error() {
    let data = mixed(3 << 20);
    for declared in [data.len() as u64 - 1, data.len() as u64 + 1] {
        let runway = Runway::reserve(Some(declared)).expect("address space");
        let source = Box::new(Cursor::new(data.clone()));
        let mut enc =
            RunwayEncoder::new(runway, Params::for_level(3), None, Some(declared), source).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let err = loop {
            match enc.compress(&mut buf) {
                Ok(0) => panic!("declared {declared}: finished a frame of the wrong size"),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert!(matches!(err, Error::Zstd(_)), "{err:?}");
    }
}

/// Yields `good` bytes of zeros, then fails.
struct FailsAfter(usize);

impl Read for FailsAfter {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.0 == 0 {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, "no more"));
        }
        let n = buf.len().min(self.0);
        buf[..n].fill(0);
        self.0 -= n;
        Ok(n)
    }
}

#[test]
fn a_read_error_comes_out_with_its_kind() {
    let runway = Runway::reserve(None).expect("address space");
    let source = Box::new(FailsAfter(3 << 20));
    let enc = RunwayEncoder::new(runway, Params::for_level(3), None, None, source).unwrap();
    let err = std::io::read_to_string(enc).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
}

#[test]
fn a_call_after_an_error_fails_again() {
    let runway = Runway::reserve(None).expect("address space");
    let source = Box::new(FailsAfter(1 << 20));
    let mut enc = RunwayEncoder::new(runway, Params::for_level(3), None, None, source).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let first = loop {
        if let Err(e) = enc.compress(&mut buf) {
            break e;
        }
    };
    assert!(matches!(first, Error::Io(ref e) if e.kind() == io::ErrorKind::PermissionDenied));
    let again = enc.compress(&mut buf).unwrap_err();
    assert!(matches!(again, Error::Io(ref e) if e.kind() == io::ErrorKind::PermissionDenied));
}

/// Panics on its first read.
struct Panics;

impl Read for Panics {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        panic!("a source that panics");
    }
}

#[test]
fn a_reader_that_panics_is_an_error_not_a_hang() {
    let runway = Runway::reserve(None).expect("address space");
    let enc =
        RunwayEncoder::new(runway, Params::for_level(3), None, None, Box::new(Panics)).unwrap();
    let err = std::io::read_to_string(enc).unwrap_err();
    assert!(err.to_string().contains("panicked"), "{err}");
}

/// An endless source that records when it is dropped.
struct Endless(Arc<AtomicBool>);

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        buf.fill(b'x');
        Ok(buf.len())
    }
}

impl Drop for Endless {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn dropping_the_encoder_stops_its_reader() {
    let dropped = Arc::new(AtomicBool::new(false));
    let runway = Runway::reserve(None).expect("address space");
    let source = Box::new(Endless(Arc::clone(&dropped)));
    let mut enc = RunwayEncoder::new(runway, Params::for_level(1), None, None, source).unwrap();
    let mut buf = vec![0u8; 4096];
    assert!(enc.compress(&mut buf).unwrap() > 0);
    drop(enc);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !dropped.load(Ordering::SeqCst) {
        assert!(
            std::time::Instant::now() < deadline,
            "the reader kept reading"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn workers_are_refused() {
    let runway = Runway::reserve(None).expect("address space");
    let source = Box::new(Cursor::new(Vec::new()));
    let err = RunwayEncoder::new(runway, Params::for_level(3).workers(2), None, None, source)
        .unwrap_err();
    assert!(matches!(
        err,
        Error::Parameter {
            name: "workers",
            ..
        }
    ));
}

#[test]
fn an_empty_input_is_one_empty_frame() {
    let runway = Runway::reserve(Some(0)).expect("address space");
    let source = Box::new(Cursor::new(Vec::new()));
    let enc = RunwayEncoder::new(runway, Params::for_level(3), None, Some(0), source).unwrap();
    let (frame, _) = compress_all(enc);
    assert_eq!(frames(&frame), 1);
    assert!(crate::decompress(&frame).unwrap().is_empty());
}
