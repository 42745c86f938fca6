use std::io::Write;
use std::path::Path;

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

/// Whether the file system of `dir` reserves blocks (`fallocate`).
fn reserves(dir: &Path) -> bool {
    let probe = std::fs::File::create(dir.join("probe")).unwrap();
    let flags = rustix::fs::FallocateFlags::KEEP_SIZE;
    let supported = rustix::fs::fallocate(&probe, flags, 0, 1 << 20).is_ok();
    std::fs::remove_file(dir.join("probe")).unwrap();
    supported
}

/// Bytes allocated to the file at `path`.
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

#[test]
fn a_long_output_reserves_blocks_ahead_and_releases_the_rest_at_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let data: Vec<u8> = (0..(5u32 << 20) + 123).map(|i| (i % 251) as u8).collect();
    let mut out = Output::create(&path, false).unwrap();
    let mut writer = out.writer().unwrap();
    for piece in data.chunks(64 << 10) {
        writer.write_all(piece).unwrap();
    }
    drop(writer);
    let temporary = dir.path().join(&names(dir.path())[0]);
    let before = allocated(&temporary);
    if reserves(dir.path()) {
        // 5 MiB written in 64 KiB writes reserve up to 10 MiB.
        assert!(
            before >= data.len() as u64 + (1 << 20),
            "{before} bytes allocated to {} written: nothing reserved ahead",
            data.len()
        );
    }
    out.commit().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), data);
    let after = allocated(&path);
    assert!(
        after < data.len() as u64 + (256 << 10),
        "{after} bytes still allocated to {}: the reservation was not released",
        data.len()
    );
}

#[test]
fn a_short_output_reserves_nothing_and_a_dropped_one_takes_its_reservation_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let mut out = Output::create(&path, false).unwrap();
    let mut writer = out.writer().unwrap();
    writer.write_all(&[7u8; 100 << 10]).unwrap();
    let temporary = dir.path().join(&names(dir.path())[0]);
    assert!(allocated(&temporary) < 200 << 10);
    writer.write_all(&vec![7u8; 4 << 20]).unwrap();
    drop(writer);
    drop(out);
    assert!(names(dir.path()).is_empty(), "the temporary stayed");
}
