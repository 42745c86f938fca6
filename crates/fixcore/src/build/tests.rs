use super::*;
use crate::parse::Parser;
use proptest::prelude::*;

/// Timestamps through the builder's cache of the last second, against
/// the uncached formatter: within one second, across seconds, days and
/// years, backwards, at every precision, in header and body fields.
#[test]
fn cached_timestamps_match_the_formatter() {
    let base = 1_700_000_000_123_456_789i64;
    let times = [
        base,
        base + 1,
        base + 999_000_000,
        base + 1_000_000_000,
        base - 5_000_000_000,
        base + 86_400_000_000_000,
        0,
        -1,
        i64::MAX,
        base,
    ];
    let mut b = MessageBuilder::new(BeginString::Fix44);
    for p in [
        TimePrecision::Seconds,
        TimePrecision::Millis,
        TimePrecision::Micros,
        TimePrecision::Nanos,
    ] {
        for &t in &times {
            let t = UtcTimestamp { unix_nanos: t };
            let mut want = [0u8; 32];
            let n = format::timestamp(&mut want, t, p).unwrap();
            let want = std::str::from_utf8(&want[..n]).unwrap().to_owned();
            b.begin(b"0")
                .header_timestamp(52, t, p)
                .field_timestamp(60, t, p);
            let msg = String::from_utf8(b.finish().unwrap().to_vec()).unwrap();
            assert!(
                msg.contains(&format!("\x0152={want}\x0160={want}\x01")),
                "{p:?} {t:?}: {msg}"
            );
        }
    }
}

/// Every tag width (table and formatted) and every value length the
/// short copy distinguishes (0..=3 bytewise, 4..8, 8..=16, longer),
/// written as body and header fields, against `format!`.
#[test]
fn fields_are_written_byte_for_byte_at_every_length() {
    let tags = [1u32, 2, 11, 99, 100, 999, 1000, 9999, 12345, 999_999_999];
    let mut b = MessageBuilder::new(BeginString::Fix44);
    for &tag in &tags {
        for len in 1..=40usize {
            let value: Vec<u8> = (0..len).map(|i| b'a' + (i * 7 % 26) as u8).collect();
            let v = std::str::from_utf8(&value).unwrap();
            let want = format!("\x0135=D\x01{tag}={v}\x0110=");
            for header in [true, false] {
                b.begin(b"D");
                if header {
                    b.header_bytes(tag, &value);
                } else {
                    b.field_bytes(tag, &value);
                }
                let text = String::from_utf8(b.finish().unwrap().to_vec()).unwrap();
                assert!(
                    text.contains(&want),
                    "tag {tag} len {len} header {header}: {text:?}"
                );
            }
        }
    }
}

/// Independent oracle: split on SOH, sum bytes the long way.
fn oracle(msg: &[u8]) -> (usize, u32, usize, u32) {
    let text: Vec<&[u8]> = msg.split(|&b| b == 1).collect();
    assert_eq!(text.last(), Some(&&b""[..]), "ends with SOH");
    let fields = &text[..text.len() - 1];
    let declared_len: usize = std::str::from_utf8(&fields[1][2..])
        .unwrap()
        .parse()
        .unwrap();
    let declared_cs: u32 = std::str::from_utf8(&fields[fields.len() - 1][3..])
        .unwrap()
        .parse()
        .unwrap();
    // Body: from the start of field 3 to the end of the field before 10=.
    let head = fields[0].len() + 1 + fields[1].len() + 1;
    let trailer = fields[fields.len() - 1].len() + 1;
    let real_len = msg.len() - head - trailer;
    let mut sum = 0u32;
    for &b in &msg[..msg.len() - trailer] {
        sum += u32::from(b);
    }
    (declared_len, declared_cs, real_len, sum % 256)
}

#[test]
fn header_order_is_quickfix_order() {
    let mut b = MessageBuilder::new(BeginString::Fix44);
    b.begin(b"D");
    b.field_str(55, "IBM");
    b.header_str(56, "T")
        .header_uint(34, 12)
        .header_str(49, "S");
    b.field_int(38, 5);
    b.header_str(52, "20240101-00:00:00");
    let m = b.finish().unwrap().to_vec();
    let tags: Vec<u32> = m
        .split(|&c| c == 1)
        .filter(|f| !f.is_empty())
        .map(|f| {
            let e = f.iter().position(|&c| c == b'=').unwrap();
            std::str::from_utf8(&f[..e]).unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(tags, [8, 9, 35, 34, 49, 52, 56, 55, 38, 10]);
    let (dl, dc, rl, rc) = oracle(&m);
    assert_eq!((dl, dc), (rl, rc));
}

#[test]
fn versions() {
    for (v, s) in [
        (BeginString::Fix42, "FIX.4.2"),
        (BeginString::Fix44, "FIX.4.4"),
        (BeginString::Fixt11, "FIXT.1.1"),
    ] {
        let mut b = MessageBuilder::new(v);
        b.begin(b"0").header_str(49, "A");
        let m = b.finish().unwrap().to_vec();
        assert!(m.starts_with(format!("8={s}\x019=").as_bytes()));
        let mut p = Parser::new();
        assert_eq!(p.parse(&m).unwrap().begin_string(), s.as_bytes());
    }
}

#[test]
fn rejects_unencodable_fields() {
    let mut b = MessageBuilder::new(BeginString::Fix44);
    assert!(b.finish().is_err());
    b.begin(b"D").field_str(58, "a\x01b");
    assert!(matches!(b.finish(), Err(Error::Build(_))));
    b.begin(b"D").field_str(58, "");
    assert!(b.finish().is_err());
    b.begin(b"D").field_str(10, "1");
    assert!(b.finish().is_err());
    b.begin(b"D").header_str(49, "A").header_str(49, "B");
    assert!(b.finish().is_err());
    b.begin(b"D").field_str(58, "ok");
    assert!(b.finish().is_ok());
}

fn build_err(f: impl FnOnce(&mut MessageBuilder)) -> String {
    let mut b = MessageBuilder::new(BeginString::Fix44);
    f(&mut b);
    match b.finish() {
        Ok(m) => panic!("built {:?}", String::from_utf8_lossy(m)),
        Err(e) => e.to_string(),
    }
}

#[test]
fn rejects_bad_msg_types_and_tags_the_parser_would_refuse() {
    assert_eq!(
        build_err(|b| {
            b.begin(b"");
        }),
        "cannot build message: empty MsgType(35)"
    );
    assert_eq!(
        build_err(|b| {
            b.begin(b"D\x0149=X");
        }),
        "cannot build message: MsgType(35) contains SOH"
    );
    assert_eq!(
        build_err(|b| {
            b.begin(b"D=");
        }),
        "cannot build message: MsgType(35) contains '='"
    );
    assert_eq!(
        build_err(|b| {
            b.begin(b"D").field_str(1_000_000_000, "x");
        }),
        "cannot build message: tag above 999999999 (tags have at most 9 digits)"
    );
    // A later begin() clears the error; the largest tag round-trips.
    let mut b = MessageBuilder::new(BeginString::Fix44);
    b.begin(b"");
    b.begin(b"AE").field_str(999_999_999, "x");
    let m = b.finish().unwrap().to_vec();
    let mut p = Parser::new();
    let msg = p.parse(&m).unwrap();
    assert_eq!(msg.msg_type(), b"AE");
    assert_eq!(msg.str(999_999_999).unwrap(), "x");
}

/// i64::MIN has no positive counterpart; both its int and decimal
/// renderings must parse back.
#[test]
fn extreme_numbers_round_trip() {
    let mut b = MessageBuilder::new(BeginString::Fix44);
    b.begin(b"D")
        .field_int(5001, i64::MIN)
        .field_int(5002, i64::MAX)
        .field_decimal(5003, Decimal::new(i64::MIN, 0))
        .field_decimal(5004, Decimal::new(i64::MIN, 18))
        .field_decimal(5005, Decimal::new(i64::MAX, 7));
    let m = b.finish().unwrap().to_vec();
    let mut p = Parser::new();
    let msg = p.parse(&m).unwrap();
    assert_eq!(msg.int(5001).unwrap(), i64::MIN);
    assert_eq!(msg.str(5001).unwrap(), "-9223372036854775808");
    assert_eq!(msg.int(5002).unwrap(), i64::MAX);
    assert_eq!(msg.decimal(5003).unwrap(), Decimal::new(i64::MIN, 0));
    assert_eq!(msg.str(5004).unwrap(), "-9.223372036854775808");
    assert_eq!(msg.decimal(5004).unwrap(), Decimal::new(i64::MIN, 18));
    assert_eq!(msg.decimal(5005).unwrap(), Decimal::new(i64::MAX, 7));
}

proptest! {
    #[test]
    fn output_parses_back_and_agrees_with_oracle(
        version in prop_oneof![Just(BeginString::Fix42), Just(BeginString::Fix44), Just(BeginString::Fixt11)],
        seq in any::<u64>(),
        // Body tags from a range free of header, group and session tags.
        body in proptest::collection::btree_map(5000u32..6000, "[!-~]{1,40}", 0..40),
        ints in proptest::collection::btree_map(
            6000u32..7000,
            prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX)],
            0..10,
        ),
        px in (prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX)], 0u8..=18),
    ) {
        let mut b = MessageBuilder::new(version);
        b.begin(b"8").header_str(56, "TARGET").header_uint(34, seq).header_str(49, "SENDER");
        for (t, v) in &body { b.field_str(*t, v); }
        for (t, v) in &ints { b.field_int(*t, *v); }
        b.field_decimal(44, Decimal::new(px.0, px.1));
        let m = b.finish().unwrap().to_vec();
        let (dl, dc, rl, rc) = oracle(&m);
        prop_assert_eq!(dl, rl);
        prop_assert_eq!(dc, rc);
        let mut p = Parser::new();
        let msg = p.parse(&m).unwrap();
        prop_assert_eq!(msg.uint(34).unwrap(), seq);
        prop_assert_eq!(msg.str(49).unwrap(), "SENDER");
        for (t, v) in &body { prop_assert_eq!(msg.str(*t).unwrap(), v.as_str()); }
        for (t, v) in &ints { prop_assert_eq!(msg.int(*t).unwrap(), *v); }
        prop_assert_eq!(msg.decimal(44).unwrap(), Decimal::new(px.0, px.1));
    }
}

/// `has_soh` agrees with a byte-by-byte search at every length its word
/// loads distinguish, with an SOH at every position or none, among every
/// other byte value (the borrow trick must not confuse 0, 2 or 0x81 with it).
#[test]
fn soh_search_agrees_with_contains() {
    for n in 0..=40usize {
        for fill in (0..=255u8).filter(|&b| b != 1) {
            let mut v = vec![fill; n];
            assert_eq!(super::has_soh(&v), v.contains(&1), "n={n} fill={fill}");
            for at in 0..n {
                v[at] = 1;
                assert!(super::has_soh(&v), "n={n} fill={fill} SOH at {at}");
                v[at] = fill;
            }
        }
    }
}
