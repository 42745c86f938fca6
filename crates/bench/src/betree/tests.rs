use super::*;
use betree::{Schema, reference};

fn workload() -> (Index, Vec<Event>) {
    let schema = Schema::boolean_params(32);
    let mut index = Index::new(schema.clone());
    for (i, e) in reference::random_expressions(32, 300, 7).iter().enumerate() {
        index.insert(i as u64 + 1, e).unwrap();
    }
    let events = reference::random_events(32, 30, 3)
        .iter()
        .map(|v| Event::from_bools(&schema, v).unwrap())
        .collect();
    (index, events)
}

fn opts(long_slice_ns: u64, long_slices_kept: usize) -> Options {
    Options {
        budget: 60,
        block: 10,
        warmup: 3,
        long_slice_ns,
        long_slices_kept,
    }
}

/// The reductions of each slice of `ev`'s search with `budget`, as
/// [`each_slice`] steps it (on a clock that stands still), checking
/// that it numbers the slices in order from 0.
fn slice_reductions(index: &Index, ev: &Event, budget: u64) -> Vec<u64> {
    let mut calls = Vec::new();
    let ids = each_slice(
        index,
        ev,
        budget,
        || 7,
        |s| {
            assert_eq!((s.no, s.ns), (calls.len(), 0));
            calls.push(s.reductions);
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    assert_eq!(ids, Some(index.search(ev).unwrap()));
    calls
}

/// The whole search of `ev` in one unbudgeted `search_next` call: its
/// reductions, and the bound on one call with `budget`.
fn one_call(index: &Index, ev: &Event, budget: u64) -> (u64, u64) {
    let mut it = index.search_iter(ev).unwrap();
    let bound = budget - 1 + it.max_overrun();
    assert!(matches!(
        index.search_next(&mut it, u64::MAX),
        SearchStep::Done(_)
    ));
    (it.reductions(), bound)
}

#[test]
fn the_longest_slices_are_kept_and_identified() {
    let (index, events) = workload();
    // Over a threshold of 0 every slice counts, but for one the clock
    // saw take 0 ns (recorded as 1 ns, with those of 1 ns).
    let r = run(&index, &events, opts(0, 25)).unwrap();
    let slices = r.modes[2].slices.len();
    let at_most_1ns = r.modes[2].slices.count_at(1);
    assert!(
        (slices - at_most_1ns..=slices).contains(&r.over_threshold),
        "{} over 0 of {slices} slices, {at_most_1ns} of at most 1 ns",
        r.over_threshold
    );
    let mut per_event = Vec::new();
    for ev in &events {
        // The recount steps the search as `run` does; check it against
        // the reductions of the search done in one call, which the
        // budget must not change, and against the documented bound on
        // one call.
        let (total, bound) = one_call(&index, ev, 60);
        let calls = slice_reductions(&index, ev, 60);
        assert_eq!(calls.iter().sum::<u64>(), total);
        // Every call but the last does some work (the last may only
        // find that nothing is left).
        let (_, earlier) = calls.split_last().unwrap();
        assert!(calls.iter().all(|&c| c <= bound), "{calls:?}");
        assert!(earlier.iter().all(|&c| c >= 1), "{calls:?}");
        per_event.push(calls);
    }
    assert_eq!(
        slices,
        per_event.iter().map(Vec::len).sum::<usize>() as u64,
        "one slice per search_next call"
    );
    assert_eq!(r.long_slices.len(), 25);
    assert!(r.long_slices.is_sorted());
    let kept_min = r.long_slices.iter().map(|s| s.ns).min().unwrap();
    let kept_max = r.long_slices.iter().map(|s| s.ns).max().unwrap();
    assert!(kept_min >= r.unkept_max_ns, "the kept are the longest");
    assert_eq!(kept_max.max(r.unkept_max_ns), r.modes[2].max_slice_ns);
    for s in &r.long_slices {
        assert_eq!(
            per_event[s.event].get(s.slice),
            Some(&s.reductions),
            "{s:?}"
        );
    }
    // Over a threshold nothing reaches, nothing is kept.
    let r = run(&index, &events, opts(u64::MAX, 25)).unwrap();
    assert_eq!((r.over_threshold, r.long_slices.len()), (0, 0));
    assert_eq!(r.unkept_max_ns, r.modes[2].max_slice_ns);
}

#[test]
fn replays_run_the_same_slices_and_refuse_other_work() {
    let (index, events) = workload();
    let r = run(&index, &events, opts(0, 12)).unwrap();
    let out = replay(&index, &events, &r, 3).unwrap();
    assert_eq!(out.len(), 12);
    assert!(out.iter().all(|x| x.replays_ns.len() == 3));
    // A slice recorded with other reductions, or past the end of its
    // search, is not the same work: an error, not a time.
    let s = r.long_slices[0];
    let wrong = LongSlice {
        reductions: s.reductions + 1,
        ..s
    };
    let with = |s: LongSlice| BenchReport {
        long_slices: vec![s],
        ..r.clone()
    };
    assert!(matches!(
        replay(&index, &events, &with(wrong), 1),
        Err(Error::Event(m)) if m.contains("reductions")
    ));
    let past = LongSlice {
        slice: 1_000_000,
        ..s
    };
    assert!(matches!(
        replay(&index, &events, &with(past), 1),
        Err(Error::Event(m)) if m.contains("finished")
    ));
    let none = replay(&index, &events, &r, 0).unwrap();
    assert_eq!(none.len(), 12);
    assert!(
        none.iter()
            .all(|x| x.replays_ns.is_empty() && x.min_ns() == x.slice.ns)
    );
}

/// Only slices longer than the threshold count; the longest `keep` of
/// them are kept, and the longest of the rest is remembered.
#[test]
fn longest_keeps_the_longest_slices_over_the_threshold() {
    let mut l = Longest {
        threshold_ns: 10,
        keep: 2,
        heap: BinaryHeap::new(),
        over: 0,
        unkept_max_ns: 0,
    };
    let at = |slice, ns| LongSlice {
        event: 0,
        slice,
        reductions: 1,
        ns,
    };
    for (k, ns) in [0, 10, 11, 30, 5, 20, 12].into_iter().enumerate() {
        l.offer(at(k, ns));
    }
    assert_eq!(l.over, 4, "11, 30, 20 and 12; not 10, the threshold");
    assert_eq!(l.unkept_max_ns, 12);
    let mut kept: Vec<LongSlice> = l.heap.into_iter().map(|r| r.0.1).collect();
    kept.sort_unstable();
    assert_eq!(kept, [at(3, 30), at(5, 20)]);
}

/// The least time counts the timed pass too; the median is of the
/// replays alone (the upper middle of an even count), falling back to
/// the timed pass without replays. Values worked out by hand.
#[test]
fn least_and_median_of_replays() {
    let slice = LongSlice {
        event: 0,
        slice: 0,
        reductions: 1,
        ns: 50,
    };
    let of = |replays_ns: Vec<u64>| Replayed { slice, replays_ns };
    let x = of(vec![70, 30, 40]);
    assert_eq!((x.min_ns(), x.median_ns()), (30, 40));
    let x = of(vec![90, 60, 80, 70]);
    assert_eq!((x.min_ns(), x.median_ns()), (50, 80));
    let x = of(vec![]);
    assert_eq!((x.min_ns(), x.median_ns()), (50, 50));
}

/// One grid point on a tiny instance: counted candidates cover the
/// matches, every library mode found the same matches (checked by
/// `throughput`), and the sweep's median is of the points given.
#[test]
fn a_grid_point_is_measured() {
    let shape = betree::workload::grid().swap_remove(5);
    let settings = sweep::Settings {
        expressions: 300,
        events: 10,
        rounds: 1,
    };
    let p = sweep::measure_point(&shape, settings).unwrap();
    assert_eq!(p.shape, shape);
    assert_eq!((p.expressions, p.events), (300, 10));
    assert!(p.matches > 0, "{shape} matched nothing");
    assert!(p.candidates >= p.matches);
    assert_eq!(p.throughput.matches, p.matches);
    assert!(p.index_bytes > 0);
    let s = sweep::Sweep {
        settings,
        points: vec![p.clone(), p],
    };
    assert!(s.median_candidates_per_match() >= 1.0);
}
