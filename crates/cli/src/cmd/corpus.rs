//! `perfkit corpus DIR`: write the deterministic benchmark corpus.

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
    for p in perfkit::corpus::write(&args.dir, !args.small)? {
        println!("{}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}
