//! The flags of `perfkit corpus` and their conversion into a [`Job`].

use std::path::PathBuf;

use super::Job;

/// Arguments of `perfkit corpus`.
#[derive(Debug, clap::Args)]
pub struct CorpusArgs {
    /// Directory to write into (created if missing).
    dir: PathBuf,
    /// Leave out the 64 MiB mixed file.
    #[arg(long)]
    small: bool,
}

impl CorpusArgs {
    /// The job these flags ask for.
    pub fn job(self) -> Job {
        Job {
            dir: self.dir,
            large: !self.small,
        }
    }
}
