//! `zip -d`, `-u` and `-f` keep the entries they do not touch as Info-ZIP
//! does: copied as they are stored (headers, extra fields, CRC, compressed
//! or encrypted bytes), never decoded and compressed again. Checked
//! against Info-ZIP's zip 3.0 itself (`-d` gives the same bytes) and with
//! Python's `zipfile` reading the raw entries as an independent oracle.

mod interop;

use interop::perfkit;
use std::path::Path;
use std::process::{Command, Stdio};

fn have_tools() -> bool {
    perfkit_testkit::interop::have("zip", "-v", "apt-get install zip")
        && perfkit_testkit::interop::have("unzip", "-v", "apt-get install unzip")
        && perfkit_testkit::interop::have("python3", "--version", "apt-get install python3")
}

fn run(cmd: &mut Command, dir: &Path) {
    let out = cmd.current_dir(dir).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An archive Info-ZIP made with what users' archives hold: deflated
/// text, incompressible bytes, a ZipCrypto entry (`-P`), an entry from
/// stdin (a data descriptor after its data), a directory and a link.
fn info_zip_archive(d: &Path) {
    let lines: String = (1..20_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(d.join("a.txt"), lines).unwrap();
    std::fs::write(d.join("b.bin"), perfkit_testkit::noise::noise(50_000, 1)).unwrap();
    std::fs::write(d.join("c.txt"), "secret text\n").unwrap();
    std::fs::create_dir(d.join("dir")).unwrap();
    std::fs::write(d.join("dir/e.txt"), "in a folder\n").unwrap();
    std::os::unix::fs::symlink("a.txt", d.join("link")).unwrap();
    run(
        Command::new("zip").args([
            "-q", "-y", "-r", "orig.zip", "a.txt", "b.bin", "dir", "link",
        ]),
        d,
    );
    run(
        Command::new("zip").args(["-q", "-P", "secret", "orig.zip", "c.txt"]),
        d,
    );
    let mut stdin = Command::new("zip")
        .args(["-q", "orig.zip", "-"])
        .current_dir(d)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(stdin.stdin.as_mut().unwrap(), b"from stdin\n").unwrap();
    drop(stdin.stdin.take());
    assert!(stdin.wait().unwrap().success());
}

#[test]
fn delete_writes_the_bytes_info_zip_writes() {
    if !have_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    info_zip_archive(d);
    for victim in ["b.bin", "a.txt", "-"] {
        std::fs::copy(d.join("orig.zip"), d.join("ours.zip")).unwrap();
        std::fs::copy(d.join("orig.zip"), d.join("theirs.zip")).unwrap();
        run(perfkit().args(["zip", "-q", "-d", "ours.zip", victim]), d);
        run(
            Command::new("zip").args(["-q", "-d", "theirs.zip", victim]),
            d,
        );
        assert!(
            std::fs::read(d.join("ours.zip")).unwrap()
                == std::fs::read(d.join("theirs.zip")).unwrap(),
            "zip -d {victim}: the archives differ"
        );
        run(
            Command::new("unzip").args(["-tq", "-P", "secret", "ours.zip"]),
            d,
        );
    }
}

/// For every entry of `before` but `changed`, what Python's zipfile reads
/// of it in `after` is what it reads in `before`: the local header and
/// the compressed bytes (read raw at its offset), the central record's
/// extra field, CRC, method, flags, attributes and versions.
const SAME_ENTRIES: &str = r#"
import sys, zipfile
def raw(path):
    z = zipfile.ZipFile(path)
    data = open(path, 'rb').read()
    out = {}
    for i in z.infolist():
        at = i.header_offset
        n, e = int.from_bytes(data[at+26:at+28], 'little'), int.from_bytes(data[at+28:at+30], 'little')
        head = data[at:at+30+n+e]
        body = data[at+30+n+e:at+30+n+e+i.compress_size]
        out[i.filename] = (head, body, i.extra, i.CRC, i.compress_type, i.flag_bits,
                           i.external_attr, i.create_system, i.create_version, i.extract_version)
    return out
before, after, changed = raw(sys.argv[1]), raw(sys.argv[2]), sys.argv[3]
assert set(before) == set(after), (sorted(before), sorted(after))
for name in before:
    if name != changed:
        assert before[name] == after[name], name
assert before[changed][1] != after[changed][1], changed
print(len(before) - 1)
"#;

#[test]
fn update_and_freshen_copy_every_other_entry_as_it_was() {
    if !have_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    info_zip_archive(d);
    for flag in ["-u", "-f"] {
        std::fs::copy(d.join("orig.zip"), d.join("ours.zip")).unwrap();
        // A newer a.txt replaces its entry; nothing else is touched.
        std::fs::write(d.join("a.txt"), format!("rewritten for {flag}\n")).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(10);
        std::fs::File::options()
            .write(true)
            .open(d.join("a.txt"))
            .unwrap()
            .set_modified(later)
            .unwrap();
        run(perfkit().args(["zip", "-q", flag, "ours.zip", "a.txt"]), d);
        let out = Command::new("python3")
            .args(["-c", SAME_ENTRIES, "orig.zip", "ours.zip", "a.txt"])
            .current_dir(d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "zip {flag}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "6", "{flag}");
        run(
            Command::new("unzip").args(["-tq", "-P", "secret", "ours.zip"]),
            d,
        );
    }
}
