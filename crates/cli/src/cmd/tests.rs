use super::*;

#[test]
fn one_line_prints_each_cause_once() {
    let io = io::Error::from_raw_os_error(libc::EEXIST);
    let err = anyhow::Error::from(zipstream::Error::Io(io)).context("extracting a.txt");
    assert_eq!(one_line(&err), "extracting a.txt: I/O error: File exists");
    let err = anyhow::anyhow!("inner").context("middle").context("outer");
    assert_eq!(one_line(&err), "outer: middle: inner");
}

#[test]
fn a_broken_pipe_inside_a_serde_json_error_is_recognised() {
    let pipe = io::Error::from(io::ErrorKind::BrokenPipe);
    let err = anyhow::Error::from(serde_json::Error::io(pipe)).context("writing JSON");
    assert!(is_broken_pipe(&err));
    let other = io::Error::from(io::ErrorKind::PermissionDenied);
    let err = anyhow::Error::from(serde_json::Error::io(other));
    assert!(!is_broken_pipe(&err));
}
