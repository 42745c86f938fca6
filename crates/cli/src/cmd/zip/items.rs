//! The files `perfkit zip` adds: the paths given walked into [`Item`]s,
//! and each item's data opened for its entry.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
pub(super) use zipstream::gather::{Found, Item, mtime};
use zipstream::gather::{
    GatherError, NamesError, Settings, Warning, gather, names_from, open_as_is,
};

use zipstream::line_ends::Converting;
pub(super) use zipstream::line_ends::LineEnds;
pub(super) use zipstream::names::dos_name;

use super::Options;

/// The names `-@` reads from stdin, one a line ([`names_from`]).
fn names_from_stdin() -> Result<Vec<PathBuf>> {
    match names_from(io::stdin().lock()) {
        Ok(names) => Ok(names),
        Err(NamesError::Read(e)) => Err(e).context("reading names from stdin (-@)"),
        Err(e) => bail!("reading names from stdin (-@): {e}"),
    }
}

/// The items `opts` names: its paths (and with `-@` those read from
/// stdin), gathered by [`gather`], its warnings printed as Info-ZIP
/// prints them; `-MM`'s first name not matched stops the run with
/// Info-ZIP's lines and [`MustMatch`].
pub(super) fn collect(opts: &Options) -> Result<Found> {
    let mut paths = opts.paths.clone();
    if opts.names_stdin {
        paths.extend(names_from_stdin()?);
    }
    if paths.is_empty() {
        bail!("nothing to add: give paths or -@");
    }
    let settings = Settings {
        paths,
        recurse: opts.recurse,
        recurse_patterns: opts.recurse_patterns.clone(),
        include: opts.include.clone(),
        exclude: opts.exclude.clone(),
        symlinks: opts.symlinks,
        junk_paths: opts.junk_paths,
        must_match: opts.must_match,
        names_stdin: opts.names_stdin,
    };
    let found = gather(&settings, |w| match w {
        Warning::NotMatched(p) => warn_not_matched(opts, &p.to_string_lossy()),
        Warning::Skipped { path, what } => {
            eprintln!("perfkit zip: skipping {} ({what})", path.display());
        }
        Warning::LinkBack(path) => eprintln!(
            "perfkit zip: skipping {} (a link back to a folder being added)",
            path.display()
        ),
    });
    match found {
        Err(GatherError::MustMatch(p)) => {
            // -MM: Info-ZIP stops at the first name not matched,
            // with its lines (-q or not), writing nothing.
            let name = perfkit::printable::name(&p.to_string_lossy()).into_owned();
            info_zip_line(opts, "zip I/O error: No such file or directory");
            info_zip_line(
                opts,
                &format!("zip error: File not found or no read permission ({name})"),
            );
            Err(MustMatch(name).into())
        }
        found => Ok(found?),
    }
}

/// `-MM` met a name that is not there: the run stops, its lines already
/// printed (as Info-ZIP prints them).
#[derive(Debug)]
pub(super) struct MustMatch(pub(super) String);

impl std::fmt::Display for MustMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "-MM: {} is not there; nothing written", self.0)
    }
}

impl std::error::Error for MustMatch {}

/// One of Info-ZIP's lines, on the stream its warnings go to, `-q` or not.
fn info_zip_line(opts: &Options, line: &str) {
    if opts.archive.as_deref() == Some(Path::new("-")) {
        let _ = writeln!(io::stderr(), "{line}");
    } else {
        let _ = writeln!(io::stdout(), "{line}");
    }
}

/// Info-ZIP's warning for a name that is not there to store (missing, a
/// link to nothing, a loop of links) or, under `-d`, a pattern that
/// matches no entry, after which the rest is done:
/// printed where Info-ZIP prints it, on stdout beside the `adding:` lines
/// (stderr when stdout carries the archive), and silenced by `-q`.
pub(super) fn warn_not_matched(opts: &Options, name: &str) {
    let line = format!(
        "\tzip warning: name not matched: {}",
        perfkit::printable::name(name)
    );
    super::log::warning(&line);
    if opts.quiet {
        return;
    }
    // A lost warning line (a closed pipe) must not fail the archive.
    if opts.archive.as_deref() == Some(Path::new("-")) {
        let _ = writeln!(io::stderr(), "{line}");
    } else {
        let _ = writeln!(io::stdout(), "{line}");
    }
}

/// The data of `item`: stdin, a link's target, nothing for a directory,
/// or the file, checked to be unchanged when read to its end, its
/// line ends converted under `-l`/`-ll`.
pub(super) fn open_item(item: &Item, opts: &Options) -> Result<Box<dyn Read>> {
    let data = open_item_as_is(item)?;
    match opts.line_ends {
        Some(to) if item.meta.is_file() => {
            let name = perfkit::printable::name(&item.name).into_owned();
            let to_stderr = opts.archive.as_deref() == Some(Path::new("-"));
            let quiet = opts.quiet;
            let flag = if to == LineEnds::ToDos { "-l" } else { "-ll" };
            Ok(Box::new(Converting::new(data, to, move || {
                if quiet {
                    return;
                }
                // Info-ZIP's warning (it prints it inside the
                // `adding:` line; here on a line of its own, before).
                let line = format!("\tzip warning: {name} has binary so {flag} ignored");
                if to_stderr {
                    let _ = writeln!(io::stderr(), "{line}");
                } else {
                    let _ = writeln!(io::stdout(), "{line}");
                }
            })))
        }
        _ => Ok(data),
    }
}

/// The data of `item` as it is ([`zipstream::gather::open_as_is`]).
pub(super) fn open_item_as_is(item: &Item) -> Result<Box<dyn Read>> {
    Ok(open_as_is(item)?)
}
