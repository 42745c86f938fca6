use super::items::{Item, open_item_as_is};
use super::*;
use std::time::UNIX_EPOCH;
use zipstream::listing::listing_time as fmt_time;
use zipstream::{AesStrength, EntryOptions, Method};

#[test]
fn listing_times() {
    assert_eq!(fmt_time(1_582_983_462), "2020-02-29 13:37");
}

/// Lists `path` as `collect` does, lets `change` alter the file, then
/// reads it as an entry would be read (no line-end conversion).
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
    open_item_as_is(&item).unwrap().read_to_end(&mut v)?;
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
    use std::io::{Read, Seek, SeekFrom};
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
        // any extra field: byte 1,000 is well inside it. Flip it rather
        // than overwrite it: AES ciphertext is random, and a fixed value
        // would equal the byte already there once in 256 runs.
        let mut byte = [0u8];
        f.seek(SeekFrom::Start(1000)).unwrap();
        f.read_exact(&mut byte).unwrap();
        f.seek(SeekFrom::Start(1000)).unwrap();
        f.write_all(&[!byte[0]]).unwrap();
        let err = test_written(&mut f, &pw).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("CRC") || msg.contains("authentication") || msg.contains("MAC"),
            "{msg}"
        );
    }
}
