//! The reference workload: 5,000 random expressions over 128 boolean
//! parameters, 0/1 events. Build time, per-event search in each mode, and
//! batch search.
//!
//! `cargo bench -p betree --bench search`

use std::hint::black_box;

use betree::{Event, Index, Schema, SearchStep, reference};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

const PARAMS: usize = 128;
const EXPRS: usize = 5000;
const EVENTS: usize = 512; // one full pass of the batch search

fn workload() -> (Schema, Vec<String>, Vec<Event>) {
    let schema = Schema::boolean_params(PARAMS);
    let exprs = reference::random_expressions(PARAMS, EXPRS, 1);
    let events = reference::random_events(PARAMS, EVENTS, 2)
        .iter()
        .map(|v| Event::from_bools(&schema, v).expect("generated events fit"))
        .collect();
    (schema, exprs, events)
}

fn build(schema: &Schema, exprs: &[String]) -> Index {
    let mut index = Index::new(schema.clone());
    for (i, e) in exprs.iter().enumerate() {
        index
            .insert(i as u64 + 1, e)
            .expect("generated expressions parse");
    }
    index
}

fn benches(c: &mut Criterion) {
    let (schema, exprs, events) = workload();
    let index = build(&schema, &exprs);

    let mut g = c.benchmark_group("betree_build");
    g.sample_size(10);
    g.bench_function("insert_5000x128", |b| {
        b.iter_batched(|| (), |_| build(&schema, &exprs), BatchSize::PerIteration)
    });
    g.finish();

    let mut g = c.benchmark_group("betree_search_5000x128");
    g.sample_size(20);
    g.throughput(Throughput::Elements(EVENTS as u64));
    g.bench_function("std", |b| {
        b.iter(|| {
            for ev in &events {
                black_box(index.search(ev).expect("valid event"));
            }
        })
    });
    g.bench_function("iter_all", |b| {
        b.iter(|| {
            for ev in &events {
                let it = index.search_iter(ev).expect("valid event");
                black_box(index.search_all(it));
            }
        })
    });
    g.bench_function("iter_next_2000", |b| {
        b.iter(|| {
            for ev in &events {
                let mut it = index.search_iter(ev).expect("valid event");
                loop {
                    if let SearchStep::Done(ids) = index.search_next(&mut it, 2000) {
                        black_box(ids);
                        break;
                    }
                }
            }
        })
    });
    g.bench_function("batch", |b| {
        b.iter(|| black_box(index.search_batch(&events).expect("valid events")))
    });
    g.finish();
}

criterion_group!(betree_benches, benches);
criterion_main!(betree_benches);
