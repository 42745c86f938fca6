//! The conversation between `perfkit bench --only zip` and this peer: short text
//! lines, plus raw entry bytes after a `load`.
//!
//! ```text
//! perfkit → peer (stdin)
//!   load COUNT              then COUNT times: `LEN NAME\n` and LEN raw bytes
//!   run MODE LEVEL          MODE is `sync` or `async`, LEVEL 0..=9
//!   save MODE LEVEL PATH    write one archive to PATH (temporary, then renamed)
//! peer → perfkit (stdout), one line per request
//!   hello szip-peer 1 s-zip=0.15.0 flate2=rust_backend     (once, at start)
//!   ok entries=N bytes=B                                   (load)
//!   ok cpu_ns=C wall_ns=W out_bytes=O rss_growth_bytes=R   (run)
//!   ok out_bytes=O                                         (save)
//!   err MESSAGE                                            (any failure)
//! ```
//!
//! A request it cannot parse ends the peer after its `err` line, since the
//! byte stream may be out of step; a writer failure only fails that request.

use std::fmt;

/// The greeting, so perfkit knows it started the right program and which
/// protocol version it speaks.
pub const HELLO: &str = "hello szip-peer 1 s-zip=0.15.0 flate2=rust_backend";

/// Which s-zip writer to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `StreamingZipWriter` over a `Cursor<Vec<u8>>`.
    Sync,
    /// `AsyncStreamingZipWriter` over a `Cursor<Vec<u8>>`, current-thread runtime.
    Async,
}

/// One request line.
#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    /// Replace the entries with COUNT entries that follow on stdin.
    Load {
        /// How many entry headers (each followed by its bytes) follow.
        count: usize,
    },
    /// Write one archive in memory and report what it cost.
    Run {
        /// Which writer.
        mode: Mode,
        /// Deflate level.
        level: u32,
    },
    /// Write one archive to a file.
    Save {
        /// Which writer.
        mode: Mode,
        /// Deflate level.
        level: u32,
        /// Where to put it.
        path: String,
    },
}

/// A line that is not a request this peer understands.
#[derive(Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

fn bad(line: &str, why: &str) -> ParseError {
    ParseError(format!("bad request {line:?}: {why}"))
}

fn mode(word: Option<&str>, line: &str) -> Result<Mode, ParseError> {
    match word {
        Some("sync") => Ok(Mode::Sync),
        Some("async") => Ok(Mode::Async),
        _ => Err(bad(line, "mode must be sync or async")),
    }
}

// flate2 takes any u32, but levels above 9 mean nothing to deflate and
// miniz_oxide and zlib-rs disagree about them; refuse rather than compare
// two different things.
fn level(word: Option<&str>, line: &str) -> Result<u32, ParseError> {
    word.and_then(|w| w.parse().ok())
        .filter(|l| *l <= 9)
        .ok_or_else(|| bad(line, "level must be 0..=9"))
}

/// Parses one request line (without its newline).
pub fn parse_request(line: &str) -> Result<Request, ParseError> {
    let mut words = line.splitn(4, ' ');
    match words.next() {
        Some("load") => {
            let count = words
                .next()
                .and_then(|w| w.parse().ok())
                .ok_or_else(|| bad(line, "load needs an entry count"))?;
            if words.next().is_some() {
                return Err(bad(line, "load takes one argument"));
            }
            Ok(Request::Load { count })
        }
        Some("run") => {
            let mode = mode(words.next(), line)?;
            let level = level(words.next(), line)?;
            if words.next().is_some() {
                return Err(bad(line, "run takes two arguments"));
            }
            Ok(Request::Run { mode, level })
        }
        Some("save") => {
            let mode = mode(words.next(), line)?;
            let level = level(words.next(), line)?;
            match words.next() {
                Some(path) if !path.is_empty() => Ok(Request::Save {
                    mode,
                    level,
                    path: path.to_owned(),
                }),
                _ => Err(bad(line, "save needs a path")),
            }
        }
        _ => Err(bad(line, "expected load, run or save")),
    }
}

/// Parses an entry header `LEN NAME` (the name may hold spaces, not newlines).
pub fn parse_entry_header(line: &str) -> Result<(u64, String), ParseError> {
    let (len, name) = line
        .split_once(' ')
        .ok_or_else(|| bad(line, "entry header is LEN NAME"))?;
    let len = len
        .parse()
        .map_err(|_| bad(line, "entry length is not a number"))?;
    if name.is_empty() {
        return Err(bad(line, "entry name is empty"));
    }
    Ok((len, name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_request() {
        assert_eq!(parse_request("load 50"), Ok(Request::Load { count: 50 }));
        assert_eq!(
            parse_request("run async 6"),
            Ok(Request::Run {
                mode: Mode::Async,
                level: 6
            })
        );
        assert_eq!(
            parse_request("save sync 0 /tmp/a b.zip"),
            Ok(Request::Save {
                mode: Mode::Sync,
                level: 0,
                path: "/tmp/a b.zip".into()
            })
        );
    }

    #[test]
    fn refuses_malformed_requests() {
        for line in [
            "",
            "load",
            "load -1",
            "load 1 2",
            "run",
            "run fast 6",
            "run sync 10",
            "run sync x",
            "run sync 6 extra",
            "save sync 6",
            "save sync 6 ",
            "RUN sync 6",
        ] {
            assert!(parse_request(line).is_err(), "{line:?} was accepted");
        }
    }

    #[test]
    fn entry_headers_keep_spaces_in_names() {
        assert_eq!(parse_entry_header("3 a b"), Ok((3, "a b".into())));
        assert!(parse_entry_header("3").is_err());
        assert!(parse_entry_header("3 ").is_err());
        assert!(parse_entry_header("x a").is_err());
    }
}
