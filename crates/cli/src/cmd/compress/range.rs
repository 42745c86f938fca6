//! `--range START..END`: a slice of a seekable file's data, read through
//! its seek table by [`zstdkit::job::range`]; here the file is checked and
//! opened, the output kept or not, and what was done said.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use zstdkit::job::range::{self, RangeError};

use super::{Mode, Options};
use zstdkit::job::tool::input_name as display;

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
    range::within(&reader, end).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    // Said as before: the file named before what its data did, the
    // side that failed (seeking, writing) before the system's words.
    let copy = |reader: &mut zstdkit::seekable::SeekableReader<File>, out: &mut dyn Write| {
        range::copy(reader, (start, end), out).map_err(|e| match e {
            RangeError::Seek(_) | RangeError::Write(_) => anyhow::Error::new(e),
            e => anyhow::anyhow!("{}: {e}", file.display()),
        })
    };
    // The range streams from the start of its first frame to its last
    // byte; the frame it ends in is then decoded to its end and checked
    // against the table, before an output file is kept (stdout has
    // already had the bytes, as with any streaming decoder).
    let written = match &options.output {
        Some(o) if o != Path::new("-") => {
            let mut out = landing::Output::create(o, options.force)?;
            let n = copy(&mut reader, out.file_mut())?;
            out.commit()
                .with_context(|| format!("writing {}", o.display()))?;
            n
        }
        _ => copy(&mut reader, &mut io::stdout().lock())?,
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
