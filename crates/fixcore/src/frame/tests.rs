use super::*;
use proptest::prelude::*;

fn msg(body: &str) -> Vec<u8> {
    let body = body.replace('|', "\x01");
    let mut m = format!("8=FIX.4.4\x019={}\x01{}", body.len(), body).into_bytes();
    let sum: u32 = m.iter().map(|&b| u32::from(b)).sum();
    m.extend_from_slice(format!("10={:03}\x01", sum % 256).as_bytes());
    m
}

#[test]
fn the_session_cut_runs_a_bad_length_to_the_next_checksum() {
    let a = msg("35=0|34=2|49=TW|56=ISLD|");
    let b = msg("35=0|34=3|49=TW|56=ISLD|");
    let long = String::from_utf8(a.clone())
        .unwrap()
        .replacen("9=24", "9=40", 1)
        .into_bytes();
    let short = String::from_utf8(a.clone())
        .unwrap()
        .replacen("9=24", "9=10", 1)
        .into_bytes();
    for split in [1, 7, usize::MAX] {
        let frames = |first: &[u8]| {
            let mut f = Framer::new(1 << 16).session_cut();
            let stream = [first, &b[..], &a[..]].concat();
            let mut out = Vec::new();
            for chunk in stream.chunks(split.min(stream.len())) {
                f.push(chunk);
                while let Some(r) = f.next_frame() {
                    out.push(r.unwrap().to_vec());
                }
            }
            out
        };
        // Too long: the next message goes with it; QuickFIX's
        // 2m_BodyLengthValueNotCorrect counts on losing both.
        assert_eq!(frames(&long), [[&long[..], &b[..]].concat(), a.clone()]);
        // Too short: the frame is the message itself, length and all.
        assert_eq!(frames(&short), [short.clone(), b.clone(), a.clone()]);
    }
    // The default framer skips the bad frame and keeps the next.
    let (frames, errs) = run(&[&long, &b]);
    assert_eq!((frames, errs.len()), (vec![b.clone()], 1));
}

/// Drives a framer over `chunks`; returns Ok frames and error count.
fn run(chunks: &[&[u8]]) -> (Vec<Vec<u8>>, Vec<String>) {
    let mut f = Framer::new(1 << 16);
    let mut frames = Vec::new();
    let mut errs = Vec::new();
    for c in chunks {
        f.push(c);
        while let Some(r) = f.next_frame() {
            match r {
                Ok(m) => frames.push(m.to_vec()),
                Err(e) => errs.push(e.to_string()),
            }
        }
    }
    (frames, errs)
}

/// Hands out `data` in reads of the sizes of `sizes`, in turn.
struct Reads<'a> {
    data: &'a [u8],
    sizes: std::iter::Cycle<std::slice::Iter<'a, usize>>,
}

impl Read for Reads<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (*self.sizes.next().unwrap())
            .min(buf.len())
            .min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// A read's room is not cleared between reads (nor is what a frame
/// left behind), so a short read after a long one leaves stale bytes
/// past the new ones: none may reach a frame, a skip or `pending`,
/// whatever the reads, the pushes between them and the garbage.
#[test]
fn reads_into_reused_room_frame_only_what_was_read() {
    let a = msg("35=D|55=MSFT|38=100|");
    let b = msg("35=8|58=x=8=FIX|");
    let stream = [
        &a[..],
        b"\n",
        &b[..],
        b"junk",
        &a[..],
        b"\n\n",
        &b[..],
        b"8=FI",
    ]
    .concat();
    for sizes in [&[4096][..], &[97, 3, 40, 1], &[60, 200, 7]] {
        let mut f = Framer::new(64);
        let mut r = Reads {
            data: &stream,
            sizes: sizes.iter().cycle(),
        };
        let (mut frames, mut skipped) = (Vec::new(), 0);
        loop {
            let n = f.read_from(&mut r, 256).unwrap();
            while let Some(got) = f.next_frame() {
                match got {
                    Ok(m) => frames.push(m.to_vec()),
                    Err(Error::Garbage { skipped: k, .. }) => skipped += k,
                    Err(e) => panic!("{sizes:?}: {e}"),
                }
            }
            if n == 0 {
                break;
            }
        }
        assert_eq!(frames, [&a[..], &b, &a, &b], "{sizes:?}");
        // The line breaks and the junk; the partial marker is kept.
        assert_eq!(
            (skipped, f.pending()),
            (1 + 4 + 2, &b"8=FI"[..]),
            "{sizes:?}"
        );
        // A push after reads appends to what was read, not to the room.
        f.push(&a[4..]);
        assert_eq!(f.next_frame().unwrap().unwrap(), &a[..], "{sizes:?}");
        assert_eq!(f.into_pending(), b"", "{sizes:?}");
    }
}

#[test]
fn frames_byte_at_a_time() {
    let a = msg("35=D|55=MSFT|38=100|");
    let b = msg("35=8|58=x=8=FIX|");
    let stream = [a.clone(), b.clone()].concat();
    let chunks: Vec<&[u8]> = stream.chunks(1).collect();
    let (frames, errs) = run(&chunks);
    assert_eq!(frames, vec![a, b]);
    assert!(errs.is_empty(), "{errs:?}");
}

/// The framer goes by BodyLength, so a data field (RawData(96)) whose
/// value holds SOH, a CheckSum-like field and a BeginString frames
/// whole, however the stream is split, and parses.
#[test]
fn data_fields_holding_delimiters_frame_whole() {
    let a = msg("35=D|95=18|96=x|10=000|8=FIX.4.4|55=A|");
    let b = msg("35=D|55=B|");
    let stream = [a.clone(), b.clone(), a.clone()].concat();
    for size in [1, 5, 19, stream.len()] {
        let chunks: Vec<&[u8]> = stream.chunks(size).collect();
        let (frames, errs) = run(&chunks);
        assert_eq!(frames, vec![a.clone(), b.clone(), a.clone()], "{size}");
        assert!(errs.is_empty(), "{errs:?}");
    }
    let mut p = crate::parse::Parser::new();
    let m = p.parse(&a).unwrap();
    assert_eq!(m.get(96), Some(&b"x\x0110=000\x018=FIX.4.4"[..]));
}

#[test]
fn garbage_between_messages_is_reported_and_sync_kept() {
    let a = msg("35=D|55=A|");
    let b = msg("35=D|55=B|");
    let stream = [
        &a[..],
        b"GARBAGE\x01\x01==",
        &b[..],
        b"junk8=FI",
        b"X",
        &a[..],
    ]
    .concat();
    for size in [1, 3, 7, 64, stream.len()] {
        let chunks: Vec<&[u8]> = stream.chunks(size).collect();
        let (frames, errs) = run(&chunks);
        assert_eq!(
            frames,
            vec![a.clone(), b.clone(), a.clone()],
            "chunk size {size}"
        );
        assert!(!errs.is_empty());
        assert!(
            errs.iter()
                .all(|e| e.contains("garbage") || e.contains("bad frame")),
            "{errs:?}"
        );
    }
}

#[test]
fn wrong_body_length_is_skipped_without_losing_the_next_message() {
    let good = msg("35=D|55=A|");
    let bad = String::from_utf8(msg("35=D|55=LONGER|"))
        .unwrap()
        .replace("9=15", "9=99");
    let stream = [bad.as_bytes(), &good[..], &good[..], &good[..], &good[..]].concat();
    let (frames, errs) = run(&[&stream]);
    assert!(frames.len() >= 3, "{} frames, errs {errs:?}", frames.len());
    assert!(frames.iter().all(|f| *f == good));
    // "35=D|55=LONGER|" is 15 bytes, counted by hand.
    assert_eq!(
        errs[0],
        "bad frame at stream byte 0: BodyLength(9) at byte 10 says 99, body is 15 bytes"
    );
}

#[test]
fn body_length_errors_report_the_real_length() {
    let good = msg("35=D|55=A|");
    // Too short: the trailer BodyLength points at lies inside the body.
    let short = String::from_utf8(msg("35=D|55=LONGER|"))
        .unwrap()
        .replace("9=15", "9=5");
    let (frames, errs) = run(&[short.as_bytes(), &good[..]]);
    assert_eq!(frames, vec![good.clone()]);
    assert_eq!(
        errs[0],
        "bad frame at stream byte 0: BodyLength(9) at byte 10 says 5, body is 15 bytes"
    );
    // No CheckSum field anywhere after the header.
    let none = b"8=FIX.4.4\x019=5\x0135=D\x0155=NO-TRAILER-HERE\x01";
    let (frames, errs) = run(&[&none[..]]);
    assert!(frames.is_empty());
    assert_eq!(
        errs[0],
        "bad frame at stream byte 0: BodyLength(9) at byte 10 says 5, \
             but no CheckSum(10) field ends the body there or later in the bytes received"
    );
}

#[test]
fn oversized_and_malformed_headers() {
    let (frames, errs) = run(&[b"8=FIX.4.4\x019=999999999\x0135=D\x01"]);
    assert!(frames.is_empty());
    assert!(
        errs[0].contains("BodyLength(9) at byte 10 says 999999999: the message would run past the"),
        "{errs:?}"
    );
    // The second field is not BodyLength(9): the error names what is
    // there instead (a tag, or why it is no field).
    const BAD_TAG: &str = "bad tag at byte 10: not 1-9 digits without a leading zero";
    for (stream, want) in [
        (
            &b"8=FIX.4.4\x0135=D\x019=5\x01"[..],
            "field order: tag 35 at byte 10: BodyLength(9) must follow BeginString(8)",
        ),
        (
            // Longer than any BodyLength field: judged on its first bytes.
            b"8=FIX.4.4\x01123456789=ABCDEFGH\x01",
            "field order: tag 123456789 at byte 10: BodyLength(9) must follow BeginString(8)",
        ),
        (b"8=FIX.4.4\x011234567890123=D\x01", BAD_TAG),
        (b"8=FIX.4.4\x01=5\x01", "empty tag at byte 10"),
        (b"8=FIX.4.4\x01x9=5\x01", BAD_TAG),
        (b"8=FIX.4.4\x0195\x01", "field at byte 10 has no '='"),
        (
            b"8=FIX.4.4\x011234567890\x01",
            "field at byte 10 has no '='",
        ),
        (b"8=FIX.4.4\x011234567890=\x01", BAD_TAG),
        (b"8=FIX.4.4\x0112345678901=5\x01", BAD_TAG),
        (b"8=FIX.4.4\x019x=5\x01", BAD_TAG),
        (b"8=FIX.4.4\x010=5\x01", BAD_TAG),
        (
            b"8=FIX.4.4\x019=1234567890\x01",
            "tag 9 at byte 12: value is not a valid Length",
        ),
    ] {
        // The verdict is a property of the stream, not of how it was
        // split into reads: every chunk size, down to one byte at a time
        // as in `frames_byte_at_a_time`, must give the same error.
        for size in 1..=stream.len() {
            let chunks: Vec<&[u8]> = stream.chunks(size).collect();
            let (frames, errs) = run(&chunks);
            assert!(frames.is_empty());
            assert_eq!(
                errs.first().map(String::as_str),
                Some(&*format!("bad frame at stream byte 0: {want}")),
                "stream {:?} in chunks of {size}",
                String::from_utf8_lossy(stream)
            );
        }
    }
    // The reported split: tag 35 arriving as "3" then "5=D".
    let (frames, errs) = run(&[b"8=FIX.4.4\x013", b"5=D\x019=5\x01"]);
    assert!(frames.is_empty());
    assert_eq!(
        errs[0],
        "bad frame at stream byte 0: field order: tag 35 at byte 10: \
             BodyLength(9) must follow BeginString(8)"
    );
}

#[test]
fn fuzz_body_over_seeds() {
    for s in crate::parse::tests::seeds() {
        crate::fuzzing::frame_stream(&s);
        crate::fuzzing::frame_stream(&[s.clone(), b"xx".to_vec(), s].concat());
    }
}

proptest! {
    /// Oracle: whatever garbage (free of the marker) is interleaved and
    /// however the stream is chopped, every good message comes out intact
    /// and in order.
    #[test]
    fn good_messages_survive_garbage_and_chopping(
        bodies in proptest::collection::vec("[A-Z]{1,30}", 1..8),
        garbage in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 8),
        chunk in 1usize..50,
    ) {
        let msgs: Vec<Vec<u8>> = bodies.iter().map(|b| msg(&format!("35=D|58={b}|"))).collect();
        let mut stream = Vec::new();
        for (m, g) in msgs.iter().zip(&garbage) {
            let g: Vec<u8> = g.iter().map(|&b| if b == b'8' { b'7' } else { b }).collect();
            stream.extend_from_slice(&g);
            stream.extend_from_slice(m);
        }
        let chunks: Vec<&[u8]> = stream.chunks(chunk).collect();
        let (frames, _) = run(&chunks);
        prop_assert_eq!(frames, msgs);
    }
}
