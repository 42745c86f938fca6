//! A second workload shape for judging betree changes, unlike the adtech
//! generator that shaped the index: uniform (not Zipf) attribute and value
//! popularity, many small string domains, short string lists, more
//! negations, events defining a uniform ~70 % of the attributes.
//!
//! `cargo run --release -p perfkit-bench --example betree_shape --
//! EXPRESSIONS EVENTS ROUNDS` prints the library's throughput rows
//! (perfkit-bench's `betree::throughput`, CPU time, median of ROUNDS),
//! candidates per match and the index's memory.
use betree::{AttrType, Bounds, Domain, Event, Index, Schema, SearchStep};
use perfkit_bench::betree::throughput;

/// SplitMix64: perfkit-bench has no random-number crate, and the shape
/// needs only a fixed, seeded stream.
struct Rng(u64);

impl Rng {
    fn with_seed(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `range` (the modulo bias is negligible for these sizes).
    fn usize(&mut self, range: std::ops::Range<usize>) -> usize {
        range.start + (self.next() % (range.end - range.start) as u64) as usize
    }

    fn bool(&mut self) -> bool {
        self.next() & 1 == 1
    }

    fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const INTS: usize = 20;
const STRS: usize = 25;
const LISTS: usize = 10;
const BOOLS: usize = 5;

/// Values of the `i`-th string attribute's domain (5 to 20).
fn str_card(i: usize) -> usize {
    5 + (i * 7) % 16
}

fn domains() -> Vec<Domain> {
    let mut d = Vec::new();
    for i in 0..INTS {
        d.push(Domain::new(format!("n{i}"), AttrType::Int, true).with_bounds(Bounds::Int(0, 49)));
    }
    for i in 0..STRS {
        d.push(
            Domain::new(format!("s{i}"), AttrType::Str, true)
                .with_bounds(Bounds::MaxStrings(str_card(i))),
        );
    }
    for i in 0..LISTS {
        d.push(
            Domain::new(format!("l{i}"), AttrType::StrList, true)
                .with_bounds(Bounds::MaxStrings(30)),
        );
    }
    for i in 0..BOOLS {
        d.push(Domain::new(format!("b{i}"), AttrType::Bool, true));
    }
    d
}

fn strs(r: &mut Rng, card: usize, n: usize) -> Vec<String> {
    let mut v: Vec<usize> = (0..n).map(|_| r.usize(0..card)).collect();
    v.sort_unstable();
    v.dedup();
    v.iter().map(|x| format!("\"v{x}\"")).collect()
}

fn predicate(r: &mut Rng) -> String {
    match r.usize(0..4) {
        0 => {
            let i = r.usize(0..INTS);
            match r.usize(0..4) {
                0 => format!("n{i} = {}", r.usize(0..50)),
                1 => format!("n{i} < {}", r.usize(1..25)),
                2 => format!("n{i} <> {}", r.usize(0..50)),
                _ => format!("n{i} in ({})", {
                    let mut v: Vec<usize> = (0..r.usize(2..6)).map(|_| r.usize(0..50)).collect();
                    v.sort_unstable();
                    v.dedup();
                    v.iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                }),
            }
        }
        1 => {
            let i = r.usize(0..STRS);
            let c = str_card(i);
            match r.usize(0..4) {
                0 | 1 => format!("s{i} = \"v{}\"", r.usize(0..c)),
                2 => format!("s{i} not in ({})", strs(r, c, 2).join(", ")),
                _ => format!("s{i} in ({})", strs(r, c, 3).join(", ")),
            }
        }
        2 => {
            let i = r.usize(0..LISTS);
            match r.usize(0..3) {
                0 | 1 => format!("l{i} one of ({})", strs(r, 30, 3).join(", ")),
                _ => format!("l{i} none of ({})", strs(r, 30, 2).join(", ")),
            }
        }
        _ => {
            let i = r.usize(0..BOOLS);
            if r.bool() {
                format!("b{i}")
            } else {
                format!("not b{i}")
            }
        }
    }
}

fn expression(r: &mut Rng) -> String {
    let n = r.usize(2..7);
    let parts: Vec<String> = (0..n).map(|_| predicate(r)).collect();
    parts.join(" and ")
}

fn event(schema: &Schema, r: &mut Rng) -> betree::Result<Event> {
    let mut fields = Vec::new();
    for d in schema.domains() {
        if r.f64() > 0.7 {
            continue;
        }
        let v = match d.ty {
            AttrType::Int => r.usize(0..50).to_string(),
            AttrType::Str => {
                let i: usize = d.name[1..].parse().expect("s<i>");
                format!("\"v{}\"", r.usize(0..str_card(i)))
            }
            AttrType::StrList => {
                let len = r.usize(1..5);
                format!("[{}]", strs(r, 30, len).join(", "))
            }
            _ => r.bool().to_string(),
        };
        fields.push(format!("\"{}\": {v}", d.name));
    }
    Event::from_json(schema, &format!("{{{}}}", fields.join(", ")))
}

fn main() -> betree::Result<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let ne: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(500);
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let schema = Schema::from_domains(domains())?;
    let mut index = Index::new(schema.clone());
    let mut r = Rng::with_seed(11);
    for id in 1..=n as u64 {
        index.insert(id, &expression(&mut r))?;
    }
    let mut r = Rng::with_seed(12);
    let events = (0..ne)
        .map(|_| event(&schema, &mut r))
        .collect::<betree::Result<Vec<_>>>()?;
    let (mut cands, mut matches) = (0usize, 0usize);
    for ev in &events {
        let mut it = index.search_iter(ev)?;
        let SearchStep::Done(ids) = index.search_next(&mut it, u64::MAX) else {
            unreachable!("an unbounded step finishes")
        };
        cands += it.candidates();
        matches += ids.len();
    }
    println!(
        "shape: {n} expressions, {ne} events: {:.1} matches/event ({:.2} % match rate), {:.2} candidates per match, index {:.1} MiB",
        matches as f64 / ne as f64,
        matches as f64 * 100.0 / (ne * n) as f64,
        cands as f64 / matches.max(1) as f64,
        index.memory_bytes() as f64 / (1 << 20) as f64
    );
    let t = throughput::<betree::Error>(&index, &events, rounds, None)?;
    for row in &t.rows {
        println!(
            "{:<14} {:>8.0} events/s (CPU, median of {rounds})",
            row.name,
            row.events_per_s(t.events)
        );
    }
    Ok(())
}
