//! The parser at its limits: the most fields, huge tag maps, bounded
//! reserves, and duplicates reported where they first repeat.

use super::*;

/// A message of `n` fields: 8, 9, 35, then distinct tags (the high ones
/// first, so the direct-table tags land at the largest field indexes, which
/// the table packs into 16 bits), then 10. Every value names its field's
/// index. Returns the message and its (tag, index) pairs.
fn wide_message(n: usize) -> (Vec<u8>, Vec<(u32, usize)>) {
    let dict = crate::groups::Dictionary::fix44();
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
        let dict = crate::groups::Dictionary::fix44();
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
