//! Output files that land whole or not at all.
//!
//! Every file a perfkit command writes (archives, `.zst` files,
//! dictionaries, man pages, corpus files, report files) is opened with
//! [`Output::create`] or written with [`write_atomically`]:
//!
//! - the data goes to a hidden temporary sibling (`.perfkit-*.partial`)
//!   that [`Output::commit`] renames over the target, so a reader sees the
//!   old file or the whole new one, never half of it;
//! - [`Output::commit_durably`] also syncs the data and the directory, for
//!   a caller about to delete what the output holds a copy of;
//! - dropping an uncommitted [`Output`] deletes its temporary, and
//!   [`temporaries`] lists each one while it lives so that [`cleanup`]'s
//!   signal thread deletes them when SIGINT, SIGTERM or SIGHUP ends the
//!   process (no destructor runs then);
//! - a device, FIFO or socket ([`is_special_file`]) is written in place,
//!   and a symlink is never replaced: the file it names is;
//! - [`Output::writer`] gives a writing thread its own handle, which
//!   reserves a long output's disk blocks ahead of its writes
//!   ([`reserve`]) and releases what it did not use when dropped.
//!
//! ```
//! use std::io::Write;
//! # let dir = tempfile::tempdir()?;
//! let path = dir.path().join("out.txt");
//! let mut out = landing::Output::create(&path, false)?;
//! out.file_mut().write_all(b"whole")?;
//! assert!(!path.exists(), "nothing lands before the commit");
//! out.commit()?;
//! assert_eq!(std::fs::read(&path)?, b"whole");
//!
//! // Refused without clobber; a failed write leaves the old file.
//! assert!(landing::Output::create(&path, false).is_err());
//! let failed: std::io::Result<()> = landing::write_atomically(&path, |f| {
//!     f.write_all(b"half")?;
//!     Err(std::io::Error::other("the input went away"))
//! });
//! assert!(failed.is_err());
//! assert_eq!(std::fs::read(&path)?, b"whole");
//! assert_eq!(std::fs::read_dir(dir.path())?.count(), 1, "no temporary left");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

pub mod cleanup;
mod listed;
mod output;
pub mod reserve;
pub mod temporaries;

pub use output::{Output, OutputError, is_special_file, write_atomically, write_atomically_with};
pub use reserve::Reserving;

#[cfg(test)]
mod tests;
