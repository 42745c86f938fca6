//! `perfkit fix check`: validate FIX messages from a file or stdin, each
//! found in bounded reads by [`fixcore::input`], with a verdict per message
//! (and, with `--json`, every message as an object of tag → value, in the
//! message's field order).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use fixcore::dictionary::DataDictionary;
use fixcore::dictionary::validate::Validator;
use fixcore::input;
use fixcore::parse::{Node, Parser};
use serde_json::{Map, Value as Json};

use super::each_input_message;
use fixcore::scan::ScanPath;

/// What a failed write of the verdicts is, for the message: the OS's words
/// alone ("No space left on device") do not say what was being written.
const STDOUT: &str = "writing standard output";

/// What `fix check` checks: the input, how verdicts are written, and the
/// dictionaries to validate against.
#[derive(Debug, Clone)]
pub struct Check {
    /// The input, or `-` for stdin.
    pub input: PathBuf,
    /// Every message as a JSON object, one per line in input order,
    /// instead of the problems and a count.
    pub json: bool,
    /// A QuickFIX XML data dictionary to validate each message against.
    pub dictionary: Option<PathBuf>,
    /// With `dictionary` (then FIXT.1.1's transport one), the application
    /// dictionary.
    pub app_dictionary: Option<PathBuf>,
}

/// `fix check`'s verdicts, written as they are met.
struct Checker<W: Write> {
    name: String,
    json: bool,
    parser: Parser,
    /// `--dictionary`'s validation.
    validator: Option<Validator>,
    out: W,
    valid: usize,
    invalid: usize,
}

impl<W: Write> input::Sink for &mut Checker<W> {
    type Error = anyhow::Error;

    fn message(&mut self, bytes: &[u8]) -> Result<Option<String>> {
        match self.parser.parse(bytes) {
            Ok(msg) => {
                if let Some(v) = &self.validator {
                    let fields: Vec<(u32, &[u8])> =
                        msg.fields().map(|f| (f.tag, f.value)).collect();
                    if let Err(r) = v.check(&fields) {
                        return Ok(Some(format!(
                            "{} (tag {}, SessionRejectReason {})",
                            r.text, r.tag, r.reason
                        )));
                    }
                }
                self.valid += 1;
                if self.json {
                    write_nodes(&mut self.out, &msg.nodes())
                        .and_then(|()| Ok(self.out.write_all(b"\n")?))
                        .context(STDOUT)?;
                }
                Ok(None)
            }
            Err(e) => Ok(Some(e.to_string())),
        }
    }

    fn problem(&mut self, origin: input::Origin, why: &str) -> Result<()> {
        self.invalid += 1;
        let name = &self.name;
        if self.json {
            // Every message gets a line of output, in input order; the
            // problem also goes to stderr, after stdout is flushed so the
            // two streams interleave in input order.
            let mut obj = Map::new();
            obj.insert("line".into(), origin.line().into());
            if let Some(offset) = origin.offset() {
                obj.insert("offset".into(), offset.into());
            }
            obj.insert("error".into(), Json::String(why.to_owned()));
            serde_json::to_writer(&mut self.out, &Json::Object(obj))
                .map_err(io::Error::from)
                .and_then(|()| self.out.write_all(b"\n"))
                .and_then(|()| self.out.flush())
                .context(STDOUT)?;
            eprintln!("perfkit: {name}: {origin}: {why}");
        } else {
            writeln!(self.out, "{name}: {origin}: {why}").context(STDOUT)?;
        }
        Ok(())
    }
}

/// `--dictionary` (and `--app-dictionary`) read: the parser that honours
/// their Length/Data pairs, and the validator.
fn dictionaries(job: &Check) -> Result<(Parser, Option<Validator>)> {
    let Some(path) = &job.dictionary else {
        return Ok((Parser::new(), None));
    };
    let load = |p: &PathBuf| -> Result<Arc<DataDictionary>> {
        let xml = fixengine::whole_file::read_text(p, fixengine::whole_file::Kind::Dictionary)
            .with_context(|| format!("reading dictionary {}", p.display()))?;
        Ok(Arc::new(
            DataDictionary::parse(&xml).with_context(|| format!("dictionary {}", p.display()))?,
        ))
    };
    let session = load(path)?;
    let app = match &job.app_dictionary {
        Some(p) => load(p)?,
        None => session.clone(),
    };
    let parser = session
        .parser_with(&app)
        .with_context(|| format!("the Length/Data pairs of {}", path.display()))?;
    let opts = fixcore::dictionary::validate::Validation {
        // A file's messages were sent in the past.
        check_latency: false,
        ..Default::default()
    };
    Ok((parser, Some(Validator::new(session, app, opts))))
}

/// Runs `perfkit fix check`: a verdict per message, then the counts;
/// failure when any message is invalid or none was found.
pub fn check(job: Check) -> Result<ExitCode> {
    ScanPath::cap_from_env()?;
    let (parser, validator) = dictionaries(&job)?;
    let mut c = Checker {
        name: job.input.display().to_string(),
        json: job.json,
        parser,
        validator,
        // Buffered, so a verdict is not a system call per message.
        out: io::BufWriter::with_capacity(64 << 10, io::stdout().lock()),
        valid: 0,
        invalid: 0,
    };
    each_input_message(&job.input, &mut c)?;
    let name = &c.name;
    if !job.json {
        writeln!(c.out, "{name}: {} valid, {} invalid", c.valid, c.invalid).context(STDOUT)?;
    }
    c.out.flush().context(STDOUT)?;
    if c.valid + c.invalid == 0 {
        eprintln!("perfkit: {name}: no FIX messages found");
        return Ok(ExitCode::FAILURE);
    }
    Ok(if c.invalid > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Writes `nodes` as one JSON object of tag → value in the message's own
/// order (groups as arrays of objects, each entry in its order): a reader
/// that keeps an object's order (Python's `json`, jq, JavaScript) sees the
/// fields as they were sent. The parser refuses a tag repeated outside a
/// group or within an entry, so every key of an object is distinct.
pub(super) fn write_nodes<W: Write>(out: &mut W, nodes: &[Node<'_>]) -> Result<()> {
    out.write_all(b"{")?;
    for (k, node) in nodes.iter().enumerate() {
        if k > 0 {
            out.write_all(b",")?;
        }
        let (Node::Field(f) | Node::Group(f, _)) = node;
        write!(out, "\"{}\":", f.tag)?;
        match node {
            Node::Field(f) => serde_json::to_writer(&mut *out, &String::from_utf8_lossy(f.value))?,
            Node::Group(_, entries) => {
                out.write_all(b"[")?;
                for (j, e) in entries.iter().enumerate() {
                    if j > 0 {
                        out.write_all(b",")?;
                    }
                    write_nodes(out, e)?;
                }
                out.write_all(b"]")?;
            }
        }
    }
    out.write_all(b"}")?;
    Ok(())
}
