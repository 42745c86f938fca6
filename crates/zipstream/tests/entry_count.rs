//! Archives with more than 65,535 entries and no ZIP64 records (some writers
//! make them: the end record's 16-bit count wraps) must be read whole, as
//! Info-ZIP and Python read them, never as the count modulo 65,536. The
//! archives are built byte by byte here, independently of the writer.

use std::io::Cursor;

use zipstream::*;

/// A stored, empty-entry archive of `n` entries named `f{i}`, with `count`
/// in the end record's entry fields and no ZIP64 records.
fn wide_archive(n: u32, count: u16) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for i in 0..n {
        let name = format!("f{i}");
        let offset = out.len() as u32;
        // Local header: stored, no data, CRC 0, sizes 0.
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0]);
        out.extend_from_slice(&[0; 12]);
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(name.as_bytes());
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&[20, 3, 20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0]);
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 8]);
        central.extend_from_slice(&(0o100644u32 << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_off = out.len() as u32;
    let cd_size = central.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_off.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

/// Python's zipfile, an independent reader, when it is installed.
fn python_count(bytes: &[u8]) -> Option<usize> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.zip");
    std::fs::write(&p, bytes).unwrap();
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; print(len(zipfile.ZipFile(sys.argv[1]).namelist()))",
        ])
        .arg(&p)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().parse().ok())?
}

#[test]
fn more_than_65535_entries_without_zip64_are_all_read() {
    let n = 70_000u32;
    let z = wide_archive(n, (n % 65_536) as u16);
    if let Some(py) = python_count(&z) {
        assert_eq!(py, n as usize, "the oracle disagrees with the builder");
    }
    let a = ZipArchive::new(Cursor::new(z.clone())).unwrap();
    assert_eq!(a.entries().len(), n as usize);
    assert_eq!(a.entries().last().unwrap().name, format!("f{}", n - 1));

    // The streaming reader walks local headers and must see all of them too.
    let mut r = ZipStreamReader::new(&z[..]);
    let mut seen = 0u32;
    use std::io::Read;
    let mut buf = [0u8; 16];
    while r.next_entry().unwrap().is_some() {
        while r.read(&mut buf).unwrap() > 0 {}
        seen += 1;
    }
    assert_eq!(seen, n);

    let root = tempfile::tempdir().unwrap();
    let mut a = ZipArchive::new(Cursor::new(z)).unwrap();
    let rep = extract_archive(&mut a, root.path(), &ExtractOptions::default()).unwrap();
    assert_eq!(rep.files, u64::from(n));
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), n as usize);
}

#[test]
fn a_count_that_disagrees_with_the_directory_is_an_error() {
    // 70,000 records but a count that is not 70,000 mod 65,536, and a small
    // archive whose count claims more than it holds.
    for (n, count) in [(70_000u32, 4_465u16), (3, 4), (3, 2)] {
        let z = wide_archive(n, count);
        let err = match ZipArchive::new(Cursor::new(z)) {
            Ok(a) => panic!(
                "{n} records, count {count}: read as {} entries",
                a.entries().len()
            ),
            Err(e) => e,
        };
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("lists {count} entries")) && msg.contains(&format!("holds {n}")),
            "{msg}"
        );
    }
}

#[test]
fn one_entry_running_past_the_directory_is_truncation_not_overlap() {
    // One stored entry of 10 bytes whose central record claims 1,000: it
    // overlaps nothing, its size runs past the central directory.
    let mut w = ZipWriter::new(Vec::new());
    w.add_bytes(
        EntryOptions::file("x").method(Method::Stored),
        b"0123456789",
    )
    .unwrap();
    let mut z = w.finish().unwrap();
    let eocd = z.len() - 22;
    let cd = u32::from_le_bytes(z[eocd + 16..eocd + 20].try_into().unwrap()) as usize;
    assert_eq!(&z[cd..cd + 4], b"PK\x01\x02");
    z[cd + 20..cd + 24].copy_from_slice(&1000u32.to_le_bytes());
    let err = match ZipArchive::new(Cursor::new(z)) {
        Ok(_) => panic!("a size past the directory was accepted"),
        Err(e) => e,
    };
    assert!(!matches!(err, Error::Overlap { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("truncated") && msg.contains("\"x\""), "{msg}");
}
