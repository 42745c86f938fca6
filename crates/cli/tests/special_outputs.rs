//! Output paths that are not regular files (`-o /dev/null`, a named pipe)
//! are written in place. Renaming a finished temporary file over them, as
//! regular outputs are, would replace the node: run as root, `-o /dev/null`
//! turned the machine's /dev/null into a regular file. A FIFO stands in for
//! the device here, so the test cannot break the machine it runs on.

mod interop;

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use interop::{listing, ok, perfkit};

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success(), "mkfifo {}", path.display());
}

/// A temporary directory holding `in.txt` with `data`, and a FIFO
/// `out.fifo`: (the directory, the input, the FIFO).
fn fifo_fixture(data: &[u8]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.txt");
    std::fs::write(&input, data).unwrap();
    let fifo = d.path().join("out.fifo");
    mkfifo(&fifo);
    (d, input, fifo)
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
    let data: Vec<u8> = (0..50_000u32)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect();
    let (d, input, fifo) = fifo_fixture(&data);
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
    assert_eq!(listing(d.path()), ["in.txt", "out.fifo"]);
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

/// `-o LINK` where LINK is a symlink to a FIFO (as `/dev/stdout` is a
/// symlink to `/proc/self/fd/1`, a pipe under `| cat`): written through,
/// in place, and the link is still a link afterwards.
#[test]
fn compress_through_a_symlink_to_a_fifo_keeps_the_link() {
    let data = b"through a link to a pipe\n".repeat(2000);
    let (d, input, fifo) = fifo_fixture(&data);
    let link = d.path().join("out.link");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let frame = through_fifo(
        &fifo,
        &[
            "compress".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            link.as_os_str(),
        ],
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced"
    );
    assert_eq!(std::fs::read_link(&link).unwrap(), fifo);
    assert_eq!(zstdkit::decompress(&frame).unwrap(), data);
}

/// A symlink to a regular file: the file it names gets the data (through a
/// temporary file beside it), and the link itself is never replaced.
#[test]
fn outputs_through_a_symlink_to_a_file_keep_the_link() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.txt");
    let data = b"through a link to a file\n".repeat(2000);
    std::fs::write(&input, &data).unwrap();
    let real = d.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let links = d.path().join("links");
    std::fs::create_dir(&links).unwrap();
    let is_link = |p: &Path| {
        std::fs::symlink_metadata(p)
            .unwrap()
            .file_type()
            .is_symlink()
    };

    // compress -f -o LINK
    let target = real.join("out.zst");
    std::fs::write(&target, b"old").unwrap();
    let link = links.join("out.zst");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    ok(perfkit()
        .args(["compress", "-f", "-o"])
        .arg(&link)
        .arg(&input));
    assert!(is_link(&link), "compress replaced the link");
    assert_eq!(
        zstdkit::decompress(&std::fs::read(&target).unwrap()).unwrap(),
        data
    );
    // Without -f an existing file behind the link is refused, untouched.
    let out = perfkit()
        .args(["compress", "-o"])
        .arg(&link)
        .arg(&input)
        .output()
        .unwrap();
    assert!(!out.status.success());
    // zstd's question, answered by the end of input (stdin is empty).
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("already exists; overwrite (y/n) ? Not overwritten")
    );
    assert!(is_link(&link));

    // zip LINK PATH
    let target = real.join("out.zip");
    // An existing archive (an empty one: just the end record), which zip
    // updates; a non-ZIP file there would be refused.
    let mut empty_zip = b"PK\x05\x06".to_vec();
    empty_zip.resize(22, 0);
    std::fs::write(&target, &empty_zip).unwrap();
    let link = links.join("out.zip");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    ok(perfkit().arg("zip").arg(&link).arg(&input));
    assert!(is_link(&link), "zip replaced the link");
    let zip = std::fs::read(&target).unwrap();
    let a = zipstream::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
    assert_eq!(a.entries().len(), 1);

    // --hlog LINK
    let target = real.join("out.hlog");
    std::fs::write(&target, b"old").unwrap();
    let link = links.join("out.hlog");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    ok(perfkit()
        .args([
            "bench",
            "--only",
            "zstd",
            "--recipes",
            "fast",
            "--zstd-time",
            "5ms",
            "--heartbeat",
            "50ms",
            "--hlog",
        ])
        .arg(&link));
    assert!(is_link(&link), "--hlog replaced the link");
    let hlog = std::fs::read_to_string(&target).unwrap();
    assert!(hlog.starts_with('#'), "{hlog}");

    // Nothing but the links and the files they name was left behind.
    for dir in [&real, &links] {
        assert_eq!(listing(dir), ["out.hlog", "out.zip", "out.zst"], "{dir:?}");
    }
}

/// `--rm` deletes an input only once a regular file holds its data: after
/// writing to a FIFO (or `-o /dev/null`) the data is gone, so the input
/// stays, as it does with stdout.
#[test]
fn rm_keeps_the_input_when_the_output_is_a_fifo() {
    let data = b"keep me\n".repeat(5000);
    let (d, input, fifo) = fifo_fixture(&data);
    let frame = through_fifo(
        &fifo,
        &[
            "compress".as_ref(),
            "--rm".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            fifo.as_os_str(),
        ],
    );
    assert_eq!(zstdkit::decompress(&frame).unwrap(), data);
    assert_eq!(
        std::fs::read(&input).expect("--rm deleted the input after writing to a FIFO"),
        data
    );
    // To a regular file, --rm still removes it.
    let out = d.path().join("out.zst");
    ok(perfkit()
        .args(["compress", "--rm", "-o"])
        .arg(&out)
        .arg(&input));
    assert!(!input.exists());
    assert_eq!(
        zstdkit::decompress(&std::fs::read(&out).unwrap()).unwrap(),
        data
    );
}

/// A FIFO's length is not its content's length: pledging it as the frame's
/// source size made `compress -c <(echo hello)` fail ("Src size is
/// incorrect"). The output must decode to what went into the FIFO.
#[test]
fn compress_reads_a_fifo_input_without_pledging_its_size() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("in.fifo");
    mkfifo(&fifo);
    let data = b"hello through a pipe\n".repeat(3000);
    let (path, payload) = (fifo.clone(), data.clone());
    let writer = std::thread::spawn(move || std::fs::write(path, payload).unwrap());
    let out = perfkit()
        .args(["compress", "-c"])
        .arg(&fifo)
        .output()
        .unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(zstdkit::decompress(&out.stdout).unwrap(), data);
}

/// A device node as input: zstd refuses it when the output name would be
/// derived from it ("is not a regular file -- ignored"), and `--rm` never
/// removes it (as root, `compress --rm /dev/null` deleted /dev/null). A
/// private copy of /dev/null's node stands in for the real one.
#[test]
fn compress_refuses_a_device_input_and_rm_never_removes_it() {
    let d = tempfile::tempdir().unwrap();
    let dev = d.path().join("null");
    let made = Command::new("mknod")
        .arg(&dev)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    // mknod needs root (CAP_MKNOD); `cargo xtask ci` runs as root.
    if !perfkit_testkit::interop::available(
        made,
        "mknod of a character device",
        "run the tests as root (CAP_MKNOD), as `cargo xtask ci` does",
    ) {
        return;
    }
    let is_dev = |p: &Path| {
        std::fs::symlink_metadata(p)
            .map(|m| m.file_type().is_char_device())
            .unwrap_or(false)
    };
    let out = perfkit()
        .args(["compress", "--rm"])
        .arg(&dev)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a regular file"), "{err}");
    assert!(is_dev(&dev), "--rm removed the device node");
    assert!(!d.path().join("null.zst").exists());
    // With -o the device is read like a pipe, and still kept.
    let zst = d.path().join("out.zst");
    ok(perfkit()
        .args(["compress", "--rm", "-o"])
        .arg(&zst)
        .arg(&dev));
    assert!(is_dev(&dev), "--rm removed the device node");
    assert_eq!(
        zstdkit::decompress(&std::fs::read(&zst).unwrap()).unwrap(),
        b""
    );
}

/// zstd's `-q`: the note that --rm kept a non-regular input is not printed
/// (before, `-q` was an unknown flag, exit 2), and the FIFO is still kept.
#[test]
fn quiet_silences_the_rm_note_and_keeps_the_fifo() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("in.fifo");
    mkfifo(&fifo);
    let data = b"quiet please\n".repeat(1000);
    let (path, payload) = (fifo.clone(), data.clone());
    // Joined only once perfkit has succeeded (and so has read the FIFO to
    // its end): joining first would hang the test if perfkit never opened it.
    let writer = std::thread::spawn(move || std::fs::write(path, payload).unwrap());
    let zst = d.path().join("out.zst");
    let out = perfkit()
        .args(["compress", "-q", "--rm", "-o"])
        .arg(&zst)
        .arg(&fifo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert_eq!(
        zstdkit::decompress(&std::fs::read(&zst).unwrap()).unwrap(),
        data
    );
    writer.join().unwrap();
}

/// `-c` into a regular file, as a shell redirects it. perfkit reserves the
/// file's blocks ahead of its writes there, as for `-o`, but the file is
/// shared with the commands around this one (the shell writes on at the
/// same offset): the reservation must neither cut what they write nor
/// pad the file, and a file open for appending gets bytes appended.
#[test]
fn stdout_redirected_to_a_file_keeps_what_others_write_around_it() {
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;
    use std::process::Stdio;
    if !interop::have("zstd", "zstd") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // Over the MiB from which writes are reserved for, and of a length
    // no write size divides.
    let text = |seed: u32| -> Vec<u8> {
        (0..(3 << 20) + 7)
            .map(|i: u32| b"abcdefghij\n"[((i / 5 + seed) % 11) as usize])
            .collect()
    };
    let (a, b) = (text(1), text(4));
    let zst = |name: &str, data: &[u8]| {
        let plain = d.path().join(name);
        std::fs::write(&plain, data).unwrap();
        ok(Command::new("zstd").args(["-q", "-f"]).arg(&plain));
        plain.with_extension("txt.zst")
    };
    let (az, bz) = (zst("a.txt", &a), zst("b.txt", &b));
    let out = d.path().join("out");
    let into = |file: &std::fs::File, zst: &Path, threads: &str| {
        let st = perfkit()
            .args(["decompress", "-q", "-c", threads])
            .arg(zst)
            .stdout(Stdio::from(file.try_clone().unwrap()))
            .status()
            .unwrap();
        assert!(st.success(), "perfkit decompress -c {}", zst.display());
    };
    // `{ perfkit -dc a.zst; echo; perfkit -dc b.zst; } > out`: one open
    // file, written in turn.
    let mut shell = std::fs::File::create(&out).unwrap();
    into(&shell, &az, "-T1");
    shell.write_all(b"between\n").unwrap();
    into(&shell, &bz, "-T2");
    shell.write_all(b"after\n").unwrap();
    let whole = [&a[..], b"between\n", &b, b"after\n"].concat();
    assert!(
        std::fs::read(&out).unwrap() == whole,
        "out is not a, b and the shell's lines"
    );
    let held = std::fs::metadata(&out).unwrap().blocks() * 512;
    assert!(
        held < whole.len() as u64 + (256 << 10),
        "{held} bytes allocated to {} written: a reservation was left",
        whole.len()
    );
    // `>> out`.
    let appending = std::fs::OpenOptions::new().append(true).open(&out).unwrap();
    into(&appending, &az, "-T2");
    let whole = [&whole[..], &a].concat();
    assert!(
        std::fs::read(&out).unwrap() == whole,
        "a was not appended whole"
    );
    // `perfkit compress -c noise > packed`: the same writer, past the MiB
    // from which it reserves (noise hardly shrinks); the real zstd reads
    // the frame back.
    let noise = perfkit_testkit::noise::noise(3 << 20, 5);
    let plain = d.path().join("noise.bin");
    std::fs::write(&plain, &noise).unwrap();
    let packed = d.path().join("packed.zst");
    let st = perfkit()
        .args(["compress", "-q", "-c"])
        .arg(&plain)
        .stdout(Stdio::from(std::fs::File::create(&packed).unwrap()))
        .status()
        .unwrap();
    assert!(st.success(), "perfkit compress -c");
    let back = ok(Command::new("zstd").args(["-q", "-d", "-c"]).arg(&packed));
    assert!(back.stdout == noise, "zstd -d does not give the noise back");
    let meta = std::fs::metadata(&packed).unwrap();
    let (len, held) = (meta.len(), meta.blocks() * 512);
    assert!(
        held < len + (256 << 10),
        "{held} bytes allocated to {len} written: a reservation was left"
    );
}
