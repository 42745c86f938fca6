//! Physical confinement of extraction: links are resolved against what is
//! on disk, so no chain of links, `..` walked through a link, or link left
//! by an earlier run lets an archive plant a path that leads outside the
//! destination. The oracle is the kernel: `fs::canonicalize` of every link
//! left in the destination must stay inside it.

use std::io::Cursor;
use std::path::Path;

use zipstream::*;

fn archive(entries: &[(EntryOptions, &[u8])]) -> Vec<u8> {
    let mut w = ZipWriter::new(Vec::new());
    for (o, d) in entries {
        w.add_bytes(o.clone(), d).unwrap();
    }
    w.finish().unwrap()
}

/// Every symlink under `dest`, and where the kernel says it leads.
fn links_under(dest: &Path) -> Vec<(String, Option<std::path::PathBuf>)> {
    let mut v = Vec::new();
    if !dest.exists() {
        // A failed run removes the destination it created.
        return v;
    }
    fn walk(base: &Path, d: &Path, v: &mut Vec<(String, Option<std::path::PathBuf>)>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.file_type().is_symlink() {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                v.push((rel, std::fs::canonicalize(&p).ok()));
            } else if m.is_dir() {
                walk(base, &p, v);
            }
        }
    }
    walk(dest, dest, &mut v);
    v
}

/// Asserts no link under `dest` resolves (per the kernel) outside it.
fn assert_confined(dest: &Path) {
    if !dest.exists() {
        return;
    }
    let root = dest.canonicalize().unwrap();
    for (rel, real) in links_under(dest) {
        if let Some(real) = real {
            assert!(
                real.starts_with(&root),
                "link {rel} resolves outside the destination, to {}",
                real.display()
            );
        }
    }
}

fn extract(z: &[u8], dest: &Path) -> Result<ExtractReport> {
    let mut a = ZipArchive::new(Cursor::new(z.to_vec()))?;
    extract_archive(&mut a, dest, &ExtractOptions::default())
}

#[test]
fn dotdot_through_an_archive_link_is_refused() {
    // k/l -> .. makes k/l the destination itself, so k/l/k/l/k/l is too,
    // and three `..` from there leave it; lexically the path only ever
    // shrinks to three components, which the old check accepted.
    for order in [false, true] {
        let base = (EntryOptions::symlink("k/l"), &b".."[..]);
        let evil = (EntryOptions::symlink("x"), &b"k/l/k/l/k/l/../../.."[..]);
        let z = if order {
            archive(&[base, evil])
        } else {
            // Evil link first: when it is made, k/l does not exist yet.
            archive(&[evil, base])
        };
        let root = tempfile::tempdir().unwrap();
        let dest = root.path().join("out");
        let err = extract(&z, &dest).unwrap_err();
        assert!(matches!(err, Error::SymlinkEscape { .. }), "{err}");
        assert_confined(&dest);
        assert!(
            links_under(&dest).is_empty(),
            "a refused run left links: {:?}",
            links_under(&dest)
        );
        // From a stream: the entries are files until the central directory
        // says they are links, then confined the same way.
        let err = extract_stream(
            &mut ZipStreamReader::new(&z[..]),
            &dest,
            &ExtractOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::SymlinkEscape { .. }), "{err}");
        assert!(!dest.exists(), "a refused stream run left {dest:?}");
    }
}

#[test]
fn a_stream_makes_its_links_as_links() {
    let z = archive(&[
        (EntryOptions::file("d/f.txt"), b"data"),
        (EntryOptions::symlink("d/up"), b".."),
        (EntryOptions::symlink("c"), b"d/up/d/f.txt"),
    ]);
    let root = tempfile::tempdir().unwrap();
    let rep = extract_stream(
        &mut ZipStreamReader::new(&z[..]),
        root.path(),
        &ExtractOptions::default(),
    )
    .unwrap();
    assert_eq!((rep.files, rep.symlinks), (1, 2));
    assert_eq!(
        std::fs::read_link(root.path().join("c")).unwrap(),
        Path::new("d/up/d/f.txt")
    );
    assert_eq!(std::fs::read(root.path().join("c")).unwrap(), b"data");
    assert_confined(root.path());
}

#[test]
fn link_chains_stay_inside_or_are_refused() {
    // Legitimate chains and links to links are created.
    let ok = archive(&[
        (EntryOptions::file("d/f.txt"), b"data"),
        (EntryOptions::symlink("a"), b"b"),
        (EntryOptions::symlink("b"), b"d/f.txt"),
        (EntryOptions::symlink("d/up"), b".."),
        (EntryOptions::symlink("c"), b"d/up/d/up/d/f.txt"),
    ]);
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("out");
    let r = extract(&ok, &dest).unwrap();
    assert_eq!(r.symlinks, 4);
    assert_eq!(std::fs::read(dest.join("c")).unwrap(), b"data");
    assert_eq!(std::fs::read(dest.join("a")).unwrap(), b"data");
    assert_confined(&dest);

    // A chain whose last hop leaves: a -> b -> d/up/.. (d/up is the root).
    let bad = archive(&[
        (EntryOptions::symlink("d/up"), b".."),
        (EntryOptions::symlink("b"), b"d/up/d/up/d/up/../../../x"),
        (EntryOptions::symlink("a"), b"b"),
    ]);
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("out");
    let err = extract(&bad, &dest).unwrap_err();
    assert!(matches!(err, Error::SymlinkEscape { .. }), "{err}");
    assert!(links_under(&dest).is_empty());

    // A loop reaches nothing (the kernel refuses it too), so it is allowed.
    let looped = archive(&[
        (EntryOptions::symlink("p"), b"q"),
        (EntryOptions::symlink("q"), b"p"),
    ]);
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("out");
    extract(&looped, &dest).unwrap();
    assert_confined(&dest);
}

#[cfg(unix)]
#[test]
fn links_left_by_an_earlier_run_are_resolved() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("out");
    let outside = root.path().join("outside");
    std::fs::create_dir_all(&dest).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(outside.join("secret"), b"s").unwrap();
    // What an older extractor (or another tool) left in the destination.
    std::os::unix::fs::symlink(&outside, dest.join("pre")).unwrap();
    std::os::unix::fs::symlink("../outside", dest.join("rel")).unwrap();

    for (z, what) in [
        (
            archive(&[(EntryOptions::symlink("x"), b"pre/secret")]),
            "link through an absolute link on disk",
        ),
        (
            archive(&[(EntryOptions::symlink("y"), b"rel/secret")]),
            "link through a relative link on disk",
        ),
        (
            archive(&[(EntryOptions::file("pre/new"), b"n")]),
            "file through a link on disk",
        ),
        (
            archive(&[(EntryOptions::directory("pre/").unix_mode(0o777), b"")]),
            "directory that is a link on disk",
        ),
    ] {
        let err = extract(&z, &dest).expect_err(what);
        assert!(
            matches!(err, Error::SymlinkEscape { .. } | Error::UnsafePath { .. }),
            "{what}: {err}"
        );
        let names: Vec<String> = links_under(&dest).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names.len(), 2, "{what}: {names:?}");
        assert!(!outside.join("new").exists(), "{what}");
        let mode = std::fs::metadata(&outside).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755, "{what}: chmod went through the link");
    }
}
