//! `perfkit corpus DIR`: write the deterministic benchmark corpus.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

/// Arguments of `perfkit corpus`.
#[derive(Debug, clap::Args)]
pub struct CorpusArgs {
    /// Directory to write into (created if missing).
    dir: PathBuf,
    /// Leave out the 64 MiB mixed file.
    #[arg(long)]
    small: bool,
}

/// Writes the corpus and lists what it wrote.
pub fn run(args: CorpusArgs) -> Result<ExitCode> {
    // writeln, not println: a reader that went away is an error for
    // cmd::fail (quiet exit 141), where println would panic.
    let mut out = std::io::stdout().lock();
    for p in perfkit::corpus::write(&args.dir, !args.small)? {
        writeln!(out, "{}", p.display())?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
