//! Fuzz bodies, kept in the library so `cargo test` runs them over a seed set
//! and `cargo fuzz` (crates/zipstream/fuzz) runs them over random inputs.
//! They must never panic, whatever the bytes; errors are fine.

use std::io::{Cursor, Read};

use crate::{WalkedArchive, ZipArchive, ZipStreamReader};

/// Caps the output decoded per input so a bomb-shaped input stays fast.
const MAX_OUT: u64 = 8 << 20;

/// Opens `data` with the random-access reader and reads every entry, with
/// and without a password. The walked reader must agree with it: the same
/// entries in the same order, or the same error.
pub fn random_access(data: &[u8]) {
    let held = ZipArchive::new(Cursor::new(data));
    let walked = WalkedArchive::new(Cursor::new(data)).and_then(|mut w| {
        let mut names = Vec::new();
        w.for_each(&mut |e| {
            names.push(e.name.clone());
            Ok(())
        })?;
        Ok(names)
    });
    match (&held, walked) {
        (Ok(a), Ok(names)) => assert!(
            a.entries().iter().map(|e| &e.name).eq(names.iter()),
            "the walked directory differs from the held one"
        ),
        (Err(h), Err(w)) => assert_eq!(h.to_string(), w.to_string()),
        (h, w) => panic!(
            "the held reader says {:?}, the walked one {:?}",
            h.as_ref().map(|a| a.entries().len()),
            w.map(|n| n.len())
        ),
    }
    let Ok(mut a) = held else {
        return;
    };
    let n = a.entries().len().min(64);
    let mut buf = vec![0u8; 16 * 1024];
    for i in 0..n {
        for pw in [None, Some(&b"password"[..])] {
            if let Ok(mut r) = a.open(i, pw) {
                r.limit(MAX_OUT);
                while let Ok(k) = r.read_data(&mut buf) {
                    if k == 0 {
                        break;
                    }
                }
            }
        }
    }
}

/// Walks `data` with the streaming reader, reading every entry.
pub fn streaming(data: &[u8]) {
    let mut r = ZipStreamReader::new(data);
    r.set_password(Some(b"password"));
    let mut buf = vec![0u8; 16 * 1024];
    for _ in 0..64 {
        match r.next_entry() {
            Ok(Some(_)) => {
                r.limit_current(MAX_OUT);
                while let Ok(k) = r.read(&mut buf) {
                    if k == 0 {
                        break;
                    }
                }
            }
            _ => return,
        }
    }
}

/// A fresh scratch directory for one [`extract_confined`] run.
fn scratch() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "zipstream-fuzz-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Everything under `root`: relative path, file type and, for files, bytes;
/// for links, their target.
fn snapshot(root: &std::path::Path) -> Vec<(std::path::PathBuf, String, Vec<u8>)> {
    let mut v = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap_or(&p).to_path_buf();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap_or_default();
                v.push((rel, "link".into(), t.into_os_string().into_encoded_bytes()));
            } else if m.is_dir() {
                v.push((rel, "dir".into(), Vec::new()));
                todo.push(p);
            } else {
                v.push((rel, "file".into(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    v.sort();
    v
}

/// Extracts `data` (random-access, then streaming) into a scratch `out`
/// directory that already holds a link from an "earlier run" to a sibling
/// `outside` directory, and panics if anything outside `out` changed, or if
/// any link left in `out` resolves (per the kernel) outside it.
pub fn extract_confined(data: &[u8]) {
    let root = scratch();
    let out = root.join("out");
    let outside = root.join("outside");
    std::fs::create_dir_all(&out).expect("scratch dir");
    std::fs::create_dir_all(outside.join("d")).expect("scratch dir");
    std::fs::write(outside.join("secret"), b"secret").expect("scratch file");
    #[cfg(unix)]
    std::os::unix::fs::symlink("../outside", out.join("pre")).expect("scratch link");
    let before = snapshot(&outside);
    let opts = crate::ExtractOptions {
        max_total_bytes: MAX_OUT,
        max_entries: 256,
        overwrite: true,
        ..Default::default()
    };
    if let Ok(mut a) = ZipArchive::new(Cursor::new(data)) {
        let _ = crate::extract_archive(&mut a, &out, &opts);
    }
    if let Ok(mut a) = WalkedArchive::new(Cursor::new(data)) {
        let _ = crate::extract_archive(&mut a, &out, &opts);
    }
    let _ = crate::extract_stream(&mut ZipStreamReader::new(data), &out, &opts);
    let after = snapshot(&outside);
    let top: Vec<_> = std::fs::read_dir(&root)
        .map(|r| r.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    let inside = out.canonicalize().expect("out exists");
    let escaped: Vec<_> = snapshot(&out)
        .into_iter()
        .filter(|(rel, kind, _)| kind == "link" && rel != std::path::Path::new("pre"))
        .filter_map(|(rel, _, _)| {
            let real = out.join(&rel).canonicalize().ok()?;
            (!real.starts_with(&inside)).then_some((rel, real))
        })
        .collect();
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(before, after, "extraction changed a directory outside -d");
    assert_eq!(top.len(), 2, "extraction wrote beside -d: {top:?}");
    assert!(escaped.is_empty(), "links leading outside -d: {escaped:?}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AesStrength, EntryOptions, Method, ZipWriter};

    fn seeds() -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        for seekable in [false, true] {
            let text: Vec<u8> = (0..100_000u32)
                .map(|i| b"abcde\n"[(i % 6) as usize])
                .collect();
            let entries = |w: &mut dyn FnMut(EntryOptions, &[u8])| {
                w(EntryOptions::file("a.txt"), &text);
                w(EntryOptions::file("s").method(Method::Stored), b"stored");
                w(
                    EntryOptions::file("e").encrypt(AesStrength::Aes128, "password"),
                    &text,
                );
            };
            if seekable {
                let mut w = ZipWriter::new_seekable(Cursor::new(Vec::new())).unwrap();
                entries(&mut |o, d| w.add_bytes(o, d).unwrap());
                v.push(w.finish().unwrap().into_inner());
            } else {
                let mut w = ZipWriter::new(Vec::new());
                entries(&mut |o, d| w.add_bytes(o, d).unwrap());
                v.push(w.finish().unwrap());
            }
        }
        let mut w = ZipWriter::new(Vec::new());
        let text: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
        w.add_bytes(EntryOptions::file("big"), &text).unwrap();
        w.add_bytes(
            EntryOptions::file("enc")
                .encrypt(AesStrength::Aes256, "password")
                .method(Method::Stored),
            &text,
        )
        .unwrap();
        v.push(w.finish().unwrap());
        v
    }

    /// Every seed, plus deterministic single-byte corruptions and truncations
    /// of each, goes through both fuzz bodies without a panic.
    #[test]
    fn fuzz_bodies_survive_mutated_seeds() {
        for s in seeds() {
            random_access(&s);
            streaming(&s);
            extract_confined(&s);
            let step = (s.len() / 97).max(1);
            for i in (0..s.len()).step_by(step) {
                let mut m = s.clone();
                m[i] ^= 0x5a;
                random_access(&m);
                streaming(&m);
                random_access(&s[..i]);
                streaming(&s[..i]);
            }
        }
    }

    /// The committed fuzz seeds: archives written by other tools (and some by
    /// perfkit). `fuzz/seeds/read_stream` is a symlink to this folder, so
    /// both fuzz targets start from the same files.
    const SEED_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/read_archive");

    /// What each seed holds, as Python's `zipfile`, Info-ZIP `unzip` and
    /// `pyzipper` (password `password`) extract it, written out here by hand
    /// so the expectation does not come from the reader under test
    /// (perfkit_zstd.zip's zstd entry is the same text as in the others; its
    /// CRC-32 in the archive is the one `zipfile` computes for that text).
    fn seed_contents(name: &str) -> Option<Vec<(&'static str, Vec<u8>)>> {
        let hello = b"hello zip\n".to_vec();
        let abcde = [&b"abcde ".repeat(40)[..], b"\n"].concat();
        let bin = vec![0x00, 0x01, 0x02, 0xff];
        Some(match name {
            "bsdtar.zip" | "perfkit_zstd.zip" => {
                vec![("a.txt", hello), ("d/", vec![]), ("d/b.txt", abcde)]
            }
            "infozip_deflate.zip" => vec![
                ("a.txt", hello),
                ("d/", vec![]),
                ("d/b.txt", abcde),
                ("bin", bin),
            ],
            "infozip_store.zip" => vec![("a.txt", hello), ("bin", bin)],
            // `zip - file < input`: a stored entry named "-".
            "infozip_stream.zip" => vec![("-", hello)],
            "perfkit_aes128_store.zip" => vec![("a.txt", hello)],
            "perfkit_aes256.zip" | "perfkit_stream.zip" => {
                vec![("a.txt", hello), ("d/b.txt", abcde)]
            }
            // zipfile writing to a pipe: data descriptors, no sizes up front.
            "py_nonseekable.zip" => vec![("x/y.txt", b"nonseekable ".repeat(10)), ("e/", vec![])],
            // ZIP64 extra fields on small entries, and an archive comment.
            "py_zip64.zip" => vec![
                ("big.txt", b"zip64 ".repeat(30)),
                ("s.txt", b"stored".to_vec()),
            ],
            "pyzipper_aes.zip" => vec![("secret.txt", b"top secret ".repeat(8))],
            _ => return None,
        })
    }

    fn committed_seeds() -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(SEED_DIR)
            .unwrap()
            .map(|f| {
                let path = f.unwrap().path();
                let name = path.file_name().unwrap().to_str().unwrap().to_owned();
                (name, std::fs::read(&path).unwrap())
            })
            .collect();
        v.sort();
        v
    }

    /// Each committed seed, read by all three readers with the fuzz password,
    /// gives exactly the entries (names and bytes) listed in
    /// [`seed_contents`]; every seed has a listing.
    #[test]
    fn committed_seeds_read_back_their_known_contents() {
        let seeds = committed_seeds();
        assert_eq!(seeds.len(), 11, "{SEED_DIR} holds the 11 committed seeds");
        for (name, data) in &seeds {
            let want = seed_contents(name)
                .unwrap_or_else(|| panic!("{name}: no known contents listed for this seed"));

            let mut a = ZipArchive::new(Cursor::new(&data[..]))
                .unwrap_or_else(|e| panic!("{name}: random-access open: {e}"));
            let names: Vec<&str> = a.entries().iter().map(|e| e.name.as_str()).collect();
            let want_names: Vec<&str> = want.iter().map(|(n, _)| *n).collect();
            assert_eq!(names, want_names, "{name}: random-access entry names");
            for (i, (entry, bytes)) in want.iter().enumerate() {
                let got = a
                    .read_to_vec(i, Some(b"password"))
                    .unwrap_or_else(|e| panic!("{name}/{entry}: random-access read: {e}"));
                assert_eq!(&got, bytes, "{name}/{entry}: random-access contents");
            }
            let comment = if name == "py_zip64.zip" {
                "archive comment"
            } else {
                ""
            };
            assert_eq!(a.comment(), comment, "{name}: archive comment");

            let mut w = WalkedArchive::new(Cursor::new(&data[..]))
                .unwrap_or_else(|e| panic!("{name}: walked open: {e}"));
            assert_eq!(w.comment(), comment, "{name}: walked archive comment");
            let mut walked = Vec::new();
            crate::EntryWalk::walk(&mut w, &mut |e, source| {
                let mut bytes = Vec::new();
                source.open(e, Some(b"password"))?.read_to_end(&mut bytes)?;
                walked.push((e.name.clone(), bytes));
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{name}: walked read: {e}"));
            let want_walked: Vec<(String, Vec<u8>)> = want
                .iter()
                .map(|(n, b)| ((*n).to_owned(), b.clone()))
                .collect();
            assert_eq!(walked, want_walked, "{name}: walked entries");

            let mut r = ZipStreamReader::new(&data[..]);
            r.set_password(Some(b"password"));
            let mut got = Vec::new();
            while let Some(e) = r
                .next_entry()
                .unwrap_or_else(|e| panic!("{name}: streaming header: {e}"))
            {
                let mut bytes = Vec::new();
                r.read_to_end(&mut bytes)
                    .unwrap_or_else(|err| panic!("{name}/{}: streaming read: {err}", e.name));
                got.push((e.name, bytes));
            }
            let want: Vec<(String, Vec<u8>)> =
                want.into_iter().map(|(n, b)| (n.to_owned(), b)).collect();
            assert_eq!(got, want, "{name}: streaming entries");
        }
    }

    /// The committed seeds whole, cut at every length and with every byte
    /// flipped (three masks) go through both fuzz bodies without a panic.
    #[test]
    fn fuzz_bodies_survive_mutated_committed_seeds() {
        let seeds = committed_seeds();
        assert!(!seeds.is_empty(), "{SEED_DIR} has seeds");
        for (_, s) in &seeds {
            random_access(s);
            streaming(s);
            extract_confined(s);
            for i in 0..s.len() {
                random_access(&s[..i]);
                streaming(&s[..i]);
                for mask in [0x01, 0x80, 0xff] {
                    let mut m = s.clone();
                    m[i] ^= mask;
                    random_access(&m);
                    streaming(&m);
                }
            }
        }
    }
}
