//! `perfkit zip s3://bucket/key`: writing the archive into an object
//! store's multipart upload.

use super::items::open_item;
use super::sink::{Counting, entry_options, write_all_items};
use super::*;
use zipstream::object::{ObjectSink, UploadOptions};

/// `perfkit zip s3://bucket/key`: the archive is uploaded as it is written
/// (multipart past one part, memory bounded by the part size), and any
/// failure aborts the upload, so no object appears. The error is one line
/// naming the URL.
pub(super) fn zip_to_object(
    url: &ObjectUrl,
    steps: &[Step<'_>],
    opts: &Options,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    announcer: &mut Announcer,
) -> Result<()> {
    // The chain down to the library's error, whose message is already
    // complete (object storage errors repeat their causes), on one line.
    let one_line = |e: anyhow::Error| {
        let mut msg = url.to_string();
        for cause in e.chain() {
            let part = cause.to_string();
            if !msg.contains(&part) {
                msg.push_str(": ");
                msg.push_str(&part);
            }
            if cause.is::<zipstream::Error>() {
                break;
            }
        }
        anyhow!(msg.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    let part_size = usize::try_from(opts.part_size).unwrap_or(usize::MAX);
    let upload = UploadOptions::default().part_size(part_size);
    let mut sink = ObjectSink::s3_from_env(url, upload).map_err(|e| one_line(e.into()))?;
    // Checked after the URL and part size (so their errors come first),
    // before the first request.
    // Without them the S3 client falls back to probing the instance
    // metadata service and fails with a message about that probe.
    let missing: Vec<&str> = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
        .into_iter()
        .filter(|v| std::env::var_os(v).is_none_or(|s| s.is_empty()))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{url}: no credentials: set {} (with AWS_REGION, and AWS_ENDPOINT_URL for a server other than AWS)",
            missing.join(" and ")
        );
    }
    // Part uploads run on the worker threads while this thread compresses.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let written = if opts.jobs > 1 {
        // The parallel writer is synchronous: it writes through a bridge
        // that runs each write on the runtime.
        let bridge = BlockingSink {
            rt: &rt,
            sink: &mut sink,
        };
        let mut w = ParallelZipWriter::new(ZipWriter::new(bridge), ParallelOptions::new(opts.jobs));
        write_all_items(&mut w, steps, None, opts, pw, bar, announcer)
            .and_then(|()| Ok(w.finish()?.flush()?))
            .and_then(|()| Ok(rt.block_on(sink.finish())?))
    } else {
        rt.block_on(async {
            let mut w = AsyncZipWriter::new(&mut sink);
            add_items_async(&mut w, steps, opts, pw, bar, announcer).await?;
            w.finish().await?;
            sink.finish().await?;
            Ok(())
        })
    };
    if let Err(e) = written {
        return Err(match rt.block_on(sink.abort()) {
            Ok(()) => one_line(e),
            Err(a) => one_line(e.context(format!(
                "the multipart upload could not be aborted ({a}); its parts remain"
            ))),
        });
    }
    Ok(())
}

/// A blocking `Write` over the object sink, for the synchronous writers.
struct BlockingSink<'a> {
    rt: &'a tokio::runtime::Runtime,
    sink: &'a mut ObjectSink,
}

impl Write for BlockingSink<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.rt.block_on(self.sink.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.rt.block_on(self.sink.flush())
    }
}

/// Adds every item through the async writer; files are read in 64 KiB
/// slices on this thread.
async fn add_items_async<W: tokio::io::AsyncWrite + Unpin>(
    w: &mut AsyncZipWriter<W>,
    steps: &[Step<'_>],
    opts: &Options,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    announcer: &mut Announcer,
) -> Result<()> {
    let mut buf = vec![0u8; 64 << 10];
    // Only local archives are updated, so an object upload has items only.
    let items = steps.iter().filter_map(|s| match s {
        Step::Item(i) => Some(*i),
        Step::Kept(_) => None,
    });
    for item in items {
        let adding = || format!("adding {}", item.path.display());
        let entry = entry_options(item, opts, pw)?;
        let mut r = Counting {
            inner: open_item(item, opts)?,
            bar,
        };
        w.start_entry(entry).await.with_context(adding)?;
        loop {
            let n = r.read(&mut buf).with_context(adding)?;
            if n == 0 {
                break;
            }
            w.write_data(&buf[..n]).await.with_context(adding)?;
        }
        w.finish_entry().await.with_context(adding)?;
        let _ = announcer.catch_up(|i| w.written(i));
    }
    Ok(())
}
