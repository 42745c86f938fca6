//! `perfkit zip` and `unzip` on hostile or unusual input, beside Info-ZIP
//! zip 3.0 / unzip 6.00 on identical copies: a self-extractor's stub kept
//! through every update, links that loop skipped with Info-ZIP's warning,
//! and every file read whole (a password file, `-@`'s names) bounded.

mod interop;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use interop::perfkit;

fn have_info_zip() -> bool {
    perfkit_testkit::interop::have("zip", "-v", "apt-get install zip")
        && perfkit_testkit::interop::have("unzip", "-v", "apt-get install unzip")
}

fn run(cmd: &mut Command) -> Output {
    cmd.env("TZ", "UTC").stdin(Stdio::null()).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn sorted_lines(b: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = text(b).lines().map(str::to_string).collect();
    v.sort();
    v
}

/// Writes `data` to `dir/name` with modification time `secs`.
fn put(dir: &Path, name: &str, data: &[u8], secs: u64) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, data).unwrap();
    set_times(&p, secs);
}

/// Sets a file's or folder's access and modification times. Info-ZIP's
/// extra field records both, and the two sides of a [`Pair`] are made one
/// after the other: times left at "now" could fall in different seconds
/// and make byte-for-byte comparisons fail by chance.
fn set_times(p: &Path, secs: u64) {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
    std::fs::File::open(p)
        .unwrap()
        .set_times(std::fs::FileTimes::new().set_accessed(t).set_modified(t))
        .unwrap();
}

const T0: u64 = 1_700_000_000;

/// The entry names as Info-ZIP's unzip lists them, sorted.
fn names(zip: &Path) -> Vec<String> {
    let out = run(Command::new("unzip").arg("-Z1").arg(zip));
    assert!(out.status.success(), "unzip -Z1 {}", zip.display());
    sorted_lines(&out.stdout)
}

/// Each entry's data as Info-ZIP's unzip extracts it.
fn data(zip: &Path, name: &str) -> Vec<u8> {
    let out = run(Command::new("unzip").arg("-p").arg(zip).arg(name));
    assert!(out.status.success(), "unzip -p {} {name}", zip.display());
    out.stdout
}

/// The archive comment as Info-ZIP's unzip prints it.
fn comment(zip: &Path) -> String {
    let out = run(Command::new("unzip").arg("-z").arg(zip));
    // Past the "Archive:" line.
    text(&out.stdout)
        .lines()
        .skip(1)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A real self-extractor's stub: an ELF executable (`true`).
fn stub() -> Vec<u8> {
    let path = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("an executable to use as a stub");
    std::fs::read(path).unwrap()
}

/// The inputs of one side.
fn inputs(dir: &Path) {
    put(dir, "a.txt", b"alpha\n", T0);
    put(dir, "b.txt", &b"bravo ".repeat(5_000), T0);
    put(dir, "d/x", b"x\n", T0);
    put(dir, "d/y", &vec![7u8; 100_000], T0);
    set_times(&dir.join("d"), T0);
}

/// `sfx.zip` in `dir`: `stub` followed by Info-ZIP's archive of
/// [`inputs`], with a comment, offsets adjusted (`zip -A`) when `adjust`.
fn sfx_archive(dir: &Path, stub: &[u8], adjust: bool) {
    let made = run(Command::new("zip")
        .current_dir(dir)
        .args(["-q", "-r", "base.zip", "a.txt", "b.txt", "d"]));
    assert!(made.status.success(), "{}", text(&made.stdout));
    let mut commented = Command::new("zip");
    commented
        .current_dir(dir)
        .args(["-q", "-z", "base.zip"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    let mut child = commented.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"a comment to keep\n")
        .unwrap();
    assert!(child.wait().unwrap().success());
    let mut sfx = stub.to_vec();
    sfx.extend(std::fs::read(dir.join("base.zip")).unwrap());
    std::fs::remove_file(dir.join("base.zip")).unwrap();
    std::fs::write(dir.join("sfx.zip"), sfx).unwrap();
    if adjust {
        let a = run(Command::new("zip").current_dir(dir).args(["-A", "sfx.zip"]));
        assert!(a.status.success(), "zip -A: {}", text(&a.stdout));
    }
}

/// Two directories with the same sfx archive and inputs: one for perfkit,
/// one for Info-ZIP.
struct Pair {
    _t: tempfile::TempDir,
    ours: PathBuf,
    theirs: PathBuf,
}

impl Pair {
    fn new(stub: &[u8], adjust: bool) -> Pair {
        let t = tempfile::tempdir().unwrap();
        let (ours, theirs) = (t.path().join("ours"), t.path().join("theirs"));
        for d in [&ours, &theirs] {
            std::fs::create_dir(d).unwrap();
            inputs(d);
        }
        // One archive, copied: zip's walk reads `d`, and the kernel then
        // stamps the folder's access time with "now" (its change time,
        // set by `set_times`, is later than the access time), which
        // Info-ZIP's extra field records. Two archives made one after the
        // other differed whenever they fell in different seconds.
        sfx_archive(&ours, stub, adjust);
        std::fs::copy(ours.join("sfx.zip"), theirs.join("sfx.zip")).unwrap();
        for d in [&ours, &theirs] {
            // Newer and new files for the updates to take.
            put(d, "a.txt", b"alpha, newer\n", T0 + 100);
            put(d, "c.txt", b"charlie\n", T0);
        }
        Pair {
            _t: t,
            ours,
            theirs,
        }
    }
}

/// Checks perfkit's `ours` archive against Info-ZIP's `theirs`: the stub
/// first, byte for byte; `unzip -t` passes with no word of extra bytes
/// (the offsets count the stub, as `zip -A` makes them); the same
/// entries, data and comment.
fn assert_same_sfx(what: &str, stub: &[u8], ours: &Path, theirs: &Path) {
    let bytes = std::fs::read(ours).unwrap();
    assert!(
        bytes.len() > stub.len() && bytes[..stub.len()] == *stub,
        "{what}: the stub is not kept"
    );
    let t = run(Command::new("unzip").arg("-t").arg(ours));
    assert!(
        t.status.success(),
        "{what}: unzip -t: {}{}",
        text(&t.stdout),
        text(&t.stderr)
    );
    let said = format!("{}{}", text(&t.stdout), text(&t.stderr));
    assert!(!said.contains("extra bytes"), "{what}: {said}");
    assert_eq!(names(ours), names(theirs), "{what}");
    for name in names(theirs).iter().filter(|n| !n.ends_with('/')) {
        assert_eq!(data(ours, name), data(theirs, name), "{what}: {name}");
    }
    assert_eq!(comment(ours), comment(theirs), "{what}");
    assert_eq!(comment(ours), "a comment to keep", "{what}");
}

/// Every way `zip` rewrites an existing archive keeps a self-extractor's
/// stub (offsets adjusted by `zip -A`) and counts it in every offset, as
/// Info-ZIP 3.0 does: add, replace, `-u`, `-f`, `-d`, `-m`, `-T`, `-r`,
/// and the parallel writer. Before the fix each of them wrote the
/// archive back without the stub.
#[test]
fn a_self_extractors_stub_is_kept_through_every_update_as_info_zip_keeps_it() {
    if !have_info_zip() {
        return;
    }
    let stub = stub();
    // (what, the arguments both take, perfkit's own extra arguments)
    let table: &[(&str, &[&str], &[&str])] = &[
        ("add a new file", &["sfx.zip", "c.txt"], &[]),
        ("replace an entry", &["sfx.zip", "a.txt"], &[]),
        ("-u", &["-u", "sfx.zip", "a.txt", "b.txt", "c.txt"], &[]),
        ("-f", &["-f", "sfx.zip", "a.txt", "b.txt", "c.txt"], &[]),
        ("-f alone", &["-f", "sfx.zip"], &[]),
        ("-d", &["-d", "sfx.zip", "b.txt"], &[]),
        ("-d a pattern", &["-d", "sfx.zip", "d/*"], &[]),
        ("-m", &["-m", "sfx.zip", "c.txt"], &[]),
        ("-T", &["-T", "sfx.zip", "c.txt"], &[]),
        ("-r", &["-r", "sfx.zip", "d", "c.txt"], &[]),
        ("--jobs 2", &["sfx.zip", "c.txt", "a.txt"], &["--jobs", "2"]),
    ];
    for (what, args, extra) in table {
        let p = Pair::new(&stub, true);
        let ours = run(perfkit()
            .current_dir(&p.ours)
            .arg("zip")
            .args(*extra)
            .args(*args));
        let theirs = run(Command::new("zip").current_dir(&p.theirs).args(*args));
        assert!(theirs.status.success(), "{what}: Info-ZIP failed");
        assert!(ours.status.success(), "{what}: {}", text(&ours.stderr));
        assert_same_sfx(
            what,
            &stub,
            &p.ours.join("sfx.zip"),
            &p.theirs.join("sfx.zip"),
        );
        // Nothing to say about the offsets: they already counted the stub.
        assert!(
            !text(&ours.stderr).contains("zip -A"),
            "{what}: {}",
            text(&ours.stderr)
        );
    }
    // Every entry deleted: the stub and an empty archive after it, which
    // both unzips read as an empty one.
    let p = Pair::new(&stub, true);
    let all = ["-d", "sfx.zip", "a.txt", "b.txt", "d/", "d/x", "d/y"];
    let ours = run(perfkit().current_dir(&p.ours).arg("zip").args(all));
    let theirs = run(Command::new("zip").current_dir(&p.theirs).args(all));
    assert!(ours.status.success() && theirs.status.success());
    let ours_zip = std::fs::read(p.ours.join("sfx.zip")).unwrap();
    assert_eq!(ours_zip[..stub.len()], stub[..]);
    let t = run(Command::new("unzip").arg("-t").arg(p.ours.join("sfx.zip")));
    assert!(
        text(&t.stdout).contains("zipfile is empty"),
        "{}",
        text(&t.stdout)
    );
    let listed = run(perfkit().args(["unzip", "-l"]).arg(p.ours.join("sfx.zip")));
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    // And a file added to that empty one lands after the stub again.
    let ours = run(perfkit()
        .current_dir(&p.ours)
        .args(["zip", "sfx.zip", "c.txt"]));
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    let bytes = std::fs::read(p.ours.join("sfx.zip")).unwrap();
    assert_eq!(bytes[..stub.len()], stub[..]);
    let t = run(Command::new("unzip").arg("-t").arg(p.ours.join("sfx.zip")));
    assert!(t.status.success(), "{}", text(&t.stdout));
    assert!(
        !text(&t.stdout).contains("extra bytes"),
        "{}",
        text(&t.stdout)
    );
}

/// A stub prepended without `zip -A` (offsets that do not count it):
/// Info-ZIP refuses to update the archive ("Zip file structure invalid");
/// perfkit keeps the stub, writes the offsets counting it, and says so.
/// The result is what Info-ZIP makes of the same archive once adjusted.
#[test]
fn an_unadjusted_stub_is_kept_and_its_offsets_adjusted() {
    if !have_info_zip() {
        return;
    }
    let stub = stub();
    let table: &[(&str, &[&str])] = &[
        ("add", &["sfx.zip", "c.txt"]),
        ("-d", &["-d", "sfx.zip", "b.txt"]),
        ("-f", &["-f", "sfx.zip", "a.txt"]),
    ];
    for (what, args) in table {
        let p = Pair::new(&stub, false);
        let before = std::fs::read(p.theirs.join("sfx.zip")).unwrap();
        let refused = run(Command::new("zip").current_dir(&p.theirs).args(*args));
        assert!(!refused.status.success(), "{what}: Info-ZIP updated it");
        assert_eq!(std::fs::read(p.theirs.join("sfx.zip")).unwrap(), before);
        let a = run(Command::new("zip")
            .current_dir(&p.theirs)
            .args(["-A", "sfx.zip"]));
        assert!(a.status.success());
        let theirs = run(Command::new("zip").current_dir(&p.theirs).args(*args));
        assert!(theirs.status.success(), "{what}: {}", text(&theirs.stdout));
        let ours = run(perfkit().current_dir(&p.ours).arg("zip").args(*args));
        assert!(ours.status.success(), "{what}: {}", text(&ours.stderr));
        assert!(
            text(&ours.stderr).contains(&format!(
                "its offsets do not count the {} bytes before its first entry",
                stub.len()
            )),
            "{what}: {}",
            text(&ours.stderr)
        );
        assert_same_sfx(
            what,
            &stub,
            &p.ours.join("sfx.zip"),
            &p.theirs.join("sfx.zip"),
        );
    }
}

/// A loop of links (a→b, b→a) and a link to nothing, followed by `zip -r`
/// or named: each is skipped with Info-ZIP's warning, on the stream
/// Info-ZIP prints it (stdout), and the rest is archived, exit 0; `-y`
/// stores them as links. A missing name is skipped the same way; with
/// nothing else to store both say there is nothing to do and fail.
/// Before the fix the loop stopped the run ("Too many levels of symbolic
/// links") and a missing name failed it.
#[test]
fn link_loops_and_missing_names_are_skipped_with_info_zips_warning() {
    if !have_info_zip() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let (ours, theirs) = (t.path().join("ours"), t.path().join("theirs"));
    for d in [&ours, &theirs] {
        put(d, "d/f", b"f\n", T0);
        put(d, "d/sub/g", b"g\n", T0);
        std::os::unix::fs::symlink("b", d.join("d/a")).unwrap();
        std::os::unix::fs::symlink("a", d.join("d/b")).unwrap();
        std::os::unix::fs::symlink("../a", d.join("d/sub/into_loop")).unwrap();
        std::os::unix::fs::symlink("nowhere", d.join("d/dangling")).unwrap();
    }
    let table: &[(&[&str], bool)] = &[
        (&["-r", "o.zip", "d"], true),
        (&["-r", "-y", "o.zip", "d"], true),
        (&["o.zip", "d/a", "d/f"], true),
        (&["o.zip", "missing", "d/f", "d/a/x"], true),
        (&["-r", "-q", "o.zip", "d"], true),
        (&["o.zip", "d/a", "d/b"], false),
        (&["o.zip", "missing"], false),
    ];
    for (args, stores) in table {
        let o = run(perfkit().current_dir(&ours).arg("zip").args(*args));
        let z = run(Command::new("zip").current_dir(&theirs).args(*args));
        let what = format!("{args:?}");
        assert_eq!(o.status.success(), *stores, "{what}: {}", text(&o.stderr));
        assert_eq!(z.status.success(), *stores, "{what}");
        let warnings = |out: &[u8]| -> Vec<String> {
            sorted_lines(out)
                .into_iter()
                .filter(|l| l.contains("zip warning"))
                .collect()
        };
        assert_eq!(warnings(&o.stdout), warnings(&z.stdout), "{what}");
        if *stores {
            assert_eq!(sorted_lines(&o.stdout), sorted_lines(&z.stdout), "{what}");
            assert_eq!(
                names(&ours.join("o.zip")),
                names(&theirs.join("o.zip")),
                "{what}"
            );
        } else {
            assert!(!ours.join("o.zip").exists(), "{what}");
            // Info-ZIP's "zip error: Nothing to do! (o.zip)", as it
            // prints it.
            assert_eq!(text(&o.stdout), text(&z.stdout), "{what}");
            assert_eq!(text(&o.stderr), "", "{what}");
        }
        for d in [&ours, &theirs] {
            let _ = std::fs::remove_file(d.join("o.zip"));
        }
    }
    // To stdout, the warnings go to stderr, as Info-ZIP's do.
    let o = run(perfkit()
        .current_dir(&ours)
        .args(["zip", "-", "d/a", "d/f"]));
    let z = run(Command::new("zip")
        .current_dir(&theirs)
        .args(["-", "d/a", "d/f"]));
    assert!(o.status.success() && z.status.success());
    // (Only the warnings: on a pipe Info-ZIP keeps a tiny file deflated,
    // perfkit stores it.)
    let first = |b: &[u8]| text(b).lines().next().map(str::to_string);
    assert_eq!(first(&o.stderr), first(&z.stderr));
    assert_eq!(
        first(&o.stderr).as_deref(),
        Some("\tzip warning: name not matched: d/a")
    );
    assert!(!text(&o.stdout).contains("zip warning"));
}

/// Runs `cmd` and fails the test unless it exits within 20 seconds.
fn within(cmd: &mut Command) -> Output {
    let start = Instant::now();
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let waiter = std::thread::spawn(move || child.wait_with_output().unwrap());
    while !waiter.is_finished() {
        if start.elapsed() > Duration::from_secs(20) {
            // SAFETY: kill(2) on the child this test spawned, by its id.
            unsafe { libc::kill(id as i32, libc::SIGKILL) };
            panic!("{cmd:?} still running after 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    waiter.join().unwrap()
}

/// A password file is read up to 64 KiB, never to its end: `/dev/zero`,
/// a FIFO fed without end and a file whose first line is over the limit
/// are refused at once with a line naming the file, for `unzip` and
/// `zip`; a password file whose one line has no end still works. Before
/// the fix `/dev/zero` was read until memory ran out.
#[test]
fn password_files_are_read_within_a_bound() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    put(d, "f.txt", b"secret data\n", T0);
    std::fs::write(d.join("pw"), b"hunter2").unwrap();
    let made = run(perfkit().current_dir(d).args([
        "zip",
        "-q",
        "--encrypt",
        "aes256",
        "--password-file",
        "pw",
        "e.zip",
        "f.txt",
    ]));
    assert!(made.status.success(), "{}", text(&made.stderr));
    let p = run(perfkit()
        .current_dir(d)
        .args(["unzip", "-p", "--password-file", "pw", "e.zip"]));
    assert!(p.status.success(), "{}", text(&p.stderr));
    assert_eq!(p.stdout, b"secret data\n");

    let long = d.join("long");
    std::fs::write(&long, vec![b'x'; 70 << 10]).unwrap();
    let fifo = d.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for file in [Path::new("/dev/zero"), &long, &fifo] {
        for args in [
            &["unzip", "-t", "e.zip"][..],
            &["zip", "--encrypt", "aes256", "n.zip", "f.txt"],
        ] {
            // A writer that never ends, until the reader goes away.
            let feeder = (file == fifo).then(|| {
                let fifo = fifo.clone();
                std::thread::spawn(move || {
                    use std::io::Write;
                    let mut w = std::fs::File::options().write(true).open(fifo).unwrap();
                    let zeros = vec![0u8; 64 << 10];
                    while w.write_all(&zeros).is_ok() {}
                })
            });
            let out = within(
                perfkit()
                    .current_dir(d)
                    .args(args)
                    .arg("--password-file")
                    .arg(file)
                    .stdin(Stdio::null()),
            );
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?} {file:?}: {err}");
            assert!(
                err.contains(&format!("password file {}", file.display()))
                    && err.contains("64 KiB"),
                "{args:?} {file:?}: {err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(!d.join("n.zip").exists());
            if let Some(f) = feeder {
                f.join().unwrap();
            }
        }
    }
}

/// `-@` reads names a line at a time, each at most 4096 bytes (PATH_MAX):
/// `/dev/zero` on stdin is refused at once instead of read until memory
/// runs out; a list ending without a line end and CRLF lines still work.
#[test]
fn names_on_stdin_are_read_within_a_bound() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    put(d, "a", b"a\n", T0);
    put(d, "b", b"b\n", T0);
    let out = within(
        perfkit()
            .current_dir(d)
            .args(["zip", "-@", "o.zip"])
            .stdin(std::fs::File::open("/dev/zero").unwrap()),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("longer than 4096 bytes"), "{err}");
    assert!(!d.join("o.zip").exists());
    std::fs::write(d.join("list"), b"a\r\nb").unwrap();
    let out = perfkit()
        .current_dir(d)
        .args(["zip", "-q", "-@", "o.zip"])
        .stdin(std::fs::File::open(d.join("list")).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = run(perfkit().current_dir(d).args(["unzip", "-Z1", "o.zip"]));
    assert_eq!(text(&listed.stdout), "a\nb\n");
}

/// Peak resident set of `perfkit ARGS` in KiB, from GNU time (`%M`: the
/// child's own `ru_maxrss`, not this harness's, which a direct child
/// would inherit), with `stdin` on its standard input.
fn peak_rss_kib(dir: &Path, args: &[&str], stdin: &Path) -> u64 {
    let figure = tempfile::NamedTempFile::new().unwrap();
    let out = Command::new("time")
        .args(["-f", "%M", "-o"])
        .arg(figure.path())
        .arg(env!("CARGO_BIN_EXE_perfkit"))
        .args(args)
        .current_dir(dir)
        .stdin(std::fs::File::open(stdin).unwrap())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    let figure = std::fs::read_to_string(figure.path()).unwrap();
    figure.trim().parse().unwrap()
}

/// With `--jobs` above 1, an entry the workers do not compress (stored,
/// from a file or from stdin) is streamed into the archive, not read into
/// memory whole: 192 MiB through each stays well under 64 MiB of peak
/// memory. Before the fix each was held whole (peak above 192 MiB), so
/// `--jobs 2 -0 - < /dev/zero` grew until memory ran out.
#[test]
fn stored_entries_with_jobs_are_streamed_not_held() {
    if !interop::have("time", "time") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let big = d.join("big.bin");
    // Sparse: read as zeros, written in no time.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(192 << 20)
        .unwrap();
    let null = Path::new("/dev/null");
    for (args, stdin) in [
        (
            &["zip", "-q", "--jobs", "2", "-0", "a.zip", "big.bin"][..],
            null,
        ),
        (
            &[
                "zip", "-q", "--jobs", "2", "--method", "store", "b.zip", "-",
            ],
            &big,
        ),
    ] {
        let peak = peak_rss_kib(d, args, stdin);
        assert!(peak < 64 << 10, "{args:?}: peak {peak} KiB");
    }
    for z in ["a.zip", "b.zip"] {
        let listed = run(perfkit().current_dir(d).args(["unzip", "-t", "-q", z]));
        assert!(listed.status.success(), "{z}: {}", text(&listed.stderr));
    }
}

/// An archive named as a FIFO (or `<(cat a.zip)`) cannot be read from its
/// end: `unzip` says so in one line naming it, with the way to read it
/// (on stdin), instead of "Illegal seek".
#[test]
fn a_fifo_archive_is_refused_with_the_way_to_read_it() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("a.zip");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut w = std::fs::File::options().write(true).open(fifo).unwrap();
            let _ = w.write_all(&[0u8; 1 << 20]);
        })
    };
    let out = within(perfkit().args(["unzip", "-t"]).arg(&fifo));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("reading {}: it is a pipe or FIFO", fifo.display()))
            && err.contains("perfkit unzip - <"),
        "{err}"
    );
    writer.join().unwrap();
}

/// A streamed archive whose central directory marks a 64 MiB entry as a
/// link: the target is read at most 4 KiB and a byte to refuse it, not
/// whole (peak well under 64 MiB; above it before the fix).
#[test]
fn a_huge_link_entry_is_refused_without_reading_it_whole() {
    if !interop::have("time", "time") || !interop::have("python3", "python3") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let made = Command::new("python3")
        .current_dir(d)
        .args([
            "-c",
            "import os, zipfile\n\
             z = zipfile.ZipFile('l.zip', 'w', zipfile.ZIP_STORED)\n\
             i = zipfile.ZipInfo('link')\n\
             i.external_attr = 0o120777 << 16\n\
             z.writestr(i, os.urandom(64 << 20))\n\
             z.close()",
        ])
        .status()
        .unwrap();
    assert!(made.success());
    let figure = tempfile::NamedTempFile::new().unwrap();
    let out = Command::new("time")
        .args(["-f", "%M", "-o"])
        .arg(figure.path())
        .arg(env!("CARGO_BIN_EXE_perfkit"))
        .args(["unzip", "-q", "-", "-d", "out"])
        .current_dir(d)
        .stdin(std::fs::File::open(d.join("l.zip")).unwrap())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("symlink target over 4 KiB"), "{err}");
    let peak: u64 = std::fs::read_to_string(figure.path())
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(peak < 32 << 10, "peak {peak} KiB");
}

/// `zip -A`, beside Info-ZIP's: an archive whose stub the offsets do not
/// count is rewritten with offsets that count it, byte for byte as
/// Info-ZIP writes it, with its line; an adjusted one is left untouched
/// ("do not need adjusting"); with a file it is adjusted and the file
/// added; a missing archive fails both. Before, perfkit had no `-A`.
#[test]
fn zip_a_adjusts_a_stub_as_info_zip_does() {
    if !have_info_zip() {
        return;
    }
    let stub = stub();
    for (adjusted, args) in [
        (false, &["-A", "sfx.zip"][..]),
        (true, &["-A", "sfx.zip"]),
        (false, &["-A", "sfx.zip", "c.txt"]),
        (false, &["-A", "-q", "sfx.zip"]),
    ] {
        let what = format!("{args:?} adjusted {adjusted}");
        let p = Pair::new(&stub, adjusted);
        let before = std::fs::read(p.ours.join("sfx.zip")).unwrap();
        let ours = run(perfkit().current_dir(&p.ours).arg("zip").args(args));
        let theirs = run(Command::new("zip").current_dir(&p.theirs).args(args));
        assert!(ours.status.success(), "{what}: {}", text(&ours.stderr));
        assert!(theirs.status.success(), "{what}");
        assert_eq!(text(&ours.stdout), text(&theirs.stdout), "{what}");
        assert_eq!(text(&ours.stderr), "", "{what}");
        let (a, b) = (p.ours.join("sfx.zip"), p.theirs.join("sfx.zip"));
        assert_same_sfx(&what, &stub, &a, &b);
        if args.len() == 2 || args.contains(&"-q") {
            assert_eq!(
                std::fs::read(&a).unwrap(),
                std::fs::read(&b).unwrap(),
                "{what}"
            );
        }
        if adjusted {
            assert_eq!(std::fs::read(&a).unwrap(), before, "{what}");
        }
    }
    let t = tempfile::tempdir().unwrap();
    let ours = run(perfkit()
        .current_dir(t.path())
        .args(["zip", "-A", "no.zip"]));
    let theirs = run(Command::new("zip")
        .current_dir(t.path())
        .args(["-A", "no.zip"]));
    assert!(!ours.status.success() && !theirs.status.success());
    assert!(!t.path().join("no.zip").exists());
}

/// On a terminal, zip draws its progress bar only for inputs over 16 MiB,
/// as compress does: a 6-byte file (encrypted or not) drew one. Run on a
/// pseudo-terminal through `script`.
#[test]
fn the_progress_bar_is_for_inputs_over_16_mib() {
    if !perfkit_testkit::interop::have("script", "-V", "apt-get install bsdutils") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("small"), b"hello\n").unwrap();
    std::fs::write(d.join("large"), vec![7u8; 17 << 20]).unwrap();
    let pk = env!("CARGO_BIN_EXE_perfkit");
    let on_a_terminal = |command: String| {
        let out = Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .current_dir(d)
            .env("PW", "secret")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {}", text(&out.stdout));
        text(&out.stdout)
    };
    for extra in ["", "--encrypt aes256 --password-env PW"] {
        let small = on_a_terminal(format!("{pk} zip {extra} s.zip small"));
        assert!(!small.contains('\u{1b}'), "{extra}: {small:?}");
        // The adding: line first, nothing drawn before it (an encrypted
        // archive adds a note that Info-ZIP's unzip cannot read AES).
        assert_eq!(
            small.lines().next().map(str::trim_end),
            Some("  adding: small (stored 0%)"),
            "{extra}"
        );
        std::fs::remove_file(d.join("s.zip")).unwrap();
    }
    let large = on_a_terminal(format!("{pk} zip l.zip large"));
    assert!(large.contains('\u{1b}'), "{large:?}");
}

/// A Zip64 archive of two deflated entries whose directory claims
/// 2^63 bytes each: their sizes add up past `u64::MAX`.
fn sizes_past_u64() -> Vec<u8> {
    // "hello" and "world" deflated: their CRC-32s and raw deflate streams.
    let entries: [(&[u8], u32, &[u8]); 2] = [
        (b"a.txt", 0x3610_a686, b"\xcbH\xcd\xc9\xc9\x07\x00"),
        (b"b.txt", 0x3a77_1143, b"+\xcf/\xcaI\x01\x00"),
    ];
    let size = 1u64 << 63;
    let (mut out, mut dir) = (Vec::new(), Vec::new());
    for (name, crc, data) in entries {
        let offset = out.len() as u64;
        let mut local = 0x0403_4b50u32.to_le_bytes().to_vec();
        for v in [45u16, 0, 8, 0, 0x21] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, u32::MAX, u32::MAX] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        for v in [name.len() as u16, 20] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        local.extend_from_slice(name);
        for v in [1u16, 16] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        for v in [size, data.len() as u64] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        local.extend_from_slice(data);
        out.extend_from_slice(&local);
        dir.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        for v in [45u16, 45, 0, 8, 0, 0x21] {
            dir.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, u32::MAX, u32::MAX] {
            dir.extend_from_slice(&v.to_le_bytes());
        }
        for v in [name.len() as u16, 28, 0, 0, 0] {
            dir.extend_from_slice(&v.to_le_bytes());
        }
        for v in [0u32, u32::MAX] {
            dir.extend_from_slice(&v.to_le_bytes());
        }
        dir.extend_from_slice(name);
        for v in [1u16, 24] {
            dir.extend_from_slice(&v.to_le_bytes());
        }
        for v in [size, data.len() as u64, offset] {
            dir.extend_from_slice(&v.to_le_bytes());
        }
    }
    let (dir_at, dir_len) = (out.len() as u64, dir.len() as u64);
    out.extend_from_slice(&dir);
    let end64_at = out.len() as u64;
    out.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
    out.extend_from_slice(&44u64.to_le_bytes());
    for v in [45u16, 45] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [0u32, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [2u64, 2, dir_len, dir_at] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [0x0706_4b50u32, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&end64_at.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    for v in [0u16, 0, 2, 2] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [dir_len as u32, dir_at as u32] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// Entry sizes that add up past `u64::MAX` (a hostile directory's): every
/// listing that totals them prints what Info-ZIP's unzip 6.00 and zip 3.0
/// print, their sum wrapped as C's unsigned arithmetic wraps it (`0
/// bytes`), archive untouched. Before, perfkit panicked on the overflow.
#[test]
fn sizes_adding_up_past_u64_are_totalled_as_info_zip_totals_them() {
    assert!(have_info_zip());
    let t = tempfile::tempdir().unwrap();
    let zip = t.path().join("huge.zip");
    let bytes = sizes_past_u64();
    std::fs::write(&zip, &bytes).unwrap();
    let runs: [(&str, &[&str]); 5] = [
        ("unzip", &["-l"]),
        ("unzip", &["-v"]),
        ("unzip", &["-Z"]),
        ("zip", &["-sf"]),
        ("zip", &["-sf", "-d"]),
    ];
    for (tool, args) in runs {
        let names: &[&str] = if args.contains(&"-d") {
            &["a.txt", "b.txt"]
        } else {
            &[]
        };
        let theirs = run(Command::new(tool).args(args).arg(&zip).args(names));
        let ours = run(perfkit().arg(tool).args(args).arg(&zip).args(names));
        let what = format!("{tool} {}", args.join(" "));
        assert!(theirs.status.success(), "{what}: {theirs:?}");
        assert!(ours.status.success(), "{what}: {}", text(&ours.stderr));
        assert_eq!(text(&ours.stdout), text(&theirs.stdout), "{what}");
        assert_eq!(std::fs::read(&zip).unwrap(), bytes, "{what}");
    }
}

/// A link entry whose target holds an escape sequence and a newline:
/// `perfkit unzip`'s `linking:` lines show them as Info-ZIP's unzip 6.00
/// does (`^[`, `^J`), line for line, so an archive cannot send codes to
/// the terminal or forge a line. Before, the target was printed raw.
#[test]
fn a_link_targets_control_characters_are_shown_as_info_zip_shows_them() {
    assert!(have_info_zip() && interop::have("python3", "python3"));
    let t = tempfile::tempdir().unwrap();
    let made = Command::new("python3")
        .current_dir(t.path())
        .args([
            "-c",
            "import zipfile\n\
             z = zipfile.ZipFile('l.zip', 'w')\n\
             i = zipfile.ZipInfo('l')\n\
             i.create_system = 3\n\
             i.external_attr = 0o120777 << 16\n\
             z.writestr(i, 'tar\\x1b[31mget\\nfake')\n\
             z.close()",
        ])
        .status()
        .unwrap();
    assert!(made.success());
    let theirs = run(Command::new("unzip")
        .args(["l.zip", "-d", "out"])
        .current_dir(t.path()));
    std::fs::remove_dir_all(t.path().join("out")).unwrap();
    let ours = run(perfkit()
        .args(["unzip", "l.zip", "-d", "out"])
        .current_dir(t.path()));
    assert!(theirs.status.success(), "{theirs:?}");
    assert!(text(&theirs.stdout).contains("tar^[[31mget^Jfake"));
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_eq!(text(&ours.stdout), text(&theirs.stdout));
}
