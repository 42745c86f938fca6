//! Info-ZIP unzip's question about a file in the way: `replace NAME?
//! [y]es, [n]o, [A]ll, [N]one, [r]ename: `, answered a line at a time:
//! `y`, `n`, `A` (all), `N` (none), `r` (rename, then `new name: `). End
//! of input counts as `N`, said so in Info-ZIP's words, and the run is to
//! fail once it is over ([`Prompt::ran_dry`]). The questions go to one
//! writer (a tool's stderr), the answers come from one reader (its stdin),
//! read a byte at a time so that nothing after a line is taken.
//!
//! ```
//! use std::io;
//! use std::path::Path;
//! use zipstream::Existing;
//! use zipstream::extract::prompt::Prompt;
//!
//! let answers = io::Cursor::new(b"n\nr\n../new\n".to_vec());
//! let prompt: Prompt<io::Sink> = Prompt::new(Path::new("out"), false, io::sink(), answers);
//! let hook = prompt.hook();
//! assert_eq!(hook.answer(Path::new("a.txt")), Existing::Keep);
//! assert_eq!(hook.answer(Path::new("b.txt")), Existing::Rename("new".into()));
//! // End of input: every later file is kept, and the run fails.
//! assert_eq!(hook.answer(Path::new("c.txt")), Existing::Keep);
//! assert!(prompt.ran_dry());
//! ```

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::lines::{Lines, dir_prefix};
use crate::listing::printable_name;
use crate::{Existing, ExistsHook};

/// The longest answer read: a name is never this long, and a binary
/// input is not read on for ever.
const MAX_ANSWER: usize = 4096;

/// Info-ZIP unzip's question about a file in the way, whose extraction
/// lines (if any) are written to `W`.
pub struct Prompt<W: Write + Send + 'static> {
    state: Arc<Mutex<Asked<W>>>,
}

struct Asked<W: Write + Send + 'static> {
    /// What goes before each name (see `lines::dir_prefix`).
    prefix: String,
    /// `A` or `N` answered (or end of input): the answer to every later
    /// question.
    always: Option<Existing>,
    /// Input ended at the prompt, or a new name typed was warned of: the
    /// run fails once it is over.
    dry: bool,
    /// `-j`: a new name keeps its last part only.
    junk_paths: bool,
    /// The extraction lines, written out before a question is asked.
    lines: Option<Lines<W>>,
    /// Where the questions go.
    questions: Box<dyn Write + Send>,
    /// Where the answers come from.
    answers: Box<dyn Read + Send>,
}

impl<W: Write + Send + 'static> Prompt<W> {
    /// A prompt for an extraction into `dir`, the `-d` destination as the
    /// user wrote it or the empty path without one (named in the questions
    /// as the extraction lines name files); `junk_paths`: `-j`. It asks on
    /// `questions` and reads the answers from `answers`.
    pub fn new(
        dir: &Path,
        junk_paths: bool,
        questions: impl Write + Send + 'static,
        answers: impl Read + Send + 'static,
    ) -> Prompt<W> {
        Prompt {
            state: Arc::new(Mutex::new(Asked {
                prefix: dir_prefix(dir),
                always: None,
                dry: false,
                junk_paths,
                lines: None,
                questions: Box::new(questions),
                answers: Box::new(answers),
            })),
        }
    }

    /// Has the extraction lines of `lines` written out before each
    /// question, so that they come first on a terminal; Info-ZIP's warning
    /// about a `..` in a new name goes among them.
    pub fn after(&self, lines: &Lines<W>) {
        if let Ok(mut g) = self.state.lock() {
            g.lines = Some(lines.clone());
        }
    }

    /// The hook that asks, for [`ExtractOptions::on_exists`](crate::ExtractOptions).
    pub fn hook(&self) -> ExistsHook {
        let state = Arc::clone(&self.state);
        ExistsHook::new(move |rel| match state.lock() {
            Ok(mut g) => g.ask(rel),
            // A question that panicked once is not asked again: keep.
            Err(_) => Existing::Keep,
        })
    }

    /// Whether the input ended at a question (the files after were kept)
    /// or a new name typed was warned of: the run fails, as Info-ZIP's
    /// does (its exit 1).
    pub fn ran_dry(&self) -> bool {
        self.state.lock().map(|g| g.dry).unwrap_or(true)
    }
}

impl<W: Write + Send + 'static> Asked<W> {
    /// The name typed at `new name: ` as Info-ZIP takes it: a leading `/`,
    /// `.` and `..` left out (`..` with Info-ZIP's warning, among the
    /// lines), and under `-j` its folders too; none when nothing is left.
    fn new_name(&mut self, typed: &str) -> Option<String> {
        let mut dotdot = false;
        let parts: Vec<&str> = typed
            .split('/')
            .filter(|p| {
                dotdot |= *p == "..";
                !matches!(*p, "" | "." | "..")
            })
            .collect();
        // Info-ZIP's warning, among the lines (not under -q, nor -j,
        // whose folders go anyway); it fails the run, as its exit 1 does.
        if dotdot
            && !self.junk_paths
            && let Some(lines) = &self.lines
        {
            self.dry = true;
            let shown = printable_name(typed);
            lines.say(&format!(
                "warning:  skipped \"../\" path component(s) in {shown}"
            ));
        }
        let kept = if self.junk_paths {
            parts.last().map(|p| p.to_string())
        } else {
            (!parts.is_empty()).then(|| parts.join("/"))
        };
        kept.filter(|k| !k.is_empty())
    }

    /// Input ended at a question: Info-ZIP's words, and `N` from here on.
    fn ran_out(&mut self) -> Existing {
        let err = &mut self.questions;
        let _ = writeln!(
            err,
            " NULL\n(EOF or read error, treating as \"[N]one\" ...)"
        );
        self.dry = true;
        self.always = Some(Existing::Keep);
        Existing::Keep
    }

    fn ask(&mut self, rel: &Path) -> Existing {
        if let Some(a) = &self.always {
            return a.clone();
        }
        if let Some(l) = &self.lines {
            l.flush();
        }
        let shown = printable_name(&format!("{}{}", self.prefix, rel.display())).into_owned();
        loop {
            let err = &mut self.questions;
            let _ = write!(
                err,
                "replace {shown}? [y]es, [n]o, [A]ll, [N]one, [r]ename: "
            );
            let _ = err.flush();
            let Some(line) = read_answer(&mut self.answers) else {
                return self.ran_out();
            };
            match line.chars().next() {
                Some('y') => return Existing::Replace,
                Some('n') => return Existing::Keep,
                Some('A') => {
                    self.always = Some(Existing::Replace);
                    return Existing::Replace;
                }
                Some('N') => {
                    self.always = Some(Existing::Keep);
                    return Existing::Keep;
                }
                Some('r') => loop {
                    let _ = write!(self.questions, "new name: ");
                    let _ = self.questions.flush();
                    match read_answer(&mut self.answers) {
                        None => return self.ran_out(),
                        Some(name) => match self.new_name(&name) {
                            Some(n) => return Existing::Rename(n),
                            None => continue,
                        },
                    }
                },
                None => {
                    let _ = writeln!(self.questions, "error:  invalid response [{{ENTER}}]");
                }
                Some(_) => {
                    let _ = writeln!(self.questions, "error:  invalid response [{line}]");
                }
            }
        }
    }
}

/// One line of `answers` without its line end; none at its end (or when
/// it cannot be read, or runs past [`MAX_ANSWER`] bytes). Read a byte at
/// a time, so that nothing after the line is taken.
fn read_answer(answers: &mut dyn Read) -> Option<String> {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    loop {
        match answers.read(&mut b) {
            Ok(0) if line.is_empty() => return None,
            Ok(0) => break,
            Ok(_) if b[0] == b'\n' => break,
            Ok(_) => {
                if line.len() >= MAX_ANSWER {
                    return None;
                }
                line.push(b[0]);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Some(String::from_utf8_lossy(&line).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer the test reads once the questions are asked.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().write(b)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    /// A prompt into `dir` answered by `answers`, and what it asked.
    fn prompt(dir: &str, junk: bool, answers: &str) -> (Prompt<Shared>, Shared) {
        let asked = Shared::default();
        let answers = io::Cursor::new(answers.as_bytes().to_vec());
        let p = Prompt::new(Path::new(dir), junk, asked.clone(), answers);
        (p, asked)
    }

    // The questions and complaints are Info-ZIP unzip 6.00's, as it asks
    // them on a terminal (unzip_cli's prompt tests run it beside ours).
    #[test]
    fn questions_name_the_file_under_the_destination_and_bad_answers_are_asked_again() {
        let (p, asked) = prompt("out/", false, "\nx\ny\nA\n");
        let hook = p.hook();
        assert_eq!(hook.answer(Path::new("a")), Existing::Replace);
        assert_eq!(hook.answer(Path::new("d/b")), Existing::Replace);
        // `A` answers every later question unasked.
        assert_eq!(hook.answer(Path::new("c")), Existing::Replace);
        let q = "? [y]es, [n]o, [A]ll, [N]one, [r]ename: ";
        assert_eq!(
            asked.text(),
            format!(
                "replace out/a{q}error:  invalid response [{{ENTER}}]\n\
                 replace out/a{q}error:  invalid response [x]\n\
                 replace out/a{q}replace out/d/b{q}"
            )
        );
        assert!(!p.ran_dry());
    }

    #[test]
    fn end_of_input_keeps_the_rest_and_fails_the_run() {
        let (p, asked) = prompt("", false, "N");
        let hook = p.hook();
        assert_eq!(hook.answer(Path::new("a")), Existing::Keep);
        assert!(!p.ran_dry(), "N answered is not the input running dry");
        let (p, asked_dry) = prompt("", false, "r\n");
        assert_eq!(p.hook().answer(Path::new("b")), Existing::Keep);
        assert_eq!(p.hook().answer(Path::new("c")), Existing::Keep);
        assert!(p.ran_dry());
        assert_eq!(
            asked_dry.text(),
            "replace b? [y]es, [n]o, [A]ll, [N]one, [r]ename: new name:  NULL\n\
             (EOF or read error, treating as \"[N]one\" ...)\n"
        );
        assert!(asked.text().starts_with("replace a?"));
    }

    #[test]
    fn a_new_name_drops_dot_dot_and_under_j_its_folders() {
        let (p, _) = prompt("", false, "r\n/../x/./y\nr\n..\nz\n");
        let hook = p.hook();
        assert_eq!(hook.answer(Path::new("a")), Existing::Rename("x/y".into()));
        // A name with nothing left is asked for again.
        assert_eq!(hook.answer(Path::new("b")), Existing::Rename("z".into()));
        // Without extraction lines (-q) the warning is not given, and the
        // run does not fail for it.
        assert!(!p.ran_dry());
        let (p, _) = prompt("", true, "r\nd/e/f\n");
        assert_eq!(
            p.hook().answer(Path::new("a")),
            Existing::Rename("f".into())
        );
    }

    #[test]
    fn a_dot_dot_typed_is_warned_of_among_the_lines_and_fails_the_run() {
        let shown = Shared::default();
        let dir = tempfile::tempdir().unwrap();
        let (lines, _hook) = Lines::start("a.zip", dir.path(), shown.clone()).unwrap();
        let (p, _) = prompt("", false, "r\n../\x1b/n\n");
        p.after(&lines);
        assert_eq!(
            p.hook().answer(Path::new("a")),
            Existing::Rename("\x1b/n".into())
        );
        assert!(p.ran_dry());
        assert_eq!(
            shown.text(),
            "Archive:  a.zip\nwarning:  skipped \"../\" path component(s) in ../^[/n\n"
        );
    }
}
