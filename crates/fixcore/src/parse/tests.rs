use super::*;
use crate::build::{FixVersion, MessageBuilder};
use crate::dict::GroupDef;
use crate::scan::SOH;
use crate::value::Decimal;
use proptest::prelude::*;

/// Frames a `|`-separated body (starting at 35=) with 8, 9 and 10 computed
/// here, independently of the builder.
fn frame(body: &str) -> Vec<u8> {
    frame_as("FIX.4.4", body)
}

fn soh(s: &str) -> Vec<u8> {
    s.replace('|', "\x01").into_bytes()
}

const NOS: &str = "8=FIX.4.4|9=164|35=D|34=1080|49=TESTBUY1|52=20180920-18:14:19.508|56=TESTSELL1|11=636730640278898634|15=USD|21=2|38=7000|40=1|54=1|55=MSFT|60=20180920-18:14:19.492|100=NYSE|167=CS|10=218|";

fn parse_err(m: &[u8]) -> Error {
    let mut p = Parser::new();
    match p.parse(m) {
        Ok(_) => panic!("accepted {:?}", String::from_utf8_lossy(m)),
        Err(e) => e,
    }
}

#[test]
fn parses_published_sample_on_every_scan_path() {
    let m = soh(NOS);
    for path in ScanPath::available() {
        let mut p = Parser::new();
        p.set_scan_path(path).unwrap();
        let msg = p.parse(&m).unwrap();
        assert_eq!(msg.msg_type(), b"D");
        assert_eq!(msg.begin_string(), b"FIX.4.4");
        assert_eq!(msg.int(38).unwrap(), 7000);
        assert_eq!(msg.uint(34).unwrap(), 1080);
        assert_eq!(msg.str(55).unwrap(), "MSFT");
        assert_eq!(msg.char(54).unwrap(), b'1');
        assert_eq!(
            msg.timestamp(52).unwrap().unix_nanos,
            1_537_467_259_508_000_000
        );
        assert_eq!(msg.get(100), Some(&b"NYSE"[..]));
        assert_eq!(msg.get(44), None);
        assert!(matches!(msg.int(44), Err(Error::MissingTag { tag: 44 })));
        assert!(matches!(msg.int(55), Err(Error::BadValue { tag: 55, .. })));
        assert_eq!(msg.field_count(), 18);
    }
}

#[test]
fn typed_getters() {
    let m = frame(
        "35=8|44=101.25|6=-0.5|99=00.000|1000=Y|1001=N|20001=big|60=20240229-12:00:00.123456|",
    );
    let mut p = Parser::new();
    let msg = p.parse(&m).unwrap();
    assert_eq!(msg.decimal(44).unwrap(), Decimal::new(10125, 2));
    assert_eq!(msg.decimal(6).unwrap(), Decimal::new(-5, 1));
    assert_eq!(msg.decimal(99).unwrap(), Decimal::new(0, 3));
    assert!(msg.bool(1000).unwrap());
    assert!(!msg.bool(1001).unwrap());
    assert_eq!(msg.str(20001).unwrap(), "big");
    assert_eq!(
        msg.timestamp(60).unwrap().to_parts(),
        (2024, 2, 29, 12, 0, 0, 123_456_000)
    );
    assert!(matches!(msg.bool(44), Err(Error::BadValue { .. })));
}

#[test]
fn value_may_contain_equals() {
    let m = frame("35=B|58=a=b==c|148=x|");
    let mut p = Parser::new();
    let msg = p.parse(&m).unwrap();
    assert_eq!(msg.get(58), Some(&b"a=b==c"[..]));
    assert_eq!(msg.get(148), Some(&b"x"[..]));
}

#[test]
fn rejects_wrong_body_length() {
    let good = soh(NOS);
    let bad = soh(&NOS.replace("9=164", "9=165"));
    assert!(matches!(
        parse_err(&bad),
        Error::BodyLength {
            pos: 10,
            declared: 165,
            actual: 164
        }
    ));
    assert!(Parser::new().parse(&good).is_ok());
    let bad = soh(&NOS.replace("9=164", "9=1x8"));
    assert!(matches!(parse_err(&bad), Error::BadValue { tag: 9, .. }));
}

#[test]
fn rejects_wrong_or_short_checksum() {
    let bad = soh(&NOS.replace("10=218", "10=219"));
    assert!(matches!(
        parse_err(&bad),
        Error::CheckSum {
            declared: 219,
            actual: 218,
            ..
        }
    ));
    let short = soh(&NOS.replace("10=218", "10=92"));
    assert!(matches!(parse_err(&short), Error::CheckSumFormat { .. }));
    let long = soh(&NOS.replace("10=218", "10=0092"));
    assert!(matches!(parse_err(&long), Error::CheckSumFormat { .. }));
    let alpha = soh(&NOS.replace("10=218", "10=09a"));
    assert!(matches!(parse_err(&alpha), Error::CheckSumFormat { .. }));
}

#[test]
fn rejects_fields_out_of_order() {
    // 35 before 9.
    let m = soh("8=FIX.4.4|35=D|9=5|10=000|");
    assert!(matches!(
        parse_err(&m),
        Error::FieldOrder {
            tag: 35,
            pos: 10,
            ..
        }
    ));
    // Body field in third place.
    let m = frame("55=X|35=D|");
    assert!(matches!(parse_err(&m), Error::FieldOrder { tag: 55, .. }));
    // BeginString not first.
    let m = soh("9=5|8=FIX.4.4|35=D|10=000|");
    assert!(matches!(
        parse_err(&m),
        Error::FieldOrder { tag: 9, pos: 0, .. }
    ));
    // CheckSum in the middle.
    let m = soh("8=FIX.4.4|9=5|35=D|10=000|55=X|");
    assert!(matches!(parse_err(&m), Error::FieldOrder { tag: 10, .. }));
    // A second 8 in the body.
    let m = frame("35=D|8=FIX.4.2|");
    assert!(matches!(parse_err(&m), Error::FieldOrder { tag: 8, .. }));
}

#[test]
fn rejects_missing_equals_empty_and_non_numeric_tags() {
    let m = frame("35=D|55MSFT|");
    assert!(matches!(parse_err(&m), Error::MissingEquals { pos: 20 }));
    let m = frame("35=D|=MSFT|");
    assert!(matches!(parse_err(&m), Error::EmptyTag { pos: 20 }));
    let m = frame("35=D|5a5=MSFT|");
    assert!(matches!(parse_err(&m), Error::BadTag { pos: 20 }));
    let m = frame("35=D|0=MSFT|");
    assert!(matches!(parse_err(&m), Error::BadTag { .. }));
    let m = frame("35=D|1234567890=MSFT|");
    assert!(matches!(parse_err(&m), Error::BadTag { .. }));
    let m = frame("35=D|55=|");
    let e = parse_err(&m);
    assert!(matches!(e, Error::EmptyValue { tag: 55, pos: 19 }), "{e:?}"); // 9=9: one digit shorter
}

#[test]
fn rejects_every_truncation() {
    let m = soh(NOS);
    for end in 0..m.len() {
        let e = parse_err(&m[..end]);
        // Cut inside a field: Truncated or (cut inside "10=092") a short
        // checksum; never a panic, always a position inside the input.
        match e {
            Error::Truncated { pos, .. } => assert!(pos <= end),
            Error::CheckSumFormat { pos } => assert!(pos < end),
            Error::MissingEquals { pos } => assert!(pos < end),
            Error::EmptyValue { pos, .. } => assert!(pos < end),
            other => panic!("prefix {end}: unexpected {other}"),
        }
    }
}

#[test]
fn rejects_duplicates_outside_groups() {
    let m = frame("35=D|55=A|54=1|55=B|");
    assert!(matches!(parse_err(&m), Error::DuplicateTag { tag: 55, .. }));
    let m = frame("35=D|20001=A|20001=B|");
    assert!(matches!(
        parse_err(&m),
        Error::DuplicateTag { tag: 20001, .. }
    ));
}

#[test]
fn repeating_groups_and_nesting() {
    let m = frame(
        "35=W|55=EUR/USD|268=3|269=0|270=1.1|271=100|269=1|270=1.2|271=200|\
         453=2|448=P1|447=D|452=1|802=1|523=S1|803=4|448=P2|447=D|452=3|\
         269=2|270=1.15|100=end|",
    )
    .into_iter()
    .collect::<Vec<u8>>();
    // 453 sits inside the third MD entry: 268's members include 453.
    let mut p = Parser::new();
    let msg = p.parse(&m).unwrap();
    assert_eq!(msg.str(100).unwrap(), "end");
    // Group members are not top-level fields.
    assert_eq!(msg.get(269), None);
    let g = msg.group(268).unwrap();
    assert_eq!(g.len(), 3);
    let entries: Vec<_> = g.entries().collect();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].decimal(270).unwrap(), Decimal::new(11, 1));
    assert_eq!(entries[1].int(271).unwrap(), 200);
    let parties = entries[1].group(453).unwrap();
    let ps: Vec<_> = parties.entries().collect();
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0].str(448).unwrap(), "P1");
    assert_eq!(ps[1].str(448).unwrap(), "P2");
    assert_eq!(
        ps[1].get(523),
        None,
        "nested member not visible from outer entry"
    );
    let sub: Vec<_> = ps[0].group(802).unwrap().entries().collect();
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0].int(803).unwrap(), 4);
    assert_eq!(entries[2].char(269).unwrap(), b'2');
    let tree = msg.nodes();
    assert!(
        tree.iter()
            .any(|n| matches!(n, Node::Group(f, e) if f.tag == 268 && e.len() == 3))
    );
}

#[test]
fn rejects_bad_groups() {
    let m = frame("35=W|268=2|269=0|270=1|");
    assert!(matches!(
        parse_err(&m),
        Error::GroupCount {
            tag: 268,
            declared: 2,
            found: 1,
            ..
        }
    ));
    let m = frame("35=W|268=1|269=0|270=1|269=1|");
    assert!(matches!(
        parse_err(&m),
        Error::GroupCount {
            declared: 1,
            found: 2,
            ..
        }
    ));
    let m = frame("35=W|268=1|270=1|269=0|");
    assert!(matches!(
        parse_err(&m),
        Error::GroupDelimiter {
            delimiter: 269,
            found: 270,
            ..
        }
    ));
    let m = frame("35=W|268=1|269=0|270=1|270=2|");
    assert!(matches!(
        parse_err(&m),
        Error::DuplicateTag { tag: 270, .. }
    ));
    let m = frame("35=W|268=x|");
    assert!(matches!(parse_err(&m), Error::BadValue { tag: 268, .. }));
    let m = frame("35=W|268=0|");
    let mut p = Parser::new();
    assert_eq!(p.parse(&m).unwrap().group(268).unwrap().len(), 0);
}

#[test]
fn many_messages_reuse_tables_correctly() {
    // Generation stamping must not leak tags between messages, including
    // across the 15-bit generation wrap.
    let a = frame("35=D|55=A|");
    let b = frame("35=D|54=1|");
    let mut p = Parser::new();
    for i in 0..70_000u32 {
        let (m, has55) = if i % 2 == 0 { (&a, true) } else { (&b, false) };
        let msg = p.parse(m).unwrap();
        assert_eq!(msg.get(55).is_some(), has55, "message {i}");
        assert_eq!(msg.get(54).is_some(), !has55, "message {i}");
    }
}

/// Seeds for the fuzz bodies run under `cargo test`.
pub(crate) fn seeds() -> Vec<Vec<u8>> {
    let mut b = MessageBuilder::new(FixVersion::Fix44);
    b.begin(b"W")
        .header_str(49, "A")
        .header_str(56, "B")
        .header_uint(34, 1);
    b.field_uint(268, 2)
        .field_char(269, b'0')
        .field_str(270, "1.5")
        .field_char(269, b'1')
        .field_str(270, "1.6");
    let built = b.finish().unwrap().to_vec();
    vec![
        soh(NOS),
        frame("35=0|"),
        built,
        frame("35=D|95=7|96=a|b=c|d|55=X|"),
        frame("35=D|95=3|96=a|b=c|d|55=X|"),
        b"8=FIX".to_vec(),
        vec![1, b'=', 1],
        Vec::new(),
    ]
}

#[test]
fn fuzz_body_over_seeds_and_mutations() {
    for s in seeds() {
        crate::fuzzing::parse_one(&s);
        for i in 0..s.len() {
            let mut m = s.clone();
            m[i] ^= 0x41;
            crate::fuzzing::parse_one(&m);
            crate::fuzzing::parse_one(&s[..i]);
        }
    }
}

proptest! {
    #[test]
    fn never_panics_on_random_bytes(bytes in proptest::collection::vec(
        prop_oneof![Just(1u8), Just(b'='), b'0'..=b'9', any::<u8>()], 0..400)) {
        let mut p = Parser::new();
        let _ = p.parse(&bytes);
    }

    #[test]
    fn framed_random_bodies_parse_and_every_field_is_found(
        fields in proptest::collection::btree_map(5000u32..30000, "[!-~]{1,20}", 0..30)) {
        let body: String = std::iter::once("35=D|".to_string())
            .chain(fields.iter().map(|(t, v)| format!("{t}={v}|").replace("||", "|")))
            .collect();
        prop_assume!(!fields.values().any(|v| v.contains('|')));
        let m = frame(&body);
        let mut p = Parser::new();
        let msg = p.parse(&m).unwrap();
        for (t, v) in &fields {
            prop_assert_eq!(msg.get(*t), Some(v.as_bytes()));
        }
    }
}

/// `frame` with another BeginString.
fn frame_as(begin: &str, body: &str) -> Vec<u8> {
    let body = body.replace('|', "\x01");
    let mut m = format!("8={begin}\x019={}\x01{}", body.len(), body).into_bytes();
    let sum: u32 = m.iter().map(|&b| u32::from(b)).sum();
    m.extend_from_slice(format!("10={:03}\x01", sum % 256).as_bytes());
    m
}

/// Offset of `needle` in `m`, independently of the parser.
fn at(m: &[u8], needle: &str) -> usize {
    m.windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .unwrap()
}

#[test]
fn rejects_zero_padded_tags() {
    let m = frame("035=D|");
    assert_eq!(
        parse_err(&m).to_string(),
        format!(
            "bad tag at byte {}: not 1-9 digits without a leading zero",
            at(&m, "035=")
        )
    );
    let m = frame("35=D|055=MSFT|");
    assert!(matches!(parse_err(&m), Error::BadTag { pos } if pos == at(&m, "055=")));
    let m = soh("08=FIX.4.4|9=5|35=D|10=000|");
    assert_eq!(
        parse_err(&m).to_string(),
        "bad tag at byte 0: not 1-9 digits without a leading zero"
    );
    let m = frame("35=D|00=x|");
    assert!(matches!(parse_err(&m), Error::BadTag { .. }));
    // The same tags unpadded are fine.
    assert!(Parser::new().parse(&frame("35=D|55=MSFT|")).is_ok());
}

#[test]
fn rejects_zero_padded_body_length() {
    let m = soh(&NOS.replace("9=164", "9=0164"));
    assert_eq!(
        parse_err(&m).to_string(),
        "tag 9 at byte 12: value is not a valid Length (digits, no leading zero)"
    );
    // A lone zero is well formed, just wrong.
    let m = soh(&NOS.replace("9=164", "9=0"));
    assert!(matches!(
        parse_err(&m),
        Error::BodyLength {
            declared: 0,
            actual: 164,
            ..
        }
    ));
}

#[test]
fn checksum_is_exactly_three_zero_padded_digits() {
    // Find a message whose checksum is below 10, so its field is `10=00d`.
    // Each 'A' adds 65 to the sum, coprime with 256, so every checksum
    // value turns up within 256 lengths (the length digits shift it too).
    let m = (1..2000)
        .map(|k| frame(&format!("35=0|58={}|", "A".repeat(k))))
        .find(|m| m[m.len() - 7..].starts_with(b"10=00"))
        .unwrap();
    assert!(Parser::new().parse(&m).is_ok());
    let cs = m.len() - 7;
    let mut short = m[..cs].to_vec();
    short.extend_from_slice(&[b'1', b'0', b'=', m[cs + 5], 1]);
    assert_eq!(
        parse_err(&short).to_string(),
        format!("CheckSum(10) at byte {cs} is not three digits")
    );
}

#[test]
fn begin_string_must_name_a_fix_version() {
    for ok in ["FIX.4.0", "FIX.4.2", "FIX.4.4", "FIXT.1.1"] {
        let m = frame_as(ok, "35=0|");
        assert_eq!(
            Parser::new().parse(&m).unwrap().begin_string(),
            ok.as_bytes()
        );
    }
    for bad in [
        "FOO.4.4",
        "FIX.44",
        "FIX.4.4.1",
        "FIX.4.x",
        "FIX",
        "fix.4.4",
        "FIXT.11",
    ] {
        let m = frame_as(bad, "35=0|");
        assert_eq!(
            parse_err(&m).to_string(),
            "tag 8 at byte 2: value is not a valid BeginString (FIX.n.n or FIXT.n.n)",
            "{bad}"
        );
    }
}

/// FIX's rule for a tag, written from the rule, not from the parser: 1–9
/// ASCII digits without a leading zero, valued by std's integer parser.
fn tag_oracle(t: &[u8]) -> Option<u32> {
    let digits = !t.is_empty() && t.len() <= 9 && t.iter().all(u8::is_ascii_digit);
    if !digits || t[0] == b'0' {
        return None;
    }
    std::str::from_utf8(t).ok()?.parse::<u32>().ok()
}

/// Calls `check` on `t` and on every string made by appending up to `depth`
/// bytes of `alphabet` to it.
fn walk(t: &mut Vec<u8>, alphabet: &[u8], depth: usize, check: &mut dyn FnMut(&[u8])) {
    check(t);
    if depth == 0 {
        return;
    }
    for &b in alphabet {
        t.push(b);
        walk(t, alphabet, depth - 1, check);
        t.pop();
    }
}

/// Every string of up to 5 bytes over digits, the bytes next to them and a
/// few others (`=`, NUL, SOH, ...), plus longer ones, against
/// [`tag_oracle`], in one walk for both tag parsers: [`parse_tag`] takes
/// exactly FIX's tags (the empty tag is its own error), and
/// [`parse_short_tag`] exactly the 1–4 digit ones, leaving every other
/// string, 5+ digits included, to the slow path.
///
/// [`parse_tag`]: super::parse_tag
/// [`parse_short_tag`]: super::parse_short_tag
#[test]
fn tag_parsers_agree_with_std_on_every_short_string() {
    let alphabet: Vec<u8> = (b'/'..=b':').chain([b'=', b'a', 0, 0x01, 0xff]).collect();
    let mut accepted = 0;
    let mut check = |t: &[u8]| {
        let want = tag_oracle(t);
        let full = if t.is_empty() {
            Err(true)
        } else {
            want.ok_or(false)
        };
        assert_eq!(super::parse_tag(t), full, "parse_tag {t:?}");
        let short = want.filter(|_| t.len() <= 4);
        assert_eq!(super::parse_short_tag(t), short, "parse_short_tag {t:?}");
        accepted += usize::from(short.is_some());
    };
    walk(&mut Vec::new(), &alphabet, 5, &mut check);
    for long in [
        &b"10000"[..],
        b"99999",
        b"00000",
        b"0",
        b"123456789",
        b"999999999",
        b"100000000",
        b"1234567890",
        b"012345678",
        b"12345678a",
    ] {
        check(long);
    }
    // Every tag 1..=9999 exactly once from the short parser (none of the
    // longer strings counts): the walk covered the whole range.
    assert_eq!(accepted, 9999);
    // The longer strings themselves, spelled out.
    assert_eq!(super::parse_tag(b"123456789"), Ok(123_456_789));
    assert_eq!(super::parse_tag(b"1234567890"), Err(false));
    for long in [&b"10000"[..], b"99999", b"123456789", b"00000", b"0"] {
        assert_eq!(super::parse_short_tag(long), None, "{long:?}");
    }
}

/// Everything observable about one parse, for comparing two parsers: the
/// error (its Debug form names the variant and every position), or every
/// field in order, every top-level lookup and the group tree.
fn outcome(r: Result<Message<'_>>) -> String {
    let m = match r {
        Err(e) => return format!("{e:?}"),
        Ok(m) => m,
    };
    let mut out = format!("{:?}\n", m.nodes());
    for f in m.fields() {
        out += &format!("{}: {:?} {:?}\n", f.tag, f, m.field(f.tag));
    }
    for t in [
        1, 8, 9, 10, 35, 55, 268, 269, 453, 448, 9999, 10_000, 20_001,
    ] {
        out += &format!("{t}: {:?} {:?}\n", m.field(t), m.group(t).map(|g| g.len()));
    }
    out
}

/// A body of fields drawn from tags that exercise every branch of the
/// index: session tags, plain tags, group counts with their members
/// (nested too), tags above the direct table, and values with `=`.
fn body_strategy() -> impl Strategy<Value = String> {
    let session = prop_oneof![Just(8u32), Just(9), Just(10), Just(35)];
    let group = prop_oneof![
        Just(268u32),
        Just(269),
        Just(270),
        Just(453),
        Just(448),
        Just(452),
        Just(802),
        Just(523),
    ];
    let plain = prop_oneof![
        Just(1u32),
        Just(54),
        Just(55),
        Just(9999),
        Just(10_000),
        Just(20_001),
        1u32..400,
        10_000u32..10_010,
    ];
    // Mostly plain fields, so that many messages get through the frame
    // checks to the index's own errors (and to success).
    let tag = prop_oneof![1 => session, 6 => group, 30 => plain];
    let value = prop_oneof![
        Just("0"),
        Just("1"),
        Just("2"),
        Just("x"),
        Just("a=b"),
        Just("FIX.4.4")
    ];
    // Length/Data pairs: data with delimiters ('|' is SOH), a length that
    // is right or off by one, and now and then a lone Length or data tag
    // (from the plain fields above: 95, 96, 212 ... fall in 1..400).
    let pair = prop_oneof![Just((95u32, 96u32)), Just((93, 89)), Just((212, 213))];
    let data = "[a|=0-9]{0,6}";
    let item = prop_oneof![
        8 => (tag, value).prop_map(|(t, v)| format!("{t}={v}|")),
        1 => (pair, data, -1i64..=1).prop_map(|((l, d), v, off)| {
            let n = (v.len() as i64 + off).max(0);
            format!("{l}={n}|{d}={v}|")
        }),
    ];
    // Mostly with a MsgType, so that most bodies can pass the frame checks.
    (
        proptest::bool::weighted(0.9),
        proptest::collection::vec(item, 0..24),
    )
        .prop_map(|(msg_type, fields)| {
            let mut b = String::new();
            if msg_type {
                b += "35=W|";
            }
            for f in fields {
                b += &f;
            }
            b
        })
}

/// A mutation applied to a framed message: none, a byte replaced by a
/// delimiter, digit or letter, a byte dropped, or a cut.
fn mutate(m: &mut Vec<u8>, kind: u8, at: prop::sample::Index) {
    if m.is_empty() {
        return;
    }
    let i = at.index(m.len());
    match kind % 8 {
        0 => m[i] = SOH,
        1 => m[i] = b'=',
        2 => m[i] = b'0',
        3 => m[i] = b'7',
        4 => m[i] = b'a',
        5 => {
            m.remove(i);
        }
        6 => m.truncate(i),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The fused split-and-index pass against the separate passes it
    /// replaced: same fields, lookups and groups, or the same first error.
    /// Both parsers are reused across cases, so stale table entries from
    /// earlier messages are part of the test.
    #[test]
    fn fused_pass_agrees_with_separate_passes(
        body in body_strategy(),
        mutations in proptest::collection::vec((any::<u8>(), any::<prop::sample::Index>()), 0..2),
    ) {
        thread_local! {
            static PARSERS: std::cell::RefCell<(Parser, Parser)> =
                std::cell::RefCell::new((Parser::new(), Parser::new()));
        }
        let mut m = frame(&body);
        for (kind, at) in mutations {
            mutate(&mut m, kind, at);
        }
        PARSERS.with_borrow_mut(|(fused, passes)| {
            let got = outcome(fused.parse(&m));
            let want = outcome(passes.parse_by_passes(&m));
            prop_assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&m));
            Ok(())
        })?;
    }
}

/// Every prefix of each input, and each input with one byte at a time
/// replaced by SOH, `=`, `0`, `9` or `A`: the inputs the whole-message
/// comparisons run over.
fn prefixes_and_mutations(inputs: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for s in inputs {
        for i in 0..=s.len() {
            out.push(s[..i].to_vec());
            if i < s.len() {
                for b in [SOH, b'=', b'0', b'9', b'A'] {
                    let mut m = s.clone();
                    m[i] = b;
                    out.push(m);
                }
            }
        }
    }
    out
}

/// The fused pass on every sample, the seeds and their single-byte
/// mutations and prefixes, against the separate passes.
#[test]
fn fused_pass_agrees_on_samples_and_their_mutations() {
    let mut fused = Parser::new();
    let mut passes = Parser::new();
    let mut inputs: Vec<Vec<u8>> = crate::sample::all().into_iter().map(|(_, m)| m).collect();
    inputs.extend(seeds());
    let mut checked = 0;
    let mut ok = 0;
    for m in prefixes_and_mutations(&inputs) {
        let got = outcome(fused.parse(&m));
        let want = passes.parse_by_passes(&m);
        ok += usize::from(want.is_ok());
        let want = outcome(want);
        assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&m));
        checked += 1;
    }
    // The comparison must have covered both outcomes.
    assert!(checked > 5000 && ok > 4, "{checked} inputs, {ok} accepted");
}

/// Tags in real messages, through [`Parser::parse`] (its common-field path
/// for 1–4 digits, the slow path otherwise): every tag string of up to 4
/// bytes over digits and the bytes next to them, and 5–9 digit ones, is
/// accepted and found under the oracle's value, or rejected as a bad tag
/// at its offset, as [`tag_oracle`] says.
#[test]
fn tags_in_messages_follow_the_oracle() {
    let dict = crate::dict::Dictionary::fix44();
    let mut p = Parser::new();
    let mut strings: Vec<String> = Vec::new();
    let alphabet = ['/', '0', '1', '5', '9', ':', 'a'];
    let mut frontier = vec![String::new()];
    for _ in 0..4 {
        frontier = frontier
            .iter()
            .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
            .collect();
        strings.extend(frontier.iter().cloned());
    }
    strings.extend(
        [
            "10000",
            "99999",
            "123456",
            "9999999",
            "123456789",
            "01234",
            "1234a",
            "1234567890",
        ]
        .map(String::from),
    );
    let (mut found, mut rejected) = (0, 0);
    for t in &strings {
        let m = frame(&format!("35=D|{t}=v|"));
        let pos = at(&m, &format!("\x01{t}=v")) + 1;
        match tag_oracle(t.as_bytes()) {
            // Session tags, group counts and Length/Data tags have rules
            // of their own.
            Some(v)
                if [8, 9, 10, 35].contains(&v)
                    || dict.group(v).is_some()
                    || dict.data_role(v).is_some() => {}
            Some(v) => {
                let msg = p.parse(&m).unwrap_or_else(|e| panic!("{t}: {e}"));
                assert_eq!(msg.get(v), Some(&b"v"[..]), "{t}");
                found += 1;
            }
            None => {
                let e = p.parse(&m).map(|_| ()).unwrap_err();
                assert!(
                    matches!(e, Error::BadTag { pos: p } if p == pos),
                    "{t}: {e:?}"
                );
                rejected += 1;
            }
        }
    }
    assert!(
        found > 250 && rejected > 2000,
        "{found} found, {rejected} rejected"
    );
    // The empty tag is its own error.
    let m = frame("35=D|=v|");
    assert!(matches!(parse_err(&m), Error::EmptyTag { pos } if pos == at(&m, "\x01=v") + 1));
}

/// A message of `n` fields: 8, 9, 35, then distinct tags (the high ones
/// first, so the direct-table tags land at the largest field indexes, which
/// the table packs into 16 bits), then 10. Every value names its field's
/// index. Returns the message and its (tag, index) pairs.
fn wide_message(n: usize) -> (Vec<u8>, Vec<(u32, usize)>) {
    let dict = crate::dict::Dictionary::fix44();
    let direct: Vec<u32> = (1..10_000)
        .filter(|t| {
            ![8, 9, 10, 35].contains(t) && dict.group(*t).is_none() && dict.data_role(*t).is_none()
        })
        .collect();
    let body_fields = n - 4;
    let high = body_fields - direct.len();
    let tags = (10_000..10_000 + high as u32).chain(direct.iter().copied());
    let mut body = String::from("35=0|");
    let mut expected = Vec::new();
    for (i, t) in (3..).zip(tags) {
        body += &format!("{t}={i}|");
        expected.push((t, i));
    }
    (frame(&body), expected)
}

/// Exactly [`MAX_FIELDS`] distinct fields parse on the fused pass (every
/// field indexed while splitting), the fields at indexes near 0xFFFF are
/// found under their tags, and both parsers agree; one field more is
/// `TooLarge` from both.
#[test]
fn max_fields_on_the_fused_path() {
    let (m, expected) = wide_message(MAX_FIELDS);
    let mut fused = Parser::new();
    let mut passes = Parser::new();
    {
        let msg = fused.parse(&m).unwrap();
        assert_eq!(msg.field_count(), MAX_FIELDS);
        // Every direct-table tag (the last ~10,000 indexes) and a sample of
        // the others (found through the high-tag hash map).
        for &(t, i) in expected
            .iter()
            .rev()
            .take(10_000)
            .chain(expected.iter().step_by(997))
        {
            assert_eq!(msg.get(t), Some(i.to_string().as_bytes()), "tag {t}");
        }
        let want = passes.parse_by_passes(&m).unwrap();
        assert!(msg.fields().eq(want.fields()));
    }
    // One more field, before the CheckSum.
    let (m, _) = wide_message(MAX_FIELDS + 1);
    let too_large = |e: Error| matches!(e, Error::TooLarge { len, limit } if len == MAX_FIELDS + 1 && limit == MAX_FIELDS);
    assert!(too_large(fused.parse(&m).map(|_| ()).unwrap_err()));
    assert!(too_large(
        passes.parse_by_passes(&m).map(|_| ()).unwrap_err()
    ));
    // And the same where the fused pass has stopped indexing (a repeat at
    // field 3), so the limit is met in its split-only loop.
    let mut m2 = m.clone();
    let third = at(&m2, "\x0135=0\x01") + 6;
    assert_eq!(&m2[third..third + 6], b"10000=");
    m2[third..third + 5].copy_from_slice(b"10001");
    assert!(too_large(fused.parse(&m2).map(|_| ()).unwrap_err()));
    assert!(too_large(
        passes.parse_by_passes(&m2).map(|_| ()).unwrap_err()
    ));
}

/// After a message of tens of thousands of high tags, the parser does not
/// keep a map that size (clearing it would cost every later message with a
/// high tag as much); a small map is kept and reused.
#[test]
fn high_tag_map_does_not_keep_a_huge_capacity() {
    let (wide, expected) = wide_message(MAX_FIELDS);
    let small = frame("35=D|10001=a|20002=b|55=X|");
    let mut p = Parser::new();
    assert!(p.parse(&wide).is_ok());
    assert!(
        p.high.capacity() > HIGH_KEEP,
        "the wide message grew the map"
    );
    {
        let msg = p.parse(&small).unwrap();
        assert_eq!(msg.get(10_001), Some(&b"a"[..]));
        assert_eq!(msg.get(20_002), Some(&b"b"[..]));
        assert_eq!(msg.get(10_000), None);
        assert_eq!(msg.get(55), Some(&b"X"[..]));
    }
    let kept = p.high.capacity();
    assert!(
        kept <= HIGH_KEEP,
        "capacity {kept} kept after the wide message"
    );
    for _ in 0..3 {
        let msg = p.parse(&small).unwrap();
        assert_eq!(msg.get(10_001), Some(&b"a"[..]));
        assert_eq!(msg.get(20_002), Some(&b"b"[..]));
        assert_eq!(p.high.capacity(), kept, "a small map is reused");
    }
    // And the wide message still parses, every high tag found.
    let msg = p.parse(&wide).unwrap();
    for &(t, i) in expected.iter().step_by(97) {
        assert_eq!(msg.get(t), Some(i.to_string().as_bytes()), "tag {t}");
    }
}

/// A run of '=' fails at the first field, and the parser that keeps its
/// vectors does not keep room for half a field per byte: the field table
/// is bounded by [`MAX_FIELDS`] (twice it, allowing for doubling growth).
#[test]
fn field_table_reserve_is_bounded_by_max_fields() {
    let m = vec![b'='; 1 << 20];
    let mut p = Parser::new();
    assert!(matches!(p.parse(&m), Err(Error::EmptyTag { pos: 0 })));
    assert!(
        p.fields.capacity() <= 2 * (MAX_FIELDS + 1),
        "{} fields reserved",
        p.fields.capacity()
    );
}

proptest! {
    /// Top-level indexing (the fused pass and `index_from`) against a
    /// first-repeat scan written here: a body of plain tags, direct and
    /// above the direct table, with repeats, is rejected at the first
    /// repeated field's offset, or parsed with every tag found under its
    /// only value.
    #[test]
    fn duplicates_are_reported_at_the_first_repeat(
        tags in proptest::collection::vec(
            prop_oneof![1u32..40, 10_000u32..10_004], 0..20),
    ) {
        let dict = crate::dict::Dictionary::fix44();
        let tags: Vec<u32> = tags
            .into_iter()
            .filter(|t| {
            ![8, 9, 10, 35].contains(t) && dict.group(*t).is_none() && dict.data_role(*t).is_none()
        })
            .collect();
        let fields: Vec<String> = tags.iter().enumerate().map(|(i, t)| format!("{t}=v{i}|")).collect();
        let body = format!("35=W|{}", fields.concat());
        let m = frame(&body);
        // The body starts after `8=FIX.4.4|9=N|` and ends before `10=ddd|`.
        let mut offset = m.len() - 7 - body.len() + "35=W|".len();
        let mut seen = std::collections::HashSet::new();
        let mut first_repeat = None;
        for (t, f) in tags.iter().zip(&fields) {
            if !seen.insert(*t) {
                first_repeat = Some((*t, offset));
                break;
            }
            offset += f.len();
        }
        let mut p = Parser::new();
        match (p.parse(&m), first_repeat) {
            (Err(Error::DuplicateTag { tag, pos }), Some(want)) => prop_assert_eq!((tag, pos), want),
            (Ok(msg), None) => {
                for (i, t) in tags.iter().enumerate() {
                    let want = format!("v{i}");
                    prop_assert_eq!(msg.get(*t), Some(want.as_bytes()));
                }
            }
            (got, want) => prop_assert!(false, "{:?} for {:?}", got.map(|_| ()), want),
        }
    }
}

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
    for (l, d) in crate::dict::STANDARD_DATA_PAIRS {
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
        pair in 0..crate::dict::STANDARD_DATA_PAIRS.len(),
        before in "[A-Z]{1,8}",
    ) {
        let (l, d) = crate::dict::STANDARD_DATA_PAIRS[pair];
        let mut b = MessageBuilder::new(FixVersion::Fix44);
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

/// An independent reference for the parser's verdict and fields: what a
/// FIX message is, read byte by byte with none of fixcore's scanning,
/// splitting, framing or indexing code, for a dictionary with the
/// Length/Data pairs `pairs` and no repeating groups (so any repeated tag
/// is a duplicate). `Some` with every (tag, value) in wire order when the
/// message is valid, `None` when it is not.
fn reference_fields(m: &[u8], pairs: &[(u32, u32)]) -> Option<Vec<(u32, Vec<u8>)>> {
    // A tag: 1 to 9 digits, the first not 0.
    let tag_of = |t: &[u8]| -> Option<u32> {
        let digits = !t.is_empty() && t.len() <= 9 && t.iter().all(u8::is_ascii_digit);
        (digits && t[0] != b'0').then(|| std::str::from_utf8(t).ok()?.parse().ok())?
    };
    // A Length: digits, no leading zero unless it is "0".
    let length_of = |v: &[u8]| -> Option<u64> {
        let digits = !v.is_empty() && v.iter().all(u8::is_ascii_digit);
        if !digits || (v.len() > 1 && v[0] == b'0') {
            return None;
        }
        std::str::from_utf8(v).ok()?.parse().ok()
    };
    // (tag, value start, value end, field start) of each field.
    let mut fields: Vec<(u32, usize, usize, usize)> = Vec::new();
    let mut at = 0;
    let mut data_next: Option<(u32, usize)> = None;
    while at < m.len() {
        let start = at;
        let mut eq = at;
        while eq < m.len() && m[eq] != b'=' {
            if m[eq] == 0x01 {
                return None;
            }
            eq += 1;
        }
        if eq == m.len() {
            return None;
        }
        let tag = tag_of(&m[start..eq])?;
        let value = eq + 1;
        let end = if let Some((data_tag, n)) = data_next.take() {
            // The data field, exactly `n` bytes whatever they hold.
            if tag != data_tag || n == 0 || value + n >= m.len() || m[value + n] != 0x01 {
                return None;
            }
            value + n
        } else {
            let mut end = value;
            while end < m.len() && m[end] != 0x01 {
                end += 1;
            }
            if end == m.len() || end == value {
                return None;
            }
            if pairs.iter().any(|&(_, d)| d == tag) {
                return None; // data without its Length just before
            }
            if let Some(&(_, d)) = pairs.iter().find(|&&(l, _)| l == tag) {
                let n = usize::try_from(length_of(&m[value..end])?).ok()?;
                data_next = Some((d, n));
            }
            end
        };
        fields.push((tag, value, end, start));
        at = end + 1;
    }
    if data_next.is_some() || fields.len() < 4 {
        return None;
    }
    // The header, 8 9 35 in that order, and the trailer, 10, last.
    let tags: Vec<u32> = fields.iter().map(|f| f.0).collect();
    if tags[..3] != [8, 9, 35] || tags[tags.len() - 1] != 10 {
        return None;
    }
    // Each tag once: no groups, so a repeat is a duplicate, and 8, 9, 35
    // or 10 anywhere else is out of place.
    let mut seen = tags.clone();
    seen.sort_unstable();
    if seen.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    let value = |i: usize| &m[fields[i].1..fields[i].2];
    // BeginString: FIX.d.d or FIXT.d.d.
    let begin = value(0);
    let version = begin
        .strip_prefix(b"FIXT.")
        .or_else(|| begin.strip_prefix(b"FIX."));
    if !matches!(version, Some([a, b'.', b]) if a.is_ascii_digit() && b.is_ascii_digit()) {
        return None;
    }
    // BodyLength: the bytes from MsgType's tag to CheckSum's tag.
    let checksum_field = fields[fields.len() - 1];
    let body = (checksum_field.3 - fields[2].3) as u64;
    if length_of(value(1))? != body {
        return None;
    }
    // CheckSum: three digits, the byte sum before it modulo 256.
    let sum = m[..checksum_field.3]
        .iter()
        .fold(0u32, |s, &b| s + u32::from(b))
        % 256;
    let cs = value(fields.len() - 1);
    if cs.len() != 3 || !cs.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let declared = cs.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
    if declared != sum {
        return None;
    }
    Some(
        fields
            .iter()
            .map(|&(t, v, e, _)| (t, m[v..e].to_vec()))
            .collect(),
    )
}

/// A parser for [`reference_fields`]'s dictionary: the standard
/// Length/Data pairs and no groups.
fn groupless_parser() -> Parser {
    let dict = crate::dict::Dictionary::empty()
        .with_data_pairs(crate::dict::STANDARD_DATA_PAIRS)
        .unwrap();
    Parser::with_dictionary(std::sync::Arc::new(dict))
}

/// The parser's verdict and fields in [`reference_fields`]'s terms.
fn parsed_fields(p: &mut Parser, m: &[u8]) -> Option<Vec<(u32, Vec<u8>)>> {
    let msg = p.parse(m).ok()?;
    Some(msg.fields().map(|f| (f.tag, f.value.to_vec())).collect())
}

#[test]
fn the_reference_reads_known_messages() {
    let pairs = crate::dict::STANDARD_DATA_PAIRS;
    let nos = soh(NOS);
    let fields = reference_fields(&nos, &pairs).expect("the published sample is valid");
    assert_eq!(fields.len(), 18);
    assert_eq!(fields[3], (34, b"1080".to_vec()));
    // A data field holding SOH and '=' is one field.
    let m = frame("35=A|95=3|96=a|=|98=0|");
    let fields = reference_fields(&m, &pairs).unwrap();
    assert_eq!(fields[4], (96, b"a\x01=".to_vec()));
    // A wrong checksum, a wrong body length, a duplicate, an empty value.
    let mut bad = nos.clone();
    let n = bad.len();
    bad[n - 2] = b'9';
    assert_eq!(reference_fields(&bad, &pairs), None);
    assert_eq!(
        reference_fields(&soh(&NOS.replace("9=164", "9=165")), &pairs),
        None
    );
    assert_eq!(reference_fields(&frame("35=D|55=A|55=B|"), &pairs), None);
    assert_eq!(reference_fields(&frame("35=D|55=|"), &pairs), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The parser against [`reference_fields`], which shares no code with
    /// it: the same verdict, and for a valid message the same fields.
    #[test]
    fn parser_agrees_with_an_independent_reference(
        body in body_strategy(),
        mutations in proptest::collection::vec((any::<u8>(), any::<prop::sample::Index>()), 0..2),
    ) {
        thread_local! {
            static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new(groupless_parser());
        }
        let mut m = frame(&body);
        for (kind, at) in mutations {
            mutate(&mut m, kind, at);
        }
        let want = reference_fields(&m, &crate::dict::STANDARD_DATA_PAIRS);
        let got = PARSER.with_borrow_mut(|p| parsed_fields(p, &m));
        prop_assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&m));
    }
}

/// The samples, the seeds and each of their one-byte mutations and
/// prefixes, against [`reference_fields`]; both verdicts must occur.
#[test]
fn parser_agrees_with_the_reference_on_samples_and_their_mutations() {
    let mut p = groupless_parser();
    let pairs = crate::dict::STANDARD_DATA_PAIRS;
    let mut inputs: Vec<Vec<u8>> = crate::sample::all().into_iter().map(|(_, m)| m).collect();
    inputs.extend(seeds());
    inputs.push(soh(NOS));
    let (mut checked, mut valid) = (0, 0);
    for m in prefixes_and_mutations(&inputs) {
        let want = reference_fields(&m, &pairs);
        valid += usize::from(want.is_some());
        assert_eq!(
            parsed_fields(&mut p, &m),
            want,
            "{:?}",
            String::from_utf8_lossy(&m)
        );
        checked += 1;
    }
    assert!(
        checked > 5000 && valid > 4,
        "{checked} inputs, {valid} valid"
    );
}
