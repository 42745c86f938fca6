//! Tight loops over the scan and the parse, for profiling with `perf record`
//! (`cargo run --release -p fixcore --example hot [p]`; `p`: parse only).
use fixcore::parse::Parser;
use fixcore::sample;
use fixcore::scan::{self, ScanPath};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let msgs = sample::all();
    let nos = &msgs[0].1;
    let mut out = scan::Positions::new();
    let n = 5_000_000u32;
    let only_parse = std::env::args().nth(1).is_some();
    for path in ScanPath::available().into_iter().filter(|_| !only_parse) {
        let t = Instant::now();
        for _ in 0..n {
            scan::scan_with(path, black_box(nos), &mut out).unwrap();
            black_box(out.len());
        }
        println!(
            "scan {:?}: {:.2} ns",
            path,
            t.elapsed().as_nanos() as f64 / f64::from(n)
        );
    }
    let mut p = Parser::new();
    let mut best = f64::MAX;
    for _ in 0..20 {
        let t = Instant::now();
        for _ in 0..n / 20 {
            let m = p.parse(black_box(nos)).unwrap();
            black_box(m.field_count());
        }
        best = best.min(t.elapsed().as_nanos() as f64 / f64::from(n / 20));
    }
    println!("parse NOS (min of 20): {best:.2} ns");
    let t = Instant::now();
    for _ in 0..n {
        black_box(fixcore::parse::checksum(black_box(nos)));
    }
    println!(
        "checksum NOS: {:.2} ns",
        t.elapsed().as_nanos() as f64 / f64::from(n)
    );
}
