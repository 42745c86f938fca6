//! The parser against an independent byte-by-byte reading of what a FIX
//! message is, which shares no code with fixcore's scan, split, frame or index.

use super::*;

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
    let dict = crate::groups::Dictionary::empty()
        .with_data_pairs(crate::groups::STANDARD_DATA_PAIRS)
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
    let pairs = crate::groups::STANDARD_DATA_PAIRS;
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
        let want = reference_fields(&m, &crate::groups::STANDARD_DATA_PAIRS);
        let got = PARSER.with_borrow_mut(|p| parsed_fields(p, &m));
        prop_assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&m));
    }
}

/// The samples, the seeds and each of their one-byte mutations and
/// prefixes, against [`reference_fields`]; both verdicts must occur.
#[test]
fn parser_agrees_with_the_reference_on_samples_and_their_mutations() {
    let mut p = groupless_parser();
    let pairs = crate::groups::STANDARD_DATA_PAIRS;
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
