use super::*;
use betree::{AttrType, Domain, EventBuilder};

fn schema() -> Schema {
    Schema::from_domains([
        Domain::new("i", AttrType::Int, true),
        Domain::new("s", AttrType::Str, true),
        Domain::new("b", AttrType::Bool, true),
        Domain::new("xs", AttrType::StrList, true),
        Domain::new("f", AttrType::Float, true),
    ])
    .unwrap()
}

#[test]
fn translates_the_shared_subset_and_names_the_rest() {
    let schema = schema();
    let none = BTreeSet::new();
    let all: BTreeSet<usize> = (0..5).collect();
    let t = Translator::new(&schema, &none);
    assert_eq!(
        t.translate(r#"i >= 3 and ("a" in xs or s in ("x", "y"))"#),
        Ok(r#"(i >= 3 and (xs one of ["a"] or s in ["x", "y"]))"#.into())
    );
    assert_eq!(
        t.translate("not (i = 1 or b)"),
        Ok("((i is null or i <> 1) and (b is null or not b))".into())
    );
    assert_eq!(t.translate("5 < i"), Ok("i > 5".into()));
    assert_eq!(t.translate("not i is null"), Ok("i is not null".into()));
    assert_eq!(
        Translator::new(&schema, &all).translate(r#"not (xs none of ("a", "b"))"#),
        Ok(r#"xs one of ["a", "b"]"#.into())
    );
    for (e, why) in [
        (
            r#"not (xs one of ("a"))"#,
            "a negation over a list some event leaves undefined",
        ),
        (
            r#"xs all of ("a")"#,
            "`all of` (a-tree's asks the converse)",
        ),
        ("f > 1.5", "a float"),
        ("true or b", "a `true`/`false` constant"),
        (r#"contains(s, "a")"#, "a function call"),
        ("xs is null", "`is null` on a list"),
    ] {
        assert_eq!(t.translate(e), Err(why), "{e}");
    }
}

/// Handed to a-tree as is, `not` disagrees with betree on an undefined
/// attribute (which is why it is pushed down): the id check sees it.
#[test]
fn a_bare_not_differs_on_an_undefined_attribute() {
    let schema = schema();
    let ev = EventBuilder::new(&schema).bool("b", true).unwrap().build();
    let mut index = Index::new(schema.clone());
    index.insert(1, "not (i = 1)").unwrap();
    assert_eq!(index.search(&ev).unwrap(), vec![1]);
    let none = BTreeSet::new();
    let t = Translator::new(&schema, &none);
    let mut atree: ATree<u64> = ATree::new(&t.definitions()).unwrap();
    atree.insert(&1, "not (i = 1)").unwrap();
    atree
        .insert(&2, &t.translate("not (i = 1)").unwrap())
        .unwrap();
    let aev = t.event(&atree, &ev).unwrap();
    let report = atree.search(&aev).unwrap();
    assert_eq!(report.matches(), [&2]);
}

/// Undefined attributes, negations at every depth, every operator:
/// betree and a-tree agree on every event (or `compare` fails).
#[test]
fn compare_agrees_on_undefined_attributes_and_negations() {
    let schema = schema();
    let exprs: Vec<String> = [
        "i = 1",
        "i <> 1",
        "not (i = 1)",
        "not (i <> 1 and b)",
        "not not (i < 3)",
        r#"s in ("a", "b") or not b"#,
        r#"s not in ("a") and i >= 0"#,
        r#"not (s = "a" or "x" in xs)"#,
        r#"xs none of ("x", "y")"#,
        r#""y" not in xs or i is null"#,
        r#"xs is not empty and not (s <> "b")"#,
        "f < 2.0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut events = Vec::new();
    for i in [None, Some(0), Some(1), Some(5)] {
        for s in [None, Some("a"), Some("b")] {
            for b in [None, Some(false), Some(true)] {
                for xs in [None, Some(vec![]), Some(vec!["x"]), Some(vec!["y", "z"])] {
                    let mut e = EventBuilder::new(&schema);
                    if let Some(i) = i {
                        e = e.int("i", i).unwrap();
                    }
                    if let Some(s) = s {
                        e = e.str("s", s).unwrap();
                    }
                    if let Some(b) = b {
                        e = e.bool("b", b).unwrap();
                    }
                    if let Some(xs) = xs {
                        e = e.str_list("xs", xs).unwrap();
                    }
                    events.push(e.build());
                }
            }
        }
    }
    let w = compare(&schema, &exprs, &events, 1).unwrap();
    assert_eq!(
        w.skipped,
        BTreeMap::from([
            ("a float", 1),
            ("a negation over a list some event leaves undefined", 1)
        ])
    );
    assert_eq!(w.translated, exprs.len() - 2);
    // `not (i = 1)`, `not (i <> 1 and b)`, `not b`, `not (s <> "b")`.
    assert_eq!(w.guarded, 4);
    assert!(w.matches > 0);
    assert_eq!((w.betree_rounds_ns.len(), w.atree_rounds_ns.len()), (1, 1));
}
