use super::*;
use crate::build::MessageBuilder;
use crate::groups::GroupDef;
use crate::scan::SOH;
use crate::value::Decimal;
use crate::version::BeginString;
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
    let mut b = MessageBuilder::new(BeginString::Fix44);
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

mod data;
mod limits;
mod nesting;
mod reference;
mod tags;
