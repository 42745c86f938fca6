//! `perfkit zip s3://bucket/key` through the binary against a real
//! S3-compatible server (moto on loopback, configured by the AWS_* variables
//! as a user would): round trips small and multipart, sync and parallel; a
//! failed zip leaves no object and no parts; a malformed URL or a missing
//! bucket is a one-line error with exit code 1.

mod interop;

use perfkit_testkit::noise::noise;
use perfkit_testkit::s3::{self as moto, Moto};

use std::path::Path;
use std::process::{Command, Output, Stdio};

use interop::{ok, perfkit};

/// `perfkit zip` with the environment pointing at `moto` and nothing else
/// AWS-related inherited.
fn zip_cmd(moto: &Moto) -> Command {
    let mut cmd = perfkit();
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_some_and(|k| k.starts_with("AWS_")) {
            cmd.env_remove(k);
        }
    }
    cmd.env("AWS_ENDPOINT_URL", &moto.endpoint)
        .envs(moto::CREDENTIALS)
        .arg("zip");
    cmd
}

fn sample(dir: &Path) {
    std::fs::create_dir_all(dir.join("src/sub")).unwrap();
    let text: Vec<u8> = (0..200_000u32)
        .map(|i| b"perfkit zip s3 test "[(i % 20) as usize])
        .collect();
    std::fs::write(dir.join("src/a.txt"), text).unwrap();
    std::fs::write(dir.join("src/sub/b.bin"), noise(50_000, 0)).unwrap();
    std::fs::write(dir.join("src/empty"), b"").unwrap();
}

/// Downloads `key`, checks it with `perfkit unzip -t` and Info-ZIP's `unzip
/// -t` (gated like every outside program), extracts it and returns
/// (extracted dir, ETag).
fn fetch_and_extract(moto: &Moto, bucket: &str, key: &str, into: &Path) -> String {
    let (bytes, etag) = moto.get(bucket, key);
    let zip = into.with_extension("zip");
    std::fs::write(&zip, bytes).unwrap();
    ok(perfkit().arg("unzip").arg("-t").arg(&zip));
    if perfkit_testkit::interop::have("unzip", "-v", "apt-get install unzip") {
        ok(Command::new("unzip").arg("-t").arg(&zip));
    }
    ok(perfkit().arg("unzip").arg("-d").arg(into).arg(&zip));
    etag
}

fn same_file(a: &Path, b: &Path) {
    assert!(
        std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
        "{} differs from {}",
        a.display(),
        b.display()
    );
}

#[test]
fn zips_to_s3_small_and_multipart_sync_and_parallel() {
    let Some(moto) = Moto::start() else { return };
    moto.create_bucket("perfkit-out");
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    sample(d);
    std::fs::write(d.join("big.bin"), noise(11 << 20, 0)).unwrap();

    for (i, jobs) in ["1", "3"].into_iter().enumerate() {
        // Small: one PUT.
        let key = format!("small-{jobs}.zip");
        let out = ok(zip_cmd(&moto)
            .current_dir(d)
            .args(["-r", "--jobs", jobs])
            .arg(format!("s3://perfkit-out/{key}"))
            .arg("src")
            .stdin(Stdio::null()));
        only_adding_lines(&out.stdout);
        let x = d.join(format!("x{i}"));
        fetch_and_extract(&moto, "perfkit-out", &key, &x);
        for f in ["src/a.txt", "src/sub/b.bin", "src/empty"] {
            same_file(&d.join(f), &x.join(f));
        }

        // Multipart: 11 MiB that does not compress, 5 MiB parts.
        let key = format!("deep/big-{jobs}.zip");
        ok(zip_cmd(&moto)
            .current_dir(d)
            .args(["--jobs", jobs, "--part-size", "5MiB"])
            .arg(format!("s3://perfkit-out/{key}"))
            .args(["big.bin", "src/a.txt"])
            .stdin(Stdio::null()));
        let y = d.join(format!("y{i}"));
        let etag = fetch_and_extract(&moto, "perfkit-out", &key, &y);
        assert!(etag.ends_with("-3"), "ETag {etag}: expected three parts");
        same_file(&d.join("big.bin"), &y.join("big.bin"));
        same_file(&d.join("src/a.txt"), &y.join("src/a.txt"));
    }
    assert!(moto.uploads_in_progress("perfkit-out").is_empty());
}

/// Stdout holds nothing but Info-ZIP's `  adding: NAME (...)` lines (the
/// archive goes to S3, so, as Info-ZIP writing a file, they go to stdout).
fn only_adding_lines(stdout: &[u8]) {
    let text = String::from_utf8_lossy(stdout);
    for line in text.lines() {
        assert!(
            line.starts_with("  adding: ") && line.ends_with("%)"),
            "stdout: {text:?}"
        );
    }
}

fn one_line_failure(out: &Output, prefix: &str) -> String {
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    only_adding_lines(&out.stdout);
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(
        err.starts_with(prefix),
        "{err:?} should start with {prefix:?}"
    );
    err
}

#[test]
fn failed_zip_to_s3_leaves_no_object_and_no_parts() {
    let Some(moto) = Moto::start() else { return };
    moto.create_bucket("perfkit-fail");
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("big.bin"), noise(11 << 20, 0)).unwrap();
    for jobs in ["1", "2"] {
        // `-` reads stdin, which is a directory: reading it fails (EISDIR)
        // after big.bin has been uploaded in parts.
        let out = zip_cmd(&moto)
            .current_dir(d)
            .args(["--jobs", jobs, "--part-size", "5MiB"])
            .args(["s3://perfkit-fail/broken.zip", "big.bin", "-"])
            .stdin(std::fs::File::open(d).unwrap())
            .output()
            .unwrap();
        let err = one_line_failure(&out, "perfkit: s3://perfkit-fail/broken.zip: ");
        assert!(err.contains("directory"), "{err}");
        assert!(moto.objects("perfkit-fail").is_empty(), "jobs {jobs}");
        assert!(
            moto.uploads_in_progress("perfkit-fail").is_empty(),
            "jobs {jobs}: the multipart upload must be aborted"
        );
    }
}

#[test]
fn missing_bucket_is_a_one_line_error() {
    let Some(moto) = Moto::start() else { return };
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("f"), b"data").unwrap();
    let out = zip_cmd(&moto)
        .current_dir(t.path())
        .args(["s3://no-such-bucket/a.zip", "f"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    one_line_failure(&out, "perfkit: s3://no-such-bucket/a.zip: ");
}

#[test]
fn malformed_urls_are_one_line_errors() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("f"), b"data").unwrap();
    for (url, why) in [
        ("s3:/bucket/a.zip", "expected s3://bucket/key"),
        ("s3://bucket", "no object key"),
        ("s3://bucket/", "no object key"),
        ("s3://Bad_Bucket/a.zip", "not a valid bucket name"),
        ("s3://bucket/dir/", "ends with '/'"),
    ] {
        let out = perfkit()
            .current_dir(t.path())
            .args(["zip", url, "f"])
            .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = one_line_failure(&out, &format!("perfkit: {url}: malformed object URL: "));
        assert!(err.contains(why), "{err}");
        assert!(!t.path().join(url).exists());
    }
    // A part size S3 would refuse is refused before anything is sent.
    let out = perfkit()
        .current_dir(t.path())
        .args(["zip", "--part-size", "1MiB", "s3://bucket/a.zip", "f"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = one_line_failure(&out, "perfkit: s3://bucket/a.zip: ");
    assert!(err.contains("5 MiB"), "{err}");
}
