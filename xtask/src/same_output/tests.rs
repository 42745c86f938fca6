//! The masks, the comparison and the generated FIX messages.

use super::inputs::fix_message;
use super::*;

fn out(stdout: &str, stderr: &str, status: &str) -> Outcome {
    Outcome {
        steps: vec![(stdout.into(), stderr.into(), status.into())],
        files: BTreeMap::new(),
    }
}

fn file(sha: &str) -> Entry {
    Entry::File {
        mode: 0o644,
        sha256: sha.into(),
        len: 1,
    }
}

#[test]
fn rates_are_masked_and_nothing_else() {
    let s = "one.txt: 13893 → 2715 bytes (19.54%, ratio 5.117), 0.7 MB/s\n";
    let m = mask(s.as_bytes(), &[Mask::Rates], "");
    assert_eq!(
        String::from_utf8(m).unwrap(),
        "one.txt: 13893 → 2715 bytes (19.54%, ratio 5.117), <rate>\n"
    );
    assert_eq!(
        mask_quantities("12 msg/s and 3.5GiB/s", true),
        "<rate> and <rate>"
    );
    assert_eq!(mask_quantities("4 files, 2 s", true), "4 files, 2 s");
}

#[test]
fn durations_are_whole_units_after_a_number() {
    let m = |s| mask_quantities(s, false);
    assert_eq!(
        m("took 1.25 s, then 350ms, 4 µs"),
        "took <duration>, then <duration>, <duration>"
    );
    // Words that start like a unit, and numbers inside words, stay.
    assert_eq!(m("4 files in 2 sets"), "4 files in 2 sets");
    assert_eq!(m("v1.2s x9ms"), "v1.2s x9ms");
    assert_eq!(m("--duration 30s"), "--duration <duration>");
}

#[test]
fn json_numbers_are_zeroed_and_the_shape_kept() {
    let doc = "{\"a\": 1.5, \"b\": [2, \"3\"], \"c\": {\"d\": -7}}";
    assert_eq!(
        mask_json_numbers(doc),
        "{\"a\":0,\"b\":[0,\"3\"],\"c\":{\"d\":0}}\n"
    );
    assert_eq!(
        mask_json_numbers("{\"x\":1}\n{\"x\":2}\nnot json 3\n"),
        "{\"x\":0}\n{\"x\":0}\nnot json 3\n"
    );
}

#[test]
fn the_temporary_folder_is_masked_always() {
    let m = mask(b"/tmp/so-1/run/a.zip: bad", &[], "/tmp/so-1");
    assert_eq!(m, b"$TMP/run/a.zip: bad");
}

#[test]
fn the_first_differing_line_is_named_with_its_stream() {
    let a = out("x\ny\nz\n", "", "exit status: 0");
    assert_eq!(first_difference(&a, &a.clone()), None);
    let d = first_difference(&a, &out("x\nY\nz\n", "", "exit status: 0")).unwrap();
    assert!(d.starts_with("stdout line 2:"), "{d}");
    assert!(
        d.contains("base \"y\\n\"") && d.contains("work \"Y\\n\""),
        "{d}"
    );
    let long = |c: char| format!("{}{c}{}\n", "a".repeat(100), "b".repeat(300));
    let d = first_difference(&out(&long('x'), "", "0"), &out(&long('y'), "", "0")).unwrap();
    assert!(d.contains(&format!("base …\"{}x", "a".repeat(40))), "{d}");
    let d = first_difference(&a, &out("x\ny\n", "", "exit status: 0")).unwrap();
    assert!(
        d.starts_with("stdout line 3:") && d.contains("work (ends)"),
        "{d}"
    );
    let d = first_difference(&a, &out("x\ny\nz\n", "warn\n", "exit status: 0")).unwrap();
    assert!(d.starts_with("stderr line 1:"), "{d}");
    let d = first_difference(&a, &out("x\ny\nz\n", "", "exit status: 1")).unwrap();
    assert_eq!(d, "exit status: base exit status: 0, work exit status: 1");
}

#[test]
fn files_left_behind_are_compared_by_contents_and_presence() {
    let mut a = out("", "", "0");
    a.files.insert("x.zst".into(), file("aa"));
    let mut b = a.clone();
    assert_eq!(first_difference(&a, &b), None);
    b.files.insert("x.zst".into(), file("bb"));
    assert!(
        first_difference(&a, &b)
            .unwrap()
            .starts_with("file x.zst: base")
    );
    b.files.remove("x.zst");
    assert_eq!(
        first_difference(&a, &b).unwrap(),
        "file x.zst: left by base only"
    );
    b.files.insert("x.zst".into(), file("aa"));
    b.files.insert("y".into(), Entry::Dir { mode: 0o755 });
    assert_eq!(
        first_difference(&a, &b).unwrap(),
        "file y: left by work only"
    );
}

#[test]
fn fix_messages_carry_their_length_and_checksum() {
    let m = fix_message("FIX.4.4", &[(35, "0")], b'|');
    // 35=0| is 5 bytes; the checksum counts each | as SOH.
    let sum: u32 = b"8=FIX.4.4\x019=5\x0135=0\x01"
        .iter()
        .map(|&b| u32::from(b))
        .sum();
    assert_eq!(
        m,
        format!("8=FIX.4.4|9=5|35=0|10={:03}|", sum % 256).into_bytes()
    );
}

#[test]
fn arguments_need_a_revision() {
    let a = |v: &[&str]| parse(&v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
    let r = a(&["1d2f33b", "--release", "--only", "zip", "--work", "HEAD"]).unwrap();
    assert_eq!(r.work.as_deref(), Some("HEAD"));
    assert_eq!(
        (r.rev.as_str(), r.profile, r.only.as_deref()),
        ("1d2f33b", Profile::Release, Some("zip"))
    );
    assert_eq!(a(&["x"]).unwrap().profile, Profile::Dev);
    assert!(a(&[]).is_err());
    assert!(a(&["x", "y"]).is_err());
    assert!(a(&["x", "--fast"]).is_err());
}
