//! `perfkit completions SHELL` and `perfkit man`: both generated from the
//! clap command tree, so they list exactly the commands and flags the
//! binary parses.
//!
//! The manual is one page per command and subcommand, named as git and
//! cargo name theirs (`perfkit-compress.1`, `perfkit-fix-acceptor.1`), so
//! the `perfkit-compress(1)` references clap_mangen writes resolve. Each
//! page is clap_mangen's NAME, SYNOPSIS, DESCRIPTION, OPTIONS and
//! SUBCOMMANDS, the command's longer notes (the habits it shares with zstd
//! or Info-ZIP and where it differs), then what clap cannot know: EXIT
//! STATUS, ENVIRONMENT, EXAMPLES and SEE ALSO.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap_complete::Shell;
use roff::{Roff, bold, roman};

/// Arguments of `perfkit completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Arguments of `perfkit man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write every page (perfkit.1, perfkit-compress.1, perfkit-fix-acceptor.1, …) into DIR
    /// instead of one page to stdout.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
    /// The command whose page to print, e.g. `compress` or `fix acceptor` [default: perfkit(1)].
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Writes the completion script for the shell to stdout.
pub fn completions(shell: Shell, mut cmd: clap::Command) -> Result<ExitCode> {
    // Rendered whole, then written: a closed pipe is one io::Error that
    // `cmd::fail` turns into a quiet exit 141.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "perfkit", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `perfkit man`: one page on stdout, or every page into `--dir`.
pub fn man(dir: Option<&Path>, command: &[String], cmd: clap::Command) -> Result<ExitCode> {
    let pages = pages(cmd)?;
    if let Some(dir) = dir {
        write_pages(dir, &pages)?;
        return Ok(ExitCode::SUCCESS);
    }
    let wanted = std::iter::once("perfkit")
        .chain(command.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("-");
    let Some((_, page)) = pages.iter().find(|(name, _)| *name == wanted) else {
        bail!(
            "no manual page for `perfkit {}` (see `perfkit --help` for the commands)",
            command.join(" ")
        );
    };
    let mut out = io::stdout().lock();
    out.write_all(page)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Writes each page as `DIR/NAME.1`, every one through the atomic
/// [`landing::write_atomically`], so a failure leaves no half page.
fn write_pages(dir: &Path, pages: &[(String, Vec<u8>)]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, page) in pages {
        let path = dir.join(format!("{name}.1"));
        landing::write_atomically(&path, |f| f.write_all(page))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Every visible command's page, `perfkit` first, as (name, roff).
pub fn pages(cmd: clap::Command) -> Result<Vec<(String, Vec<u8>)>> {
    // No `help` pseudo-commands: each command's help is its page.
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    collect(&cmd, None, &mut pages)?;
    Ok(pages)
}

/// Renders `cmd`'s page, then its subcommands' pages, depth first.
/// `parent` is the page name and the words of the command `cmd` belongs to.
fn collect(
    cmd: &clap::Command,
    parent: Option<(&str, &str)>,
    pages: &mut Vec<(String, Vec<u8>)>,
) -> Result<()> {
    // clap names a built subcommand `perfkit-compress-bench`: the page's
    // name. Its words are the parent's and its own name, which may hold a
    // dash of its own (`gen-exprs`).
    let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_owned();
    let words = match parent {
        Some((_, p)) => format!("{p} {}", cmd.get_name()),
        None => cmd.get_name().to_owned(),
    };
    pages.push((
        name.clone(),
        page(cmd, &name, &words, parent.map(|(n, _)| n))?,
    ));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, Some((&name, &words)), pages)?;
    }
    Ok(())
}

/// One page: clap_mangen's sections, then perfkit's own.
fn page(cmd: &clap::Command, name: &str, words: &str, parent: Option<&str>) -> Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd.clone().bin_name(words)).title(name.to_uppercase());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }
    if cmd.get_after_help().is_some() || cmd.get_after_long_help().is_some() {
        // clap_mangen calls this EXTRA; for perfkit it is the habits a
        // command shares with zstd or Info-ZIP and how it differs.
        let mut notes = Vec::new();
        man.render_extra_section(&mut notes)?;
        let notes = String::from_utf8_lossy(&notes).replacen(".SH EXTRA", ".SH NOTES", 1);
        out.extend_from_slice(notes.as_bytes());
    }
    let mut own = Roff::new();
    exit_status(&mut own, words);
    environment(&mut own, words);
    examples(&mut own, words);
    see_also(&mut own, name, parent, cmd);
    own.to_writer(&mut out)?;
    man.render_version_section(&mut out)?;
    Ok(ascii_roff(&String::from_utf8_lossy(&out)).into_bytes())
}

/// `page` with every character outside ASCII written as groff's `\[uXXXX]`
/// escape: troff reads its input as Latin-1 unless told otherwise, so a µ,
/// × or — in help text would be a warning or mojibake, where the escape
/// renders the same through `man`, `groff` and `mandoc`.
fn ascii_roff(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    for c in page.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let _ = write!(out, "\\[u{:04X}]", u32::from(c));
        }
    }
    out
}

/// EXIT STATUS: the codes every command shares (docs/exit-codes.md).
fn exit_status(roff: &mut Roff, words: &str) {
    roff.control("SH", ["EXIT STATUS"]);
    let codes: [(&str, &str); 5] = [
        ("0", "Success."),
        (
            "1",
            "Failure: one line on standard error that names the input or output at fault.",
        ),
        (
            "2",
            "Usage error: an unknown flag or a value out of its range, as clap reports it.",
        ),
        (
            "141",
            "The reader of standard output went away (a broken pipe); nothing is printed.",
        ),
        (
            "128 + N",
            "Stopped by signal N (130 after SIGINT, 143 after SIGTERM, 129 after SIGHUP), \
             after deleting the command's partial outputs.",
        ),
    ];
    for (code, meaning) in codes {
        roff.control("TP", []);
        roff.text([bold(code)]);
        roff.text([roman(meaning)]);
    }
    if let Some(when) = failure(words) {
        roff.control("PP", []);
        roff.text([roman(format!("{words} exits 1 when {when}."))]);
    }
}

/// When a command exits 1, beyond "something could not be read or
/// written": the per-command column of docs/exit-codes.md.
fn failure(words: &str) -> Option<&'static str> {
    Some(match words {
        "perfkit compress" | "perfkit decompress" => {
            "an input cannot be read, decoded or written (truncated or corrupt data, an unknown \
             suffix)"
        }
        "perfkit zip" => {
            "an input changed while it was read, a file that is not a ZIP archive is in the \
             archive's place, -u, -f or -d has nothing to do, -T finds the new archive damaged, \
             -e's two passwords differ, S3 credentials are missing, or writing fails"
        }
        "perfkit unzip" => {
            "an entry is unsafe, damaged or over a limit, or a pattern matches nothing"
        }
        "perfkit report merge" => {
            "a log is unreadable or over a limit (the message names file and line)"
        }
        "perfkit bench" => "the stress part loses, duplicates or corrupts a block, or a part fails",
        "perfkit stress" => {
            "a block is lost, delivered twice or corrupt, or, under --soak, RSS or contexts keep \
             growing"
        }
        "perfkit fix check" => "any message is invalid, or the input cannot be read",
        "perfkit fix load" => "orders are unanswered after --grace, rejected, or a session is lost",
        "perfkit fix acceptor" | "perfkit fix initiator" => {
            "the settings are refused, a store is damaged (without --recover-store), or the port \
             cannot be opened"
        }
        w if w.starts_with("perfkit betree") => {
            "an expression, event or domain file is invalid, or -o names an input"
        }
        _ => return None,
    })
}

/// The environment variables a command reads, by the command's words.
const ENVIRONMENT: &[(&str, &str, &str)] = &[
    (
        "perfkit zip",
        "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP",
        "Credentials and endpoint for an s3://bucket/key archive (S3 or a compatible server).",
    ),
    (
        "perfkit bench",
        "PERFKIT_PEERS_DIR",
        "Where the peer programs built by `cargo xtask peers` are looked up \
         (default: peers/ beside the binary's profile directory).",
    ),
    (
        "perfkit fix",
        "PERFKIT_PEERS_DIR",
        "Where the peer programs are looked up (QuickFIX's, and fix load's floor).",
    ),
    (
        "perfkit fix",
        "FIXCORE_SCAN",
        "Caps the FIX field scanner at one path: scalar, avx2, avx512 or avx512vbmi2. \
         A value naming no path is an error.",
    ),
];

/// ENVIRONMENT: the variables this command (or the command it belongs
/// to) reads, and the ones clap reads for its help.
fn environment(roff: &mut Roff, words: &str) {
    roff.control("SH", ["ENVIRONMENT"]);
    for (command, vars, what) in ENVIRONMENT {
        // `fix`'s variables hold for `fix bench` and the other FIX commands.
        if words == *command || words.starts_with(&format!("{command} ")) {
            roff.control("TP", []);
            roff.text([bold(*vars)]);
            roff.text([roman(*what)]);
        }
    }
    roff.control("TP", []);
    roff.text([bold("COLUMNS")]);
    roff.text([roman(
        "The width --help wraps to when standard output is not a terminal (default: 100).",
    )]);
}

/// The EXAMPLES of every page, as data: each command's words in brackets,
/// then each example's command line and, indented, what it does.
const EXAMPLES: &str = include_str!("manual/examples.txt");

/// The examples of the command `words`, as (command line, what it does);
/// `None` when [`EXAMPLES`] has no section for it.
fn examples_of(words: &str) -> Option<Vec<(&'static str, &'static str)>> {
    let header = format!("[{words}]");
    let mut lines = EXAMPLES
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    lines.by_ref().find(|l| *l == header)?;
    let mut section = lines.take_while(|l| !l.starts_with('['));
    let mut found = Vec::new();
    while let Some(line) = section.next() {
        let what = section.next().unwrap_or_default();
        found.push((line, what.strip_prefix("    ").unwrap_or(what)));
    }
    Some(found)
}

/// EXAMPLES: a few command lines with what each does.
fn examples(roff: &mut Roff, words: &str) {
    roff.control("SH", ["EXAMPLES"]);
    let found = examples_of(words);
    for (line, what) in found.iter().flatten() {
        roff.control("TP", []);
        roff.text([bold(*line)]);
        roff.text([roman(*what)]);
    }
    if found.is_none() {
        roff.text([roman(format!("{words} --help"))]);
    }
}

/// SEE ALSO: the command this one belongs to, its subcommands, and the
/// top page.
fn see_also(roff: &mut Roff, name: &str, parent: Option<&str>, cmd: &clap::Command) {
    let mut refs: Vec<String> = Vec::new();
    if name != "perfkit" {
        refs.push("perfkit(1)".into());
    }
    if let Some(p) = parent.filter(|p| *p != "perfkit") {
        refs.push(format!("{p}(1)"));
    }
    refs.extend(
        cmd.get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| format!("{name}-{}(1)", s.get_name())),
    );
    if name.starts_with("perfkit-compress") || name.starts_with("perfkit-decompress") {
        refs.push("zstd(1)".into());
    }
    if name.starts_with("perfkit-zip") || name.starts_with("perfkit-unzip") {
        refs.extend(["zip(1)".into(), "unzip(1)".into()]);
    }
    if refs.is_empty() {
        return;
    }
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(refs.join(", "))]);
}

#[cfg(test)]
mod tests;
