//! Where zip's per-entry lines go: zipstream's [`announce`] renders
//! them, this writes each one on the terminal around the progress bar.
//!
//! [`announce`]: zipstream::announce

use std::io::{self, Write};

pub(super) use zipstream::announce::{Display, deleting_lines, size_string};

/// zipstream's announcer, writing to the terminal.
pub(super) type Announcer = zipstream::announce::Announcer<Screen>;

/// stdout, or stderr when stdout carries the archive, with the progress
/// bar cleared while a line is written (the announcer writes each line
/// in one call).
pub(super) struct Screen {
    pub(super) bar: indicatif::ProgressBar,
    pub(super) to_stderr: bool,
}

impl Write for Screen {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let to_stderr = self.to_stderr;
        self.bar.suspend(|| {
            if to_stderr {
                io::stderr().write_all(buf)
            } else {
                io::stdout().write_all(buf)
            }
        })?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.to_stderr {
            io::stderr().flush()
        } else {
            io::stdout().flush()
        }
    }
}
