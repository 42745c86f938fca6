//! `perfkit zip` and `perfkit unzip`: a ZIP tool over the zipstream library.
//!
//! `zip` writes to a temporary sibling renamed on success, streams to stdout
//! with `-`, or uploads to `s3://bucket/key` by multipart upload, aborted on
//! failure; so a failure never leaves an archive behind. `unzip`
//! extracts safely (no traversal, no escaping symlinks, size and ratio
//! limits) and never overwrites without `--overwrite`.

use std::fs;
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use tokio::io::AsyncWriteExt;
use zipstream::object::ObjectUrl;
use zipstream::{
    AsyncZipWriter, ExtractOptions, ParallelOptions, ParallelZipWriter, TemporaryHook,
    WalkedArchive, ZipArchive, ZipStreamReader, ZipWriter,
};

mod announce;
mod args;
mod comments;
mod contents;
mod existing;
mod extracting;
mod finished;
mod items;
mod log;
mod object;
mod originals;
mod password;
mod sink;
mod unzip;

use announce::Announcer;
use comments::{comment_from_stdin, comment_prompt, entry_comments_from_stdin};
use contents::{archive_alone, choose};
use finished::{archive_totals, set_latest_time, test_with_command, test_written};
use items::Item;
use originals::remove_originals;
use sink::{stream_archive, write_archive};
use zipstream::update::{Change, Mode};

use args::usage_error;
pub use args::{UnzipArgs, ZipArgs, info_zip_level_flags};
use existing::{Step, Update, entries, note_unadjusted, open_for_update};
use object::zip_to_object;
pub use password::Password;
pub use unzip::run_unzip;

/// What `perfkit zip` was asked to do, the flags resolved.
#[derive(Debug)]
pub enum Task {
    /// Write (or update) an archive.
    Write(Options),
}

/// How to write an archive.
#[derive(Debug)]
pub struct Options {
    /// A file, `-` for stdout, or `s3://bucket/key`; none is a usage error
    /// reported when the command runs.
    pub archive: Option<PathBuf>,
    /// Files and directories to add; `-` adds stdin as an entry.
    pub paths: Vec<PathBuf>,
    /// Recurse into directories.
    pub recurse: bool,
    /// No progress bar.
    pub quiet: bool,
    /// Read more paths from stdin, one per line.
    pub names_stdin: bool,
    /// The compression method (deflate at level 0 stores).
    pub method: zipstream::Method,
    /// `-k`: DOS names (upper case, 8.3), entries marked as made on MS-DOS.
    pub dos_names: bool,
    /// `-sd`: Info-ZIP's `sd:` lines as each step is done.
    pub show_debug: bool,
    /// `-lf FILE`: where the run is logged, and how.
    pub log: Option<log::LogSettings>,
    /// `-TT CMD`: the command `-T` tests the archive with.
    pub unzip_command: Option<String>,
    /// `-U`: copy the entries the paths name into `out`.
    pub copy: bool,
    /// `-F`: copy every entry into `out` (with `copy`), saying so first
    /// in Info-ZIP's words.
    pub fix: bool,
    /// `-O`/`--out`: the archive written, the one named only read.
    pub out: Option<PathBuf>,
    /// `-dc`, `-db`, `-du`, `-dv`: what each entry's line shows besides.
    pub display: announce::Display,
    /// The method's level (deflate 0 stores).
    pub level: u32,
    /// Store each file under its name alone, without directory entries.
    pub junk_paths: bool,
    /// Store symbolic links as links (`-y`), rather than what they name.
    pub symlinks: bool,
    /// Compression threads; 1 compresses inline.
    pub jobs: usize,
    /// Encrypt with WinZip AES of this strength.
    pub encrypt: Option<zipstream::AesStrength>,
    /// Where the password comes from.
    pub password: Password,
    /// Globs of paths to leave out.
    pub exclude: Vec<String>,
    /// Globs of the only paths to add (all when empty).
    pub include: Vec<String>,
    /// Add, update, freshen, or delete entries.
    pub mode: Mode,
    /// Delete the originals once the archive is written (and tested).
    pub move_files: bool,
    /// Test the new archive before it replaces anything.
    pub test: bool,
    /// `-A`: make the offsets of an archive with a prepended stub count it.
    pub adjust: bool,
    /// Part size of an `s3://` multipart upload.
    pub part_size: u64,
    /// `-D`: no directory entries.
    pub no_dir_entries: bool,
    /// `-X`: no extended-timestamp extra fields.
    pub no_extra: bool,
    /// `-o`: the archive file takes the time of its newest entry.
    pub latest_time: bool,
    /// `-FS`: update, and delete the entries whose files are not among
    /// those found (the mode is [`Mode::Update`]).
    pub filesync: bool,
    /// `-z`: the archive comment is read from stdin.
    pub archive_comment: bool,
    /// `-n`: names ending in one of these are stored.
    pub store_suffixes: Vec<String>,
    /// `-sf`: list what would be stored, write nothing.
    pub show_files: bool,
    /// `-v`: sizes on each `adding:` line, and a total.
    pub verbose: bool,
    /// `-MM`: a name that is not there stops the run, nothing written.
    pub must_match: bool,
    /// `-t DATE`: only files modified at or after this time (Unix seconds,
    /// local midnight of the day given).
    pub modified_from: Option<i64>,
    /// `-tt DATE`: only files modified before this time.
    pub modified_before: Option<i64>,
    /// `-g`: grow the archive (Info-ZIP's; every update does): warns
    /// when there is none yet, as Info-ZIP does.
    pub grow: bool,
    /// `-l`/`-ll`: the line ends text files are stored with.
    pub line_ends: Option<items::LineEnds>,
    /// `-R`: the patterns a path found under `.` must match, its whole
    /// name or its last part, wildcards within one folder level.
    pub recurse_patterns: Vec<String>,
    /// `-c`: a one-line comment for each entry added, read from stdin.
    pub ask_entry_comments: bool,
    /// The comments `-c` read, by item name.
    pub entry_comments: std::collections::HashMap<String, String>,
}

/// The most compression threads `--jobs` gets, whatever the core count.
const MAX_JOBS: usize = 256;

/// Runs `perfkit zip`, logging the run under `-lf`.
pub fn run_zip(task: Task) -> Result<ExitCode> {
    let Task::Write(opts) = task;
    if let (Some(l), Some(_)) = (&opts.log, &opts.archive) {
        log::open(l)?;
    }
    let res = write_zip(opts);
    // A failure not yet logged (Info-ZIP's own lines log themselves).
    if let Err(e) = &res
        && log::is_open()
    {
        log::failed(&format!("zip error: {}", crate::cmd::explained(e.as_ref())));
    }
    log::close();
    res
}

/// Where `zip` writes: the archive named (`.zip` added to a local one's
/// name), the file written and their names as shown.
struct Place {
    /// The archive named: a local file, `-` for stdout, or an object URL.
    archive: PathBuf,
    /// The archive's name as shown.
    shown: String,
    /// The file written: `--out`'s, else the archive itself.
    target: PathBuf,
    /// The written file's name as shown.
    shown_target: String,
    /// The upload's address when the archive is an object URL.
    object_url: Option<ObjectUrl>,
    /// Whether the archive is a local file (not stdout, not an upload).
    local: bool,
    /// `-sd`: Info-ZIP's debug lines are shown.
    debug: bool,
}

impl Place {
    /// Shows one of Info-ZIP's `-sd` lines when asked for.
    fn step(&self, what: &str) {
        log::step(self.debug, &self.archive, what);
    }

    /// Shows the `-sd` lines of Info-ZIP's scan, `n` files new to the
    /// archive.
    fn scanned(&self, n: usize) {
        for what in [
            "Applying filters",
            "Checking dups",
            "Scanning files to update",
        ] {
            self.step(what);
        }
        self.step(&format!("fcount = {n}"));
    }

    /// Shows the `-sd` lines of Info-ZIP's start of writing over the old
    /// archive.
    fn going_through(&self) {
        for what in [
            "Open zip file and create temp file",
            "Creating new zip file",
            "Going through old zip file",
        ] {
            self.step(what);
        }
    }
}

/// `perfkit zip`'s work: where the archive goes, what it will hold,
/// writing it, then Info-ZIP's closing lines.
fn write_zip(mut opts: Options) -> Result<ExitCode> {
    let Some(archive) = opts.archive.clone() else {
        // Info-ZIP's `zip -v` alone shows its version, `zip` alone its
        // usage; both succeed.
        if opts.verbose {
            println!("perfkit zip {}", env!("CARGO_PKG_VERSION"));
        } else {
            args::print_usage("zip").context("writing to standard output")?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    cap_jobs(&mut opts);
    let place = match locate(archive, &opts)? {
        ControlFlow::Continue(place) => place,
        ControlFlow::Break(code) => return Ok(code),
    };
    let mut update = open_existing(&place, &opts)?;
    let no_paths = opts.paths.is_empty() && !opts.names_stdin;
    // --out with nothing named (`zip a.zip --out b.zip`, `-f` or `-u`
    // too): every entry copied into OUT, as Info-ZIP's `-U` would.
    if opts.out.is_some()
        && no_paths
        && opts.mode != Mode::Delete
        && !opts.adjust
        && !opts.archive_comment
    {
        opts.copy = true;
    }
    if let ControlFlow::Break(code) = archive_alone(&place, &mut opts, update.as_ref(), no_paths)? {
        return Ok(code);
    }
    let contents = match choose(&place, &opts, update.as_ref(), no_paths)? {
        ControlFlow::Continue(contents) => contents,
        ControlFlow::Break(code) => return Ok(code),
    };
    let (steps, changes) = contents.steps(entries(update.as_ref()), opts.mode);
    let labels = changes.into_iter().map(|c| c.map(Change::verb)).collect();
    let pw = opts.password.get(opts.encrypt.is_some(), true)?;
    // An empty password (an empty --password-file or first line, an empty
    // --password-env variable, Enter at the prompt) encrypts with a key
    // anyone derives at once: the archive would only look protected.
    if opts.encrypt.is_some() && pw.as_ref().is_some_and(|p| p.is_empty()) {
        return Ok(usage_error(
            "--encrypt needs a non-empty password (the one given by --password-file, --password-env or the prompt is empty)",
        ));
    }
    let total: u64 = contents
        .items()
        .iter()
        .filter(|i| i.meta.is_file())
        .map(|i| i.meta.len())
        .sum();
    // -c: a comment for each entry added, asked as Info-ZIP asks once
    // the entries are written (first, on a terminal: the writer needs
    // them before).
    let mut entry_prompts = None;
    if opts.ask_entry_comments {
        let (comments, prompts) =
            entry_comments_from_stdin(&zipstream::update::added_names(&steps))?;
        opts.entry_comments = comments;
        entry_prompts = prompts;
    }
    // A bar only for inputs that take a while, as compress draws one (a
    // 6-byte file drew one).
    let bar = super::progress(Some(total), opts.quiet || total <= super::PROGRESS_FROM);
    bar.set_message("zip");
    let screen = announce::Screen {
        bar: bar.clone(),
        to_stderr: place.archive.as_os_str() == "-",
    };
    let mut announcer = Announcer::new(labels, opts.quiet, screen)
        .verbose(opts.verbose)
        .display(opts.display, total)
        .debug(opts.show_debug);
    if opts.mode != Mode::Delete && !opts.copy {
        place.step("Open zip file and create temp file");
        place.step("Creating new zip file");
        if update.is_some() {
            place.step("Going through old zip file");
        }
    }
    if let Some(url) = &place.object_url {
        zip_to_object(url, &steps, &opts, &pw, &bar, &mut announcer)?;
    } else if place.archive.as_os_str() == "-" {
        let popts = ParallelOptions::new(opts.jobs);
        stream_archive(
            io::stdout().lock(),
            &steps,
            &opts,
            &pw,
            &bar,
            popts,
            &mut announcer,
        )?;
    } else if let ControlFlow::Break(code) = write_file(
        &place,
        update.as_mut(),
        &steps,
        &opts,
        &pw,
        &bar,
        &mut announcer,
    )? {
        return Ok(code);
    }
    let _ = announcer.finish();
    let _ = announcer.end_dots();
    bar.finish_and_clear();
    if let Some(p) = entry_prompts {
        print!("{p}");
    }
    close(&place, &opts, &mut announcer, contents.items())
}

/// Resolves where the archive goes; a usage error for what cannot be read
/// back or written there.
fn locate(archive: PathBuf, opts: &Options) -> Result<ControlFlow<ExitCode, Place>> {
    // Anything starting with `s3:` is meant as an object URL (a local file of
    // that name is `./s3:…`), so a mistyped URL is an error, not a file.
    let object_url = match archive.to_str() {
        Some(s) if s.starts_with("s3:") => Some(ObjectUrl::parse(s)?),
        _ => None,
    };
    let local = object_url.is_none() && archive.as_os_str() != "-";
    if !local && (opts.mode != Mode::Add || opts.test || opts.adjust) {
        return Ok(ControlFlow::Break(usage_error(
            "-u, -f, -d, -T and -A need a local archive file (an upload or stdout cannot be read back)",
        )));
    }
    let archive = if local {
        with_zip_extension(archive)
    } else {
        archive
    };
    let shown = perfkit::printable::name(&archive.display().to_string()).into_owned();
    // --out: the archive named is only read; this one is written.
    let target = match &opts.out {
        Some(_) if !local => {
            return Ok(ControlFlow::Break(usage_error(
                "--out and -U read an archive file, not stdout or an upload",
            )));
        }
        Some(out) => with_zip_extension(out.clone()),
        None => archive.clone(),
    };
    let shown_target = perfkit::printable::name(&target.display().to_string()).into_owned();
    Ok(ControlFlow::Continue(Place {
        archive,
        shown,
        target,
        shown_target,
        object_url,
        local,
        debug: opts.show_debug,
    }))
}

/// Opens the archive being updated, none when there is none yet (an error
/// for the flags that change an existing one).
fn open_existing(place: &Place, opts: &Options) -> Result<Option<Update>> {
    let shown = &place.shown;
    place.step(&format!("Zipfile name '{shown}'"));
    place.step("Command line read");
    place.step("Reading archive");
    // Before any input is read or output created: a non-ZIP file in the
    // archive's place is refused untouched.
    let update = if place.local {
        open_for_update(&place.archive)?
    } else {
        None
    };
    if update.is_none() && opts.out.is_some() {
        bail!("{shown}: no such archive (--out and -U read an existing one)");
    }
    if update.is_none() && opts.grow && place.local {
        println_info_zip(
            &place.archive,
            &format!("\tzip warning: {shown} not found or empty"),
        );
    }
    if update.is_none() && (matches!(opts.mode, Mode::Freshen | Mode::Delete) || opts.adjust) {
        bail!("{shown}: no such archive (-f, -d and -A change an existing one)");
    }
    Ok(update)
}

/// Writes the archive to its local file: a temporary renamed over it
/// (`-T` testing it first), or a device or FIFO written in place.
fn write_file(
    place: &Place,
    mut update: Option<&mut Update>,
    steps: &[Step<'_>],
    opts: &Options,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    announcer: &mut Announcer,
) -> Result<ControlFlow<ExitCode>> {
    let shown = &place.shown;
    let popts = ParallelOptions::new(opts.jobs);
    let mut out = landing::Output::create(&place.target, true)?;
    if out.is_in_place() {
        if opts.test || opts.move_files {
            return Ok(ControlFlow::Break(usage_error(
                "-T and -m need an archive file (a device or FIFO cannot be read back)",
            )));
        }
        // A device or FIFO (`/dev/null`, a named pipe): streamed like
        // stdout.
        stream_archive(out.file_mut(), steps, opts, pw, bar, popts, announcer)?;
    } else {
        let file = BufWriter::with_capacity(128 << 10, out.file_mut());
        // An update keeps whatever is before the old archive's first
        // entry (a self-extractor's stub) and its comment.
        let mut writer = match update.as_deref_mut() {
            Some(u) => {
                // -A has said so already, in Info-ZIP's words.
                if !opts.adjust {
                    note_unadjusted(&u.archive, shown);
                }
                ZipWriter::rewriting(file, &mut u.archive)
                    .with_context(|| format!("{shown}: copying what is before its first entry"))?
            }
            None => ZipWriter::new_seekable(file)?,
        };
        // -z: Info-ZIP asks once the entries are written; a comment
        // typed on a terminal is asked for first (the writer needs
        // it before it finishes), one piped in is read first and its
        // lines printed where Info-ZIP prints them.
        let mut comment_lines = None;
        if opts.archive_comment {
            let old = update.as_deref().map(|u| u.archive.raw_comment().to_vec());
            let lines = comment_prompt(old.as_deref(), opts.quiet);
            let interactive = io::stdin().is_terminal();
            if interactive {
                print!("{lines}");
                io::stdout().flush()?;
            } else {
                comment_lines = Some(lines);
            }
            writer.set_comment(&comment_from_stdin()?)?;
        }
        write_archive(writer, steps, update, opts, pw, bar, popts, announcer)?.flush()?;
        let _ = announcer.finish();
        if let Some(lines) = comment_lines {
            print!("{lines}");
        }
        place.step("Get comment if any");
        let _ = announcer.end_dots();
        place.step("Writing central directory");
        place.step("Writing end of central directory");
        if opts.test {
            // Before the rename: a failed test leaves the old archive
            // (or none) and every original in place.
            match &opts.unzip_command {
                Some(cmd) => {
                    if !test_with_command(cmd, out.file_mut(), shown)? {
                        return Ok(ControlFlow::Break(ExitCode::FAILURE));
                    }
                }
                // Named as the archive given, with --out too, as
                // Info-ZIP names it.
                None => test_written(out.file_mut(), pw)
                    .with_context(|| format!("test of {shown} FAILED; nothing was changed"))?,
            }
            if !opts.quiet {
                println!("test of {shown} OK");
            }
        }
    }
    place.step("Replacing old zip file");
    if opts.move_files {
        out.commit_durably()?;
    } else {
        out.commit()?;
    }
    place.step("Setting file type");
    Ok(ControlFlow::Continue(()))
}

/// Once the archive is written: `-o`'s time, the totals (`-v`, `-lf`),
/// the note on what Info-ZIP cannot read, and `-m`'s removal of the
/// originals.
fn close(
    place: &Place,
    opts: &Options,
    announcer: &mut Announcer,
    items: &[Item],
) -> Result<ExitCode> {
    if opts.latest_time && place.local {
        set_latest_time(&place.target, &place.shown_target)?;
    }
    // Info-ZIP's totals are of the whole archive, kept entries too.
    let whole = || {
        if place.local {
            archive_totals(&place.target)
        } else {
            None
        }
    };
    if opts.verbose && !opts.quiet {
        let _ = announcer.print_totals(whole());
    }
    if opts.log.as_ref().is_some_and(|l| l.info) {
        for line in announcer.printed() {
            log::info(line);
        }
        log::info(&announcer.totals_line(whole()));
    }
    let (entries_done, bytes_done) = announcer.done();
    log::done(entries_done, bytes_done);
    note_unreadable(announcer, &place.archive, &place.shown);
    if opts.move_files {
        remove_originals(items)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Warns when the archive holds what Info-ZIP's unzip 6.0 cannot read
/// (AES, zstd).
fn note_unreadable(announcer: &Announcer, archive: &Path, shown: &str) {
    if let Some(what) = announcer.unreadable_by_info_zip() {
        let name = if archive.as_os_str() == "-" {
            "the archive on stdout"
        } else {
            shown
        };
        eprintln!(
            "perfkit zip: Info-ZIP unzip 6.0 cannot read {name} ({what}); 7-Zip and perfkit can"
        );
    }
}

/// Caps `--jobs`: thousands of threads gain nothing over a few per core
/// and exhaust memory for their stacks (`--jobs 20000` aborted on a guard
/// page).
fn cap_jobs(opts: &mut Options) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max_jobs = (4 * cores).min(MAX_JOBS);
    if opts.jobs > max_jobs {
        eprintln!(
            "perfkit zip: --jobs {} is more than {max_jobs} (4 per core, at most {MAX_JOBS}); using {max_jobs}",
            opts.jobs
        );
        opts.jobs = max_jobs;
    }
}

/// Info-ZIP appends `.zip` to an archive name without an extension
/// (`zip backup dir` writes backup.zip, even beside a file `backup`);
/// a device or FIFO (`/dev/null`) is written as named.
fn with_zip_extension(archive: PathBuf) -> PathBuf {
    let special = fs::metadata(&archive).is_ok_and(|m| !m.is_file());
    if archive.extension().is_none() && !special {
        let mut s = archive.into_os_string();
        s.push(".zip");
        PathBuf::from(s)
    } else {
        archive
    }
}

/// Prints one of Info-ZIP's lines where it prints them: stdout, or
/// stderr when the archive goes to stdout; its warnings and errors go to
/// the `-lf` log too.
fn println_info_zip(archive: &Path, line: &str) {
    if line.contains("zip warning:") {
        log::warning(line);
    } else if let Some(error) = line.trim_start().strip_prefix("zip error:") {
        log::failed(&format!("zip error:{error}"));
    }
    if archive.as_os_str() == "-" {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

#[cfg(test)]
mod tests;
