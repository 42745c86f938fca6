//! perfkit against the `zstd` CLI on the 64 MiB mixed corpus file, in the
//! same run: single-threaded and two-thread compression at the same level
//! and strategy, and decompression of the same frame. Both sides stream the
//! file from the page cache and discard the output.
//!
//!     cargo bench -p perfkit --bench zstd_vs_cli

use std::hint::black_box;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zstdkit::{Decoder, Encoder, FlushMode, Recipe};

struct Discard;
impl Write for Discard {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        Ok(black_box(b).len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn ours_compress(path: &Path, recipe: Recipe, workers: u32) {
    let mut f = std::fs::File::open(path).unwrap();
    let mut enc = Encoder::new(Discard, recipe.params().workers(workers)).unwrap();
    enc.pledge_size(f.metadata().unwrap().len()).unwrap();
    let mut buf = vec![0u8; 128 << 10];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        enc.write_with(&buf[..n], FlushMode::Continue).unwrap();
    }
    enc.finish().unwrap();
}

fn ours_decompress(path: &Path) {
    let f = std::io::BufReader::with_capacity(128 << 10, std::fs::File::open(path).unwrap());
    let mut d = Decoder::with_decompressor(f, zstdkit::Decompressor::new().unwrap());
    std::io::copy(&mut d, &mut Discard).unwrap();
}

fn zstd_cli(args: &[&str]) {
    let ok = Command::new("zstd")
        .args(args)
        .stdout(Stdio::null())
        .status()
        .expect("zstd CLI installed")
        .success();
    assert!(ok);
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(perfkit_corpus::LARGE_NAME);
    std::fs::write(
        &file,
        perfkit_corpus::mixed(perfkit_corpus::LARGE_SIZE).unwrap(),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let mut g = c.benchmark_group("zstd_64MiB");
    g.throughput(Throughput::Bytes(perfkit_corpus::LARGE_SIZE as u64))
        .sample_size(10);
    for recipe in [Recipe::Fast, Recipe::Balanced] {
        let level = format!("-{}", recipe.level());
        let strategy = format!("--zstd=strategy={}", recipe.strategy().id());
        g.bench_function(format!("compress/{recipe}/T1/perfkit"), |b| {
            b.iter(|| ours_compress(&file, recipe, 0))
        });
        g.bench_function(format!("compress/{recipe}/T1/zstd"), |b| {
            b.iter(|| zstd_cli(&["-q", "-c", "--single-thread", &level, &strategy, f]))
        });
        g.bench_function(format!("compress/{recipe}/T2/perfkit"), |b| {
            b.iter(|| ours_compress(&file, recipe, 2))
        });
        g.bench_function(format!("compress/{recipe}/T2/zstd"), |b| {
            b.iter(|| zstd_cli(&["-q", "-c", "-T2", &level, &strategy, f]))
        });
        let frame = dir.path().join("frame.zst");
        let fr = frame.to_str().unwrap();
        zstd_cli(&["-q", "-f", &level, &strategy, f, "-o", fr]);
        g.bench_function(format!("decompress/{recipe}/perfkit"), |b| {
            b.iter(|| ours_decompress(&frame))
        });
        g.bench_function(format!("decompress/{recipe}/zstd"), |b| {
            b.iter(|| zstd_cli(&["-q", "-d", "-c", fr]))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
