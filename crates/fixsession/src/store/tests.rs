use super::*;

/// The message the writer sends under `seq`, a whole FIX message (the
/// file store checks CheckSums): its bytes are a function of `seq`
/// alone, so a reader can check any one independently.
pub(super) fn message(seq: u64) -> Vec<u8> {
    let body = format!(
        "35=D\x0134={seq}\x0111=order-{seq}\x0158={}\x01",
        "x".repeat((seq % 50) as usize + 1)
    );
    framed(&body)
}

/// `body` (fields after BodyLength, each ending in SOH) as a FIX.4.4
/// message with its BodyLength and CheckSum.
pub(super) fn framed(body: &str) -> Vec<u8> {
    let mut m = format!("8=FIX.4.4\x019={}\x01{body}", body.len()).into_bytes();
    let sum = m.iter().map(|&b| u32::from(b)).sum::<u32>() % 256;
    m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    m
}

pub(super) fn exercise(s: &mut dyn SessionStore) {
    assert_eq!((s.next_sender_seq(), s.next_target_seq()), (1, 1));
    for seq in 1..=20 {
        s.save(seq, &message(seq)).unwrap();
        s.set_seqs(seq + 1, seq * 2).unwrap();
    }
    assert_eq!((s.next_sender_seq(), s.next_target_seq()), (21, 40));
    let mut out = b"prefix".to_vec();
    assert!(s.load(7, &mut out).unwrap());
    assert_eq!(&out[6..], &message(7)[..], "load appends");
    out.clear();
    assert!(!s.load(21, &mut out).unwrap());
    assert!(out.is_empty());
    // A resave (after a reset elsewhere, say) replaces.
    s.save(7, &framed("35=D\x0134=7\x0158=again\x01")).unwrap();
    out.clear();
    assert!(s.load(7, &mut out).unwrap());
    assert_eq!(out, framed("35=D\x0134=7\x0158=again\x01"));
}

#[test]
fn memory_store_keeps_numbers_and_messages() {
    let mut s = MemoryStore::default();
    exercise(&mut s);
    // A number past the end leaves the skipped ones empty.
    s.save(30, &message(30)).unwrap();
    let mut out = Vec::new();
    assert!(s.load(30, &mut out).unwrap());
    assert_eq!(out, message(30));
    for seq in [0, 21, 29, 31] {
        assert!(!s.load(seq, &mut Vec::new()).unwrap(), "{seq}");
    }
    s.save(0, b"never").unwrap();
    assert!(!s.load(0, &mut Vec::new()).unwrap());
    s.reset().unwrap();
    assert_eq!((s.next_sender_seq(), s.next_target_seq()), (1, 1));
    assert!(!s.load(1, &mut Vec::new()).unwrap());
}

#[test]
fn memory_store_chunks_keep_every_message_whole() {
    // Sizes that fill chunks unevenly, cross their ends and exceed one,
    // checked against a plain map of what was saved.
    let mut s = MemoryStore::default();
    let mut saved = std::collections::HashMap::new();
    let sizes = [
        1,
        999,
        CHUNK / 3,
        CHUNK / 2,
        CHUNK - 1,
        CHUNK,
        CHUNK + 7,
        5,
        3 * CHUNK,
    ];
    for (i, &n) in sizes.iter().cycle().take(40).enumerate() {
        let seq = i as u64 + 1;
        let msg: Vec<u8> = (0..n).map(|k| (k as u64 * 31 + seq) as u8).collect();
        s.save(seq, &msg).unwrap();
        saved.insert(seq, msg);
    }
    for (seq, msg) in &saved {
        let mut out = Vec::new();
        assert!(s.load(*seq, &mut out).unwrap());
        assert!(out == *msg, "message {seq} of {} bytes", msg.len());
    }
}

#[test]
fn a_windowed_memory_store_keeps_the_last_messages_and_no_others() {
    let mut s = MemoryStore::window(64);
    exercise(&mut s);

    // Five asked, eight kept (the ring's power of two). The oracle: a map
    // of every save, of which the numbers within eight of the highest
    // count.
    let mut s = MemoryStore::window(5);
    assert_eq!(s.kept(), Some(8));
    assert_eq!(MemoryStore::default().kept(), None);
    let mut saved = std::collections::BTreeMap::new();
    let check = |s: &MemoryStore, saved: &std::collections::BTreeMap<u64, Vec<u8>>| {
        let top = saved.keys().last().copied().unwrap_or(0);
        for seq in 0..=top + 2 {
            let mut out = Vec::new();
            let want = saved.get(&seq).filter(|_| seq + 8 > top);
            assert_eq!(
                s.load(seq, &mut out).unwrap(),
                want.is_some(),
                "{seq} of {top}"
            );
            assert_eq!(want.map(Vec::as_slice).unwrap_or_default(), out, "{seq}");
        }
    };
    for seq in 1..=20 {
        s.save(seq, &message(seq)).unwrap();
        saved.insert(seq, message(seq));
        check(&s, &saved);
    }
    // A jump (a SequenceReset of ours) leaves nothing of the old window.
    s.save(100, &message(100)).unwrap();
    saved.insert(100, message(100));
    check(&s, &saved);
    // The highest number the session can send is kept too.
    let max = s.max_seq();
    s.save(max, b"last").unwrap();
    let mut out = Vec::new();
    assert!(s.load(max, &mut out).unwrap());
    assert_eq!(out, b"last");
    // A reset keeps the window, not the messages.
    s.reset().unwrap();
    assert_eq!(s.kept(), Some(8));
    assert_eq!((s.next_sender_seq(), s.next_target_seq()), (1, 1));
    assert!(!s.load(100, &mut Vec::new()).unwrap());
    assert!(!s.load(max, &mut Vec::new()).unwrap());
}
