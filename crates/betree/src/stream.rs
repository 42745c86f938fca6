//! The index over files: an expression file loaded into an [`Index`]
//! ([`ExprFile`]), events read one at a time from an event file
//! ([`EventReader`]), and every event searched in batches with its
//! matching ids written out as text lines ([`search_stream`]), so a search
//! holds one batch of events and of lines, never the file; two outputs
//! compared line by line ([`compare`]). Also the
//! boolean reference profile's files written one expression or event at a
//! time ([`write_boolean_exprs`], [`write_boolean_events`]).
//!
//! The caller opens the files (or stdin) and names them, or [`files`]
//! (feature `files`, default) opens them by path and lands the output;
//! every error names the file, and the line or event, it is about
//! ([`StreamError`]).
//!
//! ```
//! use betree::stream::{EventReader, EventsFormat, ExprFile, Mode, StreamBuffers, search_stream};
//!
//! let exprs = "[{age,int,disallow_undefined}].\n<<\"age > 17\">>.\n<<\"age < 65\">>.\n";
//! let file = ExprFile::parse(exprs.to_owned(), "exprs.txt")?;
//! let (index, _build_time) = file.build()?;
//!
//! let events: Box<dyn std::io::BufRead> = Box::new(&b"{\"age\": 30}\n{\"age\": 12}\n"[..]);
//! let mut reader = EventReader::new(events, "events.json".into(), EventsFormat::Json, index.schema());
//! let mut out = Vec::new();
//! let ids = search_stream(&index, &mut reader, Mode::Std, 0, &mut StreamBuffers::default(), &mut out)?;
//! assert_eq!(ids, 3);
//! assert_eq!(out, b"1 2\n2\n");
//! # Ok::<(), betree::stream::StreamError>(())
//! ```

use std::io::{self, BufRead, Write};
use std::time::{Duration, Instant};

use crate::reference::{self, Term};
use crate::{BatchPath, Domain, Event, Index, MatchSink, Schema, Scratch, SearchStep};

#[cfg(feature = "files")]
pub mod files;
mod lines;

use lines::IdLines;

/// What went wrong reading, loading or searching, with the file (as the
/// caller named it) and where in it.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// A file's text is not what it should be (a term, a domain list), or
    /// reading it failed.
    #[error("reading {name}")]
    Read {
        /// The file.
        name: String,
        /// Why.
        #[source]
        source: crate::Error,
    },
    /// Reading a line of a JSON event file failed (not UTF-8, an I/O error).
    #[error("reading {name} line {line}")]
    ReadLine {
        /// The event file.
        name: String,
        /// The 1-based line.
        line: usize,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// An event does not fit the schema, or its search failed.
    #[error("{name}: event {number}")]
    Event {
        /// The event file.
        name: String,
        /// The event's 1-based number.
        number: usize,
        /// Why.
        #[source]
        source: crate::Error,
    },
    /// A line of a JSON event file is not an event of the schema.
    #[error("{name} line {line}")]
    EventLine {
        /// The event file.
        name: String,
        /// The 1-based line.
        line: usize,
        /// Why.
        #[source]
        source: crate::Error,
    },
    /// A domain file holds no term.
    #[error("{name}: no domain list")]
    NoDomainList {
        /// The domain file.
        name: String,
    },
    /// An expression file does not begin with its domain list, and no
    /// other was given ([`ExprFile::set_domains`]).
    #[error("{name}: the first term must be the domain list")]
    NoDomains {
        /// The expression file.
        name: String,
    },
    /// A term of the expression file is not an expression's text.
    #[error("{name} line {line}: expected <<\"expression\">>")]
    NotExpression {
        /// The expression file.
        name: String,
        /// The term's 1-based line.
        line: usize,
    },
    /// An expression does not parse or does not fit the schema.
    #[error("{name} line {line} (expression {number})")]
    Expression {
        /// The expression file.
        name: String,
        /// The term's 1-based line.
        line: usize,
        /// The expression's 1-based number (its id).
        number: usize,
        /// Why.
        #[source]
        source: crate::Error,
    },
    /// Reading a search output failed (not UTF-8, an I/O error).
    #[error("reading {name}")]
    ReadOutput {
        /// The output file.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Writing the output failed.
    #[error(transparent)]
    Write(#[from] io::Error),
}

/// How [`search_stream`] searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `search_batch`: each chunk of 512 events bit-parallel or event by
    /// event, whichever its events' selections favour.
    Std,
    /// `search_iter` + `search_all`.
    All,
    /// `search_iter` + `search_next` with a budget.
    Next,
    /// `search_batch_by` with every chunk bit-parallel.
    Batch,
}

/// The format of an event file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventsFormat {
    /// Erlang lists of 0/1 (or false/true), one per event.
    Ref,
    /// One JSON object per line.
    Json,
}

/// An expression file read: its expressions' terms and the domain list it
/// opens with, if it does; [`ExprFile::build`] makes the index.
#[derive(Debug)]
pub struct ExprFile {
    /// The file's name, for errors.
    name: String,
    terms: Vec<(usize, Term)>,
    domains: Option<Vec<Domain>>,
}

impl ExprFile {
    /// Reads the terms of an expression file's `text`, named `name` in
    /// errors. The text is dropped before this returns: the terms own
    /// their text, so one large expression is not held twice.
    pub fn parse(text: String, name: &str) -> Result<ExprFile, StreamError> {
        let read = |source| StreamError::Read {
            name: name.to_owned(),
            source,
        };
        let mut terms = reference::read_terms(&text, "expression file").map_err(read)?;
        drop(text);
        let domains = match terms.first() {
            Some((line, t @ Term::List(_))) => {
                let d = reference::domains_from_term(t, *line).map_err(read)?;
                terms.remove(0);
                Some(d)
            }
            _ => None,
        };
        Ok(ExprFile {
            name: name.to_owned(),
            terms,
            domains,
        })
    }

    /// Replaces the file's domains by those of a domain file's `text`
    /// (named `name` in errors): a JSON array of objects, or an Erlang term
    /// list as an expression file opens with.
    pub fn set_domains(&mut self, text: &str, name: &str) -> Result<(), StreamError> {
        let read = |source| StreamError::Read {
            name: name.to_owned(),
            source,
        };
        self.domains = Some(if looks_like_json(text) {
            crate::domain::domains_from_json(text).map_err(read)?
        } else {
            let terms = reference::read_terms(text, "domain file").map_err(read)?;
            let (line, first) = terms.first().ok_or_else(|| StreamError::NoDomainList {
                name: name.to_owned(),
            })?;
            reference::domains_from_term(first, *line).map_err(read)?
        });
        Ok(())
    }

    /// Builds the index of the file's expressions (ids from 1, in file
    /// order) and gives the time the build took.
    pub fn build(self) -> Result<(Index, Duration), StreamError> {
        let name = self.name;
        let Some(domains) = self.domains else {
            return Err(StreamError::NoDomains { name });
        };
        let schema = Schema::from_domains(domains).map_err(|source| StreamError::Read {
            name: name.clone(),
            source,
        })?;
        let t = Instant::now();
        let mut index = Index::new(schema.clone());
        let mut bulk = index.bulk();
        // Each text is handed over and dropped once parsed, before its
        // expression is compiled.
        for (n, (line, term)) in self.terms.into_iter().enumerate() {
            let (Term::Binary(e) | Term::Str(e)) = term else {
                return Err(StreamError::NotExpression { name, line });
            };
            bulk.insert_owned(n as u64 + 1, e)
                .map_err(|source| StreamError::Expression {
                    name: name.clone(),
                    line,
                    number: n + 1,
                    source,
                })?;
        }
        drop(bulk);
        let build = t.elapsed();
        Ok((index, build))
    }
}

/// Whether a domain file is JSON rather than an Erlang term list. Both
/// open with `[{`; a JSON object's first key is a string, an Erlang tuple's
/// first element an atom. (Looking at the end instead failed on Erlang files
/// that close with a `%` comment.)
fn looks_like_json(text: &str) -> bool {
    let mut rest = text.trim_start().strip_prefix('[').map(str::trim_start);
    if let Some(r) = rest {
        if r.starts_with(']') {
            // `[]` parses either way; JSON reads it the same.
            return true;
        }
        rest = r.strip_prefix('{').map(str::trim_start);
    }
    rest.is_some_and(|r| r.starts_with('"') || r.starts_with('}'))
}

/// Events read one at a time from an event file, so a search holds one
/// batch of them, never the file.
pub struct EventReader<'a> {
    schema: &'a Schema,
    /// The event file's name, for errors.
    path: String,
    source: EventSource,
    /// Events read so far (their 1-based number in errors).
    read: usize,
}

enum EventSource {
    Ref {
        stream: reference::EventStream<Box<dyn BufRead>>,
        /// The values of the event being read, reused event after event.
        values: Vec<bool>,
    },
    Json {
        reader: Box<dyn BufRead>,
        line: usize,
        text: String,
    },
}

impl<'a> EventReader<'a> {
    /// The events of `reader`, an event file in `format` named `name` in
    /// errors, as events of `schema`.
    pub fn new(
        reader: Box<dyn BufRead>,
        name: String,
        format: EventsFormat,
        schema: &'a Schema,
    ) -> Self {
        let source = match format {
            EventsFormat::Ref => EventSource::Ref {
                stream: reference::EventStream::new(reader),
                values: Vec::new(),
            },
            EventsFormat::Json => EventSource::Json {
                reader,
                line: 0,
                text: String::new(),
            },
        };
        EventReader {
            schema,
            path: name,
            source,
            read: 0,
        }
    }

    /// The next event, or `None` at the file's end.
    pub fn next_event(&mut self) -> Result<Option<Event>, StreamError> {
        let mut ev = Event::empty(self.schema);
        Ok(self.next_event_into(&mut ev)?.then_some(ev))
    }

    /// Reads the next event into `ev`, reusing its buffers (and the
    /// reader's), and says whether there was one: a search streams
    /// thousands of events through one batch of them.
    pub fn next_event_into(&mut self, ev: &mut Event) -> Result<bool, StreamError> {
        let path = &self.path;
        match &mut self.source {
            EventSource::Ref { stream, values } => {
                let read = stream
                    .next_event_into(values)
                    .map_err(|source| StreamError::Read {
                        name: path.clone(),
                        source,
                    })?;
                if read.is_none() {
                    return Ok(false);
                }
                ev.set_bools(self.schema, values)
                    .map_err(|source| StreamError::Event {
                        name: path.clone(),
                        number: self.read + 1,
                        source,
                    })?;
            }
            EventSource::Json { reader, line, text } => loop {
                text.clear();
                let n = reader
                    .read_line(text)
                    .map_err(|source| StreamError::ReadLine {
                        name: path.clone(),
                        line: *line + 1,
                        source,
                    })?;
                if n == 0 {
                    return Ok(false);
                }
                *line += 1;
                if !text.trim().is_empty() {
                    ev.set_json(self.schema, text.trim_end_matches(['\n', '\r']))
                        .map_err(|source| StreamError::EventLine {
                            name: path.clone(),
                            line: *line,
                            source,
                        })?;
                    break;
                }
            },
        }
        self.read += 1;
        Ok(true)
    }
}

/// Reads every event of `events`, for a caller that replays them.
pub fn read_all(events: &mut EventReader<'_>) -> Result<Vec<Event>, StreamError> {
    let mut all = Vec::new();
    while let Some(ev) = events.next_event()? {
        all.push(ev);
    }
    Ok(all)
}

/// Events searched together: one lane group of the batch path (512), so
/// its lanes are full. A batch's output lines are held until its last
/// expression is searched (7.5 MB of text on the dense profile, 2,534 ids
/// an event), so a larger batch holds more for no fuller lanes. When the
/// lines were formatted after the search, from lists of ids, the command
/// ran at 0.748-0.749x the library's search_batch against 0.710-0.738x
/// with 1,024 (dense profile, `betree bench` CPU rows, two interleaved
/// runs); adtech did not change (0.91-0.96x either way).
pub const SEARCH_BATCH: usize = 512;

/// Searches the events in batches of [`SEARCH_BATCH`], writing each
/// batch's lines (an event's ids, ascending, separated by spaces) before
/// reading the next; returns how many ids it wrote. A failed write is
/// [`StreamError::Write`], and only that.
/// `std` and `batch` both go through `search_batch_by`, which returns what
/// `search` does per event (the benchmark checks it): `std` lets it pick
/// bit-parallel or event by event per chunk (`BatchPath::Auto`), `batch`
/// is always bit-parallel. `betree bench` times this function as the
/// command's own path.
pub fn search_stream(
    index: &Index,
    events: &mut EventReader,
    mode: Mode,
    budget: u64,
    bufs: &mut StreamBuffers,
    out: &mut dyn Write,
) -> Result<u64, StreamError> {
    let StreamBuffers {
        batch,
        lines,
        scratch,
    } = bufs;
    let mut first = 1usize;
    let pushed = lines.pushed;
    let chunks = match mode {
        Mode::Batch => BatchPath::Lanes,
        _ => BatchPath::Auto,
    };
    loop {
        let mut n = 0;
        while n < SEARCH_BATCH {
            if n == batch.len() {
                batch.push(Event::empty(index.schema()));
            }
            if !events.next_event_into(&mut batch[n])? {
                break;
            }
            n += 1;
        }
        let batch = &batch[..n];
        if batch.is_empty() {
            return Ok(lines.pushed - pushed);
        }
        let path = &events.path;
        let at = |i: usize| {
            move |source| StreamError::Event {
                name: path.clone(),
                number: first + i,
                source,
            }
        };
        match mode {
            // The ids are written as text as the search finds them.
            Mode::Std | Mode::Batch => {
                if let Err(e) = index.search_batch_by(batch, lines, chunks) {
                    // Name the event at fault: the batch path checks them
                    // all before it starts, the plain one each on its own.
                    for (i, ev) in batch.iter().enumerate() {
                        index.search(ev).map_err(at(i))?;
                    }
                    return Err(at(0)(e));
                }
            }
            mode => {
                lines.start(batch.len());
                for (i, ev) in batch.iter().enumerate() {
                    let mut it = index.search_iter_in(ev, scratch).map_err(at(i))?;
                    let found = if mode == Mode::All {
                        index.search_all_in(it, scratch)
                    } else {
                        let ids = loop {
                            if let SearchStep::Done(ids) = index.search_next(&mut it, budget) {
                                break ids;
                            }
                        };
                        *scratch = it.into_scratch();
                        ids
                    };
                    lines.push_all(i, &found);
                }
            }
        }
        // Each line is handed over whole: two calls through `dyn Write`
        // per id cost more than the search itself on dense workloads
        // (thousands of ids per event).
        for i in 0..batch.len() {
            out.write_all(lines.finish(i))?;
        }
        first += batch.len();
    }
}

/// What [`search_stream`] keeps from one batch to the next, and a caller
/// streaming again over the same index may keep from one stream to the
/// next (the benchmark does, round after round, as its `search_batch` row
/// keeps its lists).
#[derive(Default)]
pub struct StreamBuffers {
    /// The batch's events, read in place batch after batch: a fresh event
    /// per line (allocated, filled value by value, freed) cost a dense run
    /// about 4 % on top of the search.
    batch: Vec<Event>,
    lines: IdLines,
    /// One scratch for the plain modes: a fresh memo and selection per
    /// event cost more than the search.
    scratch: Scratch,
}

/// Where two search outputs first differ ([`compare`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Comparison {
    /// Every line is the same: this many events.
    Identical(usize),
    /// Event `event` (1-based) has these lines, `None` on a side that has
    /// no such event.
    Differs {
        /// The event's 1-based number.
        event: usize,
        /// The first output's line.
        a: Option<String>,
        /// The second's.
        b: Option<String>,
    },
}

/// Compares two search outputs line by line, reading both as it goes
/// (memory holds one line of each, whatever the files' length), and stops
/// at the first difference.
pub fn compare(a: &mut OutputLines, b: &mut OutputLines) -> Result<Comparison, StreamError> {
    let mut events = 0usize;
    loop {
        let (x, y) = (a.next_line()?, b.next_line()?);
        if x.is_none() && y.is_none() {
            return Ok(Comparison::Identical(events));
        }
        if x != y {
            return Ok(Comparison::Differs {
                event: events + 1,
                a: x.map(str::to_owned),
                b: y.map(str::to_owned),
            });
        }
        events += 1;
    }
}

/// A search output's lines one at a time, split as [`str::lines`] splits
/// (at `\n` or `\r\n`; a last line needs no end).
pub struct OutputLines {
    reader: Box<dyn BufRead>,
    name: String,
    line: String,
}

impl OutputLines {
    /// The lines of `reader`, an output named `name` in errors.
    pub fn new(reader: Box<dyn BufRead>, name: String) -> Self {
        OutputLines {
            reader,
            name,
            line: String::new(),
        }
    }

    /// The next line without its ending, or `None` at the end. Not UTF-8
    /// is an error, as it is for a whole-file read.
    pub fn next_line(&mut self) -> Result<Option<&str>, StreamError> {
        self.line.clear();
        let n =
            self.reader
                .read_line(&mut self.line)
                .map_err(|source| StreamError::ReadOutput {
                    name: self.name.clone(),
                    source,
                })?;
        if n == 0 {
            return Ok(None);
        }
        if self.line.ends_with('\n') {
            self.line.pop();
            if self.line.ends_with('\r') {
                self.line.pop();
            }
        }
        Ok(Some(&self.line))
    }
}

/// Writes the boolean profile's expression file one expression at a time
/// (the same bytes as [`reference::write_expr_file`] over
/// [`reference::random_expressions`]), so `count` bounds time, not memory.
pub fn write_boolean_exprs(
    out: &mut dyn Write,
    params: usize,
    count: u64,
    seed: u64,
) -> io::Result<()> {
    let header = reference::write_expr_file(&reference::params_domains(params), &[]);
    out.write_all(header.as_bytes())?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut line = String::new();
    for _ in 0..count {
        line.clear();
        reference::push_expr_term(&mut line, &reference::random_expression(&mut rng, params));
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// Writes the boolean profile's event file one event at a time (the same
/// bytes as [`reference::write_event_file`] over [`reference::random_events`]).
pub fn write_boolean_events(
    out: &mut dyn Write,
    params: usize,
    count: u64,
    seed: u64,
) -> io::Result<()> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut values = Vec::with_capacity(params);
    let mut line = String::new();
    for _ in 0..count {
        values.clear();
        values.extend((0..params).map(|_| rng.bool()));
        line.clear();
        reference::write_event(&mut line, &values);
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
