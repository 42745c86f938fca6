//! Length/Data pairs: values that hold SOH and `=`, lying lengths, and the
//! dictionary deciding which tags pair.

use super::*;

/// Frames a body of raw bytes (starting at 35=), computing BodyLength and
/// CheckSum here, independently of the builder and the parser.
fn frame_bytes(body: &[u8]) -> Vec<u8> {
    let mut m = format!("8=FIX.4.4\x019={}\x01", body.len()).into_bytes();
    m.extend_from_slice(body);
    let sum: u32 = m.iter().map(|&b| u32::from(b)).sum();
    m.extend_from_slice(format!("10={:03}\x01", sum % 256).as_bytes());
    m
}

#[test]
fn data_field_may_hold_soh_and_equals() {
    // RawData(96) = "a<SOH>b=c<SOH>d": 7 bytes, two SOH and an '='.
    let m = frame("35=D|95=7|96=a|b=c|d|55=X|");
    for path in ScanPath::available() {
        let mut p = Parser::new();
        p.set_scan_path(path).unwrap();
        let msg = p.parse(&m).unwrap();
        assert_eq!(msg.get(96), Some(&b"a\x01b=c\x01d"[..]), "{path:?}");
        assert_eq!(msg.int(95).unwrap(), 7);
        assert_eq!(msg.get(55), Some(&b"X"[..]));
        assert_eq!(msg.field_count(), 7);
        let tags: Vec<u32> = msg.fields().map(|f| f.tag).collect();
        assert_eq!(tags, [8, 9, 35, 95, 96, 55, 10]);
    }
    // Every standard pair, data at the end of the body, in the header
    // place of SecureData(91), and a value made only of delimiters.
    for (l, d) in crate::groups::STANDARD_DATA_PAIRS {
        for data in [&b"\x01"[..], b"=", b"\x01=\x01", b"10=000\x01", b"x"] {
            let mut body = format!("35=B\x01{l}={}\x01{d}=", data.len()).into_bytes();
            body.extend_from_slice(data);
            body.push(SOH);
            let m = frame_bytes(&body);
            let mut p = Parser::new();
            let msg = p
                .parse(&m)
                .unwrap_or_else(|e| panic!("{l}/{d} {data:?}: {e}"));
            assert_eq!(msg.get(d), Some(data));
            let mut q = Parser::new();
            assert_eq!(outcome(q.parse_by_passes(&m)), outcome(p.parse(&m)));
        }
    }
}

#[test]
fn lying_lengths_are_typed_errors_naming_tag_and_position() {
    let data_err = |body: &str| -> (u32, u32, usize, usize, usize, &'static str) {
        let m = frame(body);
        let e = parse_err(&m);
        let mut q = Parser::new();
        assert_eq!(
            format!("{e:?}"),
            format!("{:?}", q.parse_by_passes(&m).map(|_| ()).unwrap_err())
        );
        match e {
            Error::DataLength {
                tag,
                data_tag,
                pos,
                declared,
                at,
                why,
            } => (tag, data_tag, pos, declared, at, why),
            other => panic!("{body}: {other:?}"),
        }
    };
    // "8=FIX.4.4|9=NN|" is 15 bytes: 35= starts at 15, 95= at 20.
    // Longer than the data: the byte where the data should end is 'b'...
    let (tag, data_tag, pos, declared, at, why) = data_err("35=D|95=2|96=a|b=c|d|55=X|");
    assert_eq!((tag, data_tag, pos, declared), (95, 96, 20, 2));
    assert_eq!(
        (at, why),
        (30, "no SOH ends the data where its length says")
    );
    // Shorter than its data.
    let (_, _, _, declared, at, _) = data_err("35=D|95=9|96=a|b=c|d|55=X|");
    assert_eq!((declared, at), (9, 37));
    // Past the end of the message.
    let (_, _, _, declared, _, why) = data_err("35=D|95=900|96=a|b=c|d|55=X|");
    assert_eq!(
        (declared, why),
        (900, "the message ends before the data does")
    );
    // Not followed by its data field.
    let (tag, data_tag, _, _, at, why) = data_err("35=D|95=1|55=X|96=a|");
    assert_eq!((tag, data_tag, at), (95, 96, 25));
    assert_eq!(why, "the next field is not the data field");
    let (tag, data_tag, ..) = data_err("35=D|93=1|96=a|");
    assert_eq!((tag, data_tag), (93, 89));
    // The Length is the last field before CheckSum.
    let (tag, ..) = data_err("35=D|95=1|");
    assert_eq!(tag, 95);

    // A data field with no Length before it.
    let m = frame("35=D|96=abc|");
    assert!(matches!(
        parse_err(&m),
        Error::DataWithoutLength {
            tag: 96,
            length_tag: 95,
            pos: 20
        }
    ));
    // A Length that is no length.
    for bad in ["x", "-1", "07", "1.0"] {
        let m = frame(&format!("35=D|95={bad}|96=a|"));
        assert!(
            matches!(
                parse_err(&m),
                Error::BadValue {
                    tag: 95,
                    pos: 23,
                    ..
                }
            ),
            "{bad}"
        );
    }
    // Zero: the data field would be empty, which FIX forbids.
    let m = frame("35=D|95=0|96=|");
    assert!(matches!(
        parse_err(&m),
        Error::EmptyValue { tag: 96, pos: 25 }
    ));
    let text = parse_err(&frame("35=D|95=2|96=a|b=c|d|55=X|")).to_string();
    assert_eq!(
        text,
        "Length field 95 at byte 20 declares 2 bytes for data field 96: \
         no SOH ends the data where its length says at byte 30"
    );
}

#[test]
fn dictionary_decides_the_data_pairs() {
    let m = frame("35=D|95=3|96=a|b|");
    // Without pairs, RawData ends at its first SOH, and "b" is no field.
    let mut bare = Parser::with_dictionary(Arc::new(Dictionary::empty()));
    assert!(matches!(bare.parse(&m), Err(Error::MissingEquals { .. })));
    // User-defined pairs, above the direct table too.
    let dict = Dictionary::empty()
        .with_data_pairs([(5001, 5002), (20_000, 20_001)])
        .unwrap();
    let mut p = Parser::with_dictionary(Arc::new(dict));
    let m = frame("35=D|5001=3|5002=a|b|20000=2|20001==||");
    let msg = p.parse(&m).unwrap();
    assert_eq!(msg.get(5002), Some(&b"a\x01b"[..]));
    assert_eq!(msg.get(20_001), Some(&b"=\x01"[..]));
    // RawData is plain there: its value ends at the first SOH.
    let plain = frame("35=D|95=9|96=a|");
    let msg = p.parse(&plain).unwrap();
    assert_eq!(msg.get(96), Some(&b"a"[..]));
    assert!(matches!(
        p.parse(&frame("35=D|20000=5|20001=ab|")),
        Err(Error::DataLength { tag: 20_000, .. })
    ));
    assert!(matches!(
        p.parse(&frame("35=D|20001=ab|")),
        Err(Error::DataWithoutLength {
            tag: 20_001,
            length_tag: 20_000,
            ..
        })
    ));
    // Refused pairs.
    for bad in [
        vec![(95, 95)],
        vec![(9, 96)],
        vec![(95, 96), (96, 97)],
        vec![(0, 1)],
        vec![(1, 1_000_000_000)],
    ] {
        assert!(
            Dictionary::empty().with_data_pairs(bad.clone()).is_err(),
            "{bad:?}"
        );
    }
    // A group count cannot be half of a pair, whichever comes first.
    assert!(Dictionary::fix44().with_data_pairs([(268, 1)]).is_err());
    let group = GroupDef {
        count_tag: 95,
        delimiter: 1,
        members: vec![1],
    };
    assert!(Dictionary::fix44().with_group(group).is_err());
}

proptest! {
    /// Any data, SOH and '=' included, round-trips through the builder and
    /// the parser; the builder's bytes equal a message framed here by hand.
    #[test]
    fn data_fields_round_trip_through_build_and_parse(
        data in proptest::collection::vec(
            prop_oneof![Just(SOH), Just(b'='), any::<u8>()], 1..300),
        pair in 0..crate::groups::STANDARD_DATA_PAIRS.len(),
        before in "[A-Z]{1,8}",
    ) {
        let (l, d) = crate::groups::STANDARD_DATA_PAIRS[pair];
        let mut b = MessageBuilder::new(BeginString::Fix44);
        b.begin(b"D").field_str(55, &before).field_data(l, d, &data).field_int(38, 5);
        let built = b.finish().unwrap().to_vec();
        let mut body = format!("35=D\x0155={before}\x01{l}={}\x01{d}=", data.len()).into_bytes();
        body.extend_from_slice(&data);
        body.extend_from_slice(b"\x0138=5\x01");
        prop_assert_eq!(&built, &frame_bytes(&body));
        let mut p = Parser::new();
        let msg = p.parse(&built).unwrap();
        prop_assert_eq!(msg.get(d), Some(&data[..]));
        prop_assert_eq!(msg.uint(l).unwrap(), data.len() as u64);
        prop_assert_eq!(msg.str(55).unwrap(), before.as_str());
        prop_assert_eq!(msg.int(38).unwrap(), 5);
        let mut q = Parser::new();
        prop_assert_eq!(outcome(q.parse_by_passes(&built)), outcome(p.parse(&built)));
    }
}
