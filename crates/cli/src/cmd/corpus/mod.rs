//! `perfkit corpus DIR`: write the deterministic benchmark corpus
//! (`perfkit-corpus`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use landing::write_atomically;
use perfkit_corpus::{self as corpus, Entry};

mod args;

pub use args::CorpusArgs;

/// What `perfkit corpus` was asked to write.
#[derive(Debug)]
pub struct Job {
    /// The directory to write into (created if missing).
    pub dir: PathBuf,
    /// Also write the 64 MiB mixed file.
    pub large: bool,
}

/// Writes the corpus into the directory (created if needed), each file
/// through a temporary sibling renamed into place, and lists each file as
/// it is written.
pub fn run(job: Job) -> Result<ExitCode> {
    let dir = &job.dir;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut entries = corpus::small()?;
    if job.large {
        entries.push(Entry {
            name: corpus::LARGE_NAME.into(),
            data: corpus::mixed(corpus::LARGE_SIZE)?,
        });
    }
    // writeln, not println: a reader that went away is an error for
    // cmd::fail (quiet exit 141), where println would panic.
    let mut out = std::io::stdout().lock();
    for e in entries {
        let path = dir.join(&e.name);
        write_atomically(&path, |f| f.write_all(&e.data))
            .with_context(|| format!("writing {}", path.display()))?;
        writeln!(out, "{}", path.display())?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
