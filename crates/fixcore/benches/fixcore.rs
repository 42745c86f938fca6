//! Criterion benchmarks for the fixcore hot path. Numbers are measured,
//! never asserted; run with `cargo bench -p fixcore --bench fixcore`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fixcore::build::MessageBuilder;
use fixcore::parse::Parser;
use fixcore::sample;
use fixcore::scan::{self, ScanPath};
use fixcore::version::BeginString;
use std::hint::black_box;

fn bench_scan(c: &mut Criterion) {
    let mut g = c.benchmark_group("scan");
    let mut out = scan::Positions::new();
    for (name, msg) in sample::all() {
        g.throughput(Throughput::Bytes(msg.len() as u64));
        for path in ScanPath::available() {
            g.bench_function(format!("{name}/{}B/{}", msg.len(), path.name()), |b| {
                b.iter(|| {
                    scan::scan_with(path, black_box(&msg), &mut out).unwrap();
                    black_box(out.len())
                })
            });
        }
    }
    g.finish();
}

fn bench_parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse");
    for (name, msg) in sample::all() {
        let mut p = Parser::new();
        g.bench_function(format!("{name}/{}B", msg.len()), |b| {
            b.iter(|| {
                let m = p.parse(black_box(&msg)).unwrap();
                black_box(m.field_count())
            })
        });
    }
    g.finish();
}

fn bench_build(c: &mut Criterion) {
    let mut g = c.benchmark_group("build");
    let mut b = MessageBuilder::new(BeginString::Fix44);
    let mut seq = 0u64;
    g.bench_function("NewOrderSingle", |bn| {
        bn.iter(|| {
            seq += 1;
            fixcore::sample::write_new_order_single(&mut b, seq);
            black_box(b.finish().map(|m| m.len()).unwrap_or(0))
        })
    });
    g.finish();
}

fn bench_store(c: &mut Criterion) {
    use fixcore::resend::StoreKind;
    let mut g = c.benchmark_group("store_lookup");
    let msg = sample::all().swap_remove(0).1;
    for kind in StoreKind::ALL {
        let mut st = kind.build(1, 8192);
        for seq in 1..=8192 {
            st.insert(seq, &msg).unwrap();
        }
        let mut k = 0u64;
        g.bench_function(st.name().to_string(), |b| {
            b.iter(|| {
                k = (k + 4099) % 8192;
                black_box(st.get(black_box(k + 1)).map(<[u8]>::len))
            })
        });
    }
    g.finish();
}

fn bench_deferred(c: &mut Criterion) {
    use fixcore::deferred::DeferredProcessor;
    let msg = sample::all().swap_remove(0).1;
    let mut d = DeferredProcessor::spawn(1024, 512, 8192, None).unwrap();
    c.bench_function("deferred_submit/NewOrderSingle", |b| {
        b.iter_custom(|iters| {
            // Batches of 512 into a 1024-slot ring (~600 KB, about L2),
            // drained untimed first, so the hot path is measured rather than
            // the worker's throughput. A ring far beyond the caches makes
            // every push a cache miss (~60 ns here with 65,536 slots).
            let mut total = std::time::Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let n = left.min(512);
                while d.pending() > 0 {
                    std::thread::yield_now();
                }
                let t = std::time::Instant::now();
                for _ in 0..n {
                    black_box(d.try_submit(black_box(&msg)));
                }
                total += t.elapsed();
                left -= n;
            }
            total
        })
    });
}

criterion_group!(
    benches,
    bench_scan,
    bench_parse,
    bench_build,
    bench_store,
    bench_deferred
);
criterion_main!(benches);
