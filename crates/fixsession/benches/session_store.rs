//! The session stores under criterion (`cargo bench -p fixsession`).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fixcore::sample;
use fixsession::store::{Durability, FileStore, MemoryStore, SessionStore};
use std::hint::black_box;

/// The session stores: a round's append (16 sent messages, then the
/// flush that precedes the socket write) and a resend's lookup, in memory
/// (every message, or a window on the resend ring) and in QuickFIX's file
/// layout under each durability. This decides
/// whether a faster on-disk format would earn a setting of its own: it
/// could save at most the file store's cost over the memory store's.
fn bench_session_store(c: &mut Criterion) {
    const ROUND: u64 = 16;
    let msg = sample::all().swap_remove(0).1;
    let dir = tempfile::tempdir().unwrap();
    let mut stores: Vec<(&str, Box<dyn SessionStore>)> = vec![
        ("memory", Box::new(MemoryStore::default())),
        // The last 4096 messages, on fixcore's resend ring.
        ("memory_window", Box::new(MemoryStore::window(4096))),
        (
            "file",
            Box::new(
                FileStore::open(&dir.path().join("process"), Durability::Process, None).unwrap(),
            ),
        ),
        (
            "file_fsync",
            Box::new(FileStore::open(&dir.path().join("fsync"), Durability::Fsync, None).unwrap()),
        ),
    ];
    let mut g = c.benchmark_group("session_store_round");
    g.throughput(Throughput::Elements(ROUND));
    for (name, st) in &mut stores {
        let mut seq = 0u64;
        g.bench_function(*name, |b| {
            b.iter(|| {
                for _ in 0..ROUND {
                    seq += 1;
                    st.save(seq, &msg).unwrap();
                }
                st.set_seqs(seq + 1, seq + 1).unwrap();
                st.flush().unwrap()
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("session_store_lookup");
    let mut out = Vec::new();
    for (name, st) in &mut stores {
        // Among the last 4096 sent, as a ResendRequest after a short
        // outage asks, and all a window store keeps.
        // Filled here too, for a run that filters the round group out.
        let mut last = st.next_sender_seq() - 1;
        while last < 4096 {
            last += 1;
            st.save(last, &msg).unwrap();
        }
        st.set_seqs(last + 1, last + 1).unwrap();
        st.flush().unwrap();
        let span = 4096;
        let mut k = 0u64;
        g.bench_function(*name, |b| {
            b.iter(|| {
                k = (k + 409) % span;
                out.clear();
                let found = st.load(black_box(last - k), &mut out).unwrap();
                assert!(found);
                black_box(found)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_session_store);
criterion_main!(benches);
