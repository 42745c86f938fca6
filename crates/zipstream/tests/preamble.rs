//! Data before an archive's first entry (a self-extractor's stub): read
//! whether the offsets count it (`zip -A`) or not (`cat stub a.zip`),
//! ZIP64 records included, and kept by [`ZipWriter::rewriting`] with
//! every offset counting it. Python's zipfile, which finds its records
//! on its own, is the independent reader.

use std::io::Cursor;

use zipstream::*;

fn have_python() -> bool {
    perfkit_testkit::interop::have("python3", "--version", "apt-get install python3")
}

/// The names and data of `bytes` as Python's zipfile reads them.
fn python_read(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.zip");
    std::fs::write(&p, bytes).unwrap();
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1])\n\
             assert z.testzip() is None\n\
             for n in z.namelist(): print(n, z.read(n).hex())",
        ])
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (n, hex) = l.split_once(' ').unwrap();
            let data = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            (n.to_string(), data)
        })
        .collect()
}

/// The names and data of `bytes` as zipstream reads them.
fn our_read(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut a = ZipArchive::new(Cursor::new(bytes.to_vec())).unwrap();
    (0..a.entries().len())
        .map(|i| (a.entries()[i].name.clone(), a.read_to_vec(i, None).unwrap()))
        .collect()
}

/// A stub that looks like one: an ELF header and some code-like bytes,
/// with a local header signature inside, which must not be taken for an
/// entry.
fn stub() -> Vec<u8> {
    let mut s = b"\x7fELF\x02\x01\x01".to_vec();
    s.extend((0..5000u32).map(|i| (i * 7 % 251) as u8));
    s.extend_from_slice(b"PK\x03\x04 not an entry");
    s
}

/// A plain archive of two entries with a comment.
fn plain() -> Vec<u8> {
    let mut w = ZipWriter::new_seekable(Cursor::new(Vec::new())).unwrap();
    w.set_comment("kept").unwrap();
    w.add_bytes(EntryOptions::file("a.txt").mtime(0), b"alpha")
        .unwrap();
    w.add_bytes(EntryOptions::file("b.txt").mtime(0), &b"bravo ".repeat(999))
        .unwrap();
    w.finish().unwrap().into_inner()
}

/// `zip` turned into the ZIP64 layout, as a writer with more entries
/// would have made it: a ZIP64 end record and locator before the end
/// record, whose fields are saturated. Offsets as `zip` had them.
fn as_zip64(zip: &[u8]) -> Vec<u8> {
    let eocd = zip.len() - 22 - 4; // the comment "kept"
    let e = &zip[eocd..];
    let le16 = |b: &[u8], i| u16::from_le_bytes([b[i], b[i + 1]]);
    let le32 = |b: &[u8], i| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    assert_eq!(le32(e, 0), 0x0605_4b50);
    let (count, size, offset) = (le16(e, 10), le32(e, 12), le32(e, 16));
    let mut out = zip[..eocd].to_vec();
    let record_at = out.len() as u64;
    out.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
    out.extend_from_slice(&44u64.to_le_bytes());
    out.extend_from_slice(&[45, 3, 45, 0]);
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&u64::from(count).to_le_bytes());
    out.extend_from_slice(&u64::from(count).to_le_bytes());
    out.extend_from_slice(&u64::from(size).to_le_bytes());
    out.extend_from_slice(&u64::from(offset).to_le_bytes());
    out.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&record_at.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    // Count, total, size and offset, saturated.
    out.extend_from_slice(&[0xFF; 12]);
    out.extend_from_slice(&zip[zip.len() - 6..]);
    out
}

/// Rewrites `bytes` as an update does: every entry kept, one added.
fn rewrite(bytes: &[u8]) -> Vec<u8> {
    let mut from = ZipArchive::new(Cursor::new(bytes.to_vec())).unwrap();
    let mut w = ZipWriter::rewriting(Cursor::new(Vec::new()), &mut from).unwrap();
    for i in 0..from.entries().len() {
        w.copy_entry(&mut from, i).unwrap();
    }
    w.add_bytes(EntryOptions::file("c.txt").mtime(0), b"charlie")
        .unwrap();
    w.finish().unwrap().into_inner()
}

/// With and without ZIP64 records, with the stub counted in the offsets
/// or not: the archive reads as Python reads it, and a rewrite keeps the
/// stub byte for byte, counts it in every offset (nothing left to
/// shift), and keeps the comment. Before the fix an unadjusted ZIP64
/// archive was refused ("bad ZIP64 end of central directory signature")
/// and there was no rewriting writer (updates dropped the stub).
#[test]
fn a_preamble_is_read_either_way_and_kept_by_a_rewrite() {
    if !have_python() {
        return;
    }
    let stub = stub();
    let plain = plain();
    // Adjusted: an empty archive written after the stub, then rewritten
    // with an entry added, counts the stub in its offsets.
    let mut after_stub = Cursor::new(stub.clone());
    after_stub.set_position(stub.len() as u64);
    let empty = ZipWriter::new_seekable(after_stub)
        .unwrap()
        .finish()
        .unwrap()
        .into_inner();
    let adjusted = {
        let mut from = ZipArchive::new(Cursor::new(empty)).unwrap();
        assert_eq!(from.entries().len(), 0);
        assert_eq!(from.preamble_len(), stub.len() as u64);
        let mut w = ZipWriter::rewriting(Cursor::new(Vec::new()), &mut from).unwrap();
        w.add_bytes(EntryOptions::file("a.txt").mtime(0), b"alpha")
            .unwrap();
        w.finish().unwrap().into_inner()
    };
    let unadjusted = [stub.clone(), plain.clone()].concat();
    let unadjusted64 = [stub.clone(), as_zip64(&plain)].concat();
    for (what, bytes, shift) in [
        ("adjusted", &adjusted, 0),
        ("unadjusted", &unadjusted, stub.len() as u64),
        ("unadjusted ZIP64", &unadjusted64, stub.len() as u64),
    ] {
        let a = ZipArchive::new(Cursor::new(bytes.clone())).unwrap();
        assert_eq!(a.preamble_len(), stub.len() as u64, "{what}");
        assert_eq!(a.offsets_shift(), shift, "{what}");
        assert_eq!(our_read(bytes), python_read(bytes), "{what}");
        let again = rewrite(bytes);
        assert_eq!(again[..stub.len()], stub[..], "{what}");
        let b = ZipArchive::new(Cursor::new(again.clone())).unwrap();
        assert_eq!(b.preamble_len(), stub.len() as u64, "{what}");
        assert_eq!(b.offsets_shift(), 0, "{what}");
        assert_eq!(b.raw_comment(), a.raw_comment(), "{what}");
        let mut expected = python_read(bytes);
        expected.push(("c.txt".into(), b"charlie".to_vec()));
        assert_eq!(python_read(&again), expected, "{what}");
        assert_eq!(our_read(&again), expected, "{what}");
    }
}

/// What an update corrects, as `zip -A` reports it: the stub's length
/// for an archive whose offsets do not count it, nothing for one whose do,
/// nor for an empty archive behind a stub (it records no entry offset).
#[test]
fn only_entry_offsets_that_miss_the_stub_are_off() {
    let stub = stub();
    let unadjusted = [stub.clone(), plain()].concat();
    let a = ZipArchive::new(Cursor::new(unadjusted)).unwrap();
    assert_eq!(a.offsets_off(), Some(stub.len() as u64));
    assert_eq!(
        ZipArchive::new(Cursor::new(plain())).unwrap().offsets_off(),
        None
    );
    let empty = ZipWriter::new(Vec::new()).finish().unwrap();
    let behind = ZipArchive::new(Cursor::new([stub, empty].concat())).unwrap();
    assert!(behind.offsets_shift() > 0);
    assert_eq!(behind.offsets_off(), None);
}

/// `zip -o` and `unzip -T`: the newest entry that is not a folder.
#[test]
fn the_newest_file_time_leaves_folders_out() {
    let mut w = ZipWriter::new(Vec::new());
    w.add_bytes(EntryOptions::file("a").mtime(2_000), b"a")
        .unwrap();
    w.add_directory(EntryOptions::directory("d").mtime(9_000))
        .unwrap();
    w.add_bytes(EntryOptions::file("d/b").mtime(1_000), b"b")
        .unwrap();
    let a = ZipArchive::new(Cursor::new(w.finish().unwrap())).unwrap();
    assert_eq!(a.newest_file_time(), Some(2_000));
    let mut w = ZipWriter::new(Vec::new());
    w.add_directory(EntryOptions::directory("d")).unwrap();
    let a = ZipArchive::new(Cursor::new(w.finish().unwrap())).unwrap();
    assert_eq!(a.newest_file_time(), None);
}
