//! Quick throughput probe: `cargo run --release --example throughput -- MODE MIB [LEVEL]`
//! MODE: sync | async | par1 | par2 | aes. Prints wall and CPU MiB/s.

use std::time::Instant;

use zipstream::*;

fn realistic(n: usize) -> Vec<u8> {
    // Zipf-ish vocabulary text mixed with JSON-like records and numbers.
    let mut x = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let vocab: Vec<String> = (0..4000)
        .map(|i| {
            let len = 2 + (i % 9);
            (0..len)
                .map(|k| (b'a' + ((i * 7 + k * 13 + i / 26) % 26) as u8) as char)
                .collect()
        })
        .collect();
    let mut v = Vec::with_capacity(n + 256);
    while v.len() < n {
        let r = next();
        if r % 5 == 0 {
            let id = next() % 1_000_000;
            let name = &vocab[(next() % 4000) as usize];
            v.extend_from_slice(
                format!(
                    "{{\"id\":{id},\"name\":\"{name}\",\"score\":{}.{}}}\n",
                    next() % 1000,
                    next() % 100
                )
                .as_bytes(),
            );
        } else {
            for _ in 0..12 {
                let z = next();
                let idx = ((z % 4000) * (z % 4000) / 4000) as usize;
                v.extend_from_slice(vocab[idx].as_bytes());
                v.push(if z % 17 == 0 { b'\n' } else { b' ' });
            }
        }
    }
    v.truncate(n);
    v
}

fn cpu_secs() -> f64 {
    perfkit_measure::clock::process_cpu().as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("sync");
    let mib: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(64);
    let level: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(6);
    // ZIPBENCH_FILE=path uses a file (e.g. the perfkit corpus) instead.
    let data = match std::env::var_os("ZIPBENCH_FILE") {
        Some(p) => std::fs::read(p).unwrap(),
        None => realistic(mib << 20),
    };
    let mib = data.len() as f64 / (1 << 20) as f64;
    if mode == "dump" {
        std::io::Write::write_all(&mut std::io::stdout(), &data).unwrap();
        return;
    }
    let opts = EntryOptions::file("data").level(level).mtime(0);
    let (w0, c0) = (Instant::now(), cpu_secs());
    let out_len = match mode {
        "sync" | "aes" => {
            let o = if mode == "aes" {
                opts.encrypt(AesStrength::Aes256, "pw")
            } else {
                opts
            };
            let mut w = ZipWriter::new(std::io::sink());
            w.add_reader(o, &mut &data[..]).unwrap();
            w.finish().unwrap();
            0
        }
        "async" => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            rt.block_on(async {
                let mut w = AsyncZipWriter::new(tokio::io::sink());
                w.add_reader(opts, &mut &data[..]).await.unwrap();
                w.finish().await.unwrap();
            });
            0
        }
        m if m.starts_with("par") => {
            let jobs: usize = m[3..].parse().unwrap();
            let mut w =
                ParallelZipWriter::new(ZipWriter::new(Vec::new()), ParallelOptions::new(jobs));
            w.add_bytes(opts, &data).unwrap();
            w.finish().unwrap().len()
        }
        _ => panic!("unknown mode"),
    };
    let wall = w0.elapsed().as_secs_f64();
    let cpu = cpu_secs() - c0;
    println!(
        "{mode} {mib:.1} MiB level {level}: wall {:.1} MiB/s, cpu {:.1} MiB/s (wall {wall:.3}s cpu {cpu:.3}s) out {out_len}",
        mib / wall,
        mib / cpu
    );
}
