//! Tags against FIX's rule written independently of the parser: the tag
//! parsers alone, and tags inside whole messages.

use super::*;

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

/// Tags in real messages, through [`Parser::parse`] (its common-field path
/// for 1–4 digits, the slow path otherwise): every tag string of up to 4
/// bytes over digits and the bytes next to them, and 5–9 digit ones, is
/// accepted and found under the oracle's value, or rejected as a bad tag
/// at its offset, as [`tag_oracle`] says.
#[test]
fn tags_in_messages_follow_the_oracle() {
    let dict = crate::groups::Dictionary::fix44();
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
