use super::*;
use crate::session::store::tests::{exercise, framed, message};

fn prefix(d: &tempfile::TempDir) -> PathBuf {
    FileStore::prefix_in(d.path(), "FIX.4.4", "EXEC", "BANZAI", "")
}

fn file(prefix: &Path, ext: &str) -> PathBuf {
    PathBuf::from(format!("{}.{ext}", prefix.display()))
}

/// A store of `n` messages (numbers 1..=n), numbers (n + 1, 2n), closed.
fn store_of(prefix: &Path, n: u64) {
    let mut s = FileStore::open(prefix, Durability::Process).unwrap();
    for seq in 1..=n {
        s.save(seq, &message(seq)).unwrap();
        s.set_seqs(seq + 1, 2 * seq).unwrap();
        if seq % 97 == 0 {
            s.flush().unwrap();
        }
    }
}

#[test]
fn survives_reopen_and_reset() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    for durability in [Durability::Process, Durability::Fsync] {
        let mut s = FileStore::open(&p, durability).unwrap();
        s.reset().unwrap();
        exercise(&mut s);
        drop(s);
        let s = FileStore::open(&p, durability).unwrap();
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (21, 40));
        let mut out = Vec::new();
        for seq in 1..=20 {
            out.clear();
            assert!(s.load(seq, &mut out).unwrap());
            let want = if seq == 7 {
                framed("35=D\x0158=again\x01")
            } else {
                message(seq)
            };
            assert_eq!(out, want, "seq {seq}");
        }
        let mut s = s;
        s.reset().unwrap();
        drop(s);
        let s = FileStore::open(&p, durability).unwrap();
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (1, 1));
        assert!(!s.load(1, &mut out).unwrap());
        assert_eq!(std::fs::metadata(file(&p, "header")).unwrap().len(), 0);
    }
}

/// The files are QuickFIX's: names, the numbers' text and the header's
/// entries, checked by reading them as text.
#[test]
fn writes_quickfix_layout() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    store_of(&p, 3);
    assert!(p.ends_with("FIX.4.4-EXEC-BANZAI"));
    let seqnums = std::fs::read_to_string(file(&p, "seqnums")).unwrap();
    assert_eq!(seqnums, "0000000004 : 0000000006");
    let header = std::fs::read_to_string(file(&p, "header")).unwrap();
    let body = std::fs::read(file(&p, "body")).unwrap();
    let mut at = 0;
    let mut want = String::new();
    for seq in 1..=3 {
        let m = message(seq);
        want.push_str(&format!("{seq},{at},{} ", m.len()));
        assert_eq!(&body[at..at + m.len()], &m[..]);
        at += m.len();
    }
    assert_eq!(header, want);
    let session = std::fs::read_to_string(file(&p, "session")).unwrap();
    assert_eq!(session.len(), 17, "{session:?}");
    assert!(crate::value::UtcTimestamp::parse(session.as_bytes()).is_some());
}

/// QuickFIX after 1.15.1 writes twenty digits: read, then rewritten as
/// 1.15.1 reads them.
#[test]
fn reads_twenty_digit_numbers() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    store_of(&p, 2);
    std::fs::write(
        file(&p, "seqnums"),
        "00000000000000000009 : 00000000000000000012",
    )
    .unwrap();
    let s = FileStore::open(&p, Durability::Process).unwrap();
    assert_eq!((s.next_sender_seq(), s.next_target_seq()), (9, 12));
    assert_eq!(
        std::fs::read_to_string(file(&p, "seqnums")).unwrap(),
        "0000000009 : 0000000012"
    );
}

/// Thousands of messages, looked up at random and in order after a
/// reopen; the index in memory is one position per STRIDE entries.
#[test]
fn finds_every_message_through_the_header() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    let n = 5 * STRIDE + 17;
    store_of(&p, n);
    let s = FileStore::open(&p, Durability::Process).unwrap();
    match &s.index {
        Index::Sorted { sparse, count, .. } => {
            assert_eq!(*count, n);
            assert_eq!(sparse.len() as u64, n.div_ceil(STRIDE));
        }
        Index::Map(_) => panic!("a sorted header read as a map"),
    }
    let mut out = Vec::new();
    let mut rng = 7u64;
    for _ in 0..500 {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let seq = rng % (n + 3);
        out.clear();
        let found = s.load(seq, &mut out).unwrap();
        assert_eq!(found, (1..=n).contains(&seq), "{seq}");
        if found {
            assert_eq!(out, message(seq));
        }
    }
    for seq in 1..=n {
        out.clear();
        assert!(s.load(seq, &mut out).unwrap(), "{seq}");
        assert_eq!(out, message(seq));
    }
}

/// Damage in the middle of the header (a changed size, as a flipped byte
/// makes it) is refused with the file, the byte and the entry, and
/// nothing on disk changes; recover cuts there and gives out no number
/// already used.
#[test]
fn damaged_header_is_refused_then_recovered() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    store_of(&p, 1000);
    let h = file(&p, "header");
    let mut header = std::fs::read(&h).unwrap();
    // The 500th entry: its size's first digit changed.
    let start = header
        .split(|&b| b == b' ')
        .take(499)
        .map(|e| e.len() + 1)
        .sum::<usize>();
    let entry_end = start + header[start..].iter().position(|&b| b == b' ').unwrap();
    let size_at = start
        + header[start..entry_end]
            .iter()
            .rposition(|&b| b == b',')
            .unwrap()
        + 1;
    header[size_at] = if header[size_at] == b'9' { b'1' } else { b'9' };
    std::fs::write(&h, &header).unwrap();
    let before: Vec<Vec<u8>> = ["body", "header", "seqnums"]
        .iter()
        .map(|e| std::fs::read(file(&p, e)).unwrap())
        .collect();
    let e = FileStore::open(&p, Durability::Process).unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, StoreError::Corrupt { offset, .. } if offset == start as u64),
        "{text}"
    );
    assert!(text.contains(&h.display().to_string()), "{text}");
    assert!(text.contains("entry 500, message 500"), "{text}");
    let after: Vec<Vec<u8>> = ["body", "header", "seqnums"]
        .iter()
        .map(|e| std::fs::read(file(&p, e)).unwrap())
        .collect();
    assert!(before == after, "a refused open changed the store");

    let (s, recovery) = FileStore::recover(&p, Durability::Process).unwrap();
    assert_eq!(recovery.repairs.len(), 1, "{recovery:?}");
    assert!(s.next_sender_seq() >= 1001, "{}", s.next_sender_seq());
    assert!(s.load(499, &mut Vec::new()).unwrap());
    assert!(!s.load(500, &mut Vec::new()).unwrap());
    drop(s);
    // Recovered, the store opens whole.
    let s = FileStore::open(&p, Durability::Process).unwrap();
    assert!(s.next_sender_seq() >= 1001);
}

/// A changed body byte breaks its message's CheckSum: refused.
#[test]
fn damaged_body_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    store_of(&p, 50);
    let b = file(&p, "body");
    let mut body = std::fs::read(&b).unwrap();
    let at = body.len() / 2;
    body[at] ^= 0x20;
    std::fs::write(&b, &body).unwrap();
    let e = FileStore::open(&p, Durability::Process).unwrap_err();
    assert!(e.to_string().contains("CheckSum"), "{e}");
}

/// Unreadable numbers are refused; recover puts the sender number past
/// every stored message and asks for the target's messages again.
#[test]
fn damaged_numbers_are_refused_then_recovered() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    store_of(&p, 30);
    for bad in [
        "0000000031 x 0000000060",
        "00000000zz : 0000000060",
        "0 : 5",
        "99999999999 : 1",
    ] {
        std::fs::write(file(&p, "seqnums"), bad).unwrap();
        let e = FileStore::open(&p, Durability::Process).unwrap_err();
        assert!(e.to_string().contains("sequence numbers"), "{bad}: {e}");
    }
    let (s, recovery) = FileStore::recover(&p, Durability::Process).unwrap();
    assert_eq!(recovery.repairs.len(), 1);
    assert_eq!((s.next_sender_seq(), s.next_target_seq()), (31, 1));
}

/// Numbers that say fewer messages than the header holds (a death
/// between the two writes) move up past them: no number is reused.
#[test]
fn numbers_behind_the_header_move_past_it() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    store_of(&p, 10);
    std::fs::write(file(&p, "seqnums"), "0000000004 : 0000000020").unwrap();
    let s = FileStore::open(&p, Durability::Process).unwrap();
    assert_eq!((s.next_sender_seq(), s.next_target_seq()), (11, 20));
}

#[test]
fn torn_last_entry_is_dropped_unless_counted() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    store_of(&p, 3);
    let h = file(&p, "header");
    let whole = std::fs::read(&h).unwrap();
    // An uncounted fourth message whose entry was cut short at each byte.
    let mut s = FileStore::open(&p, Durability::Process).unwrap();
    s.save(4, &message(4)).unwrap();
    drop(s);
    std::fs::write(file(&p, "seqnums"), "0000000004 : 0000000006").unwrap();
    let full = std::fs::read(&h).unwrap();
    for cut in whole.len() + 1..full.len() {
        std::fs::write(&h, &full[..cut]).unwrap();
        let s = FileStore::open(&p, Durability::Process).unwrap();
        assert_eq!(std::fs::metadata(&h).unwrap().len(), whole.len() as u64);
        assert!(!s.load(4, &mut Vec::new()).unwrap());
        assert_eq!(s.next_sender_seq(), 4);
    }
    // The same cut when the numbers count message 4: damage, refused.
    std::fs::write(&h, &full[..full.len() - 2]).unwrap();
    std::fs::write(file(&p, "seqnums"), "0000000005 : 0000000006").unwrap();
    let e = FileStore::open(&p, Durability::Process).unwrap_err();
    assert!(e.to_string().contains("cut short"), "{e}");
}

#[test]
fn numbers_above_what_quickfix_reads_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let mut s = FileStore::open(&prefix(&d), Durability::Process).unwrap();
    assert_eq!(s.max_seq(), MAX_SEQ);
    let e = s.set_seqs(MAX_SEQ + 1, 1).unwrap_err();
    assert!(matches!(e, StoreError::OutOfRange { seq } if seq == MAX_SEQ + 1));
    assert!(s.save(MAX_SEQ + 1, &message(1)).is_err());
    s.set_seqs(MAX_SEQ, MAX_SEQ).unwrap();
}

/// A journal of the earlier format becomes the same store.
#[test]
fn journal_converts_to_quickfix_layout() {
    let d = tempfile::tempdir().unwrap();
    let journal = d.path().join("FIX.4.4-EXEC-BANZAI.journal");
    let mut bytes = Vec::new();
    for seq in 1..=5u64 {
        let m = message(seq);
        bytes.push(b'M');
        bytes.extend_from_slice(&seq.to_le_bytes());
        bytes.extend_from_slice(&(m.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&m);
        bytes.push(b'N');
        bytes.extend_from_slice(&(seq + 1).to_le_bytes());
        bytes.extend_from_slice(&(seq + 10).to_le_bytes());
    }
    bytes.push(b'M'); // a record cut short at the end
    std::fs::write(&journal, &bytes).unwrap();
    let p = prefix(&d);
    let (s, bak) =
        crate::session::store::journal::convert(&journal, &p, Durability::Process).unwrap();
    drop(s);
    assert!(bak.exists() && !journal.exists());
    let s = FileStore::open(&p, Durability::Process).unwrap();
    assert_eq!((s.next_sender_seq(), s.next_target_seq()), (6, 15));
    for seq in 1..=5 {
        let mut out = Vec::new();
        assert!(s.load(seq, &mut out).unwrap());
        assert_eq!(out, message(seq));
    }
}

/// A damaged length in the middle of a journal (four bytes changed) is
/// refused, never taken as the journal's end; one cut short at the very
/// end is.
#[test]
fn journal_with_a_damaged_length_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let journal = d.path().join("j.journal");
    let mut bytes = Vec::new();
    let mut lengths = Vec::new();
    for seq in 1..=50u64 {
        let m = message(seq);
        lengths.push(bytes.len() + 9);
        bytes.push(b'M');
        bytes.extend_from_slice(&seq.to_le_bytes());
        bytes.extend_from_slice(&(m.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&m);
    }
    let mut damaged = bytes.clone();
    damaged[lengths[20]..lengths[20] + 4].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    std::fs::write(&journal, &damaged).unwrap();
    let e =
        match crate::session::store::journal::convert(&journal, &prefix(&d), Durability::Process) {
            Ok(_) => panic!("a damaged journal converted"),
            Err(e) => e,
        };
    assert!(e.to_string().contains("runs past later records"), "{e}");
    assert!(journal.exists(), "the journal is kept");
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["j.journal"], "a failed conversion left files behind");
    // A last record cut short converts without it.
    std::fs::write(&journal, &bytes[..bytes.len() - 10]).unwrap();
    let (s, _) =
        crate::session::store::journal::convert(&journal, &prefix(&d), Durability::Process)
            .unwrap();
    assert!(s.load(49, &mut Vec::new()).unwrap());
    assert!(!s.load(50, &mut Vec::new()).unwrap());
}
