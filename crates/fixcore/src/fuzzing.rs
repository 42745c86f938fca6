//! Bodies of the fuzz targets in `fuzz/`, kept in the library so `cargo
//! test` runs them over seeds and the fuzzer and the tests exercise the same
//! code.

use crate::frame::Framer;
use crate::parse::Parser;
use std::cell::RefCell;

thread_local! {
    // Reused, as in production: stale generation-stamped table entries from
    // earlier inputs are part of what is being tested.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Parses `data` as one message and walks every accessor; must not panic.
pub fn parse_one(data: &[u8]) {
    PARSER.with_borrow_mut(|p| parse_with(p, data));
}

fn parse_with(p: &mut Parser, data: &[u8]) {
    if let Ok(m) = p.parse(data) {
        for f in m.fields() {
            let _ = (f.int(), f.decimal(), f.timestamp(), f.bool(), f.char());
            let got = m.field(f.tag);
            // Top-level tags resolve; group members are reached via groups.
            if let Some(g) = got {
                assert_eq!(g.tag, f.tag);
            }
        }
        let _ = m.nodes();
    }
}

/// Feeds `data` to a framer in chunks whose sizes come from the data itself
/// and parses every frame; must not panic, and every frame it yields must
/// start with `8=` and end with SOH.
pub fn frame_stream(data: &[u8]) {
    PARSER.with_borrow_mut(|p| frame_with(p, data));
}

fn frame_with(p: &mut Parser, data: &[u8]) {
    let mut fr = Framer::new(4096);
    let mut i = 0;
    let mut k = 0usize;
    while i < data.len() {
        let step = 1 + (usize::from(data[k % data.len()]) % 97);
        k += 1;
        let end = (i + step).min(data.len());
        fr.push(&data[i..end]);
        i = end;
        while let Some(r) = fr.next_frame() {
            if let Ok(frame) = r {
                assert!(frame.starts_with(b"8="));
                assert_eq!(frame.last(), Some(&1));
                let _ = p.parse(frame);
            }
        }
    }
}

/// Reads `data` as a QuickFIX XML data dictionary; must not panic or hang,
/// and every message it accepts is found again by its MsgType.
pub fn dictionary_xml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(d) = crate::dictionary::DataDictionary::parse(&text) {
        for m in &d.messages {
            assert!(d.message(&m.msg_type).is_some());
            for i in &m.items {
                let _ = d.check_field(i.tag(), data.get(..3).unwrap_or(b"1"));
            }
        }
    }
}
