//! Nested groups whatever order their definitions were added in: a
//! member that counts a group is marked when either of the two is
//! defined, so the parser reads the same tree from every dictionary.

use super::*;

/// Parties (453) with PartySubIDs (802) inside, inside MDEntries (268);
/// and a group (500) that lists its own count tag among its members,
/// which therefore counts nothing inside it.
fn defs() -> Vec<GroupDef> {
    let def = |count_tag, delimiter, members: &[u32]| GroupDef {
        count_tag,
        delimiter,
        members: members.to_vec(),
    };
    vec![
        def(268, 269, &[269, 270, 271, 453]),
        def(453, 448, &[448, 447, 452, 802]),
        def(802, 523, &[523, 803]),
        def(500, 501, &[501, 500, 502]),
    ]
}

/// Each order of the definitions gives the outcome the order written in
/// the FIX specification gives (outer groups first), for messages whose
/// groups nest two deep, miscount an inner group, or repeat the count tag
/// of a group that lists itself.
#[test]
fn groups_nest_whatever_order_they_were_defined_in() {
    let messages = [
        "35=W|268=2|269=0|270=1|269=1|453=2|448=P1|447=D|452=1|802=1|523=S1|803=4|\
         448=P2|447=D|452=3|100=end|",
        "35=W|268=1|269=1|453=1|448=P1|802=2|523=S1|100=end|",
        "35=W|453=1|448=P1|802=1|523=S1|523=S2|",
        "35=W|500=2|501=a|500=7|501=b|502=c|",
        "35=W|500=1|501=a|500=1|501=b|",
    ]
    .map(frame);
    let parse_all = |defs: &[GroupDef]| {
        let mut dict = crate::groups::Dictionary::empty();
        for d in defs {
            dict = dict.with_group(d.clone()).unwrap();
        }
        let mut p = Parser::with_dictionary(Arc::new(dict));
        messages
            .iter()
            .map(|m| outcome(p.parse(m)))
            .collect::<Vec<_>>()
    };
    let want = parse_all(&defs());
    // The written order reads the trees and the errors.
    assert!(
        want[0].contains("448: None") && want[0].starts_with('['),
        "{}",
        want[0]
    );
    assert!(want[1].starts_with("GroupCount { tag: 802"), "{}", want[1]);
    assert!(want[2].starts_with("GroupCount { tag: 802"), "{}", want[2]);
    assert!(want[3].starts_with('['), "{}", want[3]);
    // 500 inside its own entry is a member, not a count: its 501 starts a
    // second entry of the one declared.
    assert!(want[4].starts_with("GroupCount { tag: 500"), "{}", want[4]);
    let mut order = defs();
    for _ in 0..2 {
        order.reverse();
        for _ in 0..order.len() {
            order.rotate_left(1);
            assert_eq!(parse_all(&order), want, "defined in the order of {:?}", {
                order.iter().map(|d| d.count_tag).collect::<Vec<_>>()
            });
        }
    }
}
