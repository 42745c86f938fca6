//! The files a search reads and writes, named by path: an expression file
//! (and a domain file) loaded into an [`Index`], an event file opened as an
//! [`EventReader`], an output landed whole or not at all (a search's,
//! [`search_to`], or a generated workload's, [`generate`]), two outputs
//! compared. A path of `-` is stdin for an input, and for an output the
//! writer the caller passes (its standard output: this crate prints
//! nothing itself).
//!
//! Behind the default feature `files`, which brings `landing` (a temporary
//! sibling renamed into place, deleted when a signal ends the process); a
//! user who opens the files itself can leave it out.
//!
//! ```
//! use betree::stream::files::{self, Input};
//! use betree::stream::{EventsFormat, Mode};
//!
//! let dir = std::env::temp_dir().join(format!("betree-files-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(dir.join("exprs"), "[{age,int,disallow_undefined}].\n<<\"age > 17\">>.\n")?;
//! std::fs::write(dir.join("events"), "{\"age\": 30}\n{\"age\": 12}\n")?;
//! let input = Input {
//!     exprs: dir.join("exprs"),
//!     events: dir.join("events"),
//!     events_format: EventsFormat::Json,
//!     domains: None,
//! };
//! let (index, _build_time) = input.load_index()?;
//! let mut events = input.open_events(index.schema())?;
//! let out = dir.join("out");
//! files::search_to(&index, &mut events, Mode::Std, 0, &out, &mut std::io::sink())?;
//! assert_eq!(std::fs::read_to_string(&out)?, "1\n\n");
//! std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{
    Comparison, EventReader, EventsFormat, ExprFile, Mode, OutputLines, StreamBuffers, StreamError,
    compare, read_all, search_stream,
};
use crate::workload::{Adtech, DeepNegation};
use crate::{Event, Index, Schema};

/// How much of a file is read, or written, at a time.
const BUFFER: usize = 1 << 16;

/// What the writer for a `-` output is called in errors.
const STDOUT: &str = "standard output";

/// What went wrong with a file: the path (as given, or `stdin`, or
/// `standard output`) and why.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    /// An input could not be opened or read (not UTF-8 included).
    #[error("reading {name}")]
    Read {
        /// The file.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A file's contents, or the search, failed ([`StreamError`]).
    #[error(transparent)]
    Stream(#[from] StreamError),
    /// The output is one of the inputs: landing it would replace the
    /// user's file with search results.
    #[error("refusing to write {}: it is the {what} {}", output.display(), input.display())]
    OutputIsInput {
        /// The output given.
        output: PathBuf,
        /// Which input it is ("expression file", "event file", "domain
        /// file").
        what: &'static str,
        /// That input's path, as given.
        input: PathBuf,
    },
    /// Writing an output's data failed.
    #[error("writing {name}")]
    Write {
        /// The output.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// An output file could not be opened or put in place.
    #[error("writing {name}")]
    Land {
        /// The output.
        name: String,
        /// Why.
        #[source]
        source: landing::OutputError,
    },
}

/// The files a search or a benchmark reads.
#[derive(Debug, Clone)]
pub struct Input {
    /// The expression file (`-`: stdin).
    pub exprs: PathBuf,
    /// The event file (`-`: stdin).
    pub events: PathBuf,
    /// Its format.
    pub events_format: EventsFormat,
    /// A domain file replacing the expression file's own list (JSON, or
    /// an Erlang term list as an expression file opens with).
    pub domains: Option<PathBuf>,
}

impl Input {
    /// Loads the expressions (with the domain file's domains, if any) into
    /// an index, and gives the time the build took (the files' reading
    /// left out).
    pub fn load_index(&self) -> Result<(Index, Duration), FilesError> {
        let text = read_text(&self.exprs)?;
        let mut file = ExprFile::parse(text, &self.exprs.display().to_string())?;
        if let Some(path) = &self.domains {
            let text = read_text(path)?;
            file.set_domains(&text, &path.display().to_string())?;
        }
        Ok(file.build()?)
    }

    /// [`Input::load_index`], and every event read, for a caller that
    /// replays them.
    pub fn load(&self) -> Result<(Index, Vec<Event>, Duration), FilesError> {
        let (index, build) = self.load_index()?;
        let events = read_all(&mut self.open_events(index.schema())?)?;
        Ok((index, events, build))
    }

    /// The event file, its events read one at a time as events of
    /// `schema`.
    pub fn open_events<'a>(&self, schema: &'a Schema) -> Result<EventReader<'a>, FilesError> {
        let name = self.events.display().to_string();
        let reader: Box<dyn BufRead> = if self.events == Path::new("-") {
            Box::new(io::stdin().lock())
        } else {
            let f = fs::File::open(&self.events).map_err(|source| FilesError::Read {
                name: name.clone(),
                source,
            })?;
            Box::new(BufReader::with_capacity(BUFFER, f))
        };
        Ok(EventReader::new(reader, name, self.events_format, schema))
    }

    /// Refuses an `output` that is one of these files (the same file by
    /// device and inode, so also through a symbolic or a hard link):
    /// renaming the finished output over it would replace the user's
    /// expression, event or domain file. `-` is never a file.
    pub fn refuse_output_over(&self, output: &Path) -> Result<(), FilesError> {
        use std::os::unix::fs::MetadataExt;
        if output == Path::new("-") {
            return Ok(());
        }
        let Ok(out) = fs::metadata(output) else {
            return Ok(());
        };
        let inputs = [
            ("expression file", Some(&self.exprs)),
            ("event file", Some(&self.events)),
            ("domain file", self.domains.as_ref()),
        ];
        for (what, path) in inputs {
            let Some(path) = path.filter(|p| p.as_path() != Path::new("-")) else {
                continue;
            };
            if fs::metadata(path).is_ok_and(|m| m.dev() == out.dev() && m.ino() == out.ino()) {
                return Err(FilesError::OutputIsInput {
                    output: output.to_owned(),
                    what,
                    input: path.clone(),
                });
            }
        }
        Ok(())
    }
}

/// `path` read whole as text (`-`: stdin).
fn read_text(path: &Path) -> Result<String, FilesError> {
    let mut text = String::new();
    let read = if path == Path::new("-") {
        io::stdin().read_to_string(&mut text).map(drop)
    } else {
        fs::read_to_string(path).map(|t| text = t)
    };
    read.map_err(|source| FilesError::Read {
        name: if path == Path::new("-") {
            "stdin".into()
        } else {
            path.display().to_string()
        },
        source,
    })?;
    Ok(text)
}

/// Writes an output through a 64 KiB buffer: `fill` writes it into
/// `stdout` when `path` is `-`, else into a temporary sibling of `path`
/// renamed into place once `fill` and the flush succeeded (a failure
/// leaves no file, and any file that was there as it was). `fill`'s
/// [`StreamError::Write`] is the output's [`FilesError::Write`]; its other
/// errors stay themselves.
pub fn write_output(
    path: &Path,
    stdout: &mut dyn Write,
    fill: impl FnOnce(&mut dyn Write) -> Result<(), StreamError>,
) -> Result<(), FilesError> {
    let name = if path == Path::new("-") {
        STDOUT.to_owned()
    } else {
        path.display().to_string()
    };
    let write = |source| FilesError::Write {
        name: name.clone(),
        source,
    };
    let land = |source| FilesError::Land {
        name: name.clone(),
        source,
    };
    let filled = |e| match e {
        StreamError::Write(e) => write(e),
        e => FilesError::Stream(e),
    };
    if path == Path::new("-") {
        let mut out = BufWriter::with_capacity(BUFFER, stdout);
        fill(&mut out).map_err(filled)?;
        return out.flush().map_err(write);
    }
    let mut output = landing::Output::create(path, true).map_err(land)?;
    let mut out = BufWriter::with_capacity(BUFFER, output.file_mut());
    fill(&mut out).map_err(filled)?;
    out.flush().map_err(write)?;
    drop(out);
    output.commit().map_err(land)
}

/// Searches every event of `events` ([`search_stream`]) into the output
/// `path` ([`write_output`]: `-` is `stdout`).
pub fn search_to(
    index: &Index,
    events: &mut EventReader<'_>,
    mode: Mode,
    budget: u64,
    path: &Path,
    stdout: &mut dyn Write,
) -> Result<(), FilesError> {
    let mut bufs = StreamBuffers::default();
    write_output(path, stdout, |out| {
        search_stream(index, events, mode, budget, &mut bufs, out).map(drop)
    })
}

/// Which file of a workload a generator writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generated {
    /// The expression file.
    Exprs,
    /// The event file.
    Events,
}

/// A workload whose files [`generate`] writes.
#[derive(Debug)]
pub enum Workload {
    /// The reference benchmark's: random `and`/`or`/`not` trees over
    /// `params` booleans, 0/1 events ([`super::write_boolean_exprs`]).
    Boolean {
        /// How many boolean parameters.
        params: usize,
    },
    /// Ad targeting, JSON events ([`Adtech`]; boxed, as it holds its
    /// whole layout).
    Adtech(Box<Adtech>),
    /// Few attributes, wide integer ranges, string equality and negation
    /// nested deep, JSON events ([`DeepNegation`]; its schema is fixed).
    DeepNegation,
}

/// Writes `count` expressions or events of `workload` from `seed` (the
/// same seed, the same file) into the output `path` ([`write_output`]:
/// `-` is `stdout`), one at a time, so `count` bounds time, not memory.
pub fn generate(
    workload: &Workload,
    what: Generated,
    count: u64,
    seed: u64,
    path: &Path,
    stdout: &mut dyn Write,
) -> Result<(), FilesError> {
    let n = usize::try_from(count).unwrap_or(usize::MAX);
    write_output(path, stdout, |out| {
        Ok(match (workload, what) {
            (Workload::Adtech(a), Generated::Exprs) => a.write_exprs(out, n, seed),
            (Workload::Adtech(a), Generated::Events) => a.write_events(out, n, seed),
            (Workload::DeepNegation, Generated::Exprs) => DeepNegation.write_exprs(out, n, seed),
            (Workload::DeepNegation, Generated::Events) => DeepNegation.write_events(out, n, seed),
            (Workload::Boolean { params }, Generated::Exprs) => {
                super::write_boolean_exprs(out, *params, count, seed)
            }
            (Workload::Boolean { params }, Generated::Events) => {
                super::write_boolean_events(out, *params, count, seed)
            }
        }?)
    })
}

/// Compares two search outputs line by line ([`compare`]): `a` and `b` are
/// files, or `-` for stdin (read once: named twice, the second side sees
/// it at its end).
pub fn diff(a: &Path, b: &Path) -> Result<Comparison, FilesError> {
    let mut lines_a = output_lines(a, false)?;
    let mut lines_b = output_lines(b, a == Path::new("-"))?;
    Ok(compare(&mut lines_a, &mut lines_b)?)
}

/// One side of [`diff`]: `path`'s lines (`-`: stdin; `exhausted`: stdin
/// already read by the other side, so none).
fn output_lines(path: &Path, exhausted: bool) -> Result<OutputLines, FilesError> {
    if path == Path::new("-") {
        let reader: Box<dyn BufRead> = if exhausted {
            Box::new(io::empty())
        } else {
            Box::new(io::stdin().lock())
        };
        return Ok(OutputLines::new(reader, "stdin".into()));
    }
    let name = path.display().to_string();
    match fs::File::open(path) {
        Ok(f) => Ok(OutputLines::new(
            Box::new(BufReader::with_capacity(BUFFER, f)),
            name,
        )),
        Err(source) => Err(FilesError::Read { name, source }),
    }
}

impl Comparison {
    /// The comparison in one line, the outputs named `a` and `b`:
    /// `identical: N events`, or where they first differ and what each
    /// has there (`no match` for an empty line, `no such event` past an
    /// output's end).
    pub fn describe(&self, a: &Path, b: &Path) -> String {
        match self {
            Comparison::Identical(events) => format!("identical: {events} events"),
            Comparison::Differs { event, a: x, b: y } => {
                let show = |v: &Option<String>| match v.as_deref() {
                    Some("") => "no match".to_string(),
                    Some(s) => format!("`{s}`"),
                    None => "no such event".to_string(),
                };
                format!(
                    "event {event} differs: {} has {}, {} has {}",
                    a.display(),
                    show(x),
                    b.display(),
                    show(y)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests;
