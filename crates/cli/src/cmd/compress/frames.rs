//! `perfkit compress --list` (zstd's `-l`): what the frames of `.zst` files
//! hold, read from their headers and block headers without decompressing.
//!
//! The walk and the sums are zstdkit's ([`zstdkit::frame::Summary`]), the
//! rows [`zstdkit::job::listing`]'s: only headers are read and block
//! contents are skipped, so memory stays constant whatever the file's
//! size. This module opens the files and says which could not be read.

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use zstdkit::frame::Summary;
use zstdkit::job::listing::Listing;

/// What a failed write of the listing was doing, for the message.
const STDOUT: &str = "writing to standard output";

/// Lists `files` as `zstd -l` does (with `verbose`, as `zstd -lv`): one
/// row per file and a total when there are several. A file that cannot be
/// read is reported on stderr and the rest are still listed. A
/// seekable file gets a line of what its seek table says.
pub fn list(files: &[PathBuf], verbose: bool) -> Result<ExitCode> {
    if files.iter().any(|f| f == Path::new("-")) || files.is_empty() {
        bail!("--list reads files, not stdin (it needs to know where the input ends)");
    }
    let stdout = io::stdout();
    let mut listing = Listing::new(stdout.lock(), verbose).context(STDOUT)?;
    let mut failed = false;
    for path in files {
        let name = perfkit::printable::name(&path.to_string_lossy()).into_owned();
        let s = File::open(path)
            .with_context(|| format!("opening {name}"))
            .and_then(|f| Ok(Summary::read(BufReader::with_capacity(1 << 16, f))?));
        let s = match s {
            Ok(s) => s,
            Err(e) => {
                listing.flush().context(STDOUT)?;
                let _ = writeln!(io::stderr(), "perfkit: {name}: {}", super::sentence(&e));
                failed = true;
                continue;
            }
        };
        // A seekable file's table says what zstd's listing does not.
        let seekable = File::open(path)
            .ok()
            .and_then(|f| zstdkit::seekable::SeekableReader::new(f).ok())
            .map(|r| r.table().clone());
        listing.file(&name, &s, seekable.as_ref()).context(STDOUT)?;
    }
    let _ = listing.finish().context(STDOUT)?;
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
