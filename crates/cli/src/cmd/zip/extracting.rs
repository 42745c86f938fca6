//! What `unzip` asks and prints while it extracts: zipstream's
//! [`lines`](zipstream::extract::lines) writes Info-ZIP's lines (here to
//! stdout), and [`Prompt`] asks about a file in the way, as Info-ZIP's
//! unzip asks.

use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

pub(super) use zipstream::extract::lines::pad;

/// The lines of one extraction, on stdout.
pub type Lines = zipstream::extract::lines::Lines<io::Stdout>;

/// Info-ZIP unzip's question about a file in the way, asked on stderr
/// and answered on stdin (a terminal or not): `y`, `n`, `A` (all), `N`
/// (none), `r` (rename, then `new name: `). End of input counts as `N`,
/// said so in Info-ZIP's words, and fails the run once it is over.
pub struct Prompt {
    state: Arc<Mutex<Asked>>,
}

#[derive(Default)]
struct Asked {
    /// The `-d` directory as written, with a `/`, or nothing for `.`.
    prefix: String,
    /// `A` or `N` answered (or end of input): the answer to every later
    /// question.
    always: Option<Existing>,
    /// Stdin ended at the prompt, or a new name typed was warned of: the
    /// run fails once it is over.
    dry: bool,
    /// `-j`: a new name keeps its last part only.
    junk_paths: bool,
    /// Writes out the extraction lines before a question is asked.
    flush: Option<Lines>,
}

use zipstream::{Existing, ExistsHook};

impl Prompt {
    /// A prompt for an extraction into `dir` (named in the questions as
    /// the extraction lines name files); `junk_paths`: `-j`.
    pub fn new(dir: &Path, junk_paths: bool) -> Prompt {
        let dir = dir.display().to_string();
        let prefix = if dir == "." {
            String::new()
        } else {
            format!("{}/", dir.trim_end_matches('/'))
        };
        Prompt {
            state: Arc::new(Mutex::new(Asked {
                prefix,
                junk_paths,
                ..Asked::default()
            })),
        }
    }

    /// Has the extraction lines of `lines` written out before each
    /// question, so that they come first on a terminal.
    pub fn after(&self, lines: &Lines) {
        if let Ok(mut g) = self.state.lock() {
            g.flush = Some(lines.clone());
        }
    }

    /// The hook that asks.
    pub fn hook(&self) -> ExistsHook {
        let state = Arc::clone(&self.state);
        ExistsHook::new(move |rel| match state.lock() {
            Ok(mut g) => g.ask(rel),
            // A question that panicked once is not asked again: keep.
            Err(_) => Existing::Keep,
        })
    }

    /// Whether stdin ended at a question (the files after were kept) or
    /// a new name typed was warned of: the run fails, as Info-ZIP's does.
    pub fn ran_dry(&self) -> bool {
        self.state.lock().map(|g| g.dry).unwrap_or(true)
    }
}

impl Asked {
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
        if dotdot && !self.junk_paths && self.flush.is_some() {
            self.dry = true;
            let mut out = io::stdout();
            let shown = perfkit::printable::name(typed);
            let _ = writeln!(
                out,
                "warning:  skipped \"../\" path component(s) in {shown}"
            );
            let _ = out.flush();
        }
        let kept = if self.junk_paths {
            parts.last().map(|p| p.to_string())
        } else {
            (!parts.is_empty()).then(|| parts.join("/"))
        };
        kept.filter(|k| !k.is_empty())
    }

    fn ask(&mut self, rel: &Path) -> Existing {
        if let Some(a) = &self.always {
            return a.clone();
        }
        if let Some(f) = &self.flush {
            f.flush();
        }
        let shown =
            perfkit::printable::name(&format!("{}{}", self.prefix, rel.display())).into_owned();
        let mut err = io::stderr();
        loop {
            let _ = write!(
                err,
                "replace {shown}? [y]es, [n]o, [A]ll, [N]one, [r]ename: "
            );
            let _ = err.flush();
            let Some(line) = read_answer() else {
                let _ = writeln!(
                    err,
                    " NULL\n(EOF or read error, treating as \"[N]one\" ...)"
                );
                self.dry = true;
                self.always = Some(Existing::Keep);
                return Existing::Keep;
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
                    let _ = write!(err, "new name: ");
                    let _ = err.flush();
                    match read_answer() {
                        None => {
                            let _ = writeln!(
                                err,
                                " NULL\n(EOF or read error, treating as \"[N]one\" ...)"
                            );
                            self.dry = true;
                            self.always = Some(Existing::Keep);
                            return Existing::Keep;
                        }
                        Some(name) => match self.new_name(&name) {
                            Some(n) => return Existing::Rename(n),
                            None => continue,
                        },
                    }
                },
                None => {
                    let _ = writeln!(err, "error:  invalid response [{{ENTER}}]");
                }
                Some(_) => {
                    let _ = writeln!(err, "error:  invalid response [{line}]");
                }
            }
        }
    }
}

/// One line of stdin without its line end; none at its end (or when it
/// cannot be read). Read a byte at a time, so that nothing after the
/// line is taken from stdin.
fn read_answer() -> Option<String> {
    use std::io::Read;
    let mut line = Vec::new();
    let mut stdin = io::stdin().lock();
    let mut b = [0u8; 1];
    loop {
        match stdin.read(&mut b) {
            Ok(0) if line.is_empty() => return None,
            Ok(0) => break,
            Ok(_) if b[0] == b'\n' => break,
            Ok(_) => {
                // A name is never this long; stop reading a binary stdin.
                if line.len() >= 4096 {
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
