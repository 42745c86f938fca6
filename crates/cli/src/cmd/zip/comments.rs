//! The comments zip reads from stdin: the archive's (`-z`) and each
//! entry's (`-c`), with Info-ZIP's prompts.

use std::io::{self, IsTerminal, Read, Write};

use anyhow::{Context, Result, bail};

/// `-z`'s lines, as Info-ZIP's zip prints them (none under `-q`): the
/// comment there was, if any, and the prompt.
pub(super) fn comment_prompt(old: Option<&[u8]>, quiet: bool) -> String {
    let mut lines = String::new();
    if !quiet {
        if let Some(old) = old.filter(|c| !c.is_empty()) {
            lines.push_str("current zip file comment is:\n");
            lines.push_str(&String::from_utf8_lossy(old));
            lines.push('\n');
        }
        lines.push_str("enter new zip file comment (end with .):\n");
    }
    lines
}

/// `-z`: the archive comment, read from stdin as Info-ZIP reads it: up to
/// a line holding only `.` or the end of input, lines joined by CR LF.
pub(super) fn comment_from_stdin() -> Result<String> {
    use io::BufRead;
    let mut lines = Vec::new();
    let mut total = 0usize;
    for line in io::stdin().lock().lines() {
        let line = line.context("reading the archive comment from stdin (-z)")?;
        let line = line.trim_end_matches('\r').to_string();
        if line == "." {
            break;
        }
        total += line.len() + 2;
        if total > 0xFFFF {
            bail!("the archive comment (-z) is over 65,535 bytes, the most a ZIP archive holds");
        }
        lines.push(line);
    }
    Ok(lines.join("\r\n"))
}

/// `-c`: one line of stdin for each entry added (`names`: each item's
/// name and its name as shown), the comment of its entry (an empty line
/// or the end of input: none). On a terminal each is asked for first
/// (`Enter comment for NAME:`); otherwise the prompts are returned, for
/// the caller to print where Info-ZIP prints them, after the entries.
#[allow(clippy::type_complexity)] // one caller
pub(super) fn entry_comments_from_stdin(
    names: &[(String, String)],
) -> Result<(std::collections::HashMap<String, String>, Option<String>)> {
    use io::BufRead;
    let interactive = io::stdin().is_terminal();
    let mut comments = std::collections::HashMap::new();
    let mut prompts = String::new();
    let mut stdin = io::stdin().lock();
    for (name, shown) in names {
        let prompt = format!("Enter comment for {}:\n", perfkit::printable::name(shown));
        if interactive {
            print!("{prompt}");
            io::stdout().flush()?;
        } else {
            prompts.push_str(&prompt);
        }
        let mut line = Vec::new();
        (&mut stdin)
            .take(0x1_0000)
            .read_until(b'\n', &mut line)
            .context("reading an entry comment from stdin (-c)")?;
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        if line.len() > 0xFFFF {
            bail!("an entry comment (-c) is over 65,535 bytes, the most a ZIP entry holds");
        }
        if !line.is_empty() {
            comments.insert(name.clone(), String::from_utf8_lossy(&line).into_owned());
        }
    }
    Ok((comments, (!interactive).then_some(prompts)))
}
