use super::pattern::wildcard;
use super::unzip::fmt_time;
use super::*;

/// The one matcher over bytes (ASCII here).
fn glob(pat: &[u8], s: &[u8]) -> bool {
    let chars = |b: &[u8]| b.iter().map(|&c| c as char).collect::<Vec<_>>();
    wildcard(&chars(pat), &chars(s))
}

/// The exponential recursive matcher, kept as the brute-force oracle.
fn glob_reference(pat: &[u8], s: &[u8]) -> bool {
    match (pat.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            glob_reference(&pat[1..], s) || (!s.is_empty() && glob_reference(pat, &s[1..]))
        }
        (Some(b'?'), Some(_)) => glob_reference(&pat[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => glob_reference(&pat[1..], &s[1..]),
        _ => false,
    }
}

#[test]
fn glob_agrees_with_the_brute_force_matcher() {
    // Every pattern and name up to length 5 over a small alphabet.
    fn all(alphabet: &[u8], max: usize) -> Vec<Vec<u8>> {
        let mut out = vec![Vec::new()];
        let mut last = vec![Vec::new()];
        for _ in 0..max {
            let next: Vec<Vec<u8>> = last
                .iter()
                .flat_map(|w: &Vec<u8>| {
                    alphabet.iter().map(move |&c| {
                        let mut w = w.clone();
                        w.push(c);
                        w
                    })
                })
                .collect();
            out.extend(next.iter().cloned());
            last = next;
        }
        out
    }
    let names = all(b"ab/", 5);
    for pat in all(b"a*?", 5) {
        for name in &names {
            assert_eq!(
                glob(&pat, name),
                glob_reference(&pat, name),
                "{:?} on {:?}",
                String::from_utf8_lossy(&pat),
                String::from_utf8_lossy(name)
            );
        }
    }
}

#[test]
fn globs() {
    assert!(glob(b"*.txt", b"a/b.txt"));
    assert!(glob(b"a?c", b"abc"));
    assert!(!glob(b"*.txt", b"a.rs"));
    assert_eq!(archive_name(Path::new("/abs/../x/./y")), "abs/x/y");
    assert_eq!(fmt_time(1_582_983_462), "2020-02-29 13:37");
}

#[test]
fn info_zip_wildcards() {
    let m = |p: &str, s: &str| {
        wildcard(
            &p.chars().collect::<Vec<_>>(),
            &s.chars().collect::<Vec<_>>(),
        )
    };
    // What `unzip t.zip PATTERN` selected, checked with Info-ZIP 6.0.
    assert!(m("*.txt", "a/b/x.txt"));
    assert!(m("a/*", "a/b/x.txt"));
    assert!(!m("*.txt", "A.TXT"));
    assert!(m("a/[xy]*", "a/y.txt"));
    assert!(!m("a/[xy]*", "a/b/x.txt"));
    assert!(m("a/[!b]*", "a/y.txt"));
    assert!(m("?op.txt", "top.txt"));
    assert!(!m("?op.txt", "ttop.txt"));
    assert!(m("top.txt", "top.txt"));
    assert!(m("[a", "[a"));
    assert!(m("*", ""));
    assert!(m("a*b*c", "aXXbYYc"));
    assert!(!m("a*b*c", "aXXbYY"));
}

/// Lists `path` as `collect` does, lets `change` alter the file, then
/// reads it as an entry would be read.
fn read_after(change: impl FnOnce(&Path)) -> io::Result<Vec<u8>> {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("f");
    fs::write(&path, vec![7u8; 100_000]).unwrap();
    let item = Item {
        name: "f".into(),
        meta: fs::symlink_metadata(&path).unwrap(),
        path: path.clone(),
    };
    change(&path);
    let mut v = Vec::new();
    open_item(&item).unwrap().read_to_end(&mut v)?;
    Ok(v)
}

#[test]
fn a_file_changed_while_zipping_is_an_error() {
    assert_eq!(read_after(|_| {}).unwrap(), vec![7u8; 100_000]);
    let shrunk = read_after(|p| {
        fs::OpenOptions::new()
            .write(true)
            .open(p)
            .unwrap()
            .set_len(10)
            .unwrap()
    });
    let msg = shrunk.unwrap_err().to_string();
    assert!(msg.contains("size changed while zipping"), "{msg}");
    let grown = read_after(|p| {
        fs::OpenOptions::new()
            .append(true)
            .open(p)
            .unwrap()
            .write_all(b"more")
            .unwrap()
    });
    let msg = grown.unwrap_err().to_string();
    assert!(msg.contains("size changed while zipping"), "{msg}");
    // Same size, rewritten: only the modification time tells.
    let rewritten = read_after(|p| {
        let f = fs::OpenOptions::new().write(true).open(p).unwrap();
        f.set_modified(UNIX_EPOCH + std::time::Duration::from_secs(1_000_000))
            .unwrap()
    });
    let msg = rewritten.unwrap_err().to_string();
    assert!(msg.contains("modified while zipping"), "{msg}");
}

/// `-T`'s check reads back what was written and catches a damaged entry
/// (here one flipped data byte: a CRC mismatch), so `-m` never deletes
/// originals behind a bad archive; an intact one passes, AES included.
#[test]
fn the_written_archive_test_catches_damage() {
    use std::io::{Seek, SeekFrom};
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 7) as u8).collect();
    for pw in [None, Some(b"pw".to_vec())] {
        let mut f = tempfile::tempfile().unwrap();
        let mut w = ZipWriter::new_seekable(&mut f).unwrap();
        let mut o = EntryOptions::file("a").method(Method::Stored);
        if let Some(p) = &pw {
            o = o.encrypt(AesStrength::Aes256, p.clone());
        }
        w.add_bytes(o, &data).unwrap();
        w.finish().unwrap();
        test_written(&mut f, &pw).unwrap();
        // The stored data starts after the 30-byte header, the name and
        // any extra field: byte 1,000 is well inside it.
        f.seek(SeekFrom::Start(1000)).unwrap();
        f.write_all(&[0xff]).unwrap();
        let err = test_written(&mut f, &pw).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("CRC") || msg.contains("authentication") || msg.contains("MAC"),
            "{msg}"
        );
    }
}
