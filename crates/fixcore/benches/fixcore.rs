//! Criterion benchmarks for the fixcore hot path. Numbers are measured,
//! never asserted; run with `cargo bench -p fixcore --bench fixcore`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fixcore::build::{FixVersion, MessageBuilder};
use fixcore::parse::Parser;
use fixcore::sample;
use fixcore::scan::{self, ScanPath};
use std::hint::black_box;

fn bench_scan(c: &mut Criterion) {
    let mut g = c.benchmark_group("scan");
    let mut out = Vec::with_capacity(4096);
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
    let mut b = MessageBuilder::new(FixVersion::Fix44);
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

criterion_group!(benches, bench_scan, bench_parse, bench_build);
criterion_main!(benches);
