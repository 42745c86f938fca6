//! One 2 KiB block of UUID text through each pool strategy on one thread:
//! generate, compress, decompress, compare — the per-block floor that a
//! saturated `perfkit stress` run can approach but not beat, since it adds
//! channels and scheduling on top. Also the codec alone, for the ceiling.
//!
//! cargo bench -p stress --bench pools

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use stress::{ContextPool, PoolKind, Workload};
use zstdkit::Recipe;

fn pools(c: &mut Criterion) {
    let params = Recipe::Fast.params().checksum(false);
    let mut g = c.benchmark_group("block 2 KiB UUID text, fast");
    g.throughput(Throughput::Bytes(2048));
    for kind in PoolKind::ALL {
        let pool = ContextPool::new(kind, params, 4).expect("pool");
        let mut src = Workload::default().source(1);
        let (mut block, mut frame, mut back) = (Vec::new(), Vec::new(), Vec::new());
        g.bench_function(
            format!("{kind}: generate+compress+decompress+compare"),
            |b| {
                b.iter(|| {
                    src.fill(&mut block);
                    pool.compress(&block, &mut frame).expect("compress");
                    pool.decompress(&frame, &mut back).expect("decompress");
                    assert!(back == block);
                })
            },
        );
    }
    let pool = ContextPool::new(PoolKind::ThreadLocal, params, 4).expect("pool");
    let mut src = Workload::default().source(2);
    let (mut block, mut frame, mut back) = (Vec::new(), Vec::new(), Vec::new());
    src.fill(&mut block);
    pool.compress(&block, &mut frame).expect("compress");
    g.bench_function("generate only", |b| b.iter(|| src.fill(&mut block)));
    g.bench_function("compress only (reused context)", |b| {
        b.iter(|| pool.compress(&block, &mut frame).expect("compress"))
    });
    g.bench_function("decompress only (reused context)", |b| {
        b.iter(|| pool.decompress(&frame, &mut back).expect("decompress"))
    });
    g.finish();
}

criterion_group!(benches, pools);
criterion_main!(benches);
