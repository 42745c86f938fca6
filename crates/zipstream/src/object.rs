//! Object storage as an archive sink (feature `s3`): an archive streamed into
//! an S3-compatible bucket by multipart upload, in bounded memory, leaving no
//! object behind when writing fails.
//!
//! [`ObjectSink`] is a tokio [`AsyncWrite`], so [`crate::AsyncZipWriter`]
//! writes to it like to any other sink. It holds the first part in memory;
//! once a whole part's worth has been written it starts a multipart upload
//! and sends each full part in the background, at most
//! [`UploadOptions::max_concurrency`] at a time, so memory stays below
//! `(max_concurrency + 1) × part_size` whatever the archive size. An archive
//! smaller than one part is sent with a single PUT by [`ObjectSink::finish`].
//!
//! The object appears only when [`ObjectSink::finish`] completes the upload,
//! atomically. On any failure call [`ObjectSink::abort`]: it deletes the parts
//! already uploaded, so neither an object nor billable parts remain. (A
//! process killed mid-upload cannot abort; a bucket lifecycle rule that
//! expires incomplete multipart uploads cleans those up.)
//!
//! ```no_run
//! use zipstream::object::{ObjectSink, ObjectUrl, UploadOptions};
//! use zipstream::{AsyncZipWriter, EntryOptions};
//!
//! # async fn demo() -> zipstream::Result<()> {
//! let url: ObjectUrl = "s3://backups/2024/site.zip".parse()?;
//! let mut sink = ObjectSink::s3_from_env(&url, UploadOptions::default())?;
//! let written = async {
//!     let mut zip = AsyncZipWriter::new(&mut sink);
//!     zip.add_bytes(EntryOptions::file("hello.txt"), b"hello").await?;
//!     zip.finish().await?;
//!     Ok::<_, zipstream::Error>(())
//! }
//! .await;
//! match written {
//!     Ok(()) => sink.finish().await,
//!     Err(e) => {
//!         sink.abort().await?;
//!         Err(e)
//!     }
//! }
//! # }
//! ```
//!
//! Every operation must run inside a tokio runtime with I/O and timers
//! enabled: part uploads are tokio tasks.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{
    MultipartUpload, ObjectStore, PutMultipartOptions, PutOptions, PutPayload, WriteMultipart,
};
use tokio::io::AsyncWrite;

use crate::error::{Error, Result};

/// The object_store crate this module is built on, re-exported so callers
/// can build their own store (GCS, Azure, in-memory …) for
/// [`ObjectSink::new`] with the matching version.
pub use object_store;

/// S3's smallest part size: every part but the last must be at least 5 MiB.
pub const S3_MIN_PART_SIZE: usize = 5 << 20;

/// S3's largest part size, 5 GiB.
pub const S3_MAX_PART_SIZE: usize = 5 << 30;

/// S3's limit on the number of parts of one upload: with parts of `n` bytes
/// an archive can be at most `10_000 × n` bytes long.
pub const S3_MAX_PARTS: u64 = 10_000;

/// A parsed `s3://bucket/key` object URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectUrl {
    bucket: String,
    key: Path,
}

impl ObjectUrl {
    /// Parses `s3://bucket/key`. The bucket must be a valid S3 bucket name
    /// (3–63 lowercase letters, digits, `.` and `-`, starting and ending
    /// with a letter or digit); the key must be non-empty, at most 1024
    /// bytes, without empty, `.` or `..` segments, control characters or a
    /// trailing `/`. Anything else is [`Error::ObjectUrl`].
    pub fn parse(url: &str) -> Result<ObjectUrl> {
        let bad = |reason: String| Error::ObjectUrl {
            url: url.to_string(),
            reason,
        };
        let Some(rest) = url.strip_prefix("s3://") else {
            return Err(bad("expected s3://bucket/key".into()));
        };
        let Some((bucket, key)) = rest.split_once('/') else {
            return Err(bad("no object key after the bucket name".into()));
        };
        let name_ok = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
            && bucket
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric())
            && bucket
                .bytes()
                .last()
                .is_some_and(|b| b.is_ascii_alphanumeric());
        if !name_ok {
            return Err(bad(format!(
                "{bucket:?} is not a valid bucket name (3-63 lowercase letters, digits, '.' and '-')"
            )));
        }
        if key.is_empty() {
            return Err(bad("no object key after the bucket name".into()));
        }
        if key.len() > 1024 {
            return Err(bad(format!(
                "the object key is {} bytes long; S3 allows 1024",
                key.len()
            )));
        }
        if key.ends_with('/') {
            return Err(bad(
                "the object key ends with '/', which names a folder, not an object".into(),
            ));
        }
        for segment in key.split('/') {
            match segment {
                "" => return Err(bad("the object key has an empty segment ('//')".into())),
                "." | ".." => {
                    return Err(bad(format!(
                        "the object key has a {segment:?} segment, which S3 stores literally"
                    )));
                }
                _ if segment.chars().any(|c| c.is_control()) => {
                    return Err(bad("the object key contains a control character".into()));
                }
                _ => {}
            }
        }
        let key = Path::parse(key).map_err(|e| bad(e.to_string()))?;
        Ok(ObjectUrl {
            bucket: bucket.to_string(),
            key,
        })
    }

    /// The bucket name.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// The object key within the bucket.
    pub fn key(&self) -> &str {
        self.key.as_ref()
    }
}

impl FromStr for ObjectUrl {
    type Err = Error;

    fn from_str(s: &str) -> Result<ObjectUrl> {
        ObjectUrl::parse(s)
    }
}

impl fmt::Display for ObjectUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.key)
    }
}

/// How an [`ObjectSink`] uploads: part size and parallel part uploads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct UploadOptions {
    /// Bytes per part (every part but the last has exactly this size).
    /// Default 8 MiB, as the AWS CLI; S3 requires 5 MiB to 5 GiB and at most
    /// [`S3_MAX_PARTS`] parts, so the default caps an archive at ~78 GiB.
    pub part_size: usize,
    /// Parts uploading at once (default 4). Writes wait while this many are
    /// in flight, which bounds memory.
    pub max_concurrency: usize,
}

impl Default for UploadOptions {
    fn default() -> Self {
        UploadOptions {
            part_size: 8 << 20,
            max_concurrency: 4,
        }
    }
}

impl UploadOptions {
    /// Sets the part size in bytes.
    pub fn part_size(mut self, bytes: usize) -> Self {
        self.part_size = bytes;
        self
    }

    /// Sets how many parts may upload at once (at least 1).
    pub fn max_concurrency(mut self, parts: usize) -> Self {
        self.max_concurrency = parts;
        self
    }
}

type Creating =
    Pin<Box<dyn Future<Output = object_store::Result<Box<dyn MultipartUpload>>> + Send>>;
type Finishing = Pin<Box<dyn Future<Output = Result<()>> + Send>>;

enum State {
    /// Less than one part written so far, held here.
    Buffer(Vec<u8>),
    /// The first part is full; the multipart upload is being created.
    Creating(Creating, Vec<u8>),
    /// Full parts upload in the background; `failed` once one has failed,
    /// after which the upload can only be aborted.
    Uploading {
        upload: WriteMultipart,
        failed: bool,
    },
    /// `finish` (or `poll_shutdown`) is sending the tail and completing.
    Finishing(Finishing),
    /// Finished, aborted, or failed with nothing left to clean up.
    Closed,
}

/// A tokio [`AsyncWrite`] that uploads everything written to it as one
/// object, by multipart upload once it exceeds one part. See the
/// [module documentation](self) for the memory bound and failure handling.
pub struct ObjectSink {
    store: Arc<dyn ObjectStore>,
    path: Path,
    opts: UploadOptions,
    state: State,
}

impl fmt::Debug for ObjectSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectSink")
            .field("store", &self.store.to_string())
            .field("path", &self.path)
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

impl ObjectSink {
    /// A sink writing `path` in any object_store store (S3, GCS, Azure, in
    /// memory …). The part size is not checked against a particular
    /// service's limits; at least 1 byte and 1 concurrent part are used.
    pub fn new(store: Arc<dyn ObjectStore>, path: Path, opts: UploadOptions) -> ObjectSink {
        let opts = UploadOptions {
            part_size: opts.part_size.max(1),
            max_concurrency: opts.max_concurrency.max(1),
        };
        ObjectSink {
            store,
            path,
            opts,
            state: State::Buffer(Vec::new()),
        }
    }

    /// A sink writing `url` to S3 or an S3-compatible server, configured from
    /// the environment as AWS tools are: `AWS_ENDPOINT_URL` (for a server
    /// other than AWS), `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_ALLOW_HTTP=true` (for a plain
    /// `http://` endpoint), and object_store's other `AWS_*` variables.
    /// Profiles in `~/.aws` are not read. The part size must be within S3's
    /// limits ([`S3_MIN_PART_SIZE`] to [`S3_MAX_PART_SIZE`]).
    pub fn s3_from_env(url: &ObjectUrl, opts: UploadOptions) -> Result<ObjectSink> {
        if !(S3_MIN_PART_SIZE..=S3_MAX_PART_SIZE).contains(&opts.part_size) {
            return Err(Error::InvalidOptions(format!(
                "part size {} bytes is outside S3's limits (5 MiB to 5 GiB)",
                opts.part_size
            )));
        }
        let store = AmazonS3Builder::from_env()
            .with_bucket_name(url.bucket())
            .build()?;
        Ok(ObjectSink::new(Arc::new(store), url.key.clone(), opts))
    }

    /// Sends what is left and makes the object appear: a single PUT if less
    /// than one part was written, else the last part and the completion of
    /// the multipart upload. A failed completion aborts the upload, so no
    /// object and no parts remain. Writing after `finish` is an error.
    pub async fn finish(&mut self) -> Result<()> {
        std::future::poll_fn(|cx| self.poll_finish(cx)).await
    }

    /// Abandons the upload: deletes the parts already uploaded (waiting for
    /// the multipart upload to be created if that was under way) and writes
    /// no object. Does nothing if nothing was uploaded yet, or after
    /// [`finish`](Self::finish) returned. A `finish` that was started and then
    /// cancelled cannot be aborted any more.
    pub async fn abort(&mut self) -> Result<()> {
        match std::mem::replace(&mut self.state, State::Closed) {
            State::Buffer(_) | State::Finishing(_) | State::Closed => Ok(()),
            State::Creating(create, _) => match create.await {
                Ok(mut upload) => Ok(upload.abort().await?),
                // Never created: nothing to clean up.
                Err(_) => Ok(()),
            },
            State::Uploading { upload, .. } => Ok(upload.abort().await?),
        }
    }

    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        // An upload being created becomes `Uploading` (or fails) first, so
        // finishing has one multipart path.
        ready!(self.poll_created(cx))?;
        loop {
            match &mut self.state {
                State::Finishing(fut) => {
                    let res = ready!(fut.as_mut().poll(cx));
                    self.state = State::Closed;
                    return Poll::Ready(res);
                }
                State::Closed => {
                    return Poll::Ready(Err(Error::State(
                        "the upload was already finished or aborted",
                    )));
                }
                _ => {}
            }
            let fut: Finishing = match std::mem::replace(&mut self.state, State::Closed) {
                State::Buffer(buf) => {
                    let store = Arc::clone(&self.store);
                    let path = self.path.clone();
                    Box::pin(async move {
                        store
                            .put_opts(&path, PutPayload::from(buf), PutOptions::default())
                            .await?;
                        Ok(())
                    })
                }
                State::Creating(..) => unreachable!("poll_created ran above"),
                State::Uploading { upload, failed } => Box::pin(async move {
                    if failed {
                        upload.abort().await?;
                        return Err(Error::State(
                            "a part failed to upload; the upload was aborted",
                        ));
                    }
                    upload.finish().await?;
                    Ok(())
                }),
                State::Finishing(_) | State::Closed => unreachable!("handled above"),
            };
            self.state = State::Finishing(fut);
        }
    }

    /// Drives a multipart upload being created to `Uploading`.
    fn poll_created(&mut self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        if let State::Creating(create, buf) = &mut self.state {
            match ready!(create.as_mut().poll(cx)) {
                Ok(created) => {
                    let mut upload =
                        WriteMultipart::new_with_chunk_size(created, self.opts.part_size);
                    upload.write(buf);
                    self.state = State::Uploading {
                        upload,
                        failed: false,
                    };
                }
                Err(e) => {
                    // No upload exists, so there is nothing to abort.
                    self.state = State::Closed;
                    return Poll::Ready(Err(e.into()));
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}

fn closed() -> io::Error {
    Error::State("write after the upload was finished or aborted").into()
}

impl AsyncWrite for ObjectSink {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Buffer(held) => {
                    if held.len() + buf.len() < this.opts.part_size {
                        held.extend_from_slice(buf);
                        return Poll::Ready(Ok(buf.len()));
                    }
                    let held = std::mem::take(held);
                    let store = Arc::clone(&this.store);
                    let path = this.path.clone();
                    let create: Creating = Box::pin(async move {
                        store
                            .put_multipart_opts(&path, PutMultipartOptions::default())
                            .await
                    });
                    this.state = State::Creating(create, held);
                }
                State::Creating(..) => ready!(this.poll_created(cx)).map_err(io::Error::from)?,
                State::Uploading { upload, failed } => {
                    if *failed {
                        return Poll::Ready(Err(Error::State(
                            "a part failed to upload; the upload can only be aborted",
                        )
                        .into()));
                    }
                    if let Err(e) = ready!(upload.poll_for_capacity(cx, this.opts.max_concurrency))
                    {
                        *failed = true;
                        return Poll::Ready(Err(Error::from(e).into()));
                    }
                    // At most a part per call: `write` starts an upload for
                    // every full part it is given, and capacity was checked
                    // for one, so a larger buffer would put more than
                    // `max_concurrency` parts in flight.
                    let n = buf.len().min(this.opts.part_size);
                    upload.write(&buf[..n]);
                    return Poll::Ready(Ok(n));
                }
                State::Finishing(_) | State::Closed => return Poll::Ready(Err(closed())),
            }
        }
    }

    /// Waits for the multipart upload to be created and for the parts in
    /// flight; less than a part stays buffered (S3 parts have a minimum size).
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_created(cx)).map_err(io::Error::from)?;
        if let State::Uploading { upload, failed } = &mut this.state
            && !*failed
            && let Err(e) = ready!(upload.poll_for_capacity(cx, 0))
        {
            *failed = true;
            return Poll::Ready(Err(Error::from(e).into()));
        }
        Poll::Ready(Ok(()))
    }

    /// The same as [`ObjectSink::finish`].
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_finish(cx).map_err(io::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::ObjectStoreExt;
    use object_store::memory::InMemory;
    use tokio::io::AsyncWriteExt;

    #[test]
    fn parses_urls() {
        let u = ObjectUrl::parse("s3://my-bucket.eu/a/b c/d.zip").unwrap();
        assert_eq!(u.bucket(), "my-bucket.eu");
        assert_eq!(u.key(), "a/b c/d.zip");
        assert_eq!(u.to_string(), "s3://my-bucket.eu/a/b c/d.zip");
        for bad in [
            "s3:/b/k",
            "http://bucket/k",
            "s3://bucket",
            "s3://bucket/",
            "s3://ab/k",
            "s3://Bucket/k",
            "s3://-bucket/k",
            "s3://bucket/dir/",
            "s3://bucket//k",
            "s3://bucket/a/../k",
            "s3://bucket/a\nb",
        ] {
            let e = ObjectUrl::parse(bad).unwrap_err();
            assert!(matches!(e, Error::ObjectUrl { .. }), "{bad}: {e}");
            let msg = e.to_string();
            assert!(
                msg.starts_with(bad) && !msg[bad.len()..].contains('\n'),
                "{msg}"
            );
        }
    }

    fn pattern(n: usize) -> Vec<u8> {
        (0..n as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect()
    }

    #[tokio::test]
    async fn small_object_is_one_put_and_large_uses_parts() {
        let store = Arc::new(InMemory::new());
        for (name, len) in [("small", 100), ("exact", 1000), ("large", 4321)] {
            let path = Path::from(name);
            let opts = UploadOptions::default().part_size(1000).max_concurrency(2);
            let mut sink = ObjectSink::new(store.clone(), path.clone(), opts);
            let data = pattern(len);
            for chunk in data.chunks(77) {
                sink.write_all(chunk).await.unwrap();
            }
            sink.flush().await.unwrap();
            sink.finish().await.unwrap();
            let got = store.get(&path).await.unwrap().bytes().await.unwrap();
            assert_eq!(&got[..], &data[..], "{name}");
            assert!(sink.write_all(b"x").await.is_err());
            assert!(sink.abort().await.is_ok());
        }
    }

    /// A write larger than a part is taken a part at a time once uploading,
    /// so no more than `max_concurrency` parts are ever in flight; and the
    /// bytes still arrive whole.
    #[tokio::test]
    async fn a_large_write_is_taken_one_part_at_a_time() {
        use tokio::io::AsyncWrite;
        // Each part upload is a task on this (current-thread) runtime, which
        // runs it only when the test yields: the tasks alive right after a
        // write are the parts in flight.
        let in_flight = || {
            tokio::runtime::Handle::current()
                .metrics()
                .num_alive_tasks()
        };
        let store = Arc::new(InMemory::new());
        for concurrency in [1, 3] {
            let path = Path::from(format!("big{concurrency}"));
            let opts = UploadOptions::default()
                .part_size(1000)
                .max_concurrency(concurrency);
            let mut sink = ObjectSink::new(store.clone(), path.clone(), opts);
            let data = pattern(10_000);
            let mut at = 0;
            let mut accepted = Vec::new();
            let mut most_in_flight = 0;
            while at < data.len() {
                let n = std::future::poll_fn(|cx| Pin::new(&mut sink).poll_write(cx, &data[at..]))
                    .await
                    .unwrap();
                most_in_flight = most_in_flight.max(in_flight());
                accepted.push(n);
                at += n;
            }
            // Before the fix the first call took all 10,000 bytes: ten parts
            // started at once with max_concurrency 1.
            assert!(accepted.iter().all(|&n| n <= 1000), "{accepted:?}");
            assert!(
                (1..=concurrency).contains(&most_in_flight),
                "{most_in_flight} parts in flight, max_concurrency {concurrency}"
            );
            sink.finish().await.unwrap();
            let got = store.get(&path).await.unwrap().bytes().await.unwrap();
            assert_eq!(&got[..], &data[..]);
        }
    }

    #[tokio::test]
    async fn abort_leaves_nothing_in_any_state() {
        let store = Arc::new(InMemory::new());
        for len in [0, 10, 999, 1000, 5000] {
            let path = Path::from(format!("obj{len}"));
            let opts = UploadOptions::default().part_size(1000);
            let mut sink = ObjectSink::new(store.clone(), path.clone(), opts);
            sink.write_all(&pattern(len)).await.unwrap();
            sink.abort().await.unwrap();
            assert!(sink.finish().await.is_err());
            assert!(store.head(&path).await.is_err(), "{len}");
        }
        let listed = store.list_with_delimiter(None).await.unwrap();
        assert!(listed.objects.is_empty());
    }
}
