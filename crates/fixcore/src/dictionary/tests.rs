use super::*;
use std::process::Command;

use perfkit_testkit::fix_wire::quickfix_spec as spec_dir;

const FILES: [(&str, &str); 9] = [
    ("FIX40.xml", "FIX.4.0"),
    ("FIX41.xml", "FIX.4.1"),
    ("FIX42.xml", "FIX.4.2"),
    ("FIX43.xml", "FIX.4.3"),
    ("FIX44.xml", "FIX.4.4"),
    ("FIXT11.xml", "FIXT.1.1"),
    ("FIX50.xml", "FIX.5.0"),
    ("FIX50SP1.xml", "FIX.5.0SP1"),
    ("FIX50SP2.xml", "FIX.5.0SP2"),
];

/// Python's ElementTree, independent of roxmltree and of this reader:
/// number of field definitions, then each message's MsgType in order.
fn python_view(path: &std::path::Path) -> Option<(usize, Vec<String>)> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, xml.etree.ElementTree as E\n\
             r = E.parse(sys.argv[1]).getroot()\n\
             print(len(r.findall('fields/field')))\n\
             print(' '.join(m.get('msgtype') for m in r.findall('messages/message')))",
        )
        .arg(path)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut lines = text.lines();
    let n = lines.next()?.trim().parse().ok()?;
    let types = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    Some((n, types))
}

#[test]
fn quickfix_dictionaries_read_and_agree_with_elementtree() {
    let Some(spec) = spec_dir() else { return };
    for (file, version) in FILES {
        let path = spec.join(file);
        let d = DataDictionary::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(d.version, version, "{file}");
        let (n, types) = python_view(&path).expect("python3 reads the file");
        assert_eq!(d.field_count(), n, "{file}");
        let ours: Vec<_> = d.messages.iter().map(|m| m.msg_type.clone()).collect();
        assert_eq!(ours, types, "{file}");
    }
}

fn group(items: &[Item], tag: u32) -> &[Item] {
    items
        .iter()
        .find_map(|i| match i {
            Item::Group { tag: t, items, .. } if *t == tag => Some(&items[..]),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no group {tag}"))
}

fn required(items: &[Item], tag: u32) -> Option<bool> {
    items.iter().find(|i| i.tag() == tag).map(|i| match i {
        Item::Field { required, .. } | Item::Group { required, .. } => *required,
    })
}

#[test]
fn fix44_facts_from_the_fix_specification() {
    let Some(spec) = spec_dir() else { return };
    let d =
        DataDictionary::parse(&std::fs::read_to_string(spec.join("FIX44.xml")).unwrap()).unwrap();
    // Header: BeginString, BodyLength, MsgType first; CheckSum in trailer.
    let head: Vec<u32> = d.header.iter().take(3).map(Item::tag).collect();
    assert_eq!(head, [8, 9, 35]);
    assert_eq!(required(&d.trailer, 10), Some(true));
    let nos = d.message("D").unwrap();
    assert_eq!(nos.name, "NewOrderSingle");
    assert!(!nos.admin);
    assert_eq!(required(&nos.items, 11), Some(true), "ClOrdID");
    assert_eq!(required(&nos.items, 54), Some(true), "Side");
    assert_eq!(required(&nos.items, 40), Some(true), "OrdType");
    // Symbol comes in through the Instrument component, where QuickFIX's
    // file marks it required='N'.
    assert_eq!(required(&nos.items, 55), Some(false), "Symbol");
    // Parties (optional component) brings NoPartyIDs(453), entries led by
    // PartyID(448).
    assert_eq!(required(&nos.items, 453), Some(false));
    assert_eq!(group(&nos.items, 453)[0].tag(), 448);
    let logon = d.message("A").unwrap();
    assert!(logon.admin);
    assert_eq!(required(&logon.items, 108), Some(true), "HeartBtInt");
    let side = d.field(54).unwrap();
    assert_eq!(side.name, "Side");
    assert_eq!(side.kind, "CHAR");
    assert!(side.values.iter().any(|v| v == "1") && side.values.iter().any(|v| v == "2"));
}

#[test]
fn broken_dictionaries_are_typed_errors_with_lines() {
    let cases: [(&str, &str); 7] = [
        ("<fix", "not XML"),
        (
            "<fox major='4' minor='4'/>",
            "line 1: root element is <fox>, expected <fix>",
        ),
        (
            "<fix minor='4'/>",
            "line 1: <fix> has no usable major attribute",
        ),
        (
            "<fix major='4' minor='4'>\n<fields><field number='x' name='A' type='INT'/></fields></fix>",
            "line 2: <field> has no usable number attribute",
        ),
        (
            "<fix major='4' minor='4'><fields>\n<field number='1' name='A' type='INT'/>\n<field number='1' name='B' type='INT'/></fields></fix>",
            "line 3: field 1 defined twice",
        ),
        (
            "<fix major='4' minor='4'><messages>\n<message name='M' msgtype='Z'><field name='Nope' required='Y'/></message></messages><fields/></fix>",
            "line 2: undefined field \"Nope\"",
        ),
        (
            "<fix major='4' minor='4'><messages><message name='M' msgtype='Z'>\n<component name='C' required='Y'/></message></messages><components><component name='C'><component name='C' required='Y'/></component></components></fix>",
            "component \"C\" nests or expands too far",
        ),
    ];
    for (xml, want) in cases {
        let e = DataDictionary::parse(xml).unwrap_err().to_string();
        assert!(e.starts_with(want) || e.ends_with(want), "{xml}: {e}");
    }
}

#[test]
fn component_bomb_is_refused_quickly() {
    // Each component uses the next one twice: 2^30 fields if expanded.
    let mut xml = String::from(
        "<fix major='4' minor='4'><fields><field number='1' name='F' type='INT'/></fields><messages><message name='M' msgtype='Z'><component name='C0' required='Y'/></message></messages><components>",
    );
    for i in 0..30 {
        xml.push_str(&format!(
            "<component name='C{i}'><component name='C{n}' required='Y'/><component name='C{n}' required='Y'/></component>",
            n = i + 1
        ));
    }
    xml.push_str(
        "<component name='C30'><field name='F' required='Y'/></component></components></fix>",
    );
    let e = DataDictionary::parse(&xml).unwrap_err();
    assert!(matches!(e, DictionaryError::TooLarge { .. }), "{e}");
}

#[test]
fn fuzz_body_over_seeds() {
    if let Some(spec) = spec_dir() {
        let xml = std::fs::read(spec.join("FIX42.xml")).unwrap();
        crate::fuzzing::dictionary_xml(&xml);
        for cut in (0..xml.len()).step_by(997) {
            crate::fuzzing::dictionary_xml(&xml[..cut]);
        }
    }
    crate::fuzzing::dictionary_xml(b"<fix major='4' minor='2'><fields/></fix>");
}

#[test]
fn field_values_are_checked_with_quickfix_reasons() {
    let xml = "<fix major='4' minor='4'><fields>\
        <field number='54' name='Side' type='CHAR'><value enum='1' description='BUY'/><value enum='2' description='SELL'/></field>\
        <field number='38' name='OrderQty' type='QTY'/>\
        <field number='34' name='MsgSeqNum' type='SEQNUM'/>\
        <field number='43' name='PossDupFlag' type='BOOLEAN'/>\
        <field number='52' name='SendingTime' type='UTCTIMESTAMP'/>\
        <field number='18' name='ExecInst' type='MULTIPLEVALUESTRING'><value enum='1' description='A'/><value enum='G' description='B'/></field>\
        <field number='58' name='Text' type='STRING'/>\
        </fields></fix>";
    let d = DataDictionary::parse(xml).unwrap();
    let reason = |tag, v: &str| {
        d.check_field(tag, v.as_bytes())
            .err()
            .map(|r| (r.reason, r.tag, r.text))
    };
    for (tag, v) in [
        (54, "1"),
        (38, "100"),
        (38, "-1.5"),
        (38, "2."),
        (38, ".5"),
        (34, "7"),
        (43, "Y"),
        (52, "20260101-12:00:00.123"),
        (18, "1 G"),
        (58, "anything at all"),
    ] {
        assert_eq!(reason(tag, v), None, "{tag}={v}");
    }
    let out_of_range = "Value is incorrect (out of range) for this tag";
    let format = "Incorrect data format for value";
    for (tag, v, want) in [
        (54, "3", (5, 54, out_of_range)),
        (54, "12", (6, 54, format)),
        (18, "1 X", (5, 18, out_of_range)),
        (38, "1e3", (6, 38, format)),
        (38, ".", (6, 38, format)),
        (38, "--1", (6, 38, format)),
        (34, "x", (6, 34, format)),
        (43, "y", (6, 43, format)),
        (52, "2026-01-01 12:00", (6, 52, format)),
        (54, "", (4, 54, "Tag specified without a value")),
        (9999, "1", (0, 9999, "Invalid tag number")),
    ] {
        assert_eq!(reason(tag, v), Some(want), "{tag}={v}");
    }
}

/// The Length/Data pairs read from QuickFIX's files: FIX 4.4's are the
/// parser's standard pairs; FIX 4.2 has those less the two leg pairs; FIX
/// 5.0 SP2 adds its own, each data field paired by name.
#[test]
fn data_pairs_come_from_length_and_data_fields() {
    let Some(spec) = spec_dir() else { return };
    let read = |f: &str| DataDictionary::parse(&std::fs::read_to_string(spec.join(f)).unwrap());
    let mut want = crate::groups::STANDARD_DATA_PAIRS.to_vec();
    want.sort_unstable_by_key(|&(_, d)| d);
    assert_eq!(read("FIX44.xml").unwrap().data_pairs(), want);
    let fix42: Vec<(u32, u32)> = want
        .iter()
        .copied()
        .filter(|&(l, _)| l != 618 && l != 621)
        .collect();
    assert_eq!(read("FIX42.xml").unwrap().data_pairs(), fix42);
    let sp2 = read("FIX50SP2.xml").unwrap().data_pairs();
    assert!(sp2.contains(&(1184, 1185)), "SecurityXMLLen/SecurityXML");
    assert!(sp2.contains(&(1401, 1402)), "EncryptedPasswordLen");
    assert!(sp2.contains(&(93, 89)), "SignatureLength/Signature");
    // They make a parser dictionary that reads such a field by its length.
    let dict = crate::groups::Dictionary::empty()
        .with_data_pairs(sp2)
        .unwrap();
    let mut p = crate::parse::Parser::with_dictionary(std::sync::Arc::new(dict));
    let body = "35=x\x011184=3\x011185=<\x01>\x01";
    let head = format!("8=FIXT.1.1\x019={}\x01{body}", body.len());
    let sum: u32 = head.bytes().map(u32::from).sum();
    let m = format!("{head}10={:03}\x01", sum % 256);
    assert_eq!(
        p.parse(m.as_bytes()).unwrap().get(1185),
        Some(&b"<\x01>"[..])
    );
}

/// `tag=value|...` as the validator takes it.
fn fields(text: &str) -> Vec<(u32, Vec<u8>)> {
    text.split('|')
        .filter(|f| !f.is_empty())
        .map(|f| {
            let (t, v) = f.split_once('=').unwrap();
            (t.parse().unwrap(), v.as_bytes().to_vec())
        })
        .collect()
}

#[test]
fn whole_messages_are_judged_as_quickfix_judges_them() {
    use crate::dictionary::validate::Validation;
    use validate::Validator;
    let Some(spec) = spec_dir() else { return };
    let xml = std::fs::read_to_string(spec.join("FIX44.xml")).unwrap();
    let dict = std::sync::Arc::new(DataDictionary::parse(&xml).unwrap());
    let v = Validator::new(dict.clone(), dict.clone(), Validation::default());
    let header = "8=FIX.4.4|9=100|35=D|34=2|49=TW|52=20261123-12:00:00.000|56=ISLD|";
    let order = "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=100|40=1|";
    let check = |body: &str, trailer: &str| {
        let f = fields(&format!("{header}{body}{trailer}"));
        let refs: Vec<(u32, &[u8])> = f.iter().map(|(t, v)| (*t, &v[..])).collect();
        v.check(&refs).map_err(|r| (r.reason, r.tag))
    };
    assert_eq!(check(order, "10=000|"), Ok(()));
    // Expected (reason, tag), from the FIX 4.4 specification's rules.
    let cases: [(&str, (u32, u32)); 9] = [
        (
            "21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=100|40=1|",
            (1, 11),
        ),
        (
            "11=ID|21=1|55=MSFT|54=Z|60=20261123-12:00:00.000|38=100|40=1|",
            (5, 54),
        ),
        (
            "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=abc|40=1|",
            (6, 38),
        ),
        (
            "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=100|40=1|58=|",
            (4, 58),
        ),
        (
            "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=100|40=1|4999=x|",
            (0, 4999),
        ),
        (
            "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=100|40=1|7=1|",
            (2, 7),
        ),
        (
            "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=100|40=1|11=ID|",
            (13, 11),
        ),
        (
            "11=ID|49=TW2|21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=100|40=1|",
            (14, 49),
        ),
        (
            "11=ID|453=2|448=P1|447=D|452=1|21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=100|40=1|",
            (16, 453),
        ),
    ];
    for (body, want) in cases {
        assert_eq!(check(body, "10=000|"), Err(want), "{body}");
    }
    // Two whole Parties entries are fine.
    let parties = "11=ID|453=2|448=P1|447=D|452=1|448=P2|447=D|452=3|21=1|55=MSFT|54=1|\
                   60=20261123-12:00:00.000|38=100|40=1|";
    assert_eq!(check(parties, "10=000|"), Ok(()));
    // An unknown MsgType.
    let f = fields("8=FIX.4.4|9=5|35=ZZ|34=2|49=TW|52=20261123-12:00:00.000|56=ISLD|10=000|");
    let refs: Vec<(u32, &[u8])> = f.iter().map(|(t, v)| (*t, &v[..])).collect();
    assert_eq!(v.check(&refs).map_err(|r| (r.reason, r.tag)), Err((11, 0)));
    // The switches: empty values and unknown fields allowed when asked.
    let lax = Validator::new(
        dict.clone(),
        dict,
        Validation {
            fields_have_values: false,
            allow_unknown_msg_fields: true,
            ..Validation::default()
        },
    );
    for body in [
        "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=100|40=1|58=|",
        "11=ID|21=1|55=MSFT|54=1|60=20261123-12:00:00.000|38=100|40=1|7=1|",
    ] {
        let f = fields(&format!("{header}{body}10=000|"));
        let refs: Vec<(u32, &[u8])> = f.iter().map(|(t, v)| (*t, &v[..])).collect();
        assert_eq!(
            lax.check(&refs).map_err(|r| (r.reason, r.tag)),
            Ok(()),
            "{body}"
        );
    }
}
