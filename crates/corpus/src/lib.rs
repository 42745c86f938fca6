//! The deterministic benchmark corpus: text, source code, JSON, binary and
//! already-compressed data at ~98 KB, 128 KB and ~500 KB, plus a 64 MiB
//! mixed file. Generated from fixed seeds, never downloaded, so every
//! machine benchmarks the same bytes. `perfkit corpus DIR` writes it out;
//! `perfkit bench`'s comparisons read it in memory.
//!
//! ```
//! let json = perfkit_corpus::generate(perfkit_corpus::Kind::Json, 4096, 7).unwrap();
//! assert_eq!(json.len(), 4096);
//! assert_eq!(json, perfkit_corpus::generate(perfkit_corpus::Kind::Json, 4096, 7).unwrap());
//! ```

#![forbid(unsafe_code)]

use std::io::Write;

// The one way generating a corpus fails is zstdkit failing to compress the
// compressed kind; its typed error is the corpus's.
use zstdkit::Result;

/// The kinds of data in the corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// English-like prose with a Zipf-distributed vocabulary.
    Text,
    /// Code-shaped text: functions, statements, identifiers, indentation.
    Source,
    /// JSON records, one object per line inside an array.
    Json,
    /// Little-endian records: counters, sensor floats, ids, padding.
    Binary,
    /// zstd frames of text: data that does not compress again.
    Compressed,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 5] = [
        Kind::Text,
        Kind::Source,
        Kind::Json,
        Kind::Binary,
        Kind::Compressed,
    ];

    /// The name used in file names and reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Source => "source",
            Kind::Json => "json",
            Kind::Binary => "binary",
            Kind::Compressed => "compressed",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Kind::Text => "txt",
            Kind::Source => "rs",
            Kind::Json => "json",
            Kind::Binary => "bin",
            Kind::Compressed => "zst",
        }
    }
}

/// The sizes every kind is written at: ~98 KB, 128 KiB and ~500 KB.
pub const SIZES: [usize; 3] = [100_000, 131_072, 500_000];

/// The size of the large mixed file.
pub const LARGE_SIZE: usize = 64 << 20;

/// One corpus entry, in memory.
#[derive(Debug, Clone)]
pub struct Entry {
    /// File name, e.g. `text-100000.txt`.
    pub name: String,
    /// The bytes.
    pub data: Vec<u8>,
}

/// A small, fast, seedable generator (xorshift64*); the corpus must be
/// identical everywhere, so it cannot depend on a crate's algorithm choice.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Roughly Zipf-distributed index in 0..n: small indices are common.
    fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64).powf(u) - 1.0) as usize % n
    }
}

fn vocabulary(rng: &mut Rng, n: usize) -> Vec<String> {
    const SYL: [&str; 24] = [
        "ka", "to", "re", "in", "an", "st", "er", "on", "la", "mi", "de", "ar", "co", "ve", "is",
        "pu", "en", "th", "or", "ti", "ng", "al", "se", "u",
    ];
    (0..n)
        .map(|_| {
            let parts = 1 + rng.below(3) as usize;
            (0..parts)
                .map(|_| SYL[rng.below(SYL.len() as u64) as usize])
                .collect()
        })
        .collect()
}

fn text(rng: &mut Rng, len: usize) -> Vec<u8> {
    let words = vocabulary(rng, 4000);
    let mut out = Vec::with_capacity(len + 64);
    let mut sentence = 0;
    while out.len() < len {
        let w = &words[rng.zipf(words.len())];
        if sentence == 0 {
            let mut cs = w.chars();
            if let Some(c) = cs.next() {
                out.extend(c.to_uppercase().to_string().bytes());
                out.extend(cs.as_str().bytes());
            }
        } else {
            out.extend_from_slice(w.as_bytes());
        }
        sentence += 1;
        if sentence > 6 && rng.below(8) == 0 {
            out.extend_from_slice(if rng.below(6) == 0 { b".\n\n" } else { b". " });
            sentence = 0;
        } else if rng.below(12) == 0 {
            out.extend_from_slice(b", ");
        } else {
            out.push(b' ');
        }
    }
    out.truncate(len);
    out
}

fn source(rng: &mut Rng, len: usize) -> Vec<u8> {
    let idents = vocabulary(rng, 600);
    const TYPES: [&str; 8] = [
        "u32",
        "usize",
        "String",
        "&str",
        "Vec<u8>",
        "bool",
        "f64",
        "Option<u64>",
    ];
    let mut out = Vec::with_capacity(len + 256);
    while out.len() < len {
        let f = &idents[rng.zipf(idents.len())];
        let a = &idents[rng.zipf(idents.len())];
        let ty = TYPES[rng.below(8) as usize];
        let _ = writeln!(
            out,
            "/// Returns the {a} of a {f}.\npub fn {f}_{a}(input: {ty}, limit: usize) -> Result<{ty}, Error> {{"
        );
        for _ in 0..2 + rng.below(8) {
            let x = &idents[rng.zipf(idents.len())];
            let y = &idents[rng.zipf(idents.len())];
            match rng.below(4) {
                0 => {
                    let _ = writeln!(
                        out,
                        "    let {x} = {y}.iter().filter(|v| v.len() > {}).count();",
                        rng.below(64)
                    );
                }
                1 => {
                    let _ = writeln!(
                        out,
                        "    if {x} >= limit {{\n        return Err(Error::{}(\"{y}\"));\n    }}",
                        capitalise(x)
                    );
                }
                2 => {
                    let _ = writeln!(
                        out,
                        "    for {x} in 0..{} {{\n        self.{y}.push({x} as {ty});\n    }}",
                        rng.below(1000)
                    );
                }
                _ => {
                    let _ = writeln!(out, "    // {x} must stay below {y} here");
                }
            }
        }
        out.extend_from_slice(b"    Ok(input)\n}\n\n");
    }
    out.truncate(len);
    out
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

fn json(rng: &mut Rng, len: usize) -> Vec<u8> {
    let names = vocabulary(rng, 300);
    const EVENTS: [&str; 5] = ["click", "view", "purchase", "signup", "logout"];
    let mut out = Vec::with_capacity(len + 256);
    out.extend_from_slice(b"[\n");
    let mut id = 1_000_000u64 + rng.below(1000);
    while out.len() < len {
        id += 1 + rng.below(3);
        let n = &names[rng.zipf(names.len())];
        let _ = writeln!(
            out,
            r#"  {{"id": {id}, "user": "{n}", "email": "{n}{}@example.com", "event": "{}", "ts": "2026-11-{:02}T{:02}:{:02}:{:02}Z", "score": {}.{:03}, "tags": ["{}", "{}"], "active": {}}},"#,
            rng.below(100),
            EVENTS[rng.zipf(5)],
            1 + rng.below(28),
            rng.below(24),
            rng.below(60),
            rng.below(60),
            rng.below(100),
            rng.below(1000),
            names[rng.zipf(names.len())],
            names[rng.zipf(names.len())],
            rng.below(2) == 0,
        );
    }
    out.truncate(len);
    out
}

fn binary(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut counter = rng.below(1 << 20) as u32;
    let mut temp = 20.0f32;
    while out.len() < len {
        counter += 1 + rng.below(4) as u32;
        temp += (rng.below(2001) as f32 - 1000.0) / 10_000.0;
        out.extend_from_slice(&counter.to_le_bytes());
        out.extend_from_slice(&temp.to_le_bytes());
        out.extend_from_slice(&(rng.zipf(5000) as u16).to_le_bytes());
        out.extend_from_slice(&[rng.below(4) as u8, 0]);
        out.extend_from_slice(&rng.next().to_le_bytes()[..2 + rng.below(3) as usize]);
    }
    out.truncate(len);
    out
}

fn compressed(rng: &mut Rng, len: usize) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(len + (64 << 10));
    let mut c = zstdkit::Compressor::new(zstdkit::Recipe::Text)?;
    while out.len() < len {
        out.extend_from_slice(&c.compress(&text(rng, 256 << 10))?);
    }
    out.truncate(len);
    Ok(out)
}

/// Generates `len` bytes of `kind` from `seed`.
pub fn generate(kind: Kind, len: usize, seed: u64) -> Result<Vec<u8>> {
    let mut rng = Rng::new(seed ^ (kind as u64) << 32);
    Ok(match kind {
        Kind::Text => text(&mut rng, len),
        Kind::Source => source(&mut rng, len),
        Kind::Json => json(&mut rng, len),
        Kind::Binary => binary(&mut rng, len),
        Kind::Compressed => compressed(&mut rng, len)?,
    })
}

/// The small corpus: every kind at every size in [`SIZES`].
pub fn small() -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for kind in Kind::ALL {
        for size in SIZES {
            entries.push(Entry {
                name: format!("{}-{size}.{}", kind.name(), kind.extension()),
                data: generate(kind, size, size as u64)?,
            });
        }
    }
    Ok(entries)
}

/// One entry of each kind, the default workload of `perfkit bench --only zstd`
/// (sizes vary by kind so all three sizes are covered).
pub fn bench_set() -> Result<Vec<Entry>> {
    let picks = [
        (Kind::Text, 100_000),
        (Kind::Source, 131_072),
        (Kind::Json, 500_000),
        (Kind::Binary, 131_072),
        (Kind::Compressed, 100_000),
    ];
    picks
        .into_iter()
        .map(|(kind, size)| {
            Ok(Entry {
                name: format!("{}-{size}.{}", kind.name(), kind.extension()),
                data: generate(kind, size, size as u64)?,
            })
        })
        .collect()
}

/// The large mixed file: 1 MiB blocks of every kind in turn, `size` bytes.
pub fn mixed(size: usize) -> Result<Vec<u8>> {
    const BLOCK: usize = 1 << 20;
    let mut out = Vec::with_capacity(size);
    let mut i = 0u64;
    while out.len() < size {
        let kind = Kind::ALL[(i % 5) as usize];
        let n = BLOCK.min(size - out.len());
        out.extend_from_slice(&generate(kind, n, 7 + i)?);
        i += 1;
    }
    Ok(out)
}

/// Name of the large mixed file.
pub const LARGE_NAME: &str = "mixed-64MiB.bin";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_files_have_the_sizes_their_names_say() {
        let a = small().unwrap();
        assert_eq!(a.len(), 15);
        for x in &a {
            let size: usize = x.name.split(['-', '.']).nth(1).unwrap().parse().unwrap();
            assert_eq!(x.data.len(), size, "{}", x.name);
        }
    }

    /// SHA-256 of `data`, by coreutils' `sha256sum`: an implementation
    /// that shares nothing with ours.
    fn sha256(data: &[u8]) -> String {
        use std::io::Write;
        let mut child = std::process::Command::new("sha256sum")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sha256sum (coreutils) runs");
        let mut stdin = child.stdin.take().unwrap();
        let data = data.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&data));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        String::from_utf8(out.stdout).unwrap()[..64].to_string()
    }

    /// Every corpus file has the bytes it had when this table was
    /// written: a change of generator, seed or dependency (the
    /// already-compressed kind goes through zstd) fails here, instead of
    /// silently making benchmark figures incomparable across versions.
    /// The mixed file is checked through a 3 MiB prefix, which runs every
    /// kind's generator with the mixed file's seeds.
    #[test]
    fn corpus_files_match_their_golden_hashes() {
        let mut got: Vec<(String, String)> = small()
            .unwrap()
            .into_iter()
            .map(|e| (e.name.clone(), sha256(&e.data)))
            .collect();
        got.push(("mixed prefix".into(), sha256(&mixed(3 << 20).unwrap())));
        let want: Vec<(String, String)> = GOLDEN
            .iter()
            .map(|(n, h)| (n.to_string(), h.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    /// (file, SHA-256) of the corpus, as `corpus_files_match_their_golden_hashes`
    /// lists them.
    const GOLDEN: &[(&str, &str)] = &[
        (
            "text-100000.txt",
            "74e1bd22a571fc31ceb394f562acb2140d4cd889debc37bd71a0ea6ae7dc9513",
        ),
        (
            "text-131072.txt",
            "c7e0a9c978c4146846051cc26a490b5f7774b700f2aa68b9c2978777dc6443b4",
        ),
        (
            "text-500000.txt",
            "834f216cf82609a8967ff7465a323ed816d808f717a024fb8460203cd7a10c99",
        ),
        (
            "source-100000.rs",
            "605dd2c09418af287399e7c607b576b8b9288cc7457d746fc11b6be48fe00c04",
        ),
        (
            "source-131072.rs",
            "df854bdc43aed8675214b19f1b2a7f110c00f7909079e56f90178a4b3faa1aa4",
        ),
        (
            "source-500000.rs",
            "d2e92be2d171fc1557b4f8dd16e8101d0c0195968a7c94a26765deba3059d3e8",
        ),
        (
            "json-100000.json",
            "4161ff0e0686381242edcd03c41ad21c3c360e5d023f14d2676d402e9a2d3ab1",
        ),
        (
            "json-131072.json",
            "10e958fc99e966fce549f9b6ae7da84084e8ffbab7191f63809faa1bc89b1c5b",
        ),
        (
            "json-500000.json",
            "5b00cfdf13966a8d99b0395c0e09c3403fdd7470c87da980bb4210d07750bbd3",
        ),
        (
            "binary-100000.bin",
            "8f8dd8559ff0b6d5b0c58dd776597fb79edceceebe599fd9b0bc253b9c601316",
        ),
        (
            "binary-131072.bin",
            "e8e076a4385a85a97f0a016dc8383e829424521ccb64cac04040df9fc8f6af63",
        ),
        (
            "binary-500000.bin",
            "6bb18843a2e2cd759d9f33a959fcb3028a44ffa84a0594115193f0990c9abf02",
        ),
        (
            "compressed-100000.zst",
            "c583f8f7f9fa50466838e6547544b6ae0b55f3eccb673977fb1a3b075516f9aa",
        ),
        (
            "compressed-131072.zst",
            "ef52b0e44dfed7acd6de840f057ef9763f259d0420e20fa2b0ab0265fe589816",
        ),
        (
            "compressed-500000.zst",
            "501a0528a93e10393501f18f720090ce37566a6e6f8afade21e36408d9b93547",
        ),
        (
            "mixed prefix",
            "be812f2da042af6bf1c95e25956451f0ecc9e55ba8a511a8c504061064bcd7b0",
        ),
    ];

    #[test]
    fn kinds_have_the_compressibility_their_names_promise() {
        let ratio = |k| {
            let d = generate(k, 131_072, 1).unwrap();
            d.len() as f64
                / zstdkit::compress(&d, zstdkit::Recipe::Balanced)
                    .unwrap()
                    .len() as f64
        };
        assert!(ratio(Kind::Text) > 2.0);
        assert!(ratio(Kind::Json) > 3.0);
        assert!(ratio(Kind::Source) > 3.0);
        let b = ratio(Kind::Binary);
        assert!(b > 1.1 && b < 4.0, "binary {b}");
        assert!(ratio(Kind::Compressed) < 1.02);
    }
}
