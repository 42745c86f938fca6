//! Round trips through our writers and readers, checked against the input
//! bytes, plus the sync/async byte-identity requirement.

use std::io::{Cursor, Read};

use proptest::prelude::*;
use zipstream::*;

use perfkit_testkit::noise::noise;

/// Compressible text-like bytes.
fn text(n: usize) -> Vec<u8> {
    let words = ["alpha ", "beta ", "gamma ", "delta\n", "epsilon ", "zeta, "];
    let mut v = Vec::with_capacity(n);
    let mut i = 0usize;
    while v.len() < n {
        v.extend_from_slice(words[(i * 7 + i / 3) % words.len()].as_bytes());
        i += 1;
    }
    v.truncate(n);
    v
}

struct Item {
    opts: EntryOptions,
    data: Vec<u8>,
    chunk: usize,
}

fn items() -> Vec<Item> {
    let t = 1_700_000_000;
    vec![
        Item {
            opts: EntryOptions::file("small.txt").mtime(t),
            data: text(1000),
            chunk: 100,
        },
        Item {
            opts: EntryOptions::file("empty").mtime(t),
            data: vec![],
            chunk: 1,
        },
        Item {
            opts: EntryOptions::directory("dir").mtime(t).unix_mode(0o700),
            data: vec![],
            chunk: 1,
        },
        Item {
            opts: EntryOptions::file("dir/big-text.txt")
                .mtime(t)
                .unix_mode(0o600),
            data: text(500_000),
            chunk: 7000,
        },
        Item {
            opts: EntryOptions::file("noise.bin").mtime(t),
            data: noise(300_000, 9),
            chunk: 65536,
        },
        Item {
            opts: EntryOptions::file("stored.bin")
                .mtime(t)
                .method(Method::Stored),
            data: text(200_000),
            chunk: 40_000,
        },
        Item {
            opts: EntryOptions::file("hinted.txt").mtime(t).size_hint(200_000),
            data: text(200_000),
            chunk: 33_333,
        },
        Item {
            opts: EntryOptions::file("level0.txt").mtime(t).level(0),
            data: text(100_000),
            chunk: 4096,
        },
        Item {
            opts: EntryOptions::file("level9.txt").mtime(t).level(9),
            data: text(100_000),
            chunk: 4096,
        },
        Item {
            opts: EntryOptions::file("ünïcødé/名前.txt")
                .mtime(t)
                .comment("entry comment é"),
            data: text(70_000),
            chunk: 1 << 20,
        },
        Item {
            opts: EntryOptions::file("zstd.txt")
                .mtime(t)
                .method(Method::Zstd)
                .level(3),
            data: text(300_000),
            chunk: 9000,
        },
        Item {
            opts: EntryOptions::file("zstd-recipe.txt")
                .mtime(t)
                .zstd(zstdkit::Recipe::Text),
            data: text(20_000),
            chunk: 9000,
        },
        Item {
            opts: EntryOptions::file("aes256.txt")
                .mtime(t)
                .encrypt(AesStrength::Aes256, "secret")
                .insecure_fixed_salt(vec![1; 16]),
            data: text(150_000),
            chunk: 10_000,
        },
        Item {
            opts: EntryOptions::file("aes128-small.txt")
                .mtime(t)
                .encrypt(AesStrength::Aes128, "secret")
                .insecure_fixed_salt(vec![2; 8]),
            data: text(500),
            chunk: 10_000,
        },
        Item {
            opts: EntryOptions::file("aes192-noise.bin")
                .mtime(t)
                .encrypt(AesStrength::Aes192, "secret")
                .insecure_fixed_salt(vec![3; 12]),
            data: noise(100_000, 3),
            chunk: 10_000,
        },
    ]
}

fn write_sync<W: std::io::Write>(mut w: ZipWriter<W>, items: &[Item]) -> W {
    w.set_comment("archive comment").unwrap();
    for it in items {
        w.start_entry(it.opts.clone()).unwrap();
        for c in it.data.chunks(it.chunk) {
            w.write_data(c).unwrap();
        }
        w.finish_entry().unwrap();
    }
    w.add_symlink(
        EntryOptions::symlink("link").mtime(1_700_000_000),
        "dir/big-text.txt",
    )
    .unwrap();
    w.finish().unwrap()
}

async fn write_async(items: &[Item]) -> Vec<u8> {
    let mut w = AsyncZipWriter::new(Vec::new());
    w.set_comment("archive comment").unwrap();
    for it in items {
        w.start_entry(it.opts.clone()).await.unwrap();
        for c in it.data.chunks(it.chunk) {
            w.write_data(c).await.unwrap();
        }
        w.finish_entry().await.unwrap();
    }
    w.add_symlink(
        EntryOptions::symlink("link").mtime(1_700_000_000),
        "dir/big-text.txt",
    )
    .await
    .unwrap();
    w.finish().await.unwrap()
}

fn check_random_access(bytes: Vec<u8>, items: &[Item]) {
    let mut a = ZipArchive::new(Cursor::new(bytes)).unwrap();
    assert_eq!(a.comment(), "archive comment");
    assert_eq!(a.entries().len(), items.len() + 1);
    for (i, it) in items.iter().enumerate() {
        let e = a.entries()[i].clone();
        assert_eq!(e.name, it.opts.name());
        assert_eq!(e.size, it.data.len() as u64, "{}", e.name);
        assert_eq!(e.mtime, 1_700_000_000);
        let pw = e.aes.map(|_| &b"secret"[..]);
        assert_eq!(a.read_to_vec(i, pw).unwrap(), it.data, "{}", e.name);
    }
    let link = a.entries().last().unwrap().clone();
    assert_eq!(link.kind(), EntryKind::Symlink);
    assert_eq!(a.entries()[2].kind(), EntryKind::Directory);
    assert_eq!(a.entries()[2].unix_mode, Some(0o040700));
    assert_eq!(a.entries()[3].unix_mode, Some(0o100600));
    assert_eq!(a.entries()[9].comment, "entry comment é");
    // Incompressible data past 64 KiB stays deflated, as Info-ZIP keeps
    // it, in deflate's stored blocks: a few bytes per 64 KiB over its size.
    let noise = &a.entries()[4];
    assert_eq!(noise.method, 8);
    assert!(
        noise.compressed_size <= noise.size + noise.size / 1000,
        "{} of {}",
        noise.compressed_size,
        noise.size
    );
    assert_eq!(a.entries()[3].method, 8);
    assert_eq!(a.entries()[10].method, 93);
    assert_eq!(a.entries()[11].method, 93);
    // So does an encrypted one (AES records the real method, 8).
    assert_eq!(a.entries()[14].method, 8);
}

fn check_stream(bytes: &[u8], items: &[Item]) {
    let mut r = ZipStreamReader::new(bytes);
    r.set_password(Some(b"secret"));
    for it in items {
        let e = r.next_entry().unwrap().expect("entry");
        assert_eq!(e.name, it.opts.name());
        let mut v = Vec::new();
        r.read_to_end(&mut v).unwrap();
        assert_eq!(v, it.data, "{}", e.name);
    }
    let e = r.next_entry().unwrap().unwrap();
    assert_eq!(e.name, "link");
    assert!(r.next_entry().unwrap().is_none());
}

#[test]
fn sync_and_async_write_identical_bytes() {
    let items = items();
    let sync = write_sync(ZipWriter::new(Vec::new()), &items);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let asyn = rt.block_on(write_async(&items));
    assert_eq!(sync.len(), asyn.len());
    assert!(sync == asyn, "sync and async archives differ");
    check_random_access(sync.clone(), &items);
    check_stream(&sync, &items);
}

#[test]
fn seekable_writer_patches_headers() {
    let items = items();
    let bytes = write_sync(
        ZipWriter::new_seekable(Cursor::new(Vec::new())).unwrap(),
        &items,
    )
    .into_inner();
    // No data descriptor flag anywhere in a seekable archive.
    let a = ZipArchive::new(Cursor::new(bytes.clone())).unwrap();
    assert!(a.entries().iter().all(|e| e.flags & 8 == 0));
    check_random_access(bytes.clone(), &items);
    check_stream(&bytes, &items);
}

#[test]
fn async_stream_reader_reads_async_output() {
    let items = items();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let bytes = write_async(&items).await;
        let mut r = AsyncZipStreamReader::new(&bytes[..]);
        r.set_password(Some(b"secret"));
        let mut buf = vec![0u8; 5000];
        for it in &items {
            let e = r.next_entry().await.unwrap().unwrap();
            let mut v = Vec::new();
            loop {
                let n = r.read_data(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                v.extend_from_slice(&buf[..n]);
            }
            assert_eq!(v, it.data, "{}", e.name);
        }
    });
}

#[test]
fn async_writer_as_asyncwrite_matches_sync() {
    use tokio::io::AsyncWriteExt;
    let data = text(300_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let a = rt.block_on(async {
        let mut w = AsyncZipWriter::new(Vec::new());
        w.start_entry(EntryOptions::file("x").mtime(5))
            .await
            .unwrap();
        for c in data.chunks(1234) {
            w.write_all(c).await.unwrap();
        }
        w.finish_entry().await.unwrap();
        w.finish().await.unwrap()
    });
    let mut w = ZipWriter::new(Vec::new());
    w.start_entry(EntryOptions::file("x").mtime(5)).unwrap();
    for c in data.chunks(1234) {
        std::io::Write::write_all(&mut w, c).unwrap();
    }
    w.finish_entry().unwrap();
    assert_eq!(a, w.finish().unwrap());
}

#[test]
fn wrong_password_and_tampering_are_distinct_errors() {
    let data = text(100_000);
    let mut w = ZipWriter::new(Vec::new());
    w.add_bytes(
        EntryOptions::file("s").encrypt(AesStrength::Aes256, "right"),
        &data,
    )
    .unwrap();
    let bytes = w.finish().unwrap();
    let mut a = ZipArchive::new(Cursor::new(bytes.clone())).unwrap();
    assert!(matches!(
        a.read_to_vec(0, None),
        Err(Error::PasswordRequired { .. })
    ));
    // Try passwords until one passes the 2-byte verifier by chance is not
    // needed: a wrong password is rejected by the verifier with p = 1 - 2^-16.
    assert!(matches!(
        a.open(0, Some(b"wrong")).err(),
        Some(Error::WrongPassword { .. })
    ));
    // Flip one ciphertext byte in the middle of the entry data.
    let mut bad = bytes.clone();
    let off = 30 + 1 + 9 + 11 + 18 + 100;
    bad[off] ^= 0x40;
    let mut a = ZipArchive::new(Cursor::new(bad.clone())).unwrap();
    assert!(matches!(
        a.open(0, Some(b"right")).err(),
        Some(Error::AuthFailed { .. })
    ));
    // Streaming, deflated: the garbage plaintext fails to inflate or the MAC
    // fails; either way the entry never reads to a clean end.
    let mut r = ZipStreamReader::new(&bad[..]);
    r.set_password(Some(b"right"));
    r.next_entry().unwrap();
    let mut v = Vec::new();
    let err = r.read_to_end(&mut v).unwrap_err().to_string();
    assert!(
        err.contains("authentication code") || err.contains("corrupt"),
        "{err}"
    );
    // Streaming, stored (incompressible): only the MAC can catch it.
    let data = common_noise(100_000);
    let mut w = ZipWriter::new(Vec::new());
    w.add_bytes(
        EntryOptions::file("s").encrypt(AesStrength::Aes256, "right"),
        &data,
    )
    .unwrap();
    let mut bad = w.finish().unwrap();
    bad[off] ^= 0x40;
    let mut r = ZipStreamReader::new(&bad[..]);
    r.set_password(Some(b"right"));
    r.next_entry().unwrap();
    let mut v = Vec::new();
    let err = r.read_to_end(&mut v).unwrap_err().to_string();
    assert!(err.contains("authentication code"), "{err}");
}

fn common_noise(n: usize) -> Vec<u8> {
    noise(n, 77)
}

#[test]
fn bad_crc_and_truncation_are_detected() {
    let data = text(50_000);
    let mut w = ZipWriter::new(Vec::new());
    w.add_bytes(EntryOptions::file("f").method(Method::Stored), &data)
        .unwrap();
    let bytes = w.finish().unwrap();
    let mut bad = bytes.clone();
    bad[30 + 1 + 9 + 100] ^= 1;
    let mut a = ZipArchive::new(Cursor::new(bad.clone())).unwrap();
    assert!(matches!(a.read_to_vec(0, None), Err(Error::Crc { .. })));
    let mut r = ZipStreamReader::new(&bad[..]);
    r.next_entry().unwrap();
    let mut v = Vec::new();
    assert!(
        r.read_to_end(&mut v)
            .unwrap_err()
            .to_string()
            .contains("CRC")
    );
    // Truncated: cut in the middle of the data.
    let cut = &bytes[..bytes.len() / 2];
    assert!(ZipArchive::new(Cursor::new(cut.to_vec())).is_err());
    let mut r = ZipStreamReader::new(cut);
    r.next_entry().unwrap();
    let mut v = Vec::new();
    assert!(
        r.read_to_end(&mut v)
            .unwrap_err()
            .to_string()
            .contains("truncated")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn any_entries_round_trip(
        entries in prop::collection::vec((prop::collection::vec(any::<u8>(), 0..3000), 0u8..3, 1usize..2000, any::<bool>()), 1..6),
        seekable in any::<bool>(),
    ) {
        let mut items = Vec::new();
        for (i, (mut data, kind, chunk, rep)) in entries.into_iter().enumerate() {
            if rep { let d = data.clone(); for _ in 0..40 { data.extend_from_slice(&d); } }
            let mut o = EntryOptions::file(format!("f{i}")).mtime(1_600_000_000);
            o = match kind { 0 => o.method(Method::Stored), 1 => o, _ => o.encrypt(AesStrength::Aes128, "p") };
            items.push((o, data, chunk));
        }
        let bytes = if seekable {
            let mut w = ZipWriter::new_seekable(Cursor::new(Vec::new())).unwrap();
            for (o, d, c) in &items { w.start_entry(o.clone()).unwrap(); for ch in d.chunks(*c) { w.write_data(ch).unwrap(); } w.finish_entry().unwrap(); }
            w.finish().unwrap().into_inner()
        } else {
            let mut w = ZipWriter::new(Vec::new());
            for (o, d, c) in &items { w.start_entry(o.clone()).unwrap(); for ch in d.chunks(*c) { w.write_data(ch).unwrap(); } w.finish_entry().unwrap(); }
            w.finish().unwrap()
        };
        let mut a = ZipArchive::new(Cursor::new(bytes.clone())).unwrap();
        for (i, (_, d, _)) in items.iter().enumerate() {
            prop_assert_eq!(&a.read_to_vec(i, Some(b"p")).unwrap(), d);
        }
        let mut r = ZipStreamReader::new(&bytes[..]);
        r.set_password(Some(b"p"));
        for (_, d, _) in &items {
            r.next_entry().unwrap().unwrap();
            let mut v = Vec::new();
            r.read_to_end(&mut v).unwrap();
            prop_assert_eq!(&v, d);
        }
    }
}

/// Every CRC-32 field of the archive, read at the format's fixed offsets:
/// local headers (offset 14), data descriptors (4, after the signature) and
/// central directory headers (16). Signatures inside compressed data could
/// fool a byte scan, so this walks the records in order instead.
fn crc_fields(zip: &[u8]) -> Vec<(&'static str, u32)> {
    let u16_at = |p: usize| u16::from_le_bytes([zip[p], zip[p + 1]]) as usize;
    let u32_at = |p: usize| u32::from_le_bytes(zip[p..p + 4].try_into().unwrap());
    let mut found = Vec::new();
    let a = ZipArchive::new(Cursor::new(zip.to_vec())).unwrap();
    for e in a.entries() {
        let p = e.header_offset as usize;
        assert_eq!(u32_at(p), 0x0403_4b50);
        found.push(("local header", u32_at(p + 14)));
        if e.flags & 8 != 0 {
            let data = p + 30 + u16_at(p + 26) + u16_at(p + 28);
            let d = data + e.compressed_size as usize;
            assert_eq!(u32_at(d), 0x0807_4b50, "descriptor of {}", e.name);
            found.push(("data descriptor", u32_at(d + 4)));
        }
    }
    let mut p = zip.len() - 22;
    while u32_at(p) != 0x0605_4b50 {
        p -= 1;
    }
    let mut cd = u32_at(p + 16) as usize;
    while u32_at(cd) == 0x0201_4b50 {
        found.push(("central directory", u32_at(cd + 16)));
        cd += 46 + u16_at(cd + 28) + u16_at(cd + 30) + u16_at(cd + 32);
    }
    found
}

#[test]
fn ae2_entries_store_crc_zero_everywhere_and_plain_entries_the_real_crc() {
    let data = text(200_000);
    let real = crc32fast::hash(&data);
    assert_ne!(real, 0);
    // The parallel writer hands the core compressed blocks with their CRCs
    // (a separate path to the same fields).
    for (seekable, parallel) in [(false, false), (true, false), (false, true), (true, true)] {
        for encrypted in [false, true] {
            let mut o = EntryOptions::file("x");
            if encrypted {
                o = o.encrypt(AesStrength::Aes256, "secret");
            }
            let mut opts = ParallelOptions::new(2);
            opts.block_size = 64 * 1024;
            let bytes = match (seekable, parallel) {
                (true, false) => {
                    let mut w = ZipWriter::new_seekable(Cursor::new(Vec::new())).unwrap();
                    w.start_entry(o).unwrap();
                    std::io::Write::write_all(&mut w, &data).unwrap();
                    w.finish_entry().unwrap();
                    w.finish().unwrap().into_inner()
                }
                (false, false) => {
                    let mut w = ZipWriter::new(Vec::new());
                    w.start_entry(o).unwrap();
                    std::io::Write::write_all(&mut w, &data).unwrap();
                    w.finish_entry().unwrap();
                    w.finish().unwrap()
                }
                (true, true) => {
                    let sink = ZipWriter::new_seekable(Cursor::new(Vec::new())).unwrap();
                    let mut w = ParallelZipWriter::new(sink, opts);
                    w.add_bytes(o, &data).unwrap();
                    w.finish().unwrap().into_inner()
                }
                (false, true) => {
                    let mut w = ParallelZipWriter::new(ZipWriter::new(Vec::new()), opts);
                    w.add_bytes(o, &data).unwrap();
                    w.finish().unwrap()
                }
            };
            let fields = crc_fields(&bytes);
            // Streamed: local header (0, sizes follow), descriptor, CD.
            assert_eq!(fields.len(), if seekable { 2 } else { 3 });
            let case = format!("seekable {seekable}, parallel {parallel}");
            for (place, crc) in fields {
                match (place, encrypted) {
                    ("local header", false) if !seekable => assert_eq!(crc, 0, "{place}, {case}"),
                    (_, true) => assert_eq!(crc, 0, "AE-2 {place}, {case}"),
                    (_, false) => assert_eq!(crc, real, "{place}, {case}"),
                }
            }
        }
    }
}

/// A crate error that a reader hands back through `io::Error` comes out of
/// both writers and the archive reader as itself, not nested under
/// `Error::Io`; a plain I/O error stays `Error::Io` with its kind.
#[test]
fn a_readers_wrapped_error_comes_back_as_itself() {
    struct Failing(Option<Error>);
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(match self.0.take() {
                Some(ours) => std::io::Error::other(ours),
                None => std::io::Error::new(std::io::ErrorKind::BrokenPipe, "plain"),
            })
        }
    }
    impl std::io::Seek for Failing {
        fn seek(&mut self, _: std::io::SeekFrom) -> std::io::Result<u64> {
            Ok(100)
        }
    }
    let ours = || Failing(Some(Error::InvalidOptions("from the reader".into())));
    let is_ours = |e: &Error| matches!(e, Error::InvalidOptions(m) if m == "from the reader");
    let is_plain =
        |e: &Error| matches!(e, Error::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe);

    let sync = |mut r: Failing| {
        ZipWriter::new(Vec::new())
            .add_reader(EntryOptions::file("a"), &mut r)
            .unwrap_err()
    };
    let parallel = |mut r: Failing| {
        ParallelZipWriter::new(ZipWriter::new(Vec::new()), ParallelOptions::new(1))
            .add_reader(EntryOptions::file("a"), &mut r)
            .unwrap_err()
    };
    let archive = |r: Failing| ZipArchive::new(r).err().expect("the read fails");
    for (what, e) in [
        ("sync", sync(ours())),
        ("parallel", parallel(ours())),
        ("archive", archive(ours())),
    ] {
        assert!(is_ours(&e), "{what}: {e:?}");
    }
    for (what, e) in [
        ("sync", sync(Failing(None))),
        ("parallel", parallel(Failing(None))),
        ("archive", archive(Failing(None))),
    ] {
        assert!(is_plain(&e), "{what}: {e:?}");
    }
}

/// Whether the local header at the start of `zip` (APPNOTE 4.3.7) has a
/// ZIP64 extended information field (header ID 0x0001) among its extras,
/// and the version it needs to extract.
fn first_local_header(zip: &[u8]) -> (bool, u16) {
    let u16_at = |i: usize| u16::from_le_bytes([zip[i], zip[i + 1]]);
    let (name, extra) = (u16_at(26) as usize, u16_at(28) as usize);
    let (mut at, end) = (30 + name, 30 + name + extra);
    let mut zip64 = false;
    while at + 4 <= end {
        zip64 |= u16_at(at) == 0x0001;
        at += 4 + u16_at(at + 2) as usize;
    }
    (zip64, u16_at(4))
}

/// An entry written whole from memory has a known length, so past the
/// held-back 64 KiB it is streamed with a descriptor but not as ZIP64:
/// 28 bytes fewer, and readers without ZIP64 read it. Written piece by
/// piece without a hint it stays ZIP64, as Info-ZIP's `zip -` writes it;
/// a caller's own hint is kept.
#[test]
fn an_entry_written_from_memory_is_not_zip64() {
    let data = text(300_000);
    let opts = || EntryOptions::file("mem.txt").mtime(1_700_000_000);
    let mut w = ZipWriter::new(Vec::new());
    w.add_bytes(opts(), &data).unwrap();
    let whole = w.finish().unwrap();
    let mut w = ZipWriter::new(Vec::new());
    w.start_entry(opts()).unwrap();
    w.write_data(&data).unwrap();
    w.finish_entry().unwrap();
    let streamed = w.finish().unwrap();
    assert_eq!(first_local_header(&whole), (false, 20));
    assert_eq!(first_local_header(&streamed), (true, 45));
    assert_eq!(
        streamed.len() - whole.len(),
        20 + 8,
        "the ZIP64 field and descriptor"
    );
    let mut w = ZipWriter::new(Vec::new());
    w.add_bytes(opts().size_hint(5 << 30), &data).unwrap();
    assert_eq!(first_local_header(&w.finish().unwrap()), (true, 45));
    // The other two writers' add_bytes, on a sink that streams as well.
    let asynchronous = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(async {
            let mut w = AsyncZipWriter::new(Vec::new());
            w.add_bytes(opts(), &data).await.unwrap();
            w.finish().await.unwrap()
        });
    assert_eq!(first_local_header(&asynchronous), (false, 20), "async");
    // Past one of its 1 MiB blocks: an entry of one block came out
    // without ZIP64 before the hint too, so it would not tell.
    let blocks = text(3 << 20);
    let mut w = ParallelZipWriter::new(ZipWriter::new(Vec::new()), ParallelOptions::new(2));
    w.add_bytes(opts(), &blocks).unwrap();
    assert_eq!(
        first_local_header(&w.finish().unwrap()),
        (false, 20),
        "parallel"
    );
    let mut a = ZipArchive::new(Cursor::new(whole)).unwrap();
    assert_eq!(a.read_to_vec(0, None).unwrap(), data);
}
