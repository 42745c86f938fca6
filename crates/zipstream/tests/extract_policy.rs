//! What an extraction leaves behind, and the Info-ZIP-style choices
//! (`-n`, `-j`, member selection): a failed run removes what it created and
//! never leaves a temporary file; the read-only front ends (`unzip -p`,
//! `-t`) apply the same limits as extraction. Expectations are file
//! listings and byte counts written out here, not the extractor's report.

use std::io::Cursor;
use std::path::Path;

use zipstream::*;

fn archive(entries: &[(EntryOptions, &[u8])]) -> Vec<u8> {
    let mut w = ZipWriter::new(Vec::new());
    for (o, d) in entries {
        w.add_bytes(o.clone(), d).unwrap();
    }
    w.finish().unwrap()
}

fn listing(root: &Path) -> Vec<String> {
    let mut v = Vec::new();
    fn walk(base: &Path, d: &Path, v: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            v.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                walk(base, &p, v);
            }
        }
    }
    walk(root, root, &mut v);
    v.sort();
    v
}

fn open(z: &[u8]) -> ZipArchive<Cursor<Vec<u8>>> {
    ZipArchive::new(Cursor::new(z.to_vec())).unwrap()
}

#[test]
fn overwrite_onto_a_directory_leaves_no_temporary() {
    let z = archive(&[(EntryOptions::file("Dup.txt"), b"x")]);
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("Dup.txt")).unwrap();
    std::fs::write(root.path().join("Dup.txt/keep"), b"k").unwrap();
    let opts = ExtractOptions {
        overwrite: true,
        ..Default::default()
    };
    assert!(extract_archive(&mut open(&z), root.path(), &opts).is_err());
    assert!(extract_stream(&mut ZipStreamReader::new(&z[..]), root.path(), &opts).is_err());
    assert_eq!(listing(root.path()), ["Dup.txt", "Dup.txt/keep"]);
}

#[test]
fn a_failed_run_removes_the_directories_and_files_it_made() {
    let z = archive(&[
        (EntryOptions::directory("made/"), b""),
        (EntryOptions::file("made/deep/plain.txt"), b"plain"),
        (
            EntryOptions::file("made/deep/secret.txt").encrypt(AesStrength::Aes256, "right"),
            b"secret",
        ),
    ]);
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("before"), b"b").unwrap();
    let opts = ExtractOptions {
        password: Some(b"wrong".to_vec()),
        ..Default::default()
    };
    let err = extract_archive(&mut open(&z), root.path(), &opts).unwrap_err();
    assert!(matches!(err, Error::WrongPassword { .. }), "{err}");
    assert_eq!(listing(root.path()), ["before"]);
    let err = extract_stream(&mut ZipStreamReader::new(&z[..]), root.path(), &opts).unwrap_err();
    assert!(matches!(err, Error::WrongPassword { .. }), "{err}");
    assert_eq!(listing(root.path()), ["before"]);
    // A destination the run created itself goes too.
    let dest = root.path().join("new/dest");
    assert!(extract_archive(&mut open(&z), &dest, &opts).is_err());
    assert_eq!(listing(root.path()), ["before"]);
}

#[test]
fn skip_existing_junk_paths_and_selection() {
    let z = archive(&[
        (EntryOptions::directory("a/"), b""),
        (EntryOptions::file("a/b/x.txt"), b"new x"),
        (EntryOptions::file("a/y.txt"), b"new y"),
        (EntryOptions::file("top.bin"), b"top"),
    ]);
    // -n: existing files stay, the others are written.
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("a/b")).unwrap();
    std::fs::write(root.path().join("a/b/x.txt"), b"old x").unwrap();
    let opts = ExtractOptions {
        skip_existing: true,
        overwrite: true,
        ..Default::default()
    };
    extract_archive(&mut open(&z), root.path(), &opts).unwrap();
    assert_eq!(
        std::fs::read(root.path().join("a/b/x.txt")).unwrap(),
        b"old x"
    );
    assert_eq!(
        std::fs::read(root.path().join("a/y.txt")).unwrap(),
        b"new y"
    );
    extract_stream(&mut ZipStreamReader::new(&z[..]), root.path(), &opts).unwrap();
    assert_eq!(
        std::fs::read(root.path().join("a/b/x.txt")).unwrap(),
        b"old x"
    );

    // -j: every file in the destination itself, no directories.
    let opts = ExtractOptions {
        junk_paths: true,
        ..Default::default()
    };
    let root = tempfile::tempdir().unwrap();
    extract_archive(&mut open(&z), root.path(), &opts).unwrap();
    assert_eq!(listing(root.path()), ["top.bin", "x.txt", "y.txt"]);
    let root = tempfile::tempdir().unwrap();
    extract_stream(&mut ZipStreamReader::new(&z[..]), root.path(), &opts).unwrap();
    assert_eq!(listing(root.path()), ["top.bin", "x.txt", "y.txt"]);

    // Selection: only the chosen entries.
    let txt = |e: &Entry| e.name.ends_with(".txt");
    let root = tempfile::tempdir().unwrap();
    extract_archive_selected(&mut open(&z), root.path(), &ExtractOptions::default(), &txt).unwrap();
    assert_eq!(listing(root.path()), ["a", "a/b", "a/b/x.txt", "a/y.txt"]);
    let root = tempfile::tempdir().unwrap();
    extract_stream_selected(
        &mut ZipStreamReader::new(&z[..]),
        root.path(),
        &ExtractOptions::default(),
        &txt,
    )
    .unwrap();
    assert_eq!(listing(root.path()), ["a", "a/b", "a/b/x.txt", "a/y.txt"]);
}

#[test]
fn reading_without_extracting_obeys_the_same_limits() {
    // 3 MB of zeros deflate to a few KB: over 1 MiB total and over a ratio
    // of 100.
    let zeros = vec![0u8; 3 << 20];
    let z = archive(&[(EntryOptions::file("zeros"), &zeros[..])]);
    let all = |_: &Entry| true;
    for (opts, what) in [
        (
            ExtractOptions {
                max_total_bytes: 1 << 20,
                ..Default::default()
            },
            "total uncompressed size",
        ),
        (
            ExtractOptions {
                max_ratio: 100,
                ..Default::default()
            },
            "compression ratio",
        ),
    ] {
        let mut out = 0u64;
        let err = read_archive_data(&mut open(&z), &opts, &all, &mut |_, b| {
            out += b.len() as u64;
            Ok(())
        })
        .unwrap_err();
        assert!(err.to_string().contains(what), "{err}");
        assert!(out <= (1 << 20) + (64 << 10), "{out} bytes handed out");
        let mut out = 0u64;
        let err = read_stream_data(
            &mut ZipStreamReader::new(&z[..]),
            &opts,
            &all,
            &mut |_, b| {
                out += b.len() as u64;
                Ok(())
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains(what), "{err}");
        assert!(out <= (1 << 20) + (64 << 10), "{out} bytes handed out");
    }
    // Under the limits the data arrives whole.
    let mut got = Vec::new();
    read_archive_data(
        &mut open(&z),
        &ExtractOptions::default(),
        &all,
        &mut |_, b| {
            got.extend_from_slice(b);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(got, zeros);
}

/// Counts the bytes read from (and seeks on) the wrapped source.
struct Counting<R> {
    inner: R,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: std::io::Read> std::io::Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

impl<R: std::io::Seek> std::io::Seek for Counting<R> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(to)
    }
}

#[test]
fn reading_entries_in_order_reads_the_archive_about_once() {
    // 2,000 tiny entries through a 64 KiB BufReader, as the binary reads
    // files. A seek per header and per entry would drop the buffer each
    // time and read ~128 KiB per entry (250 MB here); in order, the
    // archive is read about once.
    let names: Vec<String> = (0..2000).map(|i| format!("d{}/f{i}", i / 100)).collect();
    let entries: Vec<(EntryOptions, &[u8])> = names
        .iter()
        .map(|n| (EntryOptions::file(n.as_str()), &b"tiny file\n"[..]))
        .collect();
    let z = archive(&entries);
    let read = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let src = std::io::BufReader::with_capacity(
        64 << 10,
        Counting {
            inner: Cursor::new(z.clone()),
            read: read.clone(),
        },
    );
    let mut a = ZipArchive::new(src).unwrap();
    let after_open = read.get();
    let root = tempfile::tempdir().unwrap();
    let rep = extract_archive(&mut a, root.path(), &ExtractOptions::default()).unwrap();
    assert_eq!(rep.files, 2000);
    let extraction = read.get() - after_open;
    assert!(
        extraction <= 2 * z.len() as u64,
        "extraction read {extraction} bytes of a {}-byte archive",
        z.len()
    );
}

/// Small files are written under their own name, created exclusively, and
/// larger ones through a temporary: either way a link already at the name
/// is neither followed nor replaced (unless asked to overwrite, which
/// replaces the link itself), contents are exact on both sides of the
/// 64 KiB buffer, and no temporary is left.
#[test]
fn small_and_large_files_never_follow_a_link_at_their_name() {
    let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let edge = vec![b'e'; 64 * 1024];
    let z = archive(&[
        (EntryOptions::file("small.txt"), b"tiny"),
        (EntryOptions::file("big.bin"), &big),
        (EntryOptions::file("edge.bin"), &edge),
        (EntryOptions::file("empty"), b""),
    ]);
    let outside = tempfile::tempdir().unwrap();
    for name in ["small.txt", "big.bin"] {
        let root = tempfile::tempdir().unwrap();
        let victim = outside.path().join(name);
        std::os::unix::fs::symlink(&victim, root.path().join(name)).unwrap();
        let err =
            extract_archive(&mut open(&z), root.path(), &ExtractOptions::default()).unwrap_err();
        assert!(matches!(err, Error::Exists { .. }), "{name}: {err}");
        assert!(!victim.exists(), "{name}: wrote through the link");
        assert_eq!(listing(root.path()), [name], "{name}");
        let opts = ExtractOptions {
            overwrite: true,
            ..Default::default()
        };
        extract_archive(&mut open(&z), root.path(), &opts).unwrap();
        assert!(!victim.exists(), "{name}: wrote through the link");
        let m = std::fs::symlink_metadata(root.path().join(name)).unwrap();
        assert!(m.file_type().is_file(), "{name}: the link was not replaced");
        assert_eq!(
            listing(root.path()),
            ["big.bin", "edge.bin", "empty", "small.txt"]
        );
    }
    let root = tempfile::tempdir().unwrap();
    extract_archive(&mut open(&z), root.path(), &ExtractOptions::default()).unwrap();
    assert_eq!(
        std::fs::read(root.path().join("small.txt")).unwrap(),
        b"tiny"
    );
    assert_eq!(std::fs::read(root.path().join("big.bin")).unwrap(), big);
    assert_eq!(std::fs::read(root.path().join("edge.bin")).unwrap(), edge);
    assert_eq!(std::fs::read(root.path().join("empty")).unwrap(), b"");
    assert_eq!(
        listing(root.path()),
        ["big.bin", "edge.bin", "empty", "small.txt"]
    );
}

/// What a [`TemporaryHook`] saw: each path when listed and when unlisted,
/// with whether it existed on disk at that moment.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(String, bool)>>>;

struct Listed(std::path::PathBuf, Seen);

impl Drop for Listed {
    fn drop(&mut self) {
        let name = self.0.file_name().unwrap().to_string_lossy().into_owned();
        self.1
            .lock()
            .unwrap()
            .push((format!("unlisted {name}"), self.0.exists()));
    }
}

fn watching(seen: &Seen) -> TemporaryHook {
    let seen = seen.clone();
    TemporaryHook::new(move |p: &Path| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        seen.lock()
            .unwrap()
            .push((format!("listed {name}"), p.exists()));
        Listed(p.to_path_buf(), seen.clone())
    })
}

#[test]
fn the_temporary_hook_lists_each_temporary_before_it_exists_until_it_is_gone() {
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let mut bad = big.clone();
    bad[150_000] = b'!';
    let mut z = archive(&[
        (EntryOptions::file("small.txt"), b"s"),
        (EntryOptions::file("big.bin"), &big),
        (EntryOptions::file("bad.bin").method(Method::Stored), &bad),
    ]);
    // Stored, so the '!' is in the archive: put the right byte back and
    // the entry's CRC no longer matches, 150,000 bytes into its data.
    let at = z.windows(bad.len()).position(|w| w == &bad[..]).unwrap() + 150_000;
    z[at] = big[150_000];
    let pid = std::process::id();
    for streaming in [false, true] {
        let root = tempfile::tempdir().unwrap();
        let seen = Seen::default();
        let opts = ExtractOptions {
            on_temporary: Some(watching(&seen)),
            ..Default::default()
        };
        let res = if streaming {
            extract_stream(&mut ZipStreamReader::new(&z[..]), root.path(), &opts)
        } else {
            extract_archive(&mut open(&z), root.path(), &opts)
        };
        assert!(matches!(res, Err(Error::Crc { .. })), "{res:?}");
        // The small file needs no temporary; the big one is listed before
        // its temporary exists and unlisted once renamed; the bad one's is
        // unlisted once the CRC failure has removed it.
        let want: Vec<(String, bool)> = [
            (format!("listed .big.bin.zipstream-{pid}-1"), false),
            (format!("unlisted .big.bin.zipstream-{pid}-1"), false),
            (format!("listed .bad.bin.zipstream-{pid}-2"), false),
            (format!("unlisted .bad.bin.zipstream-{pid}-2"), false),
        ]
        .into();
        assert_eq!(*seen.lock().unwrap(), want, "streaming: {streaming}");
        assert_eq!(listing(root.path()), Vec::<String>::new());
    }
}
