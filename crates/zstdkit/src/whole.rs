//! Files a coder holds whole: a dictionary, a patch's reference, training
//! samples. Each is read only when it is a regular file no larger than the
//! caller's limit, and never past the size it had when opened: a device
//! (`/dev/zero`), a FIFO or a file that grows can cost no more memory than
//! that limit. The reading is [`wholefile`]'s, refusing what is not a
//! regular file, whose size would say nothing of what it holds.

use std::path::Path;

pub use wholefile::Error as WholeFileError;

/// Reads `path` whole when it is a regular file of at most `limit` bytes.
/// Anything else is refused before a byte is read, a FIFO without waiting
/// for a writer; a file that grows while read is refused too (what was
/// measured is what is held).
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, WholeFileError> {
    wholefile::read(path, limit, wholefile::Special::Refuse)
}
