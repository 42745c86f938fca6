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
