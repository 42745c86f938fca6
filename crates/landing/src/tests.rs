use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{Output, OutputError, write_atomically, write_atomically_with};

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn an_output_is_a_hidden_temporary_until_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let mut out = Output::create(&path, false).unwrap();
    out.file_mut().write_all(b"data").unwrap();
    let present = names(dir.path());
    assert_eq!(present.len(), 1);
    assert!(present[0].starts_with(".perfkit-") && present[0].ends_with(".partial"));
    out.commit().unwrap();
    assert_eq!(names(dir.path()), ["out"]);
    assert_eq!(std::fs::read(&path).unwrap(), b"data");
}

#[test]
fn a_dropped_output_leaves_the_directory_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    std::fs::write(&path, b"old").unwrap();
    let mut out = Output::create(&path, true).unwrap();
    out.file_mut().write_all(b"new, half").unwrap();
    drop(out);
    assert_eq!(names(dir.path()), ["out"]);
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
}

#[test]
fn without_clobber_a_file_that_appears_meanwhile_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let mut out = Output::create(&path, false).unwrap();
    out.file_mut().write_all(b"ours").unwrap();
    std::fs::write(&path, b"theirs").unwrap();
    let err = out.commit().unwrap_err();
    assert!(matches!(err, OutputError::Write { .. }), "{err:?}");
    assert_eq!(std::fs::read(&path).unwrap(), b"theirs");
    assert_eq!(names(dir.path()), ["out"]);
    let refused = write_atomically_with(&path, false, |f| f.write_all(b"x").map_err(Into::into));
    assert!(matches!(refused, Err(OutputError::Exists { .. })));
}

#[test]
fn a_symlink_stays_a_link_to_the_new_data() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let link = dir.path().join("link");
    std::fs::write(&target, b"old").unwrap();
    std::os::unix::fs::symlink("target", &link).unwrap();
    write_atomically(&link, |f| f.write_all(b"new")).unwrap();
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), b"new");
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink("nowhere/at/all", &dangling).unwrap();
    let err = Output::create(&dangling, true).unwrap_err();
    assert!(matches!(err, OutputError::Unresolvable { .. }), "{err:?}");
}

#[test]
fn a_device_is_written_in_place_never_replaced() {
    let null = Path::new("/dev/null");
    let mut out = Output::create(null, false).unwrap();
    assert!(out.is_in_place());
    out.file_mut().write_all(b"gone").unwrap();
    out.commit_durably().unwrap();
    let meta = std::fs::metadata(null).unwrap();
    assert!(!meta.is_file(), "/dev/null is still a device");
}

#[test]
fn a_durable_commit_lands_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kept");
    let mut out = Output::create(&path, false).unwrap();
    out.file_mut().write_all(b"synced").unwrap();
    out.commit_durably().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"synced");
    assert_eq!(names(dir.path()), ["kept"]);
}

#[test]
fn an_unwritable_directory_is_named_by_the_path_given() {
    let path = Path::new("/nonexistent-landing-dir/out");
    let err = Output::create(path, true).unwrap_err();
    let text = err.to_string();
    assert_eq!(text, "writing /nonexistent-landing-dir/out");
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(!cause.contains(".partial"), "{cause}");
}

/// Whether the file system of `dir` reserves blocks: `fallocate` is
/// accepted and the blocks show (ZFS accepts it and reserves nothing).
fn reserves(dir: &Path) -> bool {
    let path = dir.join("probe");
    let probe = std::fs::File::create(&path).unwrap();
    let flags = rustix::fs::FallocateFlags::KEEP_SIZE;
    let accepted = rustix::fs::fallocate(&probe, flags, 0, 1 << 20).is_ok();
    let shown = allocated(&path) >= 1 << 20;
    std::fs::remove_file(&path).unwrap();
    accepted && shown
}

/// Bytes allocated to the file at `path`.
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

/// `len` bytes of a pattern that starts at `from`.
fn pattern(from: u32, len: u32) -> Vec<u8> {
    (from..from + len).map(|i| (i % 251) as u8).collect()
}

/// `data` written to a new output at `path` through its writer, in
/// writes of `piece` bytes; the writer is still open.
fn written(path: &Path, data: &[u8], piece: usize) -> (Output, crate::Reserving) {
    let mut out = Output::create(path, false).unwrap();
    let mut writer = out.writer().unwrap();
    for piece in data.chunks(piece) {
        writer.write_all(piece).unwrap();
    }
    (out, writer)
}

/// Checks that `writer`, whose file at `path` (in `dir`) now holds `len`
/// bytes, has blocks reserved past them (where `dir`'s file system
/// reserves: 5 MiB written in 64 KiB writes reserve up to 10 MiB), and
/// that dropping it releases them.
fn reserved_then_released(dir: &Path, path: &Path, len: usize, writer: crate::Reserving) {
    let before = allocated(path);
    if reserves(dir) {
        assert!(
            before >= len as u64 + (1 << 20),
            "{before} bytes allocated to {len} written: nothing reserved ahead"
        );
    }
    drop(writer);
    let released = allocated(path);
    assert!(
        released < len as u64 + (256 << 10),
        "{released} bytes still allocated to {len}: the reservation was not released"
    );
}

#[test]
fn a_long_output_reserves_blocks_ahead_and_its_writer_releases_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let data = pattern(0, (5 << 20) + 123);
    let (mut out, writer) = written(&path, &data, 64 << 10);
    let temporary = dir.path().join(&names(dir.path())[0]);
    reserved_then_released(dir.path(), &temporary, data.len(), writer);
    // Stamped after the writer is gone, as decompress stamps the input's
    // time: the release (a truncation) must not come after it.
    let then = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(981_173_106);
    out.file_mut().set_modified(then).unwrap();
    out.commit().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), data);
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), then);
}

#[test]
fn an_output_under_a_mib_reserves_nothing_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let data = pattern(0, 900 << 10);
    // In 100 KiB writes, reserving from the first would have asked for
    // 1,500 KiB by the eighth.
    let (out, writer) = written(&path, &data, 100 << 10);
    let temporary = dir.path().join(&names(dir.path())[0]);
    let held = allocated(&temporary);
    assert!(
        held <= data.len() as u64 + (64 << 10),
        "{held} bytes allocated to {} written: reserved before 1 MiB",
        data.len()
    );
    drop(writer);
    out.commit().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), data);
}

#[test]
fn writers_one_after_another_append_and_each_releases_its_reservation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let (first, second) = (pattern(0, 3 << 20), pattern(7, (2 << 20) + 5));
    let mut out = Output::create(&path, false).unwrap();
    for part in [&first, &second] {
        let mut writer = out.writer().unwrap();
        for piece in part.chunks(1 << 20) {
            writer.write_all(piece).unwrap();
        }
    }
    out.commit().unwrap();
    let whole = [first, second].concat();
    assert_eq!(std::fs::read(&path).unwrap(), whole);
    assert!(allocated(&path) < whole.len() as u64 + (256 << 10));
}

/// `data` written in 64 KiB writes through [`crate::Reserving::shared`]
/// over a file opened as a shell opens a redirected standard output:
/// `out` in `dir`, holding `head`, at its end, appending or not. The
/// writer is still open.
fn shared_written(
    dir: &Path,
    head: &[u8],
    append: bool,
    data: &[u8],
) -> (PathBuf, crate::Reserving) {
    let path = dir.join("out");
    std::fs::write(&path, head).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .append(append)
        .open(&path)
        .unwrap();
    std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0)).unwrap();
    let mut writer = crate::Reserving::shared(file);
    for piece in data.chunks(64 << 10) {
        writer.write_all(piece).unwrap();
    }
    (path, writer)
}

#[test]
fn a_shared_file_is_reserved_ahead_and_released_where_it_ends_at_its_writes() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(3, (5 << 20) + 11);
    let (path, writer) = shared_written(dir.path(), b"head\n", false, &data);
    reserved_then_released(dir.path(), &path, 5 + data.len(), writer);
    let whole = [&b"head\n"[..], &data].concat();
    assert!(
        std::fs::read(&path).unwrap() == whole,
        "the file is not head and data"
    );
}

#[test]
fn a_shared_file_written_past_by_another_is_not_cut() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(0, 3 << 20);
    let (path, writer) = shared_written(dir.path(), b"", false, &data);
    // Another open of the file writes past this writer's end while it is
    // still open (its reservation reaches past there).
    let mut other = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    other.write_all(b"another's tail").unwrap();
    drop(writer);
    let whole = [&data[..], b"another's tail"].concat();
    assert!(
        std::fs::read(&path).unwrap() == whole,
        "the other writer's bytes were cut"
    );
}

#[test]
fn a_file_open_for_appending_is_not_reserved() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(1, 5 << 20);
    let (path, writer) = shared_written(dir.path(), b"head\n", true, &data);
    let held = allocated(&path);
    assert!(
        held <= data.len() as u64 + (64 << 10),
        "{held} bytes allocated to {} appended: reserved while appending",
        data.len()
    );
    drop(writer);
    let whole = [&b"head\n"[..], &data].concat();
    assert!(std::fs::read(&path).unwrap() == whole);
}
