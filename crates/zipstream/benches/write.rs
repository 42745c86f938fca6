//! Writer throughput: sync vs async (same core) on many small entries and
//! one 5 MB entry, AES-256 cost, and the parallel writer.
//! Run: `cargo bench -p zipstream --bench write`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use zipstream::*;

/// Word soup with a skewed vocabulary: compresses like prose (~3:1).
fn realistic(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let vocab: Vec<Vec<u8>> = (0..2000u64)
        .map(|i| {
            (0..2 + i % 8)
                .map(|k| b'a' + ((i * 7 + k * 13) % 26) as u8)
                .collect()
        })
        .collect();
    let mut v = Vec::with_capacity(n + 16);
    while v.len() < n {
        let z = next();
        let r = (z % 2000) * (z % 2000) / 2000;
        v.extend_from_slice(&vocab[r as usize]);
        v.push(if z % 13 == 0 { b'\n' } else { b' ' });
    }
    v.truncate(n);
    v
}

fn sets() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    vec![
        ("50x10KB", (0..50).map(|i| realistic(10_000, i)).collect()),
        ("5MB", vec![realistic(5_000_000, 99)]),
    ]
}

fn opts(i: usize, aes: bool) -> EntryOptions {
    let o = EntryOptions::file(format!("f{i}")).mtime(1_700_000_000);
    if aes {
        o.encrypt(AesStrength::Aes256, "bench")
    } else {
        o
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut g = c.benchmark_group("write");
    g.sample_size(10);
    for (name, entries) in sets() {
        let total: usize = entries.iter().map(Vec::len).sum();
        g.throughput(Throughput::Bytes(total as u64));
        g.bench_with_input(BenchmarkId::new("sync", name), &entries, |b, e| {
            b.iter(|| {
                let mut w = ZipWriter::new(Vec::with_capacity(total));
                for (i, d) in e.iter().enumerate() {
                    w.add_bytes(opts(i, false), d).unwrap();
                }
                black_box(w.finish().unwrap())
            })
        });
        g.bench_with_input(BenchmarkId::new("async", name), &entries, |b, e| {
            b.iter(|| {
                rt.block_on(async {
                    let mut w = AsyncZipWriter::new(Vec::with_capacity(total));
                    for (i, d) in e.iter().enumerate() {
                        w.add_bytes(opts(i, false), d).await.unwrap();
                    }
                    black_box(w.finish().await.unwrap())
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("sync-aes256", name), &entries, |b, e| {
            b.iter(|| {
                let mut w = ZipWriter::new(Vec::with_capacity(total));
                for (i, d) in e.iter().enumerate() {
                    w.add_bytes(opts(i, true), d).unwrap();
                }
                black_box(w.finish().unwrap())
            })
        });
        g.bench_with_input(BenchmarkId::new("parallel-2", name), &entries, |b, e| {
            b.iter(|| {
                let mut w = ParallelZipWriter::new(
                    ZipWriter::new(Vec::with_capacity(total)),
                    ParallelOptions::new(2),
                );
                for (i, d) in e.iter().enumerate() {
                    w.add_bytes(opts(i, false), d).unwrap();
                }
                black_box(w.finish().unwrap())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
