//! Malicious and broken archives: each gives its own error, and nothing is
//! written outside the target directory (nor a partial file inside it).

use std::io::Cursor;
use std::path::Path;

use zipstream::*;

mod support;

fn archive(entries: &[(EntryOptions, &[u8])]) -> Vec<u8> {
    let mut w = ZipWriter::new(Vec::new());
    for (o, d) in entries {
        w.add_bytes(o.clone(), d).unwrap();
    }
    w.finish().unwrap()
}

/// Lists everything under `root` (relative paths), to prove what was written.
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

/// Extracts with both the random-access and the streaming path into
/// `root/out`, returning both errors and checking nothing escaped.
fn both(bytes: &[u8], opts: &ExtractOptions) -> (Error, Error) {
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("out");
    let e1 = match ZipArchive::new(Cursor::new(bytes.to_vec())) {
        Ok(mut a) => {
            extract_archive(&mut a, &dest, opts).expect_err("random-access extraction should fail")
        }
        Err(e) => e,
    };
    let outside: Vec<String> = listing(root.path())
        .into_iter()
        .filter(|p| !p.starts_with("out"))
        .collect();
    assert!(
        outside.is_empty(),
        "written outside the target: {outside:?}"
    );
    let dest2 = root.path().join("out2");
    let e2 = extract_stream(&mut ZipStreamReader::new(bytes), &dest2, opts)
        .expect_err("stream extraction should fail");
    let outside: Vec<String> = listing(root.path())
        .into_iter()
        .filter(|p| !p.starts_with("out"))
        .collect();
    assert!(
        outside.is_empty(),
        "written outside the target: {outside:?}"
    );
    // No temporary or partial files left behind.
    assert!(
        listing(root.path())
            .iter()
            .all(|p| !p.contains(".zipstream-")),
        "{:?}",
        listing(root.path())
    );
    (e1, e2)
}

#[test]
fn traversal_is_refused() {
    let z = archive(&[
        (EntryOptions::file("ok.txt"), b"fine"),
        (EntryOptions::file("../evil.txt"), b"x"),
    ]);
    let (a, b) = both(&z, &ExtractOptions::default());
    assert!(
        matches!(
            a,
            Error::UnsafePath {
                reason: "`..` component",
                ..
            }
        ),
        "{a}"
    );
    assert!(
        matches!(
            b,
            Error::UnsafePath {
                reason: "`..` component",
                ..
            }
        ),
        "{b}"
    );
}

#[test]
fn absolute_paths_are_refused() {
    let z = archive(&[(EntryOptions::file("/tmp/zipstream-abs-test"), b"x")]);
    let (a, b) = both(&z, &ExtractOptions::default());
    assert!(
        matches!(
            a,
            Error::UnsafePath {
                reason: "absolute path",
                ..
            }
        ),
        "{a}"
    );
    assert!(
        matches!(
            b,
            Error::UnsafePath {
                reason: "absolute path",
                ..
            }
        ),
        "{b}"
    );
    assert!(!Path::new("/tmp/zipstream-abs-test").exists());
}

#[test]
fn escaping_symlinks_are_refused() {
    // Streaming extraction learns file types from the central directory at
    // the stream's end, and refuses the same links.
    for z in [
        archive(&[(EntryOptions::symlink("d/link"), b"../../outside")]),
        archive(&[(EntryOptions::symlink("abs"), b"/etc")]),
    ] {
        let root = tempfile::tempdir().unwrap();
        let dest = root.path().join("out");
        let mut a = ZipArchive::new(Cursor::new(z.clone())).unwrap();
        let err = extract_archive(&mut a, &dest, &ExtractOptions::default()).unwrap_err();
        assert!(matches!(err, Error::SymlinkEscape { .. }), "{err}");
        let all = listing(root.path());
        assert!(all.iter().all(|p| p.starts_with("out")), "{all:?}");
        let err = extract_stream(
            &mut ZipStreamReader::new(&z[..]),
            &dest,
            &ExtractOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::SymlinkEscape { .. }), "{err}");
        let all = listing(root.path());
        assert!(all.is_empty(), "{all:?}");
    }
    // A symlink inside, then a file written "through" it: the file lands in
    // the real directory "d"; the link is created last so nothing goes through it.
    let z = archive(&[
        (EntryOptions::symlink("up"), b"d"),
        (EntryOptions::file("up/x"), b"x"),
    ]);
    let root = tempfile::tempdir().unwrap();
    let mut a = ZipArchive::new(Cursor::new(z)).unwrap();
    let err = extract_archive(&mut a, root.path(), &ExtractOptions::default()).unwrap_err();
    // "up" exists as a directory (from up/x) when the link is made.
    assert!(matches!(err, Error::Exists { .. }), "{err}");
}

#[test]
fn duplicates_are_refused() {
    let z = archive(&[
        (EntryOptions::file("a/b"), b"1"),
        (EntryOptions::file("a//b"), b"2"),
    ]);
    let (a, b) = both(&z, &ExtractOptions::default());
    assert!(matches!(a, Error::Duplicate { .. }), "{a}");
    assert!(matches!(b, Error::Duplicate { .. }), "{b}");
}

#[test]
fn existing_files_are_not_overwritten_unless_asked() {
    let z = archive(&[(EntryOptions::file("f"), b"new")]);
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), b"old").unwrap();
    let mut a = ZipArchive::new(Cursor::new(z.clone())).unwrap();
    let err = extract_archive(&mut a, root.path(), &ExtractOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Exists { .. }), "{err}");
    assert_eq!(std::fs::read(root.path().join("f")).unwrap(), b"old");
    let opts = ExtractOptions {
        overwrite: true,
        ..Default::default()
    };
    let mut a = ZipArchive::new(Cursor::new(z)).unwrap();
    let rep = extract_archive(&mut a, root.path(), &opts).unwrap();
    assert_eq!(rep.files, 1);
    assert_eq!(std::fs::read(root.path().join("f")).unwrap(), b"new");
}

#[test]
fn bombs_hit_limits() {
    // 64 MiB of zeros deflate ~1000:1.
    let zeros = vec![0u8; 64 << 20];
    let z = archive(&[(EntryOptions::file("zeros"), &zeros)]);
    let opts = ExtractOptions {
        max_ratio: 100,
        ..Default::default()
    };
    let (a, b) = both(&z, &opts);
    assert!(matches!(a, Error::Limit { .. }), "{a}");
    assert!(
        matches!(
            b,
            Error::Limit {
                what: "compression ratio",
                ..
            }
        ),
        "{b}"
    );
    let opts = ExtractOptions {
        max_total_bytes: 10 << 20,
        ..Default::default()
    };
    let (a, b) = both(&z, &opts);
    assert!(
        matches!(
            a,
            Error::Limit {
                what: "total uncompressed size",
                ..
            }
        ),
        "{a}"
    );
    assert!(
        matches!(
            b,
            Error::Limit {
                what: "total uncompressed size",
                ..
            }
        ),
        "{b}"
    );
}

#[test]
fn overlapping_entries_are_refused() {
    // Three entries; rewrite the central directory so all point at the first
    // local header (the overlapping-entry bomb construction).
    let z = archive(&[
        (EntryOptions::file("a").method(Method::Stored), b"aaaa"),
        (EntryOptions::file("b").method(Method::Stored), b"bbbb"),
        (EntryOptions::file("c").method(Method::Stored), b"cccc"),
    ]);
    let mut z = z;
    let eocd = z.len() - 22;
    let cd = u32::from_le_bytes(z[eocd + 16..eocd + 20].try_into().unwrap()) as usize;
    let mut p = cd;
    while u32::from_le_bytes(z[p..p + 4].try_into().unwrap()) == 0x0201_4b50 {
        z[p + 42..p + 46].copy_from_slice(&0u32.to_le_bytes());
        let n = u16::from_le_bytes([z[p + 28], z[p + 29]]) as usize
            + u16::from_le_bytes([z[p + 30], z[p + 31]]) as usize
            + u16::from_le_bytes([z[p + 32], z[p + 33]]) as usize;
        p += 46 + n;
    }
    let err = ZipArchive::new(Cursor::new(z))
        .err()
        .expect("overlap must be refused");
    assert!(matches!(err, Error::Overlap { .. }), "{err}");
}

#[test]
fn bad_crc_leaves_no_file() {
    let data = vec![7u8; 100_000];
    let mut z = archive(&[(EntryOptions::file("f").method(Method::Stored), &data)]);
    z[40 + 500] ^= 1;
    let (a, b) = both(&z, &ExtractOptions::default());
    assert!(matches!(a, Error::Crc { .. }), "{a}");
    assert!(matches!(b, Error::Crc { .. }), "{b}");
}

#[test]
fn wrong_password_and_tampered_ciphertext() {
    let data = vec![42u8; 10_000];
    let z = archive(&[(
        EntryOptions::file("s").encrypt(AesStrength::Aes256, "right"),
        &data,
    )]);
    let opts = ExtractOptions {
        password: Some(b"wrong".to_vec()),
        ..Default::default()
    };
    let (a, b) = both(&z, &opts);
    assert!(matches!(a, Error::WrongPassword { .. }), "{a}");
    assert!(matches!(b, Error::WrongPassword { .. }), "{b}");
    // Tamper with the stored MAC itself: the data decodes, the MAC does not match.
    let mut t = z.clone();
    let eocd = t.len() - 22;
    let cd = u32::from_le_bytes(t[eocd + 16..eocd + 20].try_into().unwrap()) as usize;
    t[cd - 1] ^= 0xff;
    let opts = ExtractOptions {
        password: Some(b"right".to_vec()),
        ..Default::default()
    };
    let (a, b) = both(&t, &opts);
    assert!(matches!(a, Error::AuthFailed { .. }), "{a}");
    assert!(matches!(b, Error::AuthFailed { .. }), "{b}");
}

#[test]
fn truncated_archives() {
    let z = archive(&[(EntryOptions::file("f"), &vec![1u8; 200_000][..])]);
    for cut in [10, 100, z.len() / 2, z.len() - 30] {
        let t = &z[..cut];
        let root = tempfile::tempdir().unwrap();
        let err = extract_stream(
            &mut ZipStreamReader::new(t),
            root.path(),
            &ExtractOptions::default(),
        )
        .unwrap_err();
        assert!(
            matches!(err, Error::Truncated { .. } | Error::Corrupt { .. }),
            "cut {cut}: {err}"
        );
        assert!(ZipArchive::new(Cursor::new(t.to_vec())).is_err());
    }
}

#[test]
fn good_archive_extracts_with_modes_and_links() {
    let z = archive(&[
        (EntryOptions::directory("d").unix_mode(0o750), b""),
        (
            EntryOptions::file("d/x.sh")
                .unix_mode(0o755)
                .mtime(1_600_000_000),
            b"#!/bin/sh\n",
        ),
        (EntryOptions::symlink("d/l"), b"x.sh"),
    ]);
    for streaming in [false, true] {
        let root = tempfile::tempdir().unwrap();
        let rep = if streaming {
            extract_stream(
                &mut ZipStreamReader::new(&z[..]),
                root.path(),
                &ExtractOptions::default(),
            )
            .unwrap()
        } else {
            extract_archive(
                &mut ZipArchive::new(Cursor::new(z.clone())).unwrap(),
                root.path(),
                &ExtractOptions::default(),
            )
            .unwrap()
        };
        use std::os::unix::fs::PermissionsExt;
        let m = std::fs::metadata(root.path().join("d/x.sh")).unwrap();
        // Both report the link as a link: the stream learns it from the
        // central directory at its end.
        assert_eq!(
            rep,
            ExtractReport {
                files: 1,
                dirs: 1,
                symlinks: 1,
                bytes: 10
            }
        );
        assert_eq!(
            std::fs::read_link(root.path().join("d/l")).unwrap(),
            Path::new("x.sh")
        );
        if !streaming {
            // No modes in local headers: a stream leaves the default.
            assert_eq!(m.permissions().mode() & 0o777, 0o755);
        }
        assert_eq!(
            m.modified().unwrap(),
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000)
        );
    }
}

/// Reads entry 0 of `z` on every reading path (streaming, random access,
/// async streaming, and extraction both ways), each of which must fail;
/// returns each path's error.
fn read_failures(z: &[u8]) -> Vec<(&'static str, Error)> {
    fn drain(mut read: impl FnMut(&mut [u8]) -> Result<usize>) -> Error {
        let mut buf = vec![0u8; 1 << 20];
        loop {
            match read(&mut buf) {
                Ok(0) => panic!("read to the end"),
                Ok(_) => {}
                Err(e) => return e,
            }
        }
    }
    let mut stream = ZipStreamReader::new(z);
    stream.next_entry().unwrap().unwrap();
    let streamed = drain(|b| stream.read_data(b));
    let random = ZipArchive::new(Cursor::new(z.to_vec()))
        .unwrap()
        .read_to_vec(0, None)
        .unwrap_err();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let asynchronous = rt.block_on(async {
        let mut r = AsyncZipStreamReader::new(z);
        r.next_entry().await.unwrap().unwrap();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            match r.read_data(&mut buf).await {
                Ok(0) => panic!("read to the end"),
                Ok(_) => {}
                Err(e) => return e,
            }
        }
    });
    let (extracted, extracted_stream) = both(z, &ExtractOptions::default());
    vec![
        ("stream", streamed),
        ("random access", random),
        ("async stream", asynchronous),
        ("extraction", extracted),
        ("stream extraction", extracted_stream),
    ]
}

/// zstd failures are zstdkit's typed errors, carried as the source, with
/// zstdkit's position in the entry's compressed data. The window limit
/// holds even where zstd would skip its own check: this frame declares 300
/// bytes, which every reader's output buffer holds.
#[test]
fn zstd_errors_are_typed_on_every_reading_path() {
    // A hand-built frame: 300 bytes declared, a 2^28 window (256 MiB, over
    // the 128 MiB limit), and one last RLE block of `b'a'`.
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x80, (28 - 10) << 3];
    frame.extend_from_slice(&300u32.to_le_bytes());
    frame.extend_from_slice(&((300u32 << 3) | (1 << 1) | 1).to_le_bytes()[..3]);
    frame.push(b'a');
    let z = support::one_entry_zip("w.txt", 93, &frame, &[b'a'; 300]);
    for (path, e) in read_failures(&z) {
        assert!(
            matches!(
                &e,
                Error::Zstd {
                    name,
                    source: zstdkit::Error::WindowTooLarge {
                        offset: 0,
                        window: Some(0x1000_0000),
                        limit: 0x800_0000,
                    },
                } if name == "w.txt"
            ),
            "{path}: {e:?}"
        );
        assert_eq!(
            e.to_string(),
            "entry \"w.txt\": compressed data: frame window of 268435456 bytes exceeds \
             the memory limit of 134217728 bytes at byte 0",
            "{path}"
        );
        let source = std::error::Error::source(&e).expect("a source");
        assert!(source.is::<zstdkit::Error>(), "{path}");
    }

    // The writer's own zstd entry, its frame's magic number damaged.
    let text = b"zstd through zstdkit ".repeat(100);
    let mut z = archive(&[(EntryOptions::file("z.txt").method(Method::Zstd), &text)]);
    assert_eq!(
        ZipArchive::new(Cursor::new(z.clone()))
            .unwrap()
            .read_to_vec(0, None)
            .unwrap(),
        text
    );
    let data_at = 30
        + usize::from(u16::from_le_bytes([z[26], z[27]]))
        + usize::from(u16::from_le_bytes([z[28], z[29]]));
    z[data_at] ^= 0xff;
    for (path, e) in read_failures(&z) {
        assert!(
            matches!(
                &e,
                Error::Zstd {
                    source: zstdkit::Error::UnknownFormat { offset: 0 },
                    ..
                }
            ),
            "{path}: {e:?}"
        );
    }
}
