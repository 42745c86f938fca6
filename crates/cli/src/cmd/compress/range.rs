//! `--range START..END`: a slice of a seekable file's data, read through
//! its seek table.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use super::{Mode, Options, display};

/// `--range START..END`: those bytes of a seekable file's data, through
/// its seek table, decoding only the frames that hold them.
pub(super) fn ranged(options: &Options, (start, end): (u64, u64)) -> Result<ExitCode> {
    let [file] = &options.files[..] else {
        bail!("--range takes one file, {} given", options.files.len());
    };
    if options.mode == Mode::Compress {
        bail!("--range reads a seekable file: use it with -d or decompress");
    }
    let is_file = std::fs::metadata(file).is_ok_and(|m| m.is_file());
    if file == Path::new("-") || !is_file {
        bail!(
            "{}: --range needs a regular file (it seeks to the frames)",
            display(file)
        );
    }
    let source = File::open(file).with_context(|| format!("opening {}", file.display()))?;
    let mut reader = zstdkit::seekable::SeekableReader::new(source)
        .with_context(|| format!("{}: not seekable", file.display()))?;
    if end > reader.len() {
        bail!(
            "{}: the range ends at {end}, past the data's end ({} bytes)",
            file.display(),
            reader.len()
        );
    }
    reader.seek(io::SeekFrom::Start(start)).context("seeking")?;
    let mut part = reader.by_ref().take(end - start);
    let copy = |out: &mut dyn Write, part: &mut dyn Read| -> Result<u64> {
        io::copy(part, out).map_err(|e| match e.get_ref() {
            Some(inner) => anyhow::anyhow!("{}: {inner}", file.display()),
            None => anyhow::Error::new(e).context("writing output"),
        })
    };
    // The range streams from the start of its first frame to its last
    // byte; the frame it ends in is then decoded to its end and checked
    // against the table, before an output file is kept (stdout has
    // already had the bytes, as with any streaming decoder).
    let verify = |reader: &mut zstdkit::seekable::SeekableReader<File>| {
        reader
            .verify()
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))
    };
    let written = match &options.output {
        Some(o) if o != Path::new("-") => {
            let mut out = landing::Output::create(o, options.force)?;
            let n = copy(out.file_mut(), &mut part)?;
            verify(&mut reader)?;
            out.commit()
                .with_context(|| format!("writing {}", o.display()))?;
            n
        }
        _ => {
            let n = copy(&mut io::stdout().lock(), &mut part)?;
            verify(&mut reader)?;
            n
        }
    };
    if options.verbose {
        let _ = writeln!(
            io::stderr(),
            "{}: {written} bytes of {}..{end}, {} bytes of the file read",
            display(file),
            start,
            reader.source_read()
        );
    }
    Ok(ExitCode::SUCCESS)
}
