//! The parallel writer's archives decode to the input with both readers.

use std::io::{Cursor, Read};

use zipstream::*;

use perfkit_testkit::noise::noise;

fn text(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let w = [
            "the ", "quick ", "brown ", "fox ", "jumps\n", "over ", "lazy ", "dogs, ",
        ][(x % 8) as usize];
        v.extend_from_slice(w.as_bytes());
    }
    v.truncate(n);
    v
}

#[test]
fn parallel_archives_round_trip() {
    let inputs: Vec<(EntryOptions, Vec<u8>)> = vec![
        (EntryOptions::file("big.txt").level(6), text(5_300_000, 1)),
        (EntryOptions::file("small.txt"), text(10_000, 2)),
        (EntryOptions::file("empty"), Vec::new()),
        (EntryOptions::directory("d"), Vec::new()),
        (EntryOptions::file("noise-one-block"), noise(300_000, 1)),
        (EntryOptions::file("noise-multi"), noise(2_500_000, 2)),
        (EntryOptions::file("exact-block"), text(1 << 20, 3)),
        (
            EntryOptions::file("aes").encrypt(AesStrength::Aes256, "pw"),
            text(3_000_000, 4),
        ),
        (
            EntryOptions::file("stored").method(Method::Stored),
            text(100, 5),
        ),
    ];
    for jobs in [1, 2, 3] {
        for seekable in [false, true] {
            let mut opts = ParallelOptions::new(jobs);
            opts.block_size = 512 * 1024;
            let bytes = if seekable {
                let mut w = ParallelZipWriter::new(
                    ZipWriter::new_seekable(Cursor::new(Vec::new())).unwrap(),
                    opts,
                );
                for (o, d) in &inputs {
                    w.add_bytes(o.clone(), d).unwrap();
                }
                w.finish().unwrap().into_inner()
            } else {
                let mut w = ParallelZipWriter::new(ZipWriter::new(Vec::new()), opts);
                for (o, d) in &inputs {
                    w.add_bytes(o.clone(), d).unwrap();
                }
                w.finish().unwrap()
            };
            let mut a = ZipArchive::new(Cursor::new(bytes.clone())).unwrap();
            assert_eq!(a.entries().len(), inputs.len());
            for (i, (o, d)) in inputs.iter().enumerate() {
                assert_eq!(a.entries()[i].name, o.name());
                assert_eq!(
                    &a.read_to_vec(i, Some(b"pw")).unwrap(),
                    d,
                    "{} jobs={jobs}",
                    o.name()
                );
            }
            assert_eq!(
                a.entries()[4].method,
                0,
                "incompressible single block is stored"
            );
            let mut r = ZipStreamReader::new(&bytes[..]);
            r.set_password(Some(b"pw"));
            for (o, d) in &inputs {
                let e = r.next_entry().unwrap().unwrap();
                assert_eq!(e.name, o.name());
                let mut v = Vec::new();
                r.read_to_end(&mut v).unwrap();
                assert_eq!(&v, d);
            }
            assert!(r.next_entry().unwrap().is_none());
        }
    }
}

/// What both writers say they wrote (`written`) is what a reader finds in
/// the central directory: name, method, sizes, AES.
#[test]
fn written_agrees_with_the_central_directory() {
    let inputs: Vec<(EntryOptions, Vec<u8>)> = vec![
        (EntryOptions::file("text").level(6), text(2_500_000, 7)),
        (EntryOptions::file("noise"), noise(100_000, 8)),
        (EntryOptions::file("empty"), Vec::new()),
        (
            EntryOptions::file("aes").encrypt(AesStrength::Aes256, "pw"),
            text(200_000, 9),
        ),
        (
            EntryOptions::file("zstd").method(Method::Zstd),
            text(50_000, 10),
        ),
    ];
    for jobs in [1, 3] {
        let mut seen = Vec::new();
        let bytes = if jobs == 1 {
            let mut w = ZipWriter::new(Vec::new());
            for (o, d) in &inputs {
                w.add_bytes(o.clone(), d).unwrap();
            }
            seen.extend((0..inputs.len()).map(|i| w.written(i).unwrap()));
            assert!(w.written(inputs.len()).is_none());
            w.finish().unwrap()
        } else {
            let mut w =
                ParallelZipWriter::new(ZipWriter::new(Vec::new()), ParallelOptions::new(jobs));
            for (o, d) in &inputs {
                w.add_bytes(o.clone(), d).unwrap();
            }
            w.settle().unwrap();
            seen.extend((0..inputs.len()).map(|i| w.written(i).unwrap()));
            w.finish().unwrap()
        };
        let archive = ZipArchive::new(Cursor::new(bytes)).unwrap();
        assert_eq!(archive.entries().len(), seen.len());
        for (w, e) in seen.iter().zip(archive.entries()) {
            assert_eq!(w.name, e.name, "jobs {jobs}");
            assert_eq!(w.method, e.method, "{} jobs {jobs}", e.name);
            assert_eq!(
                w.compressed_size, e.compressed_size,
                "{} jobs {jobs}",
                e.name
            );
            assert_eq!(w.size, e.size, "{} jobs {jobs}", e.name);
            assert_eq!(w.aes, e.aes.map(|(s, _)| s), "{} jobs {jobs}", e.name);
        }
    }
}

/// Dense data (one random 4 KiB block repeated) costs with `--jobs` about
/// what one deflate stream costs: each block is primed with the end of the
/// one before, as pigz does, instead of spelling the 4 KiB out again (30 %
/// larger in 1 MiB blocks).
#[test]
fn dense_blocks_are_primed_with_the_previous_block() {
    let data: Vec<u8> = noise(4096, 9).into_iter().cycle().take(6 << 20).collect();
    let mut w = ParallelZipWriter::new(ZipWriter::new(Vec::new()), ParallelOptions::new(2));
    w.add_bytes(EntryOptions::file("dense").level(6), &data)
        .unwrap();
    let bytes = w.finish().unwrap();
    let mut a = ZipArchive::new(Cursor::new(bytes)).unwrap();
    let packed = a.entries()[0].compressed_size;
    assert!(a.read_to_vec(0, None).unwrap() == data);
    let mut one = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(9));
    std::io::Write::write_all(&mut one, &data).unwrap();
    let one = one.finish().unwrap().len() as u64;
    assert!(
        packed * 100 <= one * 102,
        "{packed} bytes, one stream {one}"
    );
}
