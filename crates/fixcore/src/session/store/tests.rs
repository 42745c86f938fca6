use super::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// A fresh directory for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("fixcore-store-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The message the writer sends under `seq`: its bytes are a function of
/// `seq` alone, so a reader can check any one independently.
fn message(seq: u64) -> Vec<u8> {
    format!(
        "8=FIX.4.4\x0135=D\x0134={seq}\x0111=order-{seq}\x01{}",
        "x".repeat((seq % 50) as usize)
    )
    .into_bytes()
}

fn exercise(s: &mut dyn SessionStore) {
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
    s.save(7, b"again").unwrap();
    out.clear();
    assert!(s.load(7, &mut out).unwrap());
    assert_eq!(out, b"again");
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
fn file_store_survives_reopen_and_reset() {
    let d = Scratch::new("reopen");
    let path = d.0.join("s.journal");
    for durability in [Durability::Process, Durability::Fsync] {
        let mut s = FileStore::open(&path, durability).unwrap();
        s.reset().unwrap();
        exercise(&mut s);
        drop(s);
        let s = FileStore::open(&path, durability).unwrap();
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (21, 40));
        let mut out = Vec::new();
        for seq in 1..=20 {
            out.clear();
            assert!(s.load(seq, &mut out).unwrap());
            let want = if seq == 7 {
                b"again".to_vec()
            } else {
                message(seq)
            };
            assert_eq!(out, want, "seq {seq}");
        }
        let mut s = s;
        s.reset().unwrap();
        drop(s);
        let s = FileStore::open(&path, durability).unwrap();
        assert_eq!((s.next_sender_seq(), s.next_target_seq()), (1, 1));
        assert!(!s.load(1, &mut out).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), SEQS_LEN as u64);
    }
}

#[test]
fn torn_tail_is_dropped_and_later_appends_are_whole() {
    let d = Scratch::new("torn");
    let path = d.0.join("s.journal");
    let mut s = FileStore::open(&path, Durability::Process).unwrap();
    s.save(1, &message(1)).unwrap();
    s.set_seqs(2, 1).unwrap();
    let whole = std::fs::metadata(&path).unwrap().len();
    s.save(2, &message(2)).unwrap();
    drop(s);
    // Cut the last record at every possible byte.
    let full = std::fs::read(&path).unwrap();
    for cut in whole as usize..full.len() {
        std::fs::write(&path, &full[..cut]).unwrap();
        let mut s = FileStore::open(&path, Durability::Process).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), whole, "cut {cut}");
        assert!(!s.load(2, &mut Vec::new()).unwrap());
        s.save(2, b"fresh").unwrap();
        drop(s);
        let s = FileStore::open(&path, Durability::Process).unwrap();
        let mut out = Vec::new();
        assert!(s.load(2, &mut out).unwrap());
        assert_eq!(out, b"fresh");
        assert_eq!(s.next_sender_seq(), 2);
    }
}

#[test]
fn garbage_inside_the_journal_is_an_error_naming_the_offset() {
    let d = Scratch::new("garbage");
    let path = d.0.join("s.journal");
    let mut s = FileStore::open(&path, Durability::Process).unwrap();
    s.set_seqs(5, 6).unwrap();
    drop(s);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"Zjunk");
    std::fs::write(&path, &bytes).unwrap();
    let e = FileStore::open(&path, Durability::Process).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: corrupt journal at byte 17: unknown record type",
            path.display()
        )
    );
    std::fs::write(&path, [SEQS; SEQS_LEN]).unwrap();
    assert!(FileStore::open(&path, Durability::Process).is_ok());
    let mut zero = vec![SEQS];
    zero.extend_from_slice(&[0; 16]);
    std::fs::write(&path, &zero).unwrap();
    let e = FileStore::open(&path, Durability::Process).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("corrupt journal at byte 0: sequence number 0"),
        "{e}"
    );
}

const CHILD: &str = "FIXCORE_STORE_KILL_CHILD";

/// Not a test on its own: the writer `killed_writer_resumes_from_disk`
/// runs in a child process and kills. It sends forever, printing each
/// sequence number once its records are stored.
#[test]
fn store_writer_child() {
    let Some(path) = std::env::var_os(CHILD) else {
        return;
    };
    let mut s = FileStore::open(Path::new(&path), Durability::Process).unwrap();
    let mut out = std::io::stdout().lock();
    for seq in 1.. {
        s.save(seq, &message(seq)).unwrap();
        s.set_seqs(seq + 1, 1).unwrap();
        writeln!(out, "{seq}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn killed_writer_resumes_from_disk() {
    let d = Scratch::new("kill");
    let path = d.0.join("s.journal");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "session::store::tests::store_writer_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut acked = 0u64;
    while acked < 300 {
        let line = lines.next().expect("child stopped early").unwrap();
        if let Ok(n) = line.trim().parse() {
            acked = n;
        }
    }
    // SIGKILL while it keeps writing: no destructor, no flush.
    child.kill().unwrap();
    child.wait().unwrap();
    let s = FileStore::open(&path, Durability::Process).unwrap();
    let next = s.next_sender_seq();
    assert!(next > acked, "acknowledged {acked}, resumed at {next}");
    let mut out = Vec::new();
    for seq in 1..next {
        out.clear();
        assert!(s.load(seq, &mut out).unwrap(), "seq {seq} lost");
        assert_eq!(out, message(seq), "seq {seq}");
    }
}
