use super::*;
use crate::SearchStep;
use crate::domain::{AttrType, Bounds, Domain};
use crate::event::EventBuilder;

fn schema() -> Schema {
    Schema::from_domains([
        Domain::new("i", AttrType::Int, true),
        Domain::new("il", AttrType::IntList, true),
        Domain::new("b", AttrType::Bool, true),
    ])
    .unwrap()
}

#[test]
fn shared_predicates_are_one_atom_evaluated_once_per_event() {
    let mut index = Index::new(schema());
    index.insert(1, "il one of (1, 2, 3) and b").unwrap();
    index.insert(2, "il one of (3, 2, 1) or i = 4").unwrap();
    index.insert(3, "not il one of (1, 2, 3)").unwrap();
    // The set is normalised, so all three share one atom; `i = 4` is another.
    assert_eq!(index.atoms.preds.iter().flatten().count(), 2);
    let s = index.schema().clone();
    let ev = EventBuilder::new(&s)
        .int_list("il", [9, 9, 9, 9, 3])
        .unwrap()
        .bool("b", true)
        .unwrap()
        .build();
    // The event's list is stored as the set [3, 9]; with memoization only
    // the first use pays the merge against (1, 2, 3): three steps.
    let mut it = index.search_iter(&ev).unwrap();
    let SearchStep::Done(ids) = index.search_next(&mut it, u64::MAX) else {
        panic!()
    };
    assert_eq!(ids, vec![1, 2]);
    // Expression 1 posts `b` and the set (it needs both); 3 (a `not` of
    // the set) is gated, killed by a hit on the set; 2 (an `or`) has no
    // indexed conjunct and is on the scan list. Selection: the root; four
    // values probed (`i`, undefined; the list's two elements; `b`); one
    // kill (3, by the element 3); two terms taken (the set, by the
    // element 3, and `b`) with one posting entry each; one gated entry;
    // one scan-list entry.
    let selection = 1 + 4 + 1 + (2 + 2) + 1 + 1;
    // Evaluation: two candidates taken; expression 1 is decided by its
    // selection (both its conjuncts were counted, so its jump program is
    // the constant `true`: no step); expression 2 enters its `or` at the
    // set (2 + 1; decided by the selection's hit, no loop steps) and is
    // decided.
    let evaluation = 2 + 3;
    assert_eq!(it.reductions(), selection + evaluation);
    for id in 1..=3 {
        index.delete(id).unwrap();
    }
    assert_eq!(index.atoms.preds.iter().flatten().count(), 0);
    assert!(index.is_empty());
}

#[test]
fn a_failed_insert_leaves_no_atom_behind() {
    let mut index = Index::new(schema());
    index.insert(1, "i = 3").unwrap();
    // Predicates are interned as they are read: a type error after
    // two of them (one shared with expression 1), a syntax error after
    // two, a type error after a set, a boolean and a list test.
    for bad in [
        "i = 3 and i = 4 and il = 5",
        "i = 4 or i = 5 and (",
        "i in (7, 8) or b or il one of (1) or i = \"x\"",
    ] {
        index.insert(2, bad).unwrap_err();
        assert_eq!(index.atoms.preds.iter().flatten().count(), 1, "{bad}");
        assert_eq!(index.atoms.refs.iter().sum::<u32>(), 1, "{bad}");
        assert_eq!(index.counting.probes, vec![0], "{bad}");
    }
    // The shared atom has one reference left: deleting 1 frees it.
    index.delete(1).unwrap();
    assert_eq!(index.atoms.preds.iter().flatten().count(), 0);
    assert!(index.counting.probes.is_empty());
    assert!(index.counting.lists.all_empty());
    index.insert(2, "i = 4 or il one of (1)").unwrap();
    let s = index.schema().clone();
    let ev = EventBuilder::new(&s).int("i", 4).unwrap().build();
    assert_eq!(index.search(&ev).unwrap(), vec![2]);
}

#[test]
fn a_large_expression_keeps_its_atoms_registers_its_conjuncts_and_searches_the_same() {
    let schema = Schema::from_domains([
        Domain::new("a", AttrType::Int, true),
        Domain::new("b", AttrType::Int, true),
        Domain::new("c", AttrType::Int, true),
    ])
    .unwrap();
    // Over LARGE_EXPR_BYTES, repeating one predicate.
    let n = 2000;
    let chain = (0..n)
        .map(|i| format!("a = {i}"))
        .chain(["a = 5".to_string()])
        .collect::<Vec<_>>()
        .join(" or ");
    assert!(chain.len() > LARGE_EXPR_BYTES);
    let mut index = Index::new(schema.clone());
    // 1: a conjunct (`b = 7`, posted) and a long `or`; 2: a small
    // expression with one of the `or`'s predicates; 3: a long `or`
    // with no conjunct (the scan list) and a range.
    index.insert(1, &format!("b = 7 and ({chain})")).unwrap();
    // Its own atoms, one per predicate leaf; only `b` is probed.
    assert_eq!(index.atoms.by_pred.len(), 0);
    assert_eq!(index.atoms.preds.iter().flatten().count(), n + 2);
    assert_eq!(index.counting.probes, vec![1]);
    index.insert(2, "a = 5 or c = 1").unwrap();
    assert_eq!(index.atoms.by_pred.len(), 2);
    assert_eq!(index.counting.probes, vec![0, 1, 2]);
    index.insert(3, &format!("{chain} or c > 10")).unwrap();
    let n = n as i64;
    // Plain arithmetic on the event's values.
    let expected = |live: &[Id], a: i64, b: i64, c: i64| -> Vec<Id> {
        let m = [b == 7 && a < n, a == 5 || c == 1, a < n || c > 10];
        live.iter()
            .copied()
            .filter(|&id| m[id as usize - 1])
            .collect()
    };
    let check = |index: &Index, live: &[Id]| {
        let mut events = Vec::new();
        let mut want = Vec::new();
        for a in [0, 5, 6, n - 1, n, n + 7] {
            for b in [7, 8] {
                for c in [1, 5, 20] {
                    events.push(
                        EventBuilder::new(&schema)
                            .int("a", a)
                            .unwrap()
                            .int("b", b)
                            .unwrap()
                            .int("c", c)
                            .unwrap()
                            .build(),
                    );
                    want.push(expected(live, a, b, c));
                }
            }
        }
        for (ev, want) in events.iter().zip(&want) {
            assert_eq!(&index.search(ev).unwrap(), want);
            // The budgeted search, a few reductions at a time.
            let mut it = index.search_iter(ev).unwrap();
            let got = loop {
                if let SearchStep::Done(ids) = index.search_next(&mut it, 7) {
                    break ids;
                }
            };
            assert_eq!(&got, want);
        }
        assert_eq!(index.search_batch(&events).unwrap(), want);
        // Reused result lists: longer and dirty before, then fewer events.
        let mut out = vec![vec![99, 98]; want.len() + 3];
        index.search_batch_into(&events, &mut out).unwrap();
        assert_eq!(out, want);
        index.search_batch_into(&events[..4], &mut out).unwrap();
        assert_eq!(out, want[..4]);
    };
    check(&index, &[1, 2, 3]);
    index.delete(2).unwrap();
    assert_eq!(index.counting.probes, vec![1]);
    check(&index, &[1, 3]);
    index.delete(1).unwrap();
    check(&index, &[3]);
    index.delete(3).unwrap();
    assert!(index.counting.lists.all_empty());
    assert!(index.counting.probes.is_empty());
    assert_eq!(index.atoms.preds.iter().flatten().count(), 0);
}

#[test]
fn a_value_shared_by_sets_outlives_the_atom_it_was_read_from() {
    let schema = Schema::from_domains([
        Domain::new("i", AttrType::Int, true),
        Domain::new("s", AttrType::Str, true),
    ])
    .unwrap();
    let mut index = Index::new(schema.clone());
    // The key lists of 2 and "b" are first made by sets, where the
    // value is not the set's first one; deleting those sets leaves the
    // lists to atoms holding the value elsewhere.
    index
        .insert(1, r#"i in (1, 2, 3) or s in ("a", "b")"#)
        .unwrap();
    index
        .insert(2, r#"i in (2, 5) or s in ("b", "c")"#)
        .unwrap();
    index.insert(3, r#"i = 2 or s = "b""#).unwrap();
    let ev = |i: i64, s: &str| {
        EventBuilder::new(&schema)
            .int("i", i)
            .unwrap()
            .str("s", s)
            .unwrap()
            .build()
    };
    assert_eq!(index.search(&ev(2, "z")).unwrap(), vec![1, 2, 3]);
    index.delete(1).unwrap();
    assert_eq!(index.search(&ev(2, "z")).unwrap(), vec![2, 3]);
    assert_eq!(index.search(&ev(9, "b")).unwrap(), vec![2, 3]);
    assert_eq!(index.search(&ev(3, "a")).unwrap(), Vec::<Id>::new());
    assert_eq!(index.search(&ev(5, "z")).unwrap(), vec![2]);
    index.delete(2).unwrap();
    assert_eq!(index.search(&ev(2, "z")).unwrap(), vec![3]);
    assert_eq!(index.search(&ev(9, "b")).unwrap(), vec![3]);
    assert_eq!(index.search(&ev(5, "c")).unwrap(), Vec::<Id>::new());
    index.delete(3).unwrap();
    assert!(index.counting.lists.all_empty());
}

#[test]
fn memory_counts_what_predicates_and_keys_hold() {
    let schema = Schema::from_domains([Domain::new("s", AttrType::Str, true)]).unwrap();
    let mut index = Index::new(schema);
    let before = index.memory_bytes();
    let words: Vec<String> = (0..200)
        .map(|i| format!("\"{}{i:03}\"", "w".repeat(100)))
        .collect();
    index
        .insert(1, &format!("s in ({})", words.join(", ")))
        .unwrap();
    // The 200 strings of ~103 bytes are held at least by the string
    // table (predicates and key tables hold their numbers).
    let grown = index.memory_bytes() - before;
    assert!(grown >= 200 * 103, "grew by {grown}");
    // A string is held once, in the string table: no predicate or key
    // table keeps a copy of its own.
    let (before, strings) = (index.memory_bytes(), index.strings.heap_bytes());
    let long = "k".repeat(5000);
    index.insert(2, &format!("s = \"{long}\"")).unwrap();
    let grown = index.memory_bytes() - before;
    let in_strings = index.strings.heap_bytes() - strings;
    assert!(
        grown - in_strings < 500,
        "grew by {grown}, {in_strings} of it strings"
    );
    assert_eq!(index.strings.mark(), 201);
}

#[test]
fn every_indexable_conjunct_is_counted() {
    let mut index = Index::new(schema());
    index.insert(1, "i = 3 and b").unwrap();
    index.insert(2, "b and i in (4, 5)").unwrap();
    index.insert(3, "not b").unwrap();
    index.insert(4, "b").unwrap();
    index.insert(5, "i >= 4 and i < 6 and b").unwrap();
    index.insert(6, "i > 5 and b").unwrap();
    index.insert(7, "i <= 5 and il one of (7, 8)").unwrap();
    // Ranges alone: gated, a candidate unless a range is false.
    index.insert(8, "i > 2 and i <= 9").unwrap();
    index.insert(9, "i < 5").unwrap();
    // `not b`: gated, killed when `b` is true.
    assert!(index.counting.scan.is_empty());
    assert_eq!(index.counting.gated.len(), 3);
    assert_eq!(index.counting.threshold_count(0), 7);
    let s = index.schema().clone();
    let ev = EventBuilder::new(&s)
        .int("i", 5)
        .unwrap()
        .bool("b", true)
        .unwrap()
        .int_list("il", [1, 8])
        .unwrap()
        .build();
    let mut sel = Selection::default();
    index.select(&ev, &mut sel);
    let mut ids: Vec<Id> = sel
        .cands()
        .iter()
        .map(|&c| index.slots[(c & !crate::counting::PROVEN) as usize].id)
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![2, 4, 5, 7, 8], "1, 3, 6 and 9 miss a conjunct");
    assert_eq!(index.search(&ev).unwrap(), vec![2, 4, 5, 7, 8]);
    // With `i` undefined every range conjunct is false.
    let ev = EventBuilder::new(&s).bool("b", true).unwrap().build();
    index.select(&ev, &mut sel);
    let mut ids: Vec<Id> = sel
        .cands()
        .iter()
        .map(|&c| index.slots[(c & !crate::counting::PROVEN) as usize].id)
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![4]);
    // Delete undoes every posting, key and threshold.
    for id in 1..=9 {
        index.delete(id).unwrap();
    }
    assert_nothing_posted(&index.counting);
    assert!(index.search(&ev).unwrap().is_empty());
}

#[test]
fn conjuncts_proven_by_the_selection_are_not_evaluated_again_but_float_ranges_are() {
    let schema = Schema::from_domains([
        Domain::new("i", AttrType::Int, true),
        Domain::new("f", AttrType::Float, true),
        Domain::new("b", AttrType::Bool, true),
    ])
    .unwrap();
    let mut index = Index::new(schema.clone());
    index.insert(1, "i >= 3 and b").unwrap();
    index.insert(2, "f < 1.0").unwrap();
    index.insert(3, "f >= 0.5 and i < 9 and not b").unwrap();
    // Expression 1's conjuncts are all proven by its selection: its jump
    // program is the constant `true`; 2's float range stays (a NaN value
    // kills no upper threshold yet satisfies none).
    let entry = |id: Id| index.slots[index.by_id[&id] as usize].entry;
    assert_eq!(entry(1), crate::program::ACCEPT);
    assert!(entry(2) < REJECT);
    let search = |f: f64, i: i64, b: bool| {
        let ev = EventBuilder::new(&schema)
            .float("f", f)
            .unwrap()
            .int("i", i)
            .unwrap()
            .bool("b", b)
            .unwrap()
            .build();
        index.search(&ev).unwrap()
    };
    assert_eq!(search(f64::NAN, 5, true), vec![1]);
    assert_eq!(search(f64::NAN, 5, false), Vec::<Id>::new());
    assert_eq!(search(0.7, 5, false), vec![2, 3]);
    assert_eq!(search(0.7, 2, true), vec![2]);
    assert_eq!(search(1.5, 9, false), Vec::<Id>::new());
}

#[test]
fn negated_conjuncts_are_killed_by_a_hit_and_keep_undefined_semantics() {
    let mut index = Index::new(schema());
    // `not` of a boolean or of a hit is true on an undefined attribute;
    // the negated forms (`<>`, `none of`) are false there.
    index.insert(1, "not b").unwrap();
    index.insert(2, "not (i = 3)").unwrap();
    index.insert(3, "i <> 3").unwrap();
    index.insert(4, "not (il one of (1, 2))").unwrap();
    index.insert(5, "il none of (1, 2)").unwrap();
    index
        .insert(6, "i in (3, 4) and not b and il none of (2)")
        .unwrap();
    // Every one is posted: nothing is left on the scan list.
    assert!(index.counting.scan.is_empty());
    let s = index.schema().clone();
    let none = EventBuilder::new(&s).build();
    assert_eq!(index.search(&none).unwrap(), vec![1, 2, 4]);
    let hit = EventBuilder::new(&s)
        .int("i", 3)
        .unwrap()
        .bool("b", true)
        .unwrap()
        .int_list("il", [2, 7])
        .unwrap()
        .build();
    assert!(index.search(&hit).unwrap().is_empty());
    let miss = EventBuilder::new(&s)
        .int("i", 4)
        .unwrap()
        .bool("b", false)
        .unwrap()
        .int_list("il", [5])
        .unwrap()
        .build();
    assert_eq!(index.search(&miss).unwrap(), vec![1, 2, 3, 4, 5, 6]);
    // Not killed proves each of these conjuncts: no candidate is evaluated.
    let mut sel = Selection::default();
    index.select(&miss, &mut sel);
    assert_eq!(sel.cands().len(), 6);
    assert!(
        sel.cands()
            .iter()
            .all(|&c| c & crate::counting::PROVEN != 0)
    );
    for id in 1..=6 {
        index.delete(id).unwrap();
    }
    assert_nothing_posted(&index.counting);
}

/// After every expression is deleted: no posting, key, kill or threshold
/// is left.
fn assert_nothing_posted(c: &crate::counting::Counting) {
    assert!(c.scan.is_empty() && c.gated.is_empty() && c.probes.is_empty());
    assert!(c.lists.all_empty());
    assert!(c.bool_post.iter().all(Vec::is_empty));
    assert!(c.bool_kill.iter().all(Vec::is_empty) && c.key_kill.iter().all(Vec::is_empty));
    assert_eq!(c.threshold_count(0), 0);
}

/// A negated form and its negation: `i <> 3` posts a kill on `i = 3`'s
/// hit, which proves `i <> 3` itself but says nothing for `not (i <> 3)`.
/// The oracle is logic: the conjunction is false on every event.
#[test]
fn a_negated_form_and_its_negation_never_match() {
    let mut index = Index::new(schema());
    index.insert(1, "i <> 3 and not (i <> 3)").unwrap();
    index.insert(2, "not (i <> 3) and i <> 3 and b").unwrap();
    let s = index.schema().clone();
    for i in [2, 3, 4] {
        let ev = EventBuilder::new(&s)
            .int("i", i)
            .unwrap()
            .bool("b", true)
            .unwrap()
            .build();
        assert!(index.search(&ev).unwrap().is_empty(), "i = {i}");
    }
    let ev = EventBuilder::new(&s).bool("b", true).unwrap().build();
    assert!(index.search(&ev).unwrap().is_empty(), "i undefined");
}

#[test]
fn keys_past_a_tag_are_found_by_their_value() {
    // Integer keys in `0..u32::MAX` are their own tag in the key tables;
    // the others (negative, `u32::MAX` and above) share one tag and are
    // told apart by the value read off their key list.
    let big = u32::MAX as i64;
    let vals = [-1, 0, big - 1, big, big + 1, -big, i64::MIN, i64::MAX];
    let mut index = Index::new(schema());
    for (k, v) in vals.iter().enumerate() {
        index.insert(k as u64 + 1, &format!("i = {v}")).unwrap();
        index
            .insert(100 + k as u64, &format!("il one of ({v}, 7)"))
            .unwrap();
    }
    let s = index.schema().clone();
    for (k, &v) in vals.iter().enumerate() {
        let ev = EventBuilder::new(&s)
            .int("i", v)
            .unwrap()
            .int_list("il", [v])
            .unwrap()
            .build();
        assert_eq!(
            index.search(&ev).unwrap(),
            vec![k as u64 + 1, 100 + k as u64]
        );
    }
    let ev = EventBuilder::new(&s).int("i", big + 2).unwrap().build();
    assert_eq!(index.search(&ev).unwrap(), Vec::<Id>::new());
    // Deleting finds the same entries.
    for k in 0..vals.len() as u64 {
        index.delete(k + 1).unwrap();
        index.delete(100 + k).unwrap();
    }
    assert!(index.counting.lists.all_empty());
}

#[test]
fn a_bulk_load_merges_its_thresholds_when_it_ends() {
    let mut index = Index::new(schema());
    let mut bulk = index.bulk();
    // More than a merge's worth one by one (`PENDING_MIN`).
    for k in 0..300 {
        bulk.insert(k + 1, &format!("i >= {k} and not (i < {})", k / 2))
            .unwrap();
    }
    assert_eq!(bulk.index.counting.pending_thresholds(), 600);
    drop(bulk);
    assert_eq!(index.counting.pending_thresholds(), 0);
    let s = index.schema().clone();
    let ev = EventBuilder::new(&s).int("i", 10).unwrap().build();
    assert_eq!(index.search(&ev).unwrap(), (1..=11).collect::<Vec<Id>>());
}

#[test]
fn a_bulk_load_posts_its_key_entries_when_it_ends() {
    let mut index = Index::new(schema());
    let mut bulk = index.bulk();
    for k in 0..50u64 {
        // A key posting (under `i = k`'s list) and a kill entry (`not
        // (i = k)`, under the same list).
        bulk.insert(k + 1, &format!("i = {} and b", k % 5)).unwrap();
        bulk.insert(100 + k, &format!("not (i = {}) and i > 0", k % 7))
            .unwrap();
    }
    let c = &bulk.index.counting;
    assert!(!c.is_settled(), "the entries wait while the load runs");
    assert!(c.key_post.iter().all(Vec::is_empty) && c.key_kill.iter().all(Vec::is_empty));
    drop(bulk);
    assert!(index.counting.is_settled());
    let s = index.schema().clone();
    let ev = EventBuilder::new(&s)
        .int("i", 3)
        .unwrap()
        .bool("b", true)
        .unwrap()
        .build();
    let mut want: Vec<Id> = (0..50).filter(|k| k % 5 == 3).map(|k| k + 1).collect();
    want.extend((0..50).filter(|k| k % 7 != 3).map(|k| 100 + k));
    assert_eq!(index.search(&ev).unwrap(), want);
}

#[test]
fn a_leaked_bulk_load_refuses_searches_until_the_index_changes() {
    let mut index = Index::new(schema());
    let mut bulk = index.bulk();
    bulk.insert(1, "i = 3").unwrap();
    bulk.insert(2, "not (i = 4)").unwrap();
    std::mem::forget(bulk);
    let s = index.schema().clone();
    let ev = EventBuilder::new(&s).int("i", 3).unwrap().build();
    // Searching with entries unposted would miss expression 1.
    assert_eq!(index.search(&ev), Err(Error::BulkUnfinished));
    index.insert(3, "i = 3 or b").unwrap();
    assert_eq!(index.search(&ev).unwrap(), vec![1, 2, 3]);
    // A delete finishes a leaked load too.
    let mut bulk = index.bulk();
    bulk.insert(4, "i = 3").unwrap();
    std::mem::forget(bulk);
    assert_eq!(index.search(&ev), Err(Error::BulkUnfinished));
    index.delete(2).unwrap();
    assert_eq!(index.search(&ev).unwrap(), vec![1, 3, 4]);
}

#[test]
fn stamps_are_forgotten_after_their_generation_wraps() {
    // The stamps' one-byte generation wraps every 255 searches: a stale
    // stamp would make a later event see an earlier one's hits.
    let mut index = Index::new(schema());
    index.insert(1, "i = 1 and b").unwrap();
    index.insert(2, "il one of (1, 2) or i > 5").unwrap();
    index.insert(3, "not (i = 1) and i <> 7").unwrap();
    let s = index.schema().clone();
    let hit = EventBuilder::new(&s)
        .int("i", 1)
        .unwrap()
        .int_list("il", [2])
        .unwrap()
        .bool("b", true)
        .unwrap()
        .build();
    let miss = EventBuilder::new(&s).int("i", 3).unwrap().build();
    let mut scratch = Scratch::default();
    let mut out = Vec::new();
    // `hit` once, then `miss` for more than a wrap: the atoms only `hit`
    // stamped must not look hit again when the generation comes round.
    for k in 0..600 {
        let (ev, want) = if k == 0 {
            (&hit, vec![1, 2])
        } else {
            (&miss, vec![3])
        };
        index.search_with(&mut scratch, ev, &mut out).unwrap();
        assert_eq!(out, want, "search {k}");
    }
}

#[test]
fn list_marks_are_forgotten_after_their_numbers_wrap() {
    // A list attribute's entries take the next one-byte number as they
    // are counted, which comes round every 255 list attributes: a mark
    // left from 255 attributes ago would look like this one's and its hit
    // would not be counted. Expression 2 gives every miss entries to
    // count, so that each search numbers one attribute.
    let mut index = Index::new(schema());
    index.insert(1, "il one of (1, 2) and i = 1").unwrap();
    index.insert(2, "il one of (9)").unwrap();
    let s = index.schema().clone();
    let list = |x: i64| {
        EventBuilder::new(&s)
            .int("i", 1)
            .unwrap()
            .int_list("il", [x])
            .unwrap()
            .build()
    };
    let (hit, miss) = (list(1), list(9));
    let mut scratch = Scratch::default();
    let mut out = Vec::new();
    // One list attribute a search, and a hit every 255th: each hit takes
    // the number the one before took unless the marks are cleared.
    for k in 0..600 {
        let (ev, want) = if k % 255 == 0 {
            (&hit, vec![1])
        } else {
            (&miss, vec![2])
        };
        index.search_with(&mut scratch, ev, &mut out).unwrap();
        assert_eq!(out, want, "search {k}");
    }
}

#[test]
fn an_atom_is_stamped_once_some_program_tests_it() {
    // `i = 1` is a proven conjunct of 1 (never tested) and a branch of
    // 2's `or`, which 2's program tests by its stamp: the search stamps
    // the atom from then until the atom is freed.
    let mut index = Index::new(schema());
    let s = index.schema().clone();
    let ev = EventBuilder::new(&s)
        .int("i", 1)
        .unwrap()
        .bool("b", true)
        .unwrap()
        .build();
    let ids = |index: &Index| index.search(&ev).unwrap();
    index.insert(1, "i = 1 and b").unwrap();
    assert_eq!(ids(&index), [1]);
    index.insert(2, "(i = 1 or i > 5 and b) and b").unwrap();
    assert_eq!(ids(&index), [1, 2]);
    index.delete(2).unwrap();
    assert_eq!(ids(&index), [1]);
    index.insert(2, "(i = 1 or i > 5 and b) and b").unwrap();
    index
        .insert(3, "(i = 1 or il one of (4)) and not b")
        .unwrap();
    assert_eq!(ids(&index), [1, 2]);
    index.delete(1).unwrap();
    index.delete(3).unwrap();
    assert_eq!(ids(&index), [2]);
    index.delete(2).unwrap();
    index.insert(4, "b and (i = 1 or il one of (4))").unwrap();
    assert_eq!(ids(&index), [4]);
    assert!(!index.counting.tested.all_empty());
    index.delete(4).unwrap();
    assert!(index.counting.tested.all_empty());
}

#[test]
fn list_marks_hold_past_255_list_attributes_in_one_event() {
    // 300 list attributes, all in the event: l0 and l255 take the same
    // one-byte number, so 9's hit on l255 counts only if the marks are
    // cleared between them.
    let doms: Vec<Domain> = (0..300)
        .map(|k| Domain::new(format!("l{k}"), AttrType::IntList, true))
        .collect();
    let mut index = Index::new(Schema::from_domains(doms).unwrap());
    for k in 0..300u64 {
        index.insert(100 + k, &format!("l{k} one of (1)")).unwrap();
    }
    index
        .insert(9, "l0 one of (1) and l255 one of (1)")
        .unwrap();
    let s = index.schema().clone();
    let mut b = EventBuilder::new(&s);
    for k in 0..300 {
        b = b.int_list(&format!("l{k}"), [1]).unwrap();
    }
    let ev = b.build();
    let ids = index.search(&ev).unwrap();
    assert!(ids.contains(&9), "{ids:?}");
    assert_eq!(ids.len(), 301);
}

#[test]
fn a_memo_entry_is_forgotten_after_its_generation_wraps() {
    let mut memo = Memo::default();
    memo.reset(8);
    memo.set(5, true);
    assert_eq!(memo.get(5), Some(true));
    for k in 0..400 {
        memo.reset(8);
        assert_eq!(memo.get(5), None, "reset {k}");
    }
}

/// Records what a batch search gives a [`crate::MatchSink`], in order.
#[derive(Default)]
struct Recorded {
    events: usize,
    ids: Vec<(usize, Id)>,
}

impl crate::MatchSink for Recorded {
    fn start(&mut self, events: usize) {
        self.events = events;
        self.ids.clear();
    }

    fn push(&mut self, event: usize, id: Id) {
        assert!(event < self.events, "event {event} of {}", self.events);
        self.ids.push((event, id));
    }
}

#[test]
fn a_match_sink_gets_each_events_ids_in_order_across_chunks() {
    use crate::{BatchPath, MatchSink, reference};
    // Three chunks of the batch path each: 512, 512 and 77 events.
    const EVENTS: usize = 1101;
    let check = |index: &Index, events: &[Event], want: &[Vec<Id>]| {
        let mut got = Recorded::default();
        for path in [BatchPath::Auto, BatchPath::Lanes] {
            index.search_batch_by(events, &mut got, path).unwrap();
            assert_eq!(got.events, events.len());
            let mut lists = vec![Vec::new(); events.len()];
            for &(e, id) in &got.ids {
                lists[e].push(id);
            }
            assert_eq!(lists, want, "{path:?}");
        }
    };
    // Dense: most expressions are candidates of every event, so `Auto`
    // searches bit-parallel. The oracle: one plain search per event.
    let schema = Schema::boolean_params(8);
    let mut index = Index::new(schema.clone());
    for (i, e) in reference::random_expressions(8, 60, 3).iter().enumerate() {
        index.insert(i as Id + 1, e).unwrap();
    }
    let events: Vec<Event> = reference::random_events(8, EVENTS, 4)
        .iter()
        .map(|v| Event::from_bools(&schema, v).unwrap())
        .collect();
    let want: Vec<Vec<Id>> = events.iter().map(|e| index.search(e).unwrap()).collect();
    assert!(want.iter().filter(|w| !w.is_empty()).count() > 100);
    check(&index, &events, &want);
    // Sparse: each event selects one expression of 100, so `Auto`
    // searches event by event. The oracle: `x = k` matches k alone.
    let sparse = Schema::from_domains([Domain::new("x", AttrType::Int, false)]).unwrap();
    let mut by_value = Index::new(sparse.clone());
    for k in 0..100 {
        by_value.insert(k + 1, &format!("x = {k}")).unwrap();
    }
    let mut rng = fastrand::Rng::with_seed(5);
    let xs: Vec<i64> = (0..EVENTS).map(|_| rng.i64(0..100)).collect();
    let events: Vec<Event> = xs
        .iter()
        .map(|&x| EventBuilder::new(&sparse).int("x", x).unwrap().build())
        .collect();
    let want: Vec<Vec<Id>> = xs.iter().map(|&x| vec![x as Id + 1]).collect();
    check(&by_value, &events, &want);
    // A bad event: the sink is started over with no events.
    let mut got = Recorded::default();
    got.start(2);
    got.push(1, 7);
    let other = Event::from_bools(&Schema::boolean_params(3), &[true; 3]).unwrap();
    let bad = [events[0].clone(), other];
    assert!(
        by_value
            .search_batch_by(&bad, &mut got, BatchPath::Lanes)
            .is_err()
    );
    assert_eq!((got.events, got.ids.len()), (0, 0));
}

/// Many matches are read off the id-ordered slot list, few are sorted
/// (`Index::collect`); both must give ascending ids, whatever order the ids
/// came in and whichever slots were reused. The oracle is the index's own
/// contents, known by construction: `par1` expressions match the first
/// event (most of the index: the slot list), `par2 and not par1` ones the
/// second (a few: the sort).
#[test]
fn matches_come_in_id_order_however_they_are_collected() {
    let schema = Schema::boolean_params(2);
    let mut index = Index::new(schema.clone());
    let mut rng = fastrand::Rng::with_seed(7);
    let mut ids: Vec<u64> = (1..=1000).collect();
    rng.shuffle(&mut ids);
    let few = |id: u64| id.is_multiple_of(40);
    let text = |id: u64| if few(id) { "par2 and not par1" } else { "par1" };
    for &id in &ids {
        index.insert(id, text(id)).unwrap();
    }
    // Free a third of the slots and fill them with ids below and above
    // the others, so that slot order and id order part.
    for &id in ids.iter().step_by(3) {
        index.delete(id).unwrap();
    }
    let mut live: Vec<u64> = ids.iter().copied().skip(1).step_by(3).collect();
    live.extend(ids.iter().copied().skip(2).step_by(3));
    let below_and_above = (0..200u64).map(|k| match k % 2 {
        0 => 5000 + k,
        _ => k * 1_000_000,
    });
    for id in below_and_above {
        index.insert(id, text(id)).unwrap();
        live.push(id);
    }
    live.sort_unstable();
    for (bools, want_few) in [([true, false], false), ([false, true], true)] {
        let ev = Event::from_bools(&schema, &bools).unwrap();
        let want: Vec<u64> = live
            .iter()
            .copied()
            .filter(|&id| few(id) == want_few)
            .collect();
        // Which way this event's matches are collected: the condition
        // `collect` tests.
        let m = want.len();
        assert_eq!(
            index.order.len() < m * m.max(2).ilog2() as usize,
            !want_few,
            "{m} matches in {} slots",
            index.order.len()
        );
        assert_eq!(index.search(&ev).unwrap(), want);
        assert_eq!(index.search_all(index.search_iter(&ev).unwrap()), want);
        let mut it = index.search_iter(&ev).unwrap();
        let got = loop {
            if let SearchStep::Done(ids) = index.search_next(&mut it, 7) {
                break ids;
            }
        };
        assert_eq!(got, want);
    }
}

/// While every insert keeps ids ascending with slots, many matches are
/// read off the slots' bits in slot order (`Index::ordered`); an insert
/// that breaks it (a smaller id in a new slot, a larger one in a reused
/// slot) must send the search back to the id-ordered list, and a delete
/// or a reused slot that fits its place must not. The oracle is the set
/// of live ids, known by construction (every expression is `par1`, so the
/// event matches them all).
#[test]
fn matches_read_in_slot_order_only_while_slots_keep_id_order() {
    let schema = Schema::boolean_params(1);
    let ev = Event::from_bools(&schema, &[true]).unwrap();
    let mut index = Index::new(schema);
    let mut live: Vec<u64> = (1..=1000).map(|k| k * 10).collect();
    for &id in &live {
        index.insert(id, "par1").unwrap();
    }
    let check = |index: &Index, live: &mut Vec<u64>, ordered: bool| {
        live.sort_unstable();
        assert_eq!(index.ordered, ordered, "{} ids", live.len());
        assert_eq!(&index.search(&ev).unwrap(), live);
        assert_eq!(&index.search_all(index.search_iter(&ev).unwrap()), live);
    };
    check(&index, &mut live, true);
    // A delete, and its slot reused by an id between its neighbours'.
    index.delete(5000).unwrap();
    live.retain(|&id| id != 5000);
    check(&index, &mut live, true);
    index.insert(5005, "par1").unwrap();
    live.push(5005);
    check(&index, &mut live, true);
    // A reused slot given an id beyond its neighbours'.
    index.delete(30).unwrap();
    index.insert(20_000, "par1").unwrap();
    live.retain(|&id| id != 30);
    live.push(20_000);
    check(&index, &mut live, false);

    // A smaller id in a new slot.
    let mut index = Index::new(Schema::boolean_params(1));
    let mut live: Vec<u64> = (1..=1000).map(|k| k * 10).collect();
    for &id in &live {
        index.insert(id, "par1").unwrap();
    }
    index.insert(5, "par1").unwrap();
    live.push(5);
    check(&index, &mut live, false);
}

/// Integer comparisons the selection does not decide are tested in place:
/// each such step carries `INT_ATOM` and is either folded (`SHORT_INT`: a
/// constant of 32 bits, its weight kept in the step) or followed by its
/// operand, and no step jumps to an operand. Searches agree with the
/// predicates' own evaluation on constants of every width and sign, with
/// every operator, for values on and around each constant and for an
/// undefined attribute, in one call and in budgeted steps.
#[test]
fn integer_comparisons_are_tested_in_place_with_their_operands() {
    use crate::program::{ATOM, INT_ATOM, MAX_STEP_WEIGHT, SHORT_INT};
    let s = Schema::from_domains([
        Domain::new("x", AttrType::Int, true),
        Domain::new("y", AttrType::Int, true),
    ])
    .unwrap();
    let consts = [
        0,
        -1,
        7,
        i32::MAX as i64,
        i32::MIN as i64,
        i32::MAX as i64 + 1,
        i32::MIN as i64 - 1,
        u32::MAX as i64,
        1 << 32,
        -(1 << 32) - 1,
        i64::MAX,
        i64::MIN + 1,
    ];
    let ops = ["<", "<=", ">", ">=", "=", "<>"];
    let mut index = Index::new(s.clone());
    let mut texts = Vec::new();
    for c in consts {
        for (j, op) in ops.iter().enumerate() {
            // Inside an `or` under a `not`: evaluated, never proven by the
            // selection, and the jumps around it must survive the operand
            // steps put between the steps.
            let text = format!("not (x {op} {c} or y > {j}) or (y = 100 and x {op} {c})");
            index.insert(texts.len() as u64 + 1, &text).unwrap();
            texts.push(text);
        }
    }
    let (mut in_place, mut folded) = (0, 0);
    for slot in &index.slots {
        let code = &index.code[slot.code_start as usize..][..slot.code_len as usize];
        let mut operands = Vec::new();
        for (k, st) in code.iter().enumerate() {
            if operands.contains(&k) {
                continue;
            }
            if st.test & ATOM != 0 && st.test & INT_ATOM != 0 {
                in_place += 1;
                if st.test & SHORT_INT != 0 {
                    folded += 1;
                    assert!((2..=MAX_STEP_WEIGHT as u32).contains(&st.cost()));
                } else {
                    operands.push(k + 1);
                }
            }
        }
        for (k, st) in code.iter().enumerate() {
            if operands.contains(&k) {
                // An operand's fields are its comparison, not jumps.
                continue;
            }
            for t in [st.on_true, st.on_false] {
                assert!(!operands.contains(&(t as usize)), "a jump to an operand");
            }
        }
        assert!(
            !operands.contains(&(slot.entry as usize)),
            "entry on an operand"
        );
    }
    assert!(
        in_place >= texts.len(),
        "{in_place} comparisons tested in place"
    );
    // Both forms: the constants of 32 bits fold, the others do not.
    assert!(
        folded > 0 && folded < in_place,
        "{folded} of {in_place} comparisons folded"
    );
    let mut values = vec![None];
    for c in consts {
        values.extend([c.checked_sub(1), Some(c), c.checked_add(1)]);
    }
    for x in values {
        for y in [None, Some(0), Some(3), Some(100)] {
            let mut b = EventBuilder::new(&s);
            if let Some(x) = x {
                b = b.int("x", x).unwrap();
            }
            if let Some(y) = y {
                b = b.int("y", y).unwrap();
            }
            let ev = b.build();
            let holds = |op: &str, c: i64| {
                x.is_some_and(|x| match op {
                    "<" => x < c,
                    "<=" => x <= c,
                    ">" => x > c,
                    ">=" => x >= c,
                    "=" => x == c,
                    _ => x != c,
                })
            };
            let mut want = Vec::new();
            for (i, c) in consts.iter().enumerate() {
                for (j, op) in ops.iter().enumerate() {
                    let hit = holds(op, *c);
                    let matched =
                        !(hit || y.is_some_and(|y| y > j as i64)) || (y == Some(100) && hit);
                    if matched {
                        want.push((i * ops.len() + j) as u64 + 1);
                    }
                }
            }
            assert_eq!(index.search(&ev).unwrap(), want, "x {x:?}, y {y:?}");
            let mut it = index.search_iter(&ev).unwrap();
            let got = loop {
                if let SearchStep::Done(ids) = index.search_next(&mut it, 3) {
                    break ids;
                }
            };
            assert_eq!(got, want, "budgeted, x {x:?}, y {y:?}");
        }
    }
}

/// A comparison on an attribute past the ones a folded step can name keeps
/// its operand step, and decides as the predicate does.
#[test]
fn a_comparison_on_an_attribute_past_the_folded_ones_keeps_its_operand() {
    use crate::program::{ATOM, INT_ATOM, SHORT_INT};
    let n = (1 << 15) + 2;
    let s = Schema::from_domains((0..n).map(|i| Domain::new(format!("a{i}"), AttrType::Int, true)))
        .unwrap();
    let far = format!("a{}", n - 1);
    let mut index = Index::new(s.clone());
    index
        .insert(1, &format!("not ({far} < 5 or a0 > 3) or a1 = 100"))
        .unwrap();
    let slot = &index.slots[0];
    let code = &index.code[slot.code_start as usize..][..slot.code_len as usize];
    let kinds: Vec<bool> = code
        .iter()
        .filter(|st| st.test & ATOM != 0 && st.test & INT_ATOM != 0)
        .map(|st| st.test & SHORT_INT != 0)
        .collect();
    assert!(kinds.contains(&true) && kinds.contains(&false), "{kinds:?}");
    for (x, want) in [(Some(4), false), (Some(5), true), (None, true)] {
        let mut b = EventBuilder::new(&s).int("a0", 0).unwrap();
        if let Some(x) = x {
            b = b.int(&far, x).unwrap();
        }
        let got = index.search(&b.build()).unwrap();
        assert_eq!(got, if want { vec![1] } else { vec![] }, "{far} = {x:?}");
    }
}

/// The evaluation order follows the schema's bounds: of `i >= 1 and s =
/// "v7"` (under a `not`, so the selection proves neither), the string
/// equality, true for one value in 1,000, is tested first though written
/// second; without bounds both are fair coins and the text's order stays.
#[test]
fn leaves_unlikely_to_hold_are_tested_first_by_the_declared_bounds() {
    use crate::program::{ATOM, INT_ATOM};
    let first_is_int = |bounded: bool| {
        let (mut i, mut s) = (
            Domain::new("i", AttrType::Int, true),
            Domain::new("s", AttrType::Str, true),
        );
        if bounded {
            i = i.with_bounds(Bounds::Int(0, 999));
            s = s.with_bounds(Bounds::MaxStrings(1000));
        }
        let schema = Schema::from_domains([i, s]).unwrap();
        let mut index = Index::new(schema.clone());
        index.insert(1, r#"not (i >= 1 and s = "v7")"#).unwrap();
        let slot = &index.slots[0];
        let st = index.code[(slot.code_start + slot.entry) as usize];
        assert!(st.test & ATOM != 0, "the entry tests an atom");
        let ev = EventBuilder::new(&schema)
            .int("i", 5)
            .unwrap()
            .str("s", "v7")
            .unwrap()
            .build();
        assert_eq!(index.search(&ev).unwrap(), Vec::<Id>::new());
        st.test & INT_ATOM != 0
    };
    assert!(!first_is_int(true), "bounded: the equality first");
    assert!(first_is_int(false), "unbounded: the text's order");
}
