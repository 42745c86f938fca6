//! A search that reuses its scratch finds what a fresh one finds, event
//! after event: state kept from search to search (stamps, memo, list
//! marks, each cleared only when its numbers come round) must never leak
//! into a later event.

use betree::workload::Adtech;
use betree::{Event, Index, Schema, Scratch};

#[test]
fn reused_scratch_finds_what_a_fresh_search_finds() {
    let a = Adtech::new();
    let schema = Schema::from_domains(a.domains()).unwrap();
    let mut rng = fastrand::Rng::with_seed(1);
    let mut index = Index::new(schema.clone());
    {
        let mut bulk = index.bulk();
        for id in 1..=20_000 {
            bulk.insert(id, &a.expression(&mut rng)).unwrap();
        }
    }
    let mut rng = fastrand::Rng::with_seed(2);
    let (mut scratch, mut coop) = (Scratch::default(), Scratch::default());
    let mut out = Vec::new();
    for n in 0..3_000 {
        let ev = Event::from_json(&schema, &a.event_json(&mut rng)).unwrap();
        let fresh = index.search(&ev).unwrap();
        index.search_with(&mut scratch, &ev, &mut out).unwrap();
        assert_eq!(out, fresh, "event {n}, search_with");
        let it = index.search_iter_in(&ev, &mut coop).unwrap();
        assert_eq!(
            index.search_all_in(it, &mut coop),
            fresh,
            "event {n}, search_all_in"
        );
    }
}
