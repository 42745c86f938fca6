use super::*;
use std::io::Write;

fn text(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| b"seekable frames, "[i % 17] ^ (i / 4096) as u8)
        .collect()
}

fn ours(data: &[u8], frame: usize, checksums: bool) -> Vec<u8> {
    let mut w = SeekableWriter::new(Vec::new(), crate::Recipe::Fast, frame, checksums).unwrap();
    w.write_all(data).unwrap();
    w.finish().unwrap()
}

/// zstd's reference seekable reader (zstd-safe's `seekable` feature, C
/// from zstd's contrib/) reads our table and any range through it.
#[test]
fn the_reference_reader_reads_our_files() {
    let data = text(300_000);
    for checksums in [true, false] {
        let file = ours(&data, 64 << 10, checksums);
        let mut reference = zstd_safe::seekable::Seekable::create();
        reference.init_buff(&file).unwrap();
        assert_eq!(reference.num_frames(), 5);
        let ours = SeekTable::parse(&file).unwrap();
        for (i, e) in ours.entries.iter().enumerate() {
            let i = i as u32;
            assert_eq!(
                reference.frame_compressed_size(i).unwrap(),
                e.compressed as usize
            );
            assert_eq!(
                reference.frame_decompressed_size(i).unwrap(),
                e.decompressed as usize
            );
        }
        for (start, len) in [(0usize, 10usize), (65_000, 2_000), (299_990, 10)] {
            let mut out = vec![0u8; len];
            let n = reference.decompress(&mut out[..], start as u64).unwrap();
            assert_eq!(&out[..n], &data[start..start + len]);
        }
        // And every decoder reads it as plain zstd.
        assert_eq!(crate::decompress(&file).unwrap(), data);
    }
}

/// Our table reader reads the reference writer's files.
#[test]
fn we_read_the_reference_writers_tables() {
    let data = text(200_000);
    let mut cs = zstd_safe::seekable::SeekableCStream::create();
    cs.init(3, true, 50_000).unwrap();
    let mut file: Vec<u8> = Vec::with_capacity(300_000);
    let mut input = zstd_safe::InBuffer::around(&data);
    while input.pos() < data.len() {
        let len = file.len();
        file.reserve(1 << 16);
        let mut out = zstd_safe::OutBuffer::around_pos(&mut file, len);
        cs.compress_stream(&mut out, &mut input).unwrap();
    }
    loop {
        let len = file.len();
        file.reserve(1 << 16);
        let mut out = zstd_safe::OutBuffer::around_pos(&mut file, len);
        if cs.end_stream(&mut out).unwrap() == 0 {
            break;
        }
    }
    let table = SeekTable::parse(&file).unwrap();
    assert!(table.checksums);
    // 50,000 bytes a frame at most (the reference may end with an empty one).
    assert!(table.entries.len() >= 4);
    assert!(table.entries.iter().all(|e| e.decompressed <= 50_000));
    assert_eq!(table.decompressed_len(), data.len() as u64);
    let mut at = 0usize;
    for e in &table.entries {
        let chunk = &data[at..at + e.decompressed as usize];
        assert_eq!(e.checksum, Some(checksum(chunk)));
        at += e.decompressed as usize;
    }
}

#[test]
fn a_table_that_lies_is_refused_naming_where() {
    let file = ours(&text(100_000), 30_000, true);
    let t = SeekTable::parse(&file).unwrap();
    let table_at = file.len() - t.encode().len();
    // A frame size one off: the frames no longer fill up to the table.
    let mut lie = file.clone();
    lie[table_at + 8] ^= 1;
    let e = SeekTable::parse(&lie).unwrap_err().to_string();
    assert!(
        e.contains(&format!("byte {table_at}")) && e.contains("add up"),
        "{e}"
    );
    // A frame count larger than the table.
    let mut lie = file.clone();
    let n = lie.len();
    lie[n - FOOTER_LEN] = 200;
    assert!(SeekTable::parse(&lie).is_err());
    // Cut short, and no table at all.
    assert!(SeekTable::parse(&file[..file.len() - 3]).is_err());
    assert!(SeekTable::parse(&file[10..]).is_err());
    assert!(SeekTable::parse(&crate::compress(b"plain", crate::Recipe::Fast).unwrap()).is_err());
    // Reserved bits.
    let mut lie = file.clone();
    lie[n - 5] |= 0x04;
    assert!(
        SeekTable::parse(&lie)
            .unwrap_err()
            .to_string()
            .contains("reserved")
    );
}

#[test]
fn frames_are_cut_at_the_frame_size_whatever_the_writes() {
    let data = text(10_000);
    let mut w = SeekableWriter::new(Vec::new(), crate::Recipe::Fast, 1000, false).unwrap();
    for chunk in data.chunks(333) {
        w.write_all(chunk).unwrap();
    }
    let (file, table) = w.finish_with_table().unwrap();
    assert_eq!(table.entries.len(), 10);
    assert!(table.entries.iter().all(|e| e.decompressed == 1000));
    assert_eq!(SeekTable::parse(&file).unwrap(), table);
    assert!(SeekableWriter::new(Vec::new(), crate::Recipe::Fast, 0, false).is_err());
}

#[test]
fn the_reader_reads_any_range_decoding_only_the_frames_under_it() {
    use std::io::{Cursor, Read, Seek, SeekFrom};
    let data = text(500_000);
    let file = ours(&data, 50_000, true);
    let table_len = SeekTable::parse(&file).unwrap().encode().len() as u64;
    let mut r = SeekableReader::new(Cursor::new(&file)).unwrap();
    assert_eq!(r.len(), data.len() as u64);
    // A range inside one frame reads that frame and the table, no more.
    r.seek(SeekFrom::Start(260_000)).unwrap();
    let mut got = vec![0u8; 1000];
    r.read_exact(&mut got).unwrap();
    assert_eq!(got, &data[260_000..261_000]);
    let frame5 = u64::from(r.table().entries[5].compressed);
    // (The footer is read twice: alone, then with the table it sizes.)
    assert_eq!(r.source_read(), FOOTER_LEN as u64 + table_len + frame5);
    // Ranges across frames, from the end, and past it.
    for (start, len) in [
        (0usize, 10usize),
        (49_990, 30),
        (99_999, 100_002),
        (499_000, 1000),
    ] {
        r.seek(SeekFrom::Start(start as u64)).unwrap();
        let mut got = vec![0u8; len];
        r.read_exact(&mut got).unwrap();
        assert_eq!(got, &data[start..start + len], "{start}+{len}");
    }
    r.seek(SeekFrom::End(-5)).unwrap();
    let mut tail = Vec::new();
    r.read_to_end(&mut tail).unwrap();
    assert_eq!(tail, &data[data.len() - 5..]);
    r.seek(SeekFrom::Start(10_000_000)).unwrap();
    assert_eq!(r.read(&mut got).unwrap(), 0);
    assert!(r.seek(SeekFrom::Current(-20_000_000)).is_err());
}

#[test]
fn the_reader_names_the_frame_a_damaged_byte_is_in() {
    use std::io::{Cursor, Read, Seek, SeekFrom};
    let data = text(200_000);
    let file = ours(&data, 50_000, true);
    let table = SeekTable::parse(&file).unwrap();
    let frame2_at = u64::from(table.entries[0].compressed) + u64::from(table.entries[1].compressed);
    let mut bad = file.clone();
    bad[frame2_at as usize + 100] ^= 0x20;
    let mut r = SeekableReader::new(Cursor::new(&bad)).unwrap();
    // Frames before it read fine.
    let mut got = vec![0u8; 1000];
    r.read_exact(&mut got).unwrap();
    r.seek(SeekFrom::Start(120_000)).unwrap();
    // The damage may not show until the frame's end: a read inside the
    // frame streams, and verify() decodes the rest and checks it.
    let e = match r.read(&mut got) {
        Err(e) => e.to_string(),
        Ok(_) => r.verify().unwrap_err().to_string(),
    };
    assert!(
        e.contains("frame 2") && e.contains(&format!("byte {frame2_at}")),
        "{e}"
    );
    // Not seekable at all: one error, no panic.
    assert!(SeekableReader::new(Cursor::new(&data[..100])).is_err());
}

#[test]
fn workers_write_the_same_bytes_as_the_calling_thread() {
    use std::io::Write;
    let data = text(1_000_003);
    for checksums in [true, false] {
        let inline = ours(&data, 30_000, checksums);
        for n in [2, 3, 5] {
            let mut w = SeekableWriter::new(Vec::new(), crate::Recipe::Fast, 30_000, checksums)
                .unwrap()
                .workers(n)
                .unwrap();
            // Writes of odd sizes, so frames are cut mid-write.
            for chunk in data.chunks(7_777) {
                w.write_all(chunk).unwrap();
            }
            assert_eq!(w.finish().unwrap(), inline, "{n} workers");
        }
    }
}
