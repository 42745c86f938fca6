//! Pruning after churn: on three points of the workload grid, deleting
//! half the expressions and inserting as many new ones leaves the index
//! pruning as well as a fresh build of the same expressions (candidates
//! per match within 10 %), with the same ids.

use betree::workload::{Adtech, grid};
use betree::{Event, Index, Schema, SearchStep};

/// Candidates and matches over `events`, and every event's ids.
fn measure(index: &Index, events: &[Event]) -> (usize, usize, Vec<Vec<u64>>) {
    let (mut cands, mut matches, mut ids) = (0, 0, Vec::new());
    for ev in events {
        let mut it = index.search_iter(ev).unwrap();
        let SearchStep::Done(found) = index.search_next(&mut it, u64::MAX) else {
            panic!("an unbounded step finishes");
        };
        cands += it.candidates();
        matches += found.len();
        ids.push(found);
    }
    (cands, matches, ids)
}

#[test]
fn candidates_per_match_hold_after_deleting_half_and_inserting_as_many() {
    let grid = grid();
    // attrs=50 zipf=0.6 preds=2-4 neg=40%; attrs=200 zipf=1.4 preds=8-15
    // neg=40%; attrs=400 zipf=0.6 preds=2-4 neg=0%.
    for k in [1, 15, 16] {
        let shape = &grid[k];
        let a = Adtech::with_shape(shape.clone()).unwrap();
        let schema = Schema::from_domains(a.domains()).unwrap();
        let n = 2000;
        let first = a.expressions(n, 31);
        let second = a.expressions(n / 2, 32);
        let events = a.events(&schema, 60, 33).unwrap();
        let mut churned = Index::new(schema.clone());
        for (i, e) in first.iter().enumerate() {
            churned.insert(i as u64 + 1, e).unwrap();
        }
        let mut live: Vec<(u64, &String)> = Vec::new();
        for (i, e) in first.iter().enumerate() {
            let id = i as u64 + 1;
            if id.is_multiple_of(2) {
                churned.delete(id).unwrap();
            } else {
                live.push((id, e));
            }
        }
        for (i, e) in second.iter().enumerate() {
            let id = (n + i) as u64 + 1;
            churned.insert(id, e).unwrap();
            live.push((id, e));
        }
        let mut fresh = Index::new(schema);
        for &(id, e) in &live {
            fresh.insert(id, e).unwrap();
        }
        let (c1, m1, ids1) = measure(&churned, &events);
        let (c2, m2, ids2) = measure(&fresh, &events);
        assert_eq!(ids1, ids2, "{shape}: churned and fresh ids differ");
        assert_eq!(m1, m2);
        assert!(m1 > 0, "{shape}: nothing matched");
        let (r1, r2) = (c1 as f64 / m1 as f64, c2 as f64 / m2 as f64);
        assert!(
            r1 <= r2 * 1.1,
            "{shape}: {r1:.3} candidates per match after churn, {r2:.3} fresh"
        );
    }
}

#[test]
fn a_bulk_load_searches_as_inserts_one_by_one() {
    // The adtech profile: ranges on integer attributes by the thousand,
    // so each side's thresholds go through many merges one by one and
    // through one at the end of a bulk load.
    let a = Adtech::new();
    let schema = Schema::from_domains(a.domains()).unwrap();
    let exprs = a.expressions(3000, 41);
    let more = a.expressions(500, 42);
    let events = a.events(&schema, 80, 43).unwrap();
    let mut one = Index::new(schema.clone());
    let mut bulk = Index::new(schema);
    for (i, e) in exprs.iter().enumerate() {
        one.insert(i as u64 + 1, e).unwrap();
    }
    {
        let mut b = bulk.bulk();
        for (i, e) in exprs.iter().enumerate() {
            b.insert(i as u64 + 1, e).unwrap();
        }
    }
    assert_eq!(measure(&bulk, &events), measure(&one, &events));
    // Deletes after the load, and a second load into a filled index.
    for id in (1..=exprs.len() as u64).step_by(3) {
        one.delete(id).unwrap();
        bulk.delete(id).unwrap();
    }
    let mut b = bulk.bulk();
    for (i, e) in more.iter().enumerate() {
        let id = (exprs.len() + i) as u64 + 1;
        one.insert(id, e).unwrap();
        b.insert_owned(id, e.clone()).unwrap();
    }
    drop(b);
    let (c, m, ids) = measure(&bulk, &events);
    assert!(m > 0, "the events match something");
    assert_eq!((c, m, ids), measure(&one, &events));
}
