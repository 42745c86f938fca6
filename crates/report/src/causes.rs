//! An error and its causes as one line, for a report's note or a
//! command's last word on stderr.

use std::error::Error;
use std::io;

/// `e` and its causes in one line, `outer: inner: ...`, each text once: an
/// error type that prints its source inside its own message (as
/// zipstream's and zstdkit's `I/O error: {0}` do) would otherwise repeat it
/// (`I/O error: File exists (os error 17): File exists (os error 17)`).
///
/// I/O errors are in the operating system's words: `No such file or
/// directory`, never std's ` (os error 2)` tail nor its names for error
/// kinds (`entity not found`), wherever in the chain they are printed.
pub fn one_line(e: &(dyn Error + 'static)) -> String {
    let mut line = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let text = match c.downcast_ref::<io::Error>() {
            Some(io) => os_words(io),
            None => without_os_codes(&c.to_string()),
        };
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

/// An I/O error as the operating system words it (`strerror`), for a
/// message a user reads.
pub fn os_words(e: &io::Error) -> String {
    use io::ErrorKind::*;
    let text = e.to_string();
    if e.raw_os_error().is_some() || text != io::Error::from(e.kind()).to_string() {
        // The system's text, or the message the error was made with
        // (std's own too: `stream did not contain valid UTF-8`).
        return without_os_codes(&text);
    }
    match e.kind() {
        NotFound => "No such file or directory".into(),
        PermissionDenied => "Permission denied".into(),
        AlreadyExists => "File exists".into(),
        BrokenPipe => "Broken pipe".into(),
        UnexpectedEof => "unexpected end of file".into(),
        WriteZero | StorageFull => "No space left on device".into(),
        IsADirectory => "Is a directory".into(),
        NotADirectory => "Not a directory".into(),
        Interrupted => "Interrupted system call".into(),
        InvalidInput | InvalidData => "Invalid argument".into(),
        _ => "Input/output error".into(),
    }
}

/// `text` without std's ` (os error N)` after each system message, which
/// an error type that formats an `io::Error` into its own text carries
/// along.
fn without_os_codes(text: &str) -> String {
    const MARK: &str = " (os error ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            out.push_str(&rest[..at]);
            rest = &after[digits + 1..];
        } else {
            out.push_str(&rest[..at + MARK.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[derive(Debug, thiserror::Error)]
    #[error("writing a.zip: {0}")]
    struct Wraps(io::Error);

    #[test]
    fn io_errors_are_in_the_systems_words() {
        let gone = || io::Error::from_raw_os_error(2);
        // strerror(2), as the C library words it: the oracle.
        assert_eq!(one_line(&gone()), "No such file or directory");
        // Formatted into another error's text, the code goes too.
        assert_eq!(
            one_line(&Wraps(gone())),
            "writing a.zip: No such file or directory"
        );
        // An error made from a kind gets the system's words, not std's.
        assert_eq!(
            one_line(&io::Error::from(io::ErrorKind::NotFound)),
            "No such file or directory"
        );
        // A message std made the error with is kept.
        let utf8 = io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        );
        assert_eq!(one_line(&utf8), "stream did not contain valid UTF-8");
        let mut line = String::new();
        let err = io::BufRead::read_line(&mut &b"\xff\n"[..], &mut line).unwrap_err();
        assert_eq!(one_line(&err), err.to_string());
        // Text that only looks like the tail is kept.
        assert_eq!(
            without_os_codes("a (os error x) b (os error 13)"),
            "a (os error x) b"
        );
    }
}
