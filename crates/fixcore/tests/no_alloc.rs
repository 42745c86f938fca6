//! Backs the claim "no heap allocation per message in steady state" for the
//! builder, the parser (with typed getters and repeating groups), the
//! framer and the ring store: a counting global allocator
//! (`perfkit_testkit::alloc_count`) is the oracle. Its counts are per thread,
//! so tests running in parallel (and the harness's own threads) do not
//! disturb each other.

use perfkit_testkit::alloc_count::{self, Counting, allocations};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The allocator is this binary's, so a zero from it means something.
#[test]
fn the_counting_allocator_is_installed() {
    assert!(alloc_count::installed());
}

use fixcore::build::{MessageBuilder, TimePrecision};
use fixcore::frame::Framer;
use fixcore::parse::Parser;
use fixcore::resend::{MessageStore, RingStore};
use fixcore::sample;
use fixcore::value::{Decimal, UtcTimestamp};
use fixcore::version::BeginString;
use std::hint::black_box;

/// A message with a 10-entry repeating group, built in place.
fn write_snapshot(b: &mut MessageBuilder, seq: u64) {
    b.begin(b"W")
        .header_str(49, "A")
        .header_str(56, "B")
        .header_uint(34, seq)
        .header_timestamp(
            52,
            UtcTimestamp {
                unix_nanos: 1_767_364_200_123_000_000 + (seq % 1_000_000) as i64,
            },
            TimePrecision::Micros,
        );
    b.field_str(55, "EUR/USD").field_uint(268, 10);
    for i in 0..10 {
        b.field_char(269, b'0' + (i % 2) as u8)
            .field_decimal(270, Decimal::new(108_450 + i as i64 - seq as i64, 5))
            .field_uint(271, 1_000_000 + i * 250_000 + seq);
    }
}

#[test]
fn builder_allocates_nothing_once_warm() {
    let mut b = MessageBuilder::new(BeginString::Fix44);
    let mut total = 0usize;
    let mut round = |b: &mut MessageBuilder, seq: u64| {
        sample::write_new_order_single(b, seq);
        total += b.finish().unwrap().len();
        sample::write_execution_report(b, seq);
        total += b.finish().unwrap().len();
        write_snapshot(b, seq);
        b.field_int(58, -(seq as i64));
        total += b.finish().unwrap().len();
    };
    // Warm: the buffer grows to the largest message once (longest numbers).
    round(&mut b, 999_999_999_999);
    let n = allocations(|| {
        for seq in 1..=5_000 {
            round(&mut b, seq);
        }
    });
    assert_eq!(n, 0, "allocations while building 15,000 messages");
    assert!(total > 0);
}

#[test]
fn parser_allocates_nothing_once_warm() {
    let msgs: Vec<Vec<u8>> = sample::all().into_iter().map(|(_, m)| m).collect();
    let mut b = MessageBuilder::new(BeginString::Fix44);
    write_snapshot(&mut b, 7);
    // Top-level tags >= 10,000 take the parser's other index (a map), which
    // must not allocate once warm either.
    b.field_str(10_001, "high").field_uint(20_002, 42);
    let snapshot = b.finish().unwrap().to_vec();
    let mut p = Parser::new();
    {
        let msg = p.parse(&snapshot).unwrap();
        assert_eq!(msg.get(10_001), Some(&b"high"[..]));
        assert_eq!(msg.int(20_002).unwrap(), 42);
    }
    let mut sink = 0i64;
    let mut read_all = |p: &mut Parser| {
        for m in msgs.iter().chain([&snapshot]) {
            let msg = p.parse(m).unwrap();
            sink += msg.int(34).unwrap();
            sink += msg.get(55).map_or(0, <[u8]>::len) as i64;
            sink += msg.get(10_001).map_or(0, <[u8]>::len) as i64;
            sink += msg.int(20_002).unwrap_or(0);
            if let Ok(ts) = msg.timestamp(52) {
                sink ^= ts.unix_nanos;
            }
            if let Ok(px) = msg.decimal(44) {
                sink += px.mantissa;
            }
            if let Some(g) = msg.group(268) {
                for e in g.entries() {
                    sink += e.decimal(270).unwrap().mantissa;
                    sink += e.int(271).unwrap();
                }
            }
            sink += msg.fields().count() as i64;
        }
    };
    read_all(&mut p);
    let n = allocations(|| {
        for _ in 0..2_000 {
            read_all(&mut p);
        }
    });
    assert_eq!(n, 0, "allocations while parsing 8,000 messages");
    black_box(sink);
}

#[test]
fn framer_and_ring_store_allocate_nothing_once_warm() {
    let stream: Vec<u8> = sample::all().into_iter().flat_map(|(_, m)| m).collect();
    let mut framer = Framer::new(1 << 16);
    let mut p = Parser::new();
    let mut store = RingStore::new(1, 64);
    let mut seq = 0u64;
    let mut feed = |framer: &mut Framer, p: &mut Parser, store: &mut RingStore| {
        // Two pieces, the cut inside a message, like a partial read.
        for piece in [&stream[..100], &stream[100..]] {
            framer.push(piece);
            while let Some(frame) = framer.next_frame() {
                let frame = frame.unwrap();
                p.parse(frame).unwrap();
                seq += 1;
                store.insert(seq, frame).unwrap();
            }
        }
    };
    // Warm: every ring slot has held every message size once.
    for _ in 0..200 {
        feed(&mut framer, &mut p, &mut store);
    }
    let n = allocations(|| {
        for _ in 0..2_000 {
            feed(&mut framer, &mut p, &mut store);
        }
    });
    assert_eq!(
        n, 0,
        "allocations while framing, parsing and storing 6,000 messages"
    );
    assert_eq!(store.len(), 64);
}
