//! An error and its causes as one line, for a report's note or a
//! command's last word on stderr.

use std::error::Error;

/// `e` and its causes in one line, `outer: inner: ...`, each text once: an
/// error type that prints its source inside its own message (as
/// zipstream's and zstdkit's `I/O error: {0}` do) would otherwise repeat it
/// (`I/O error: File exists (os error 17): File exists (os error 17)`).
pub fn one_line(e: &(dyn Error + 'static)) -> String {
    let mut line = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.ends_with(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("I/O error: {0}")]
    struct Repeats(#[source] io::Error);

    #[test]
    fn each_cause_is_named_once() {
        // A cause printed apart from its wrapper's message is added.
        assert_eq!(one_line(&Outer(io::Error::other("inner"))), "outer: inner");
        // One its wrapper already printed is not repeated.
        assert_eq!(
            one_line(&Repeats(io::Error::other("gone"))),
            "I/O error: gone"
        );
    }
}
