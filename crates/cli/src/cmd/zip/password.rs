//! Where a password comes from (`-P`, a file, an environment variable or
//! a prompt) and how it is read: shared by `zip` and `unzip`, and apart
//! from the writing and extracting it feeds.

use std::fs;
use std::io::{self, IsTerminal, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Where a password comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Password {
    /// Given on the command line (`-P`).
    Given(Vec<u8>),
    /// The first line of this file.
    File(PathBuf),
    /// This environment variable.
    Env(String),
    /// A prompt on the terminal, when one is needed.
    Prompt,
}

impl Password {
    /// The password if one was given, else a prompt when stdin is a terminal
    /// and `needed`; otherwise None.
    pub(super) fn get(&self, needed: bool, confirm: bool) -> Result<Option<Vec<u8>>> {
        match self {
            Password::File(f) => return password_from_file(f).map(Some),
            Password::Env(v) => {
                let s = std::env::var(v)
                    .with_context(|| format!("environment variable {v} is not set"))?;
                return Ok(Some(s.into_bytes()));
            }
            Password::Given(p) => return Ok(Some(p.clone())),
            Password::Prompt => {}
        }
        if !needed {
            return Ok(None);
        }
        if !io::stderr().is_terminal() {
            bail!(
                "a password is needed: use --password-file or --password-env (no terminal to prompt on)"
            );
        }
        // Info-ZIP zip's prompts when writing (confirm), a plain one when reading.
        let first = if confirm {
            "Enter password: "
        } else {
            "password: "
        };
        let p = rpassword::prompt_password(first).context("reading the password")?;
        if confirm
            && rpassword::prompt_password("Verify password: ").context("reading the password")? != p
        {
            bail!("password verification failed (the two entries differ); nothing written");
        }
        Ok(Some(p.into_bytes()))
    }
}

/// The most of a password file read: the password is its first line, and
/// none is anywhere near this long. A device or FIFO (`/dev/zero`, a pipe
/// that never ends) is read up to it, never to its end.
const MAX_PASSWORD_LINE: u64 = 64 << 10;

/// The password in `path`: its first line, without the line end; the
/// whole file when it has one line with no end. A first line longer than
/// [`MAX_PASSWORD_LINE`] is refused, naming the file.
fn password_from_file(path: &Path) -> Result<Vec<u8>> {
    use io::BufRead;
    let shown = perfkit::printable::name(&path.display().to_string()).into_owned();
    let file = fs::File::open(path).with_context(|| format!("password file {shown}"))?;
    let mut line = Vec::new();
    let n = io::BufReader::new(file)
        .take(MAX_PASSWORD_LINE + 1)
        .read_until(b'\n', &mut line)
        .with_context(|| format!("reading password file {shown}"))?;
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
    } else if n as u64 > MAX_PASSWORD_LINE {
        bail!(
            "password file {shown}: no line end in its first 64 KiB, so it holds no password \
             (the password is the file's first line)"
        );
    }
    Ok(line)
}
