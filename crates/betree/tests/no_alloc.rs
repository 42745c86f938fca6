//! Backs the claim of [`Index::search_with`]: once its `Scratch` and output
//! are warm, repeated searches do not allocate. A counting global allocator
//! is the oracle (`perfkit_testkit::alloc_count`, which fixcore's
//! `tests/no_alloc.rs` uses too; its counts are per thread, so tests running
//! in parallel do not disturb each other).

use perfkit_testkit::alloc_count::{self, Counting, allocations};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The allocator is this binary's, so a zero from it means something.
#[test]
fn the_counting_allocator_is_installed() {
    assert!(alloc_count::installed());
}

use betree::{AttrType, Domain, Event, EventBuilder, Index, Schema, Scratch};

/// An index whose events reach every selection path: no posting list
/// (only the always-candidates: copied), one list, several lists with few
/// candidates (merged by id) and several with many (marked, then the
/// id-ordered slots scanned).
fn workload() -> (Index, Vec<Event>) {
    let schema = Schema::from_domains([
        Domain::new("b0", AttrType::Bool, true),
        Domain::new("b1", AttrType::Bool, true),
        Domain::new("b2", AttrType::Bool, true),
        Domain::new("i", AttrType::Int, true),
        Domain::new("j", AttrType::Int, true),
        Domain::new("s", AttrType::Str, true),
    ])
    .unwrap();
    let mut index = Index::new(schema.clone());
    let mut id = 0u64;
    let mut add = |index: &mut Index, e: &str| {
        id += 1;
        index.insert(id, e).unwrap();
    };
    // Partitioned by `i`, one expression per value: few candidates each.
    for k in 0..200 {
        add(&mut index, &format!("i = {k} and (b1 or not b2)"));
    }
    // Partitioned by `j` (a set of values).
    for k in 0..20 {
        add(&mut index, &format!("j in ({k}, {}) and not b1", k + 1));
    }
    // Partitioned by `b0`: one long list.
    for k in 0..60 {
        add(&mut index, &format!("b0 and (b2 or i > {k})"));
    }
    // Partitioned by the string `s`.
    for k in 0..10 {
        add(
            &mut index,
            &format!("s = \"w{k}\" and b0 and (b2 or j > {k})"),
        );
    }
    // Always candidates.
    for k in 0..3 {
        add(&mut index, &format!("b1 or i < {k}"));
    }
    let mut events = Vec::new();
    for n in 0..64i64 {
        let mut b = EventBuilder::new(&schema);
        if n % 4 != 0 {
            b = b.int("i", n * 3 % 211).unwrap();
        }
        if n % 3 != 0 {
            b = b.int("j", n % 23).unwrap();
        }
        if n % 2 == 1 {
            b = b.str("s", format!("w{}", n % 12)).unwrap();
        }
        b = b
            .bool("b0", n % 8 == 1)
            .unwrap()
            .bool("b1", n % 2 == 0)
            .unwrap()
            .bool("b2", n % 5 < 2)
            .unwrap();
        events.push(b.build());
    }
    (index, events)
}

#[test]
fn repeated_searches_with_warm_scratch_do_not_allocate() {
    let (index, events) = workload();
    let expected: Vec<Vec<u64>> = events.iter().map(|ev| index.search(ev).unwrap()).collect();
    assert!(expected.iter().any(Vec::is_empty));
    assert!(expected.iter().any(|ids| ids.len() > 40));
    let mut scratch = Scratch::default();
    let mut out = Vec::new();
    // Warm-up: buffers grow to the largest event's needs.
    for ev in &events {
        index.search_with(&mut scratch, ev, &mut out).unwrap();
    }
    let mut got = Vec::with_capacity(3 * events.len());
    let n = allocations(|| {
        for _ in 0..3 {
            for ev in &events {
                index.search_with(&mut scratch, ev, &mut out).unwrap();
                got.push(out.len());
            }
        }
    });
    assert_eq!(n, 0, "allocations in {} warm searches", got.len());
    for (k, ev) in events.iter().enumerate() {
        index.search_with(&mut scratch, ev, &mut out).unwrap();
        assert_eq!(out, expected[k], "event {k}");
        assert_eq!(got[k], expected[k].len());
    }
}
