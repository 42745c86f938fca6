//! Output paths that are not regular files (`-o /dev/null`, a named pipe)
//! are written in place. Renaming a finished temporary file over them, as
//! regular outputs are, would replace the node: run as root, `-o /dev/null`
//! turned the machine's /dev/null into a regular file. A FIFO stands in for
//! the device here, so the test cannot break the machine it runs on.

mod interop;

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::Command;

use interop::{ok, perfkit};

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success(), "mkfifo {}", path.display());
}

/// Runs `args` (which write to `fifo`) while a thread drains the FIFO;
/// returns what came through. Checks the FIFO survived before anything
/// else, and never waits on the reader for ever: if perfkit failed or
/// renamed a file over the FIFO, the reader may block in open(2) for good.
fn through_fifo(fifo: &Path, args: &[&std::ffi::OsStr]) -> Vec<u8> {
    let path = fifo.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut v = Vec::new();
        std::fs::File::open(path)
            .unwrap()
            .read_to_end(&mut v)
            .unwrap();
        let _ = tx.send(v);
    });
    let out = perfkit().args(args).output().unwrap();
    assert!(
        std::fs::symlink_metadata(fifo)
            .unwrap()
            .file_type()
            .is_fifo(),
        "{} is no longer a FIFO",
        fifo.display()
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    rx.recv_timeout(std::time::Duration::from_secs(30))
        .expect("the reader saw the end of the output")
}

#[test]
fn compress_to_a_fifo_writes_through_it_and_keeps_it() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.txt");
    let data: Vec<u8> = (0..50_000u32)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect();
    std::fs::write(&input, &data).unwrap();
    let fifo = d.path().join("out.fifo");
    mkfifo(&fifo);
    let frame = through_fifo(
        &fifo,
        &[
            "compress".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            fifo.as_os_str(),
        ],
    );
    assert_eq!(zstdkit::decompress(&frame).unwrap(), data);
    // No temporary file was left beside it either.
    let names: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn zip_to_a_fifo_streams_a_valid_archive_and_keeps_it() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("a.txt");
    std::fs::write(&input, b"hello through a pipe\n".repeat(1000)).unwrap();
    let fifo = d.path().join("out.zip");
    mkfifo(&fifo);
    let zip = through_fifo(
        &fifo,
        &["zip".as_ref(), fifo.as_os_str(), input.as_os_str()],
    );
    let mut a = zipstream::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
    assert_eq!(a.entries().len(), 1);
    let mut r = a.open(0, None).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = r.read_data(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    assert_eq!(out, b"hello through a pipe\n".repeat(1000));
}

#[test]
fn betree_search_output_to_a_fifo_keeps_it() {
    let d = tempfile::tempdir().unwrap();
    let exprs = d.path().join("x.txt");
    let events = d.path().join("e.txt");
    ok(perfkit()
        .args([
            "betree",
            "gen-exprs",
            "--params",
            "8",
            "--count",
            "20",
            "--seed",
            "3",
            "-o",
        ])
        .arg(&exprs));
    ok(perfkit()
        .args([
            "betree",
            "gen-events",
            "--params",
            "8",
            "--count",
            "5",
            "-o",
        ])
        .arg(&events));
    let fifo = d.path().join("out.fifo");
    mkfifo(&fifo);
    let got = through_fifo(
        &fifo,
        &[
            "betree".as_ref(),
            "search".as_ref(),
            "--exprs".as_ref(),
            exprs.as_os_str(),
            "--events".as_ref(),
            events.as_os_str(),
            "-o".as_ref(),
            fifo.as_os_str(),
        ],
    );
    assert_eq!(got.iter().filter(|&&b| b == b'\n').count(), 5);
}
