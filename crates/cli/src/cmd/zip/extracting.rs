//! What `unzip` asks and prints while it extracts: zipstream's
//! [`lines`](zipstream::extract::lines) writes Info-ZIP's lines and its
//! [`prompt`](zipstream::extract::prompt) asks about a file in the way,
//! here on stdout, stderr and stdin.

use std::io;
use std::path::Path;

/// The lines of one extraction, on stdout.
pub type Lines = zipstream::extract::lines::Lines<io::Stdout>;

/// Info-ZIP unzip's question about a file in the way.
pub type Prompt = zipstream::extract::prompt::Prompt<io::Stdout>;

/// The question asked on stderr and answered on stdin (a terminal or not),
/// for an extraction into `dir`; `junk_paths`: `-j`.
pub fn prompt(dir: &Path, junk_paths: bool) -> Prompt {
    Prompt::new(dir, junk_paths, io::stderr(), io::stdin())
}
