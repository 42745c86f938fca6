//! The deterministic benchmark corpus: text, source code, JSON, binary and
//! already-compressed data at ~98 KB, 128 KB and ~500 KB, plus a 64 MiB
//! mixed file. Generated from fixed seeds, never downloaded, so every
//! machine benchmarks the same bytes.

use std::io::Write;

use anyhow::Result;

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

/// One entry of each kind, the default workload of `perfkit compress bench`
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
    fn corpus_is_deterministic_and_sized() {
        let a = small().unwrap();
        let b = small().unwrap();
        assert_eq!(a.len(), 15);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.data, y.data, "{}", x.name);
            let size: usize = x.name.split(['-', '.']).nth(1).unwrap().parse().unwrap();
            assert_eq!(x.data.len(), size, "{}", x.name);
        }
    }

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
