//! [`Part`]: one of a file store's four files, with the operations the
//! store makes on it, each failure a [`StoreError`] naming the file.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::store::StoreError;

/// The path of the store file `prefix.ext`.
pub(super) fn path_of(prefix: &Path, ext: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

/// One of the four files.
#[derive(Debug)]
pub(super) struct Part {
    pub(super) path: PathBuf,
    pub(super) file: File,
    /// This part holds the store's lock ([`Part::lock`]), and lets go of
    /// it when dropped.
    pub(super) locked: bool,
}

impl Part {
    pub(super) fn open(prefix: &Path, ext: &str) -> Result<Part, StoreError> {
        let path = path_of(prefix, ext);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|source| StoreError::Io {
                path: path.clone(),
                op: "open",
                source,
            })?;
        Ok(Part {
            path,
            file,
            locked: false,
        })
    }

    /// Takes the store's exclusive lock (`flock`) on this file, held until
    /// this part is dropped (see its `Drop`); another opening, in this
    /// process or another, is refused.
    pub(super) fn lock(&mut self) -> Result<(), StoreError> {
        match self.file.try_lock() {
            Ok(()) => {
                self.locked = true;
                Ok(())
            }
            Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Locked {
                path: self.path.clone(),
            }),
            Err(std::fs::TryLockError::Error(e)) => Err(self.io("flock")(e)),
        }
    }

    pub(super) fn io(&self, op: &'static str) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
        move |source| StoreError::Io {
            path: self.path.clone(),
            op,
            source,
        }
    }

    pub(super) fn len(&self) -> Result<u64, StoreError> {
        Ok(self.file.metadata().map_err(self.io("stat"))?.len())
    }

    pub(super) fn write_at(&self, bytes: &[u8], at: u64) -> Result<(), StoreError> {
        self.file.write_all_at(bytes, at).map_err(self.io("write"))
    }

    pub(super) fn read_at(&self, buf: &mut [u8], at: u64) -> Result<usize, StoreError> {
        loop {
            match self.file.read_at(buf, at) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                r => return r.map_err(self.io("read")),
            }
        }
    }

    pub(super) fn truncate(&self, len: u64) -> Result<(), StoreError> {
        self.file.set_len(len).map_err(self.io("truncate"))
    }

    pub(super) fn sync(&self) -> Result<(), StoreError> {
        self.file.sync_data().map_err(self.io("fdatasync"))
    }

    pub(super) fn corrupt(&self, offset: u64, record: String, why: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            offset,
            record,
            why,
        }
    }
}

impl Drop for Part {
    /// Lets go of the lock now, not when the last descriptor of this
    /// opening closes: a child process that another thread forks holds a
    /// copy of every descriptor until it execs, and a store dropped (or
    /// refused) in that window stayed locked, `StoreError::Locked` to the
    /// next opening.
    fn drop(&mut self) {
        if self.locked {
            let _ = self.file.unlock();
        }
    }
}
