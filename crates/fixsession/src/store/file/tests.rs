use super::*;
use crate::store::tests::{exercise, framed, message};

fn prefix(d: &tempfile::TempDir) -> PathBuf {
    FileStore::prefix_in(d.path(), "FIX.4.4", "EXEC", "BANZAI", "")
}

fn file(prefix: &Path, ext: &str) -> PathBuf {
    PathBuf::from(format!("{}.{ext}", prefix.display()))
}

/// A store of `n` messages (numbers 1..=n), numbers (n + 1, 2n), closed.
fn store_of(prefix: &Path, n: u64) {
    let mut s = FileStore::open(prefix, Durability::Process, None).unwrap();
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
        let mut s = FileStore::open(&p, durability, None).unwrap();
        s.reset().unwrap();
        exercise(&mut s);
        drop(s);
        let s = FileStore::open(&p, durability, None).unwrap();
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (21, 40));
        let mut out = Vec::new();
        for seq in 1..=20 {
            out.clear();
            assert!(s.load(seq, &mut out).unwrap());
            let want = if seq == 7 {
                framed("35=D\x0134=7\x0158=again\x01")
            } else {
                message(seq)
            };
            assert_eq!(out, want, "seq {seq}");
        }
        let mut s = s;
        s.reset().unwrap();
        drop(s);
        let s = FileStore::open(&p, durability, None).unwrap();
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
    assert!(fixcore::value::UtcTimestamp::parse(session.as_bytes()).is_some());
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
    let s = FileStore::open(&p, Durability::Process, None).unwrap();
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
    let s = FileStore::open(&p, Durability::Process, None).unwrap();
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
    let e = FileStore::open(&p, Durability::Process, None).unwrap_err();
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

    let (s, recovery) = FileStore::recover(&p, Durability::Process, None).unwrap();
    assert_eq!(recovery.repairs.len(), 1, "{recovery:?}");
    assert!(s.next_sender_seq() >= 1001, "{}", s.next_sender_seq());
    assert!(s.load(499, &mut Vec::new()).unwrap());
    assert!(!s.load(500, &mut Vec::new()).unwrap());
    drop(s);
    // Recovered, the store opens whole.
    let s = FileStore::open(&p, Durability::Process, None).unwrap();
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
    let e = FileStore::open(&p, Durability::Process, None).unwrap_err();
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
        let e = FileStore::open(&p, Durability::Process, None).unwrap_err();
        assert!(e.to_string().contains("sequence numbers"), "{bad}: {e}");
    }
    let (s, recovery) = FileStore::recover(&p, Durability::Process, None).unwrap();
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
    let s = FileStore::open(&p, Durability::Process, None).unwrap();
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
    let mut s = FileStore::open(&p, Durability::Process, None).unwrap();
    s.save(4, &message(4)).unwrap();
    drop(s);
    std::fs::write(file(&p, "seqnums"), "0000000004 : 0000000006").unwrap();
    let full = std::fs::read(&h).unwrap();
    for cut in whole.len() + 1..full.len() {
        std::fs::write(&h, &full[..cut]).unwrap();
        std::fs::write(file(&p, "seqnums"), "0000000004 : 0000000006").unwrap();
        let s = FileStore::open(&p, Durability::Process, None).unwrap();
        assert_eq!(std::fs::metadata(&h).unwrap().len(), whole.len() as u64);
        assert!(!s.load(4, &mut Vec::new()).unwrap());
        // Never sent, but the body shows it: its number is not given out
        // again (a gap fill answers for it).
        assert_eq!(s.next_sender_seq(), 5);
    }
    // The same cut when the numbers count message 4: damage, refused.
    std::fs::write(&h, &full[..full.len() - 2]).unwrap();
    std::fs::write(file(&p, "seqnums"), "0000000005 : 0000000006").unwrap();
    let e = FileStore::open(&p, Durability::Process, None).unwrap_err();
    assert!(e.to_string().contains("cut short"), "{e}");
}

#[test]
fn numbers_above_what_quickfix_reads_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let mut s = FileStore::open(&prefix(&d), Durability::Process, None).unwrap();
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
    let (s, bak) = crate::store::journal::convert(&journal, &p, Durability::Process, None).unwrap();
    drop(s);
    assert!(bak.exists() && !journal.exists());
    let s = FileStore::open(&p, Durability::Process, None).unwrap();
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
    let e = match crate::store::journal::convert(&journal, &prefix(&d), Durability::Process, None) {
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
        crate::store::journal::convert(&journal, &prefix(&d), Durability::Process, None).unwrap();
    assert!(s.load(49, &mut Vec::new()).unwrap());
    assert!(!s.load(50, &mut Vec::new()).unwrap());
}

/// `message(seq)` as session `sender` → `target` sends it.
fn routed(seq: u64, sender: &str, target: &str) -> Vec<u8> {
    framed(&format!(
        "35=D\x0134={seq}\x0149={sender}\x0152=20261126-01:02:03\x0156={target}\x0111=o{seq}\x01"
    ))
}

/// QuickFIX's names make `ACC-UAT` ← `BANK` and `ACC` ← `UAT-BANK` one
/// file; the messages tell them apart, and the second is refused, by a
/// plain open and by recovery alike, naming both sessions.
#[test]
fn a_store_of_another_session_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let real = SessionId::new("FIX.4.4", "ACC-UAT", "BANK", "");
    let stranger = SessionId::new("FIX.4.4", "ACC", "UAT-BANK", "");
    let p = d.path().join(real.file_name());
    assert_eq!(p, d.path().join(stranger.file_name()));
    {
        let mut s = FileStore::open(&p, Durability::Process, Some(&real)).unwrap();
        for seq in 1..=3 {
            s.save(seq, &routed(seq, "ACC-UAT", "BANK")).unwrap();
        }
        s.set_seqs(4, 2).unwrap();
    }
    let before: Vec<Vec<u8>> = ["body", "header", "seqnums", "session"]
        .iter()
        .map(|e| std::fs::read(file(&p, e)).unwrap())
        .collect();
    for repair in [false, true] {
        let e = if repair {
            FileStore::recover(&p, Durability::Process, Some(&stranger)).unwrap_err()
        } else {
            FileStore::open(&p, Durability::Process, Some(&stranger)).unwrap_err()
        };
        let StoreError::Foreign {
            seq,
            ref found,
            ref expected,
            ..
        } = e
        else {
            panic!("{e:?}");
        };
        assert_eq!(seq, 1);
        assert_eq!(found, "FIX.4.4:ACC-UAT->BANK");
        assert_eq!(expected, "FIX.4.4:ACC->UAT-BANK");
        let text = e.to_string();
        assert!(
            text.contains("ACC-UAT->BANK") && text.contains("ACC->UAT-BANK"),
            "{text}"
        );
    }
    // Nothing changed on disk, and the owner still opens it.
    for (e, b) in ["body", "header", "seqnums", "session"].iter().zip(&before) {
        assert_eq!(&std::fs::read(file(&p, e)).unwrap(), b, "{e}");
    }
    let s = FileStore::open(&p, Durability::Process, Some(&real)).unwrap();
    assert_eq!(s.next_sender_seq(), 4);
    drop(s);
    // Another BeginString is another session too.
    let other = SessionId::new("FIX.4.2", "ACC-UAT", "BANK", "");
    assert!(matches!(
        FileStore::open(&p, Durability::Process, Some(&other)),
        Err(StoreError::Foreign { .. })
    ));
    // One foreign message among the owner's is enough, wherever it is.
    let q = d.path().join("mixed");
    {
        let mut s = FileStore::open(&q, Durability::Process, None).unwrap();
        s.save(1, &routed(1, "ACC-UAT", "BANK")).unwrap();
        s.save(2, &routed(2, "ACC", "UAT-BANK")).unwrap();
        s.set_seqs(3, 1).unwrap();
    }
    let e = FileStore::open(&q, Durability::Process, Some(&real)).unwrap_err();
    assert!(matches!(e, StoreError::Foreign { seq: 2, .. }), "{e:?}");
}

/// A message whose MsgSeqNum is not its header entry's is damage,
/// reported with the file, the entry's offset and which entry; recovery
/// cuts there.
#[test]
fn a_message_under_another_number_is_damage() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    {
        let mut s = FileStore::open(&p, Durability::Process, None).unwrap();
        for seq in 1..=4 {
            // The third message says 30.
            let n = if seq == 3 { 30 } else { seq };
            s.save(seq, &message(n)).unwrap();
        }
        s.set_seqs(5, 1).unwrap();
    }
    let e = FileStore::open(&p, Durability::Process, None).unwrap_err();
    let StoreError::Corrupt {
        ref path,
        offset,
        ref record,
        ref why,
    } = e
    else {
        panic!("{e:?}");
    };
    assert_eq!(path, &file(&p, "header"));
    let header = std::fs::read_to_string(file(&p, "header")).unwrap();
    assert_eq!(
        offset as usize,
        header.match_indices(' ').nth(1).unwrap().0 + 1
    );
    assert_eq!(record, "entry 3, message 3");
    assert!(why.contains("MsgSeqNum 30"), "{why}");
    // Missing altogether is damage too.
    let q = d.path().join("no34");
    {
        let mut s = FileStore::open(&q, Durability::Process, None).unwrap();
        s.save(1, &framed("35=D\x0111=x\x01")).unwrap();
    }
    let e = FileStore::open(&q, Durability::Process, None).unwrap_err();
    assert!(e.to_string().contains("no MsgSeqNum"), "{e}");
    // Recovery keeps entries 1 and 2 and gives out 31 next: the body
    // shows 30 was used.
    let (s, r) = FileStore::recover(&p, Durability::Process, None).unwrap();
    assert_eq!(r.repairs.len(), 1, "{r:?}");
    assert_eq!(s.next_sender_seq(), 31);
    assert!(s.load(2, &mut Vec::new()).unwrap());
    assert!(!s.load(3, &mut Vec::new()).unwrap());
}

/// A dropped store's lock is free at once, even while another descriptor
/// of its opening lives: what a child process forked by another thread
/// holds until it execs (a duplicate, sharing the opening and so its
/// `flock`).
#[test]
fn a_dropped_store_lets_go_of_its_lock_whatever_shares_its_descriptor() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    let first = FileStore::open(&p, Durability::Process, None).unwrap();
    let copy = first.body.file.try_clone().unwrap();
    drop(first);
    let second = FileStore::open(&p, Durability::Process, None);
    assert!(second.is_ok(), "{:?}", second.err());
    drop(copy);
}

/// One holder at a time: a second opening of the same files, in this
/// process as in another, is refused naming the path, until the first
/// is dropped; a refresh keeps its own lock.
#[test]
fn a_held_store_is_refused_to_a_second_holder() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    let mut first = FileStore::open(&p, Durability::Process, None).unwrap();
    first.save(1, &message(1)).unwrap();
    first.set_seqs(2, 1).unwrap();
    for repair in [false, true] {
        let e = if repair {
            FileStore::recover(&p, Durability::Process, None).map(|_| ())
        } else {
            FileStore::open(&p, Durability::Process, None).map(|_| ())
        }
        .unwrap_err();
        assert!(
            matches!(&e, StoreError::Locked { path } if *path == file(&p, "body")),
            "{e:?}"
        );
        assert!(e.to_string().contains("held by another"), "{e}");
    }
    // Refreshing reopens the files under the same lock.
    first.refresh().unwrap();
    assert_eq!(first.next_sender_seq(), 2);
    assert!(first.load(1, &mut Vec::new()).unwrap());
    assert!(FileStore::open(&p, Durability::Process, None).is_err());
    // Another process: flock(1) from util-linux, asking without waiting.
    let held = std::process::Command::new("flock")
        .args(["--nonblock", "--exclusive"])
        .arg(file(&p, "body"))
        .arg("true")
        .status()
        .expect("flock(1) runs");
    assert_eq!(held.code(), Some(1), "another process got the lock");
    drop(first);
    let free = std::process::Command::new("flock")
        .args(["--nonblock", "--exclusive"])
        .arg(file(&p, "body"))
        .arg("true")
        .status()
        .unwrap();
    assert!(free.success());
    let second = FileStore::open(&p, Durability::Process, None).unwrap();
    assert_eq!(second.next_sender_seq(), 2);
}

/// Every creation time QuickFIX writes or reads opens the store as it
/// is; a damaged one is refused, and recovery writes it anew.
#[test]
fn creation_times_quickfix_writes_are_read() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    store_of(&p, 2);
    for t in [
        "20261126-01:02:03",
        "20261126-01:02:03.456",
        "29991231-23:59:59",
        "29991231-23:59:59.999\n",
    ] {
        std::fs::write(file(&p, "session"), t).unwrap();
        let s = FileStore::open(&p, Durability::Process, None).unwrap();
        assert_eq!(s.creation_time(), t.trim());
        assert_eq!(std::fs::read_to_string(file(&p, "session")).unwrap(), t);
    }
    std::fs::write(file(&p, "session"), "yesterday").unwrap();
    let e = FileStore::open(&p, Durability::Process, None).unwrap_err();
    assert!(
        matches!(&e, StoreError::Corrupt { path, .. } if *path == file(&p, "session")),
        "{e:?}"
    );
    let (s, r) = FileStore::recover(&p, Durability::Process, None).unwrap();
    assert_eq!(r.repairs.len(), 1, "{r:?}");
    assert!(r.repairs[0].contains("written anew"), "{r:?}");
    let now = std::fs::read_to_string(file(&p, "session")).unwrap();
    assert_eq!(now, s.creation_time());
    assert!(
        fixcore::value::UtcTimestamp::parse(now.as_bytes()).is_some(),
        "{now}"
    );
    // The messages and numbers are as they were.
    assert_eq!(s.next_sender_seq(), 3);
    assert!(s.load(2, &mut Vec::new()).unwrap());
}

/// An I/O failure is reported as one, naming the path and the OS error,
/// never as damage.
#[test]
fn io_failures_are_not_damage() {
    let d = tempfile::tempdir().unwrap();
    let p = prefix(&d);
    std::fs::create_dir(file(&p, "header")).unwrap();
    let e = FileStore::open(&p, Durability::Process, None).unwrap_err();
    let StoreError::Io {
        ref path,
        op,
        ref source,
    } = e
    else {
        panic!("{e:?}");
    };
    assert_eq!(path, &file(&p, "header"));
    assert_eq!(op, "open");
    assert_eq!(source.raw_os_error(), Some(libc::EISDIR));
    assert!(e.to_string().contains("Is a directory"), "{e}");
}
