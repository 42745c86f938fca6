//! Quick local measurement of the reference workload (not the criterion bench).
use betree::{Event, Index, Schema, reference};
use std::time::Instant;

fn main() -> betree::Result<()> {
    let params = 128;
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000);
    let ne: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let exprs = reference::random_expressions(params, n, 1);
    let evs = reference::random_events(params, ne, 2);
    let schema = Schema::boolean_params(params);
    let t = Instant::now();
    let mut index = Index::new(schema.clone());
    for (i, e) in exprs.iter().enumerate() {
        index.insert(i as u64 + 1, e)?;
    }
    println!(
        "build {:?}, mem {} KiB",
        t.elapsed(),
        index.memory_bytes() / 1024
    );
    let events: Vec<Event> = evs
        .iter()
        .map(|v| Event::from_bools(&schema, v))
        .collect::<Result<_, _>>()?;
    if std::env::var("ONLY_BATCH").is_ok() {
        for _ in 0..3 {
            let t = Instant::now();
            let b = index.search_batch(&events)?;
            let bt = t.elapsed();
            let t = Instant::now();
            let mut n = 0;
            for ev in &events {
                n += index.search(ev)?.len();
            }
            let st = t.elapsed();
            println!(
                "batch {:?} ({} matches) scalar {:?} ({n})",
                bt,
                b.iter().map(|x| x.len()).sum::<usize>(),
                st
            );
        }
        return Ok(());
    }
    let opts = perfkit_bench::betree::Options {
        budget: 2000,
        block: 1000,
        warmup: 50,
        long_slice_ns: u64::MAX,
        long_slices_kept: 0,
    };
    let r = perfkit_bench::betree::run(&index, &events, opts)?;
    for m in &r.modes {
        println!(
            "{}: p50 {} us p99 {} us  ev/s {:.0} max slice {} us",
            m.name,
            m.per_event.value_at_quantile(0.5) / 1000,
            m.per_event.value_at_quantile(0.99) / 1000,
            r.events as f64 / (m.total_ns as f64 / 1e9),
            m.max_slice_ns / 1000
        );
    }
    println!(
        "cmp all {:?}\ncmp next {:?}",
        r.comparisons[0], r.comparisons[1]
    );
    println!(
        "batch ev/s {:.0}, matches {}",
        r.events as f64 / (r.batch_ns as f64 / 1e9),
        r.matches
    );
    Ok(())
}
