//! Interoperability with real ZIP tools: Info-ZIP `unzip`/`zip`, 7-Zip
//! (`7zz`), Python `zipfile`, `pyzipper` and libarchive's `bsdtar` must accept
//! what we write and give back the original bytes, and we must read what they
//! write.
//!
//! Gated by `perfkit_testkit::interop`: every program must be installed,
//! or the test fails naming the missing ones, unless
//! `PERFKIT_SKIP_INTEROP=1` is set (then it says it is skipped).
//! Debian packages: unzip zip 7zip libarchive-tools python3 python3-pip;
//! pip package: pyzipper.

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use perfkit_testkit::interop;
use zipstream::*;

use perfkit_testkit::noise::noise;

mod support;

type Files = BTreeMap<String, Vec<u8>>;

/// Whether every program the tests here need is installed; fails the test
/// naming each missing one, or skips under `PERFKIT_SKIP_INTEROP=1`.
fn enabled() -> bool {
    let mut found = true;
    for (program, probe, package) in [
        ("unzip", "-v", "unzip"),
        ("zip", "-v", "zip"),
        ("7zz", "i", "7zip"),
        ("bsdtar", "--version", "libarchive-tools"),
        ("python3", "--version", "python3"),
    ] {
        // Every program is probed, so a failure names the first missing
        // one and a skip lists them all.
        found &= interop::have(program, probe, &format!("apt-get install {package}"));
    }
    found && interop::have_python_module("pyzipper", "python3 -m pip install pyzipper")
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn run_stdin(cmd: &mut Command, input: &Path) {
    let f = std::fs::File::open(input).unwrap();
    let out = cmd.stdin(f).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} < {}: {}",
        input.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Reads every regular file under `dir` into a map keyed by relative path.
fn tree(dir: &Path) -> Files {
    fn walk(base: &Path, dir: &Path, out: &mut Files) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let ft = std::fs::symlink_metadata(&p).unwrap().file_type();
            if ft.is_dir() {
                walk(base, &p, out);
            } else if ft.is_file() {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut m = Files::new();
    walk(dir, dir, &mut m);
    m
}

fn text(n: usize, seed: usize) -> Vec<u8> {
    let words = [
        "lorem ",
        "ipsum ",
        "dolor ",
        "sit\n",
        "amet, ",
        "consectetur ",
    ];
    let mut v = Vec::with_capacity(n);
    let mut i = seed;
    while v.len() < n {
        v.extend_from_slice(words[(i * 7 + i / 5) % words.len()].as_bytes());
        i += 1;
    }
    v.truncate(n);
    v
}

fn sample_files() -> Files {
    let mut m = Files::new();
    m.insert("small.txt".into(), b"hello interop\n".to_vec());
    m.insert("empty".into(), Vec::new());
    m.insert("dir/text.txt".into(), text(400_000, 1));
    m.insert("dir/noise.bin".into(), noise(200_000, 1));
    m.insert("ünïcødé-名前.txt".into(), text(70_000, 3));
    m
}

/// Which programs must accept an archive.
#[derive(Clone, Copy)]
struct Checks {
    password: Option<&'static str>,
}

fn check_with_tools(zip: &Path, files: &Files, c: Checks, tmp: &Path) {
    let pw = c.password;
    // unzip -t, then extraction compared with the originals. Info-ZIP unzip
    // 6.0 has no WinZip AES support at all (it skips such entries with "need
    // PK compat. v5.1"), so AES archives are checked by the other four.
    if pw.is_none() {
        run(Command::new("unzip").arg("-t").arg(zip));
        let d = tmp.join("unzip");
        run(Command::new("unzip").arg("-q").arg(zip).arg("-d").arg(&d));
        assert_eq!(&tree(&d), files, "unzip extraction differs");
    }
    // 7-Zip.
    let pflag = format!("-p{}", pw.unwrap_or(""));
    run(Command::new("7zz").args(["t", &pflag]).arg(zip));
    let d = tmp.join("7z");
    run(Command::new("7zz")
        .args(["x", "-y", &pflag])
        .arg(format!("-o{}", d.display()))
        .arg(zip));
    assert_eq!(&tree(&d), files, "7zz extraction differs");
    // Python zipfile (plain) or pyzipper (AES).
    let d = tmp.join("py");
    let module = if pw.is_some() { "pyzipper" } else { "zipfile" };
    let script = format!(
        "import sys,{module} as z\nwith (z.AESZipFile if '{module}'=='pyzipper' else z.ZipFile)(sys.argv[1]) as f:\n    \
         f.setpassword(sys.argv[3].encode()) if sys.argv[3] else None\n    assert f.testzip() is None\n    f.extractall(sys.argv[2])\n"
    );
    run(Command::new("python3")
        .args(["-c", &script])
        .arg(zip)
        .arg(&d)
        .arg(pw.unwrap_or("")));
    assert_eq!(&tree(&d), files, "python {module} extraction differs");
    // bsdtar: list the file, extract from stdin (streaming), AES included.
    let mut list = Command::new("bsdtar");
    let mut x = Command::new("bsdtar");
    if let Some(p) = pw {
        list.args(["--passphrase", p]);
        x.args(["--passphrase", p]);
    }
    run(list.arg("-tf").arg(zip));
    let d = tmp.join("bsdtar");
    std::fs::create_dir_all(&d).unwrap();
    run_stdin(x.arg("-xf").arg("-").arg("-C").arg(&d), zip);
    assert_eq!(&tree(&d), files, "bsdtar -xf - extraction differs");
}

fn write_archive(mode: &str, files: &Files, aes: Option<AesStrength>) -> Vec<u8> {
    let opts = |name: &str| {
        let mut o = EntryOptions::file(name).mtime(1_700_000_000);
        if let Some(s) = aes {
            o = o.encrypt(s, "pässword");
        }
        o
    };
    match mode {
        "stream" => {
            let mut w = ZipWriter::new(Vec::new());
            w.add_directory(EntryOptions::directory("dir")).unwrap();
            for (n, d) in files {
                w.start_entry(opts(n)).unwrap();
                for c in d.chunks(10_000) {
                    w.write_data(c).unwrap();
                }
                w.finish_entry().unwrap();
            }
            w.finish().unwrap()
        }
        "seekable" => {
            let mut w = ZipWriter::new_seekable(Cursor::new(Vec::new())).unwrap();
            for (n, d) in files {
                w.add_bytes(opts(n), d).unwrap();
            }
            w.finish().unwrap().into_inner()
        }
        "async" => tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(async {
                let mut w = AsyncZipWriter::new(Vec::new());
                for (n, d) in files {
                    w.add_reader(opts(n), &mut &d[..]).await.unwrap();
                }
                w.finish().await.unwrap()
            }),
        "parallel" => {
            let mut o = ParallelOptions::new(2);
            o.block_size = 128 * 1024;
            let mut w = ParallelZipWriter::new(ZipWriter::new(Vec::new()), o);
            for (n, d) in files {
                w.add_bytes(opts(n), d).unwrap();
            }
            w.finish().unwrap()
        }
        _ => unreachable!(),
    }
}

#[test]
fn tools_read_our_archives() {
    if !enabled() {
        return;
    }
    let files = sample_files();
    for mode in ["stream", "seekable", "async", "parallel"] {
        for aes in [None, Some(AesStrength::Aes128), Some(AesStrength::Aes256)] {
            let tmp = tempfile::tempdir().unwrap();
            let zip = tmp.path().join("t.zip");
            std::fs::write(&zip, write_archive(mode, &files, aes)).unwrap();
            let pw = aes.map(|_| "pässword");
            eprintln!("checking {mode} aes={aes:?}");
            check_with_tools(&zip, &files, Checks { password: pw }, tmp.path());
        }
    }
}

#[test]
fn tools_read_70000_entries() {
    if !enabled() {
        return;
    }
    let mut w = ZipWriter::new(Vec::new());
    for i in 0..70_000u32 {
        w.add_bytes(
            EntryOptions::file(format!("e/{i}")).mtime(1_700_000_000),
            i.to_string().as_bytes(),
        )
        .unwrap();
    }
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("many.zip");
    std::fs::write(&zip, w.finish().unwrap()).unwrap();
    run(Command::new("unzip").arg("-tq").arg(&zip));
    run(Command::new("7zz").arg("t").arg(&zip));
    let n = run(Command::new("python3").args(["-c", "import sys,zipfile;z=zipfile.ZipFile(sys.argv[1]);assert z.testzip() is None;print(len(z.infolist()))"]).arg(&zip));
    assert_eq!(String::from_utf8_lossy(&n).trim(), "70000");
    let list = run(Command::new("bsdtar").arg("-tf").arg(&zip));
    assert_eq!(list.iter().filter(|&&b| b == b'\n').count(), 70_000);
    let a = ZipArchive::new(std::fs::File::open(&zip).unwrap()).unwrap();
    assert_eq!(a.entries().len(), 70_000);
}

/// Reads an archive with both of our readers into a name → bytes map (files only).
fn read_ours(zip: &Path, pw: Option<&[u8]>) -> Files {
    let mut a = ZipArchive::new(std::fs::File::open(zip).unwrap()).unwrap();
    let mut m = Files::new();
    for i in 0..a.entries().len() {
        let e = a.entries()[i].clone();
        if e.kind() == EntryKind::File {
            let pw = if e.encrypted { pw } else { None };
            m.insert(
                e.name.clone(),
                a.read_to_vec(i, pw)
                    .unwrap_or_else(|err| panic!("{}: {err}", zip.display())),
            );
        }
    }
    let bytes = std::fs::read(zip).unwrap();
    let mut r = ZipStreamReader::new(&bytes[..]);
    r.set_password(pw);
    let mut s = Files::new();
    while let Some(e) = r.next_entry().unwrap() {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut r, &mut v)
            .unwrap_or_else(|err| panic!("{} {}: {err}", zip.display(), e.name));
        if e.kind() == EntryKind::File {
            s.insert(e.name, v);
        }
    }
    assert_eq!(
        m,
        s,
        "{}: streaming and random-access readers disagree",
        zip.display()
    );
    m
}

fn populate(dir: &Path, files: &Files) {
    for (n, d) in files {
        let p = dir.join(n);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, d).unwrap();
    }
}

#[test]
fn we_read_tools_archives() {
    if !enabled() {
        return;
    }
    let files = sample_files();
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    populate(&src, &files);
    let names: Vec<&String> = files.keys().collect();
    let out = |n: &str| -> PathBuf { tmp.path().join(n) };

    // Info-ZIP from files, and from stdin (streamed, ZIP64 descriptor layout).
    run(Command::new("zip")
        .current_dir(&src)
        .arg("-q")
        .arg(out("infozip.zip"))
        .args(&names));
    assert_eq!(read_ours(&out("infozip.zip"), None), files);
    let stdin_zip = out("infozip-stdin.zip");
    let f = std::fs::File::create(&stdin_zip).unwrap();
    let st = Command::new("zip")
        .args(["-q", "-", "-"])
        .stdin(std::fs::File::open(src.join("dir/text.txt")).unwrap())
        .stdout(f)
        .status()
        .unwrap();
    assert!(st.success());
    let got = read_ours(&stdin_zip, None);
    assert_eq!(got.get("-").unwrap(), &files["dir/text.txt"]);

    // 7-Zip, AES-256 with non-ASCII names.
    run(Command::new("7zz")
        .current_dir(&src)
        .args(["a", "-tzip", "-mem=AES256", "-psecret"])
        .arg(out("7z-aes.zip"))
        .args(&names));
    assert_eq!(read_ours(&out("7z-aes.zip"), Some(b"secret")), files);
    run(Command::new("7zz")
        .current_dir(&src)
        .args(["a", "-tzip"])
        .arg(out("7z.zip"))
        .args(&names));
    assert_eq!(read_ours(&out("7z.zip"), None), files);

    // Python, forced ZIP64 on every entry.
    let py = "import sys,os,zipfile\nsrc=sys.argv[2]\nwith zipfile.ZipFile(sys.argv[1],'w',zipfile.ZIP_DEFLATED) as z:\n    for n in sys.argv[3:]:\n        with z.open(n,'w',force_zip64=True) as f:\n            f.write(open(os.path.join(src,n),'rb').read())\n";
    run(Command::new("python3")
        .args(["-c", py])
        .arg(out("py64.zip"))
        .arg(&src)
        .args(&names));
    assert_eq!(read_ours(&out("py64.zip"), None), files);

    // pyzipper AES-256 (AE-2) and AES-128.
    for bits in [128, 256] {
        let py = format!(
            "import sys,os,pyzipper\nsrc=sys.argv[2]\nwith pyzipper.AESZipFile(sys.argv[1],'w',compression=pyzipper.ZIP_DEFLATED,encryption=pyzipper.WZ_AES) as z:\n    z.setpassword(b'secret')\n    z.setencryption(pyzipper.WZ_AES,nbits={bits})\n    for n in sys.argv[3:]:\n        z.write(os.path.join(src,n),n)\n"
        );
        let p = out(&format!("pyzipper{bits}.zip"));
        run(Command::new("python3")
            .args(["-c", &py])
            .arg(&p)
            .arg(&src)
            .args(&names));
        assert_eq!(read_ours(&p, Some(b"secret")), files);
    }

    // bsdtar writing zip (streams with data descriptors).
    run(Command::new("bsdtar")
        .current_dir(&src)
        .args(["--format", "zip", "-cf"])
        .arg(out("bsdtar.zip"))
        .args(&names));
    assert_eq!(read_ours(&out("bsdtar.zip"), None), files);
}

/// A file writer that leaves holes for blocks of zeros, so a 4 GiB stored
/// entry of zeros costs a few kilobytes of disk instead of 4 GiB: CI
/// machines have little free space, and one such archive once filled it.
/// Readers see the holes as zeros, so the archive's bytes are unchanged.
struct Sparse {
    file: std::fs::File,
    pos: u64,
    end: u64,
}

impl std::io::Write for Sparse {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use std::io::Seek;
        // Compared as slices (one memcmp per 4 KiB), not byte by byte: this
        // test file is built unoptimised, and a byte loop over 4 GiB took
        // about ten seconds.
        const ZEROS: [u8; 4096] = [0; 4096];
        if buf.chunks(ZEROS.len()).all(|c| c == &ZEROS[..c.len()]) {
            self.file
                .seek(std::io::SeekFrom::Current(buf.len() as i64))?;
        } else {
            self.file.write_all(buf)?;
        }
        self.pos += buf.len() as u64;
        self.end = self.end.max(self.pos);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        // A trailing run of zeros was only seeked over: give the file its
        // full length.
        if self.file.metadata()?.len() < self.end {
            self.file.set_len(self.end)?;
        }
        Ok(())
    }
}

impl std::io::Seek for Sparse {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.pos = self.file.seek(to)?;
        Ok(self.pos)
    }
}

/// A >4 GiB entry streamed with unknown size (deflated), and a seekable
/// archive over 4 GiB (stored entry of zeros written sparsely, then an entry
/// whose offset is past 4 GiB).
#[test]
fn tools_read_zip64_archives() {
    if !enabled() {
        return;
    }
    const BIG: u64 = (4 << 30) + 123_457;
    let text_block = text(16 * 1024, 5);
    let zero_block = vec![0u8; 64 * 1024];
    let write = |w: &mut dyn std::io::Write, block: &[u8]| {
        let mut left = BIG;
        while left > 0 {
            let n = left.min(block.len() as u64) as usize;
            w.write_all(&block[..n]).unwrap();
            left -= n as u64;
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    for mode in ["stream", "seekable"] {
        let zip = tmp.path().join(format!("{mode}64.zip"));
        let file = std::fs::File::create(&zip).unwrap();
        // Streamed: deflated (entry > 4 GiB). Seekable: stored, so the archive
        // itself passes 4 GiB and the next entry's offset needs ZIP64 too.
        let big = EntryOptions::file("big.txt").mtime(1_700_000_000).level(1);
        let big = if mode == "stream" {
            big
        } else {
            big.method(Method::Stored)
        };
        let small = EntryOptions::file("after.txt").mtime(1_700_000_000);
        if mode == "stream" {
            let mut w = ZipWriter::new(std::io::BufWriter::new(file));
            w.start_entry(big).unwrap();
            write(&mut w, &text_block);
            w.finish_entry().unwrap();
            w.add_bytes(small, b"after the big one").unwrap();
            w.finish().unwrap();
        } else {
            let sparse = Sparse {
                file,
                pos: 0,
                end: 0,
            };
            let mut w = ZipWriter::new_seekable(std::io::BufWriter::new(sparse)).unwrap();
            w.start_entry(big).unwrap();
            write(&mut w, &zero_block);
            w.finish_entry().unwrap();
            w.add_bytes(small, b"after the big one").unwrap();
            w.finish().unwrap();
        }
        let meta = std::fs::metadata(&zip).unwrap();
        eprintln!(
            "checking {mode} ZIP64 ({} bytes, {} on disk)",
            meta.len(),
            std::os::unix::fs::MetadataExt::blocks(&meta) * 512
        );
        let a = ZipArchive::new(std::fs::File::open(&zip).unwrap()).unwrap();
        assert_eq!(a.entries()[0].size, BIG);
        if mode == "seekable" {
            assert!(a.entries()[1].header_offset > u64::from(u32::MAX));
        }
        // 7-Zip tests every entry of both archives. Info-ZIP and Python test
        // all of the streamed one (its ZIP64 data descriptor is only met by
        // reading the entry through); in the seekable one they read the
        // entry past 4 GiB, which only its ZIP64 offset reaches, and leave
        // the 4 GiB of stored zeros to 7-Zip and to bsdtar's streaming read
        // below (`unzip -t` of them took 28 s).
        run(Command::new("7zz").arg("t").arg(&zip));
        if mode == "stream" {
            run(Command::new("unzip").arg("-tq").arg(&zip));
        } else {
            let after = run(Command::new("unzip").arg("-p").arg(&zip).arg("after.txt"));
            assert_eq!(after, b"after the big one");
        }
        let read = if mode == "stream" {
            "assert z.testzip() is None"
        } else {
            "assert z.read('after.txt')==b'after the big one'"
        };
        run(Command::new("python3")
            .arg("-c")
            .arg(format!(
                "import sys,zipfile\n\
                 z=zipfile.ZipFile(sys.argv[1])\n\
                 assert z.getinfo('big.txt').file_size=={BIG}\n\
                 {read}"
            ))
            .arg(&zip));
        let listing = run(Command::new("bsdtar").arg("-tvf").arg(&zip));
        assert!(String::from_utf8_lossy(&listing).contains(&BIG.to_string()));
        // Streaming extraction from stdin: the big entry's bytes are counted.
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "bsdtar -xOf - big.txt < '{}' | wc -c",
                zip.display()
            ))
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), BIG.to_string());
        std::fs::remove_file(&zip).unwrap();
    }
}

/// zstd (method 93) entries: 7-Zip and libarchive decode them (Info-ZIP
/// unzip 6.0 and Python's zipfile before 3.14 have no zstd).
#[test]
fn tools_read_zstd_entries() {
    if !enabled() {
        return;
    }
    let files = sample_files();
    let mut w = ZipWriter::new(Vec::new());
    for (n, d) in &files {
        w.add_bytes(
            EntryOptions::file(n)
                .mtime(1_700_000_000)
                .method(Method::Zstd)
                .level(3),
            d,
        )
        .unwrap();
    }
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("z.zip");
    std::fs::write(&zip, w.finish().unwrap()).unwrap();
    run(Command::new("7zz").arg("t").arg(&zip));
    let d = tmp.path().join("7z");
    run(Command::new("7zz")
        .args(["x", "-y"])
        .arg(format!("-o{}", d.display()))
        .arg(&zip));
    assert_eq!(tree(&d), files, "7zz zstd extraction differs");
    let d = tmp.path().join("bsdtar");
    std::fs::create_dir_all(&d).unwrap();
    run_stdin(
        Command::new("bsdtar").arg("-xf").arg("-").arg("-C").arg(&d),
        &zip,
    );
    assert_eq!(tree(&d), files, "bsdtar zstd extraction differs");
}

/// zstd entries whose data the `zstd` CLI made (no ZIP tool here writes
/// zstd entries, so the archive around the frame is built by hand, and
/// 7-Zip and libarchive vouch for it): both of our readers give back the
/// original bytes, with and without a checksum and a declared size.
#[test]
fn we_read_zstd_cli_frames() {
    let zstd = interop::have("zstd", "--version", "apt-get install zstd");
    if !enabled() || !zstd {
        return;
    }
    let content = text(300_000, 5);
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.txt");
    std::fs::write(&input, &content).unwrap();
    let zip = tmp.path().join("cli.zip");
    for args in [&["-3"][..], &["-19", "--no-check", "--no-content-size"]] {
        let frame = run(Command::new("zstd")
            .args(["-q", "-c"])
            .args(args)
            .arg(&input));
        std::fs::write(
            &zip,
            support::one_entry_zip("cli.txt", 93, &frame, &content),
        )
        .unwrap();
        run(Command::new("7zz").arg("t").arg(&zip));
        let by_bsdtar = run(Command::new("bsdtar").arg("-xOf").arg(&zip));
        assert!(by_bsdtar == content, "bsdtar, zstd {args:?}");
        let ours = read_ours(&zip, None);
        assert!(ours["cli.txt"] == content, "zstd {args:?}");
    }
}
