//! The object storage sink against a real S3-compatible server (moto, on
//! loopback): an archive uploaded in several parts is byte-exact for Info-ZIP
//! `unzip -t` and Python `zipfile`, and a write that fails midway leaves
//! neither an object nor an unfinished multipart upload.
//!
//! Needs feature `s3` (on in a workspace build, which the CLI's dependency
//! turns on). Gated like the other interop tests: moto, unzip and python3
//! must be installed (`cargo xtask ci` installs them), or the test fails,
//! unless `PERFKIT_SKIP_INTEROP=1` is set.

#![cfg(feature = "s3")]

use perfkit_testkit::interop;
use perfkit_testkit::noise::noise;
use perfkit_testkit::s3::{self as moto, Moto};

use std::io;
use std::pin::Pin;
use std::process::Command;
use std::sync::Arc;
use std::task::{Context, Poll};

use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};
use zipstream::object::{ObjectSink, S3_MIN_PART_SIZE, UploadOptions};
use zipstream::{AsyncZipWriter, EntryOptions, ZipArchive};

/// A store for `bucket` on the moto server, configured explicitly (the
/// environment route, `ObjectSink::s3_from_env`, is tested through the CLI).
fn store(moto: &Moto, bucket: &str) -> Arc<dyn object_store::ObjectStore> {
    let mut b = AmazonS3Builder::new()
        .with_endpoint(&moto.endpoint)
        .with_bucket_name(bucket);
    for (k, v) in moto::CREDENTIALS {
        b = b.with_config(k.to_ascii_lowercase().parse().unwrap(), v);
    }
    Arc::new(b.build().unwrap())
}

fn text(n: usize) -> Vec<u8> {
    let words: &[&[u8]] = &[b"zip ", b"stream ", b"object ", b"store\n", b"part "];
    let mut v = Vec::with_capacity(n + 8);
    let mut i = 0usize;
    while v.len() < n {
        v.extend_from_slice(words[(i * 7 + i / 3) % words.len()]);
        i += 1;
    }
    v.truncate(n);
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multipart_archive_is_read_by_unzip_and_python() {
    let Some(moto) = Moto::start() else { return };
    if !interop::have("unzip", "-v", "apt-get install unzip")
        || !interop::have("python3", "--version", "apt-get install python3")
    {
        return;
    }
    moto.create_bucket("archives");
    // 12 MiB that will not compress (stored) and 4 MiB of text (deflated):
    // an archive of ~12 MiB, three 5 MiB parts.
    let files: Vec<(String, Vec<u8>)> = vec![
        ("data/noise.bin".into(), noise(12 << 20, 1)),
        ("data/words.txt".into(), text(4 << 20)),
        ("small.txt".into(), b"hello, object storage\n".to_vec()),
        ("empty".into(), Vec::new()),
    ];
    let opts = UploadOptions::default().part_size(S3_MIN_PART_SIZE);
    let mut sink = ObjectSink::new(store(&moto, "archives"), Path::from("nightly/a.zip"), opts);
    let mut zip = AsyncZipWriter::new(&mut sink);
    zip.add_directory(EntryOptions::directory("data"))
        .await
        .unwrap();
    for (name, data) in &files {
        // Written in uneven slices, as a network source would deliver them.
        zip.start_entry(EntryOptions::file(name).mtime(1_700_000_000))
            .await
            .unwrap();
        for chunk in data.chunks(100_003) {
            zip.write_data(chunk).await.unwrap();
        }
        zip.finish_entry().await.unwrap();
    }
    zip.finish().await.unwrap();
    assert!(
        moto.objects("archives").is_empty(),
        "the object must not exist before finish"
    );
    sink.finish().await.unwrap();

    assert_eq!(moto.objects("archives"), ["nightly/a.zip"]);
    assert!(moto.uploads_in_progress("archives").is_empty());
    let (bytes, etag) = moto.get("archives", "nightly/a.zip");
    assert!(bytes.len() > 12 << 20, "archive of {} bytes", bytes.len());
    // A multipart object's ETag is `md5-of-part-md5s-PARTS`.
    assert!(etag.ends_with("-3"), "ETag {etag}: expected three parts");

    let dir = tempfile::tempdir().unwrap();
    let zip_path = dir.path().join("a.zip");
    std::fs::write(&zip_path, &bytes).unwrap();
    let originals = dir.path().join("originals");
    for (name, data) in &files {
        let p = originals.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    }

    let out = Command::new("unzip")
        .arg("-t")
        .arg(&zip_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "unzip -t: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let script = r#"
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
root = sys.argv[2]
names = set()
for info in z.infolist():
    if info.is_dir():
        continue
    names.add(info.filename)
    want = open(os.path.join(root, info.filename), "rb").read()
    got = z.read(info)
    assert got == want, info.filename
expected = set()
for d, _, fs in os.walk(root):
    for f in fs:
        expected.add(os.path.relpath(os.path.join(d, f), root))
assert names == expected, (names, expected)
print("ok", len(names))
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&zip_path)
        .arg(&originals)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python zipfile: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok 4");

    // And our own reader agrees.
    let mut a = ZipArchive::new(io::Cursor::new(bytes)).unwrap();
    assert_eq!(a.entries().len(), files.len() + 1);
    let i = a
        .entries()
        .iter()
        .position(|e| e.name == "data/noise.bin")
        .unwrap();
    assert_eq!(a.read_to_vec(i, None).unwrap(), files[0].1);
}

/// Gives `ok` incompressible bytes, then fails like a disk would.
struct FailingReader {
    data: Vec<u8>,
    pos: usize,
}

impl AsyncRead for FailingReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.pos == self.data.len() {
            return Poll::Ready(Err(io::Error::other("injected read failure")));
        }
        let n = buf.remaining().min(self.data.len() - self.pos);
        let pos = self.pos;
        buf.put_slice(&self.data[pos..pos + n]);
        self.pos += n;
        Poll::Ready(Ok(()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_write_leaves_no_object_and_no_parts() {
    let Some(moto) = Moto::start() else { return };
    moto.create_bucket("failures");
    let opts = UploadOptions::default().part_size(S3_MIN_PART_SIZE);
    let mut sink = ObjectSink::new(store(&moto, "failures"), Path::from("broken.zip"), opts);
    let mut zip = AsyncZipWriter::new(&mut sink);
    zip.add_bytes(EntryOptions::file("first.txt"), &text(100_000))
        .await
        .unwrap();
    // More than two parts' worth before the failure, so parts are uploaded.
    let mut reader = FailingReader {
        data: noise(11 << 20, 7),
        pos: 0,
    };
    let err = zip
        .add_reader(EntryOptions::file("second.bin"), &mut reader)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("injected read failure"), "{err}");
    drop(zip);
    // The upload was under way: parts exist but no object.
    sink.flush().await.unwrap();
    assert_eq!(moto.uploads_in_progress("failures").len(), 1);
    assert!(moto.objects("failures").is_empty());

    sink.abort().await.unwrap();
    assert!(moto.objects("failures").is_empty());
    assert!(
        moto.uploads_in_progress("failures").is_empty(),
        "abort must delete the uploaded parts"
    );
    // Nothing can be completed after an abort.
    assert!(sink.finish().await.is_err());
    assert!(moto.objects("failures").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failure_before_the_first_part_leaves_nothing() {
    let Some(moto) = Moto::start() else { return };
    moto.create_bucket("small");
    let mut sink = ObjectSink::new(
        store(&moto, "small"),
        Path::from("tiny.zip"),
        UploadOptions::default(),
    );
    let mut zip = AsyncZipWriter::new(&mut sink);
    zip.add_bytes(EntryOptions::file("a"), b"a").await.unwrap();
    let mut reader = FailingReader {
        data: vec![1; 1000],
        pos: 0,
    };
    assert!(
        zip.add_reader(EntryOptions::file("b"), &mut reader)
            .await
            .is_err()
    );
    drop(zip);
    sink.abort().await.unwrap();
    assert!(moto.objects("small").is_empty());
    assert!(moto.uploads_in_progress("small").is_empty());
}
