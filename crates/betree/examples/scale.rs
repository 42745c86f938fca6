//! Index build and plain-search throughput at scale, on the thread's CPU
//! clock: `cargo run --release -p betree --example scale -- PROFILE
//! EXPRESSIONS EVENTS`, PROFILE `adtech` (issue 14's ad-targeting
//! workload) or `dense` (the reference 128-boolean benchmark). Prints the
//! build time (wall and CPU), the index's memory, the counted search's total reductions
//! (a change means the programs or the selection changed), events per CPU
//! second of `search`, and candidates and matches per event.
use std::time::Instant;

use betree::workload::Adtech;
use betree::{Event, Index, Schema, reference};

/// CPU time of the calling thread, nanoseconds (Linux `schedstat`; wall
/// time elsewhere would mislead on a shared machine, so it is required).
fn thread_cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat")
        .expect("/proc/thread-self/schedstat (Linux) gives the thread's CPU time");
    s.split_whitespace()
        .next()
        .and_then(|x| x.parse().ok())
        .expect("schedstat starts with CPU nanoseconds")
}

fn main() -> betree::Result<()> {
    let mut args = std::env::args().skip(1);
    let profile = args.next().unwrap_or_else(|| "adtech".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let ne: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let (schema, exprs, events): (Schema, Vec<String>, Vec<Event>) = match profile.as_str() {
        "adtech" => {
            let a = Adtech::new();
            let schema = Schema::from_domains(a.domains())?;
            let mut rng = fastrand::Rng::with_seed(1);
            let exprs = (0..n).map(|_| a.expression(&mut rng)).collect();
            let mut rng = fastrand::Rng::with_seed(2);
            let events = (0..ne)
                .map(|_| Event::from_json(&schema, &a.event_json(&mut rng)))
                .collect::<betree::Result<_>>()?;
            (schema, exprs, events)
        }
        "dense" => {
            let schema = Schema::boolean_params(128);
            let exprs = reference::random_expressions(128, n, 1);
            let events = reference::random_events(128, ne, 2)
                .iter()
                .map(|v| Event::from_bools(&schema, v))
                .collect::<betree::Result<_>>()?;
            (schema, exprs, events)
        }
        other => panic!("unknown profile {other} (adtech or dense)"),
    };
    let t = Instant::now();
    let cpu = thread_cpu_ns();
    let mut index = Index::new(schema);
    let mut bulk = index.bulk();
    for (i, e) in exprs.iter().enumerate() {
        bulk.insert(i as u64 + 1, e)?;
    }
    drop(bulk);
    let build = t.elapsed();
    let build_cpu = (thread_cpu_ns() - cpu) as f64 / 1e9;
    drop(exprs);
    println!(
        "{profile} {n} expressions: build {:.2} s ({build_cpu:.2} s CPU), index {:.1} MiB",
        build.as_secs_f64(),
        index.memory_bytes() as f64 / (1 << 20) as f64
    );
    let (mut cands, mut matches) = (0usize, 0usize);
    let mut red_total = 0u64;
    for ev in &events {
        let mut it = index.search_iter(ev)?;
        let betree::SearchStep::Done(ids) = index.search_next(&mut it, u64::MAX) else {
            unreachable!("an unbounded step finishes")
        };
        cands += it.candidates();
        red_total += it.reductions();
        matches += ids.len();
    }
    println!("reductions {red_total}");
    let mut scratch = betree::Scratch::default();
    let mut out = Vec::new();
    for round in 0..3 {
        let t = thread_cpu_ns();
        for ev in &events {
            index.search_with(&mut scratch, ev, &mut out)?;
        }
        let cpu = (thread_cpu_ns() - t) as f64 / 1e9;
        println!(
            "round {round}: {:.0} events/s (CPU), {:.1} candidates/event, {:.1} matches/event",
            ne as f64 / cpu,
            cands as f64 / ne as f64,
            matches as f64 / ne as f64
        );
    }
    Ok(())
}
