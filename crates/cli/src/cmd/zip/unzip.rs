//! `perfkit unzip`: listing, testing, printing and extracting members
//! selected by Info-ZIP's patterns.

use super::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use zipstream::extract::on_disk::{Freshening, backup_hook};
use zipstream::extract::passing::{Pass, Passing};
use zipstream::listing::{Kind, Listing, Tally, comment_lines, heading};
use zipstream::names::Lowering;
use zipstream::pattern::{Selection, archives_matching, find_archive, is_wildcard};

/// What a failed write to stdout was doing, for the message (a listing,
/// `-t`'s lines, `-p`'s data): the OS's words alone do not say.
const STDOUT: &str = "writing to standard output";

/// How `perfkit unzip` was asked to run.
#[derive(Debug)]
pub struct UnzipOptions {
    /// The archive, or `-` for stdin (streamed: local headers only).
    pub archive: PathBuf,
    /// Only members matching these names or patterns; all when empty.
    pub members: Vec<String>,
    /// Leave out members matching these patterns.
    pub exclude: Vec<String>,
    /// The `-d` destination as given, the empty path without one (or with
    /// `-d ''`): the extraction goes into it ([`UnzipOptions::destination`]), and
    /// its lines and questions name files under it as Info-ZIP's do
    /// (`./a.txt` for `-d .`, `a.txt` without `-d`).
    pub dir: PathBuf,
    /// List entries instead of extracting.
    pub list: bool,
    /// List verbosely (`-v`): method, sizes, ratio, CRC-32.
    pub verbose: bool,
    /// Test entries (decode, verify CRC/MAC) instead of extracting.
    pub test: bool,
    /// Extract file data to stdout.
    pub pipe: bool,
    /// Replace existing files.
    pub overwrite: bool,
    /// Skip existing files quietly.
    pub never_overwrite: bool,
    /// Write every file into `dir` itself, without its directories.
    pub junk_paths: bool,
    /// 1 keeps only `-t`'s summary line, 2 prints nothing.
    pub quiet: u8,
    /// Largest total uncompressed size to accept, in every mode.
    pub max_size: u64,
    /// Where the password comes from.
    pub password: Password,
    /// `-Z`: zipinfo's listing instead.
    pub zipinfo: Option<zipstream::listing::Zipinfo>,
    /// `-c`: file data to stdout, each entry under its `inflating:` line.
    pub to_screen: bool,
    /// `-z`: show the archive comment only.
    pub comment: bool,
    /// `-C`: match MEMBER and `-x` patterns ignoring (ASCII) case.
    pub ignore_case: bool,
    /// `-u`: extract files newer than those on disk, and new ones.
    pub update: bool,
    /// `-f`: extract only files newer than those on disk.
    pub freshen: bool,
    /// `-T`: only give the archive file the time of its newest file.
    pub timestamp: bool,
    /// `-B`: back up a file in the way (NAME~) and replace it.
    pub backup: bool,
    /// `-D`: folders keep the time of extraction; `-DD`: files too.
    pub no_times: u8,
    /// `-W`: `*` and `?` in patterns stay within one folder level.
    pub wildcards_stop_at_slash: bool,
    /// `-L`: 1 lowers the names of entries from upper-case-only systems,
    /// 2 every name.
    pub lowercase: u8,
    /// A flag Info-ZIP's unzip refuses on Unix (`-s`, `-N`): why, said as
    /// a usage error.
    pub refused: Option<&'static str>,
}

impl UnzipOptions {
    /// The directory the extraction goes into: `-d`'s, or the current one.
    pub fn destination(&self) -> &Path {
        if self.dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &self.dir
        }
    }
}

/// Fails naming the first MEMBER pattern of `sel` that matched nothing
/// in `archive`, as Info-ZIP's unzip does.
fn check_all_matched(sel: &Selection, archive: &str) -> Result<()> {
    if let Some(p) = sel.first_unmatched() {
        bail!(
            "{}: filename not matched: {}",
            perfkit::printable::name(archive),
            perfkit::printable::name(&p)
        );
    }
    Ok(())
}

/// Runs `perfkit unzip`: on the archive named, or found as Info-ZIP finds
/// it (NAME, NAME.zip, NAME.ZIP), or on each archive a wildcard in its
/// name matches, with Info-ZIP's count of them at the end.
pub fn run_unzip(options: UnzipOptions) -> Result<ExitCode> {
    if let Some(why) = options.refused {
        return Ok(super::args::unzip_usage_error(why));
    }
    if options.archive.as_os_str().is_empty() {
        super::args::print_usage("unzip").context(STDOUT)?;
        return Ok(ExitCode::SUCCESS);
    }
    if options.archive.as_os_str() == "-" {
        return run_one(&options);
    }
    let given = options.archive.clone();
    if let Some(found) = find_archive(&given) {
        let options = UnzipOptions {
            archive: found,
            ..options
        };
        return run_one(&options);
    }
    let shown = perfkit::printable::name(&given.display().to_string()).into_owned();
    let matched = archives_matching(&given)?;
    if matched.is_empty() {
        // Info-ZIP's lines, on stderr; perfkit's exit code.
        eprintln!("unzip:  cannot find or open {shown}, {shown}.zip or {shown}.ZIP.");
        if is_wildcard(&shown) {
            eprintln!("\nNo zipfiles found.");
        }
        return Ok(ExitCode::FAILURE);
    }
    let mut tally = Tally::default();
    let total = matched.len();
    let mut options = options;
    for (k, archive) in matched.into_iter().enumerate() {
        options.archive = archive;
        // Info-ZIP's blank line between one archive's listing and the next.
        if k > 0 && options.quiet == 0 && !options.pipe {
            println!();
        }
        match run_one(&options) {
            Ok(code) if code == ExitCode::SUCCESS => tally.good += 1,
            Ok(_) => tally.failed += 1,
            Err(e) => {
                let _ = io::stdout().flush();
                eprintln!("perfkit: {}", crate::cmd::explained(e.as_ref()));
                let zip = e.chain().any(|c| {
                    matches!(
                        c.downcast_ref::<zipstream::Error>(),
                        Some(zipstream::Error::NotZip)
                    )
                });
                if zip {
                    tally.not_zip += 1;
                } else {
                    tally.failed += 1;
                }
            }
        }
    }
    // Info-ZIP's tally when more than one archive was named
    // (not under -p, whose stdout is data; -qq drops its blank line).
    if total > 1 && !options.pipe {
        let gap = if options.quiet >= 2 { "" } else { "\n" };
        // On stdout after -t's reports (as Info-ZIP), stderr otherwise.
        if options.test {
            println!("{gap}{}", tally.lines());
        } else {
            eprintln!("{gap}{}", tally.lines());
        }
    }
    Ok(if tally.good == total {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs `perfkit unzip` on one archive. A file `-B` could not back up
/// is kept, the extraction goes on, and the run fails at its end (Info-ZIP
/// exits 50): the file on disk is not the archive's.
fn run_one(options: &UnzipOptions) -> Result<ExitCode> {
    let kept = Arc::new(AtomicBool::new(false));
    let code = extract_one(options, &kept)?;
    if kept.load(Ordering::Relaxed) {
        return Ok(ExitCode::FAILURE);
    }
    Ok(code)
}

/// [`run_one`]'s work; `kept` is set when `-B` kept a file it could not
/// back up.
fn extract_one(options: &UnzipOptions, kept: &Arc<AtomicBool>) -> Result<ExitCode> {
    use perfkit::printable;
    let stdin = options.archive.as_os_str() == "-";
    let raw_name = options.archive.display().to_string();
    let name = printable::name(&raw_name).into_owned();
    let sel = Selection::new(
        &options.members,
        &options.exclude,
        options.ignore_case,
        options.wildcards_stop_at_slash,
    );
    let lowering = Lowering::from_count(options.lowercase);
    let listing = match (options.verbose, options.list) {
        (true, _) => Some(Kind::Verbose),
        (false, true) => Some(Kind::Short),
        _ => None,
    };
    let extracting = !(listing.is_some()
        || options.test
        || options.pipe
        || options.to_screen
        || options.comment);
    // An -d that exists but is no directory (a file, a dangling symlink)
    // would only fail inside extraction, as a bare "File exists". (No -d
    // is the empty path, which never exists.)
    if extracting && fs::symlink_metadata(&options.dir).is_ok() && !options.dir.is_dir() {
        bail!(
            "{}: not a directory (the -d destination)",
            printable::name(&options.dir.display().to_string())
        );
    }
    // Info-ZIP's prompt for a file in the way, unless -o or -n answered
    // it already, or stdin is the archive.
    // -B answers instead: back up and replace.
    let backup = options.backup;
    let prompt = (!options.overwrite && !options.never_overwrite && !stdin && !backup)
        .then(|| super::extracting::prompt(&options.dir, options.junk_paths));
    let on_exists = if backup {
        let kept = Arc::clone(kept);
        Some(backup_hook(
            &options.dir,
            options.overwrite,
            move |shown, e| {
                let at = perfkit::printable::name(shown);
                let why = perfkit_report::os_words(e);
                eprintln!("perfkit: {at}: cannot back it up (-B): {why}; kept");
                kept.store(true, Ordering::Relaxed);
            },
        ))
    } else {
        prompt.as_ref().map(super::extracting::Prompt::hook)
    };
    let opts_for = |pw: Option<Vec<u8>>| ExtractOptions {
        on_exists: on_exists.clone(),
        overwrite: options.overwrite && !backup,
        skip_existing: options.never_overwrite && !backup,
        dir_times: options.no_times == 0,
        file_times: options.no_times < 2,
        junk_paths: options.junk_paths,
        password: pw,
        max_total_bytes: options.max_size,
        // Listed, so that Ctrl-C or kill mid-entry deletes them too.
        rename: lowering.hook(),
        on_temporary: Some(TemporaryHook::new(|p| {
            landing::temporaries::register(p.to_path_buf())
        })),
        ..ExtractOptions::default()
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if stdin && (options.zipinfo.is_some() || options.comment || options.timestamp) {
        bail!(
            "unzip -Z and -z read a ZIP file's central directory (and comment); they cannot read one from stdin"
        );
    }
    if stdin && (options.update || options.freshen) {
        bail!(
            "unzip -u and -f compare with files on disk one by one; give the archive as a file, not stdin"
        );
    }
    if stdin {
        let opts = opts_for(options.password.get(false, false)?);
        return from_stdin(options, (&raw_name, &name), &sel, listing, opts, &mut out);
    }
    let f = open_seekable(&options.archive, &name)?;
    let src = io::BufReader::with_capacity(64 << 10, f);
    if options.timestamp {
        return set_archive_time(options, src, &name, &mut out);
    }
    if options.comment {
        // Info-ZIP's `-z`: the Archive: line, then the comment if any.
        let a = ZipArchive::new(src).with_context(|| format!("reading {name}"))?;
        writeln!(out, "Archive:  {name}").context(STDOUT)?;
        if !a.raw_comment().is_empty() {
            writeln!(out, "{}", comment_lines(a.raw_comment())).context(STDOUT)?;
        }
        out.flush().context(STDOUT)?;
        return Ok(ExitCode::SUCCESS);
    }
    if options.zipinfo.is_some() || listing.is_some() {
        let a = ZipArchive::new(src).with_context(|| format!("reading {name}"))?;
        return list_archive(options, listing, &a, &sel, (&raw_name, &name), &mut out);
    }
    // Testing, printing and extracting walk the central directory instead
    // of holding it, so memory does not grow with the number of entries.
    let mut a = WalkedArchive::new(src).with_context(|| format!("reading {name}"))?;
    let mut encrypted = false;
    a.for_each(&mut |e| {
        encrypted |= sel.wants(&shown_name(options, e)) && e.encrypted;
        Ok(())
    })
    .with_context(|| format!("reading {name}"))?;
    // Every MEMBER pattern must match before anything is written.
    check_all_matched(&sel, &raw_name)?;
    let pw = options.password.get(encrypted, false)?;
    let opts = opts_for(pw);
    let select =
        |e: &zipstream::Entry| sel.wants(&shown_name(options, e)) && newer_than_on_disk(options, e);
    let heading = heading(&name, a.comment());
    if options.test || options.pipe || options.to_screen {
        pass(options).header(&heading, &mut out).context(STDOUT)?;
        let mut passing = Passing::new(pass(options));
        let res = zipstream::read_archive_data(&mut a, &opts, &select, &mut |e, b| {
            passing.piece(e, b, &mut out)
        });
        let n = passed(passing, res).with_context(|| format!("reading {name}"))?;
        tested_footer(options, &name, n, &mut out)?;
        out.flush().context(STDOUT)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut opts = opts;
    // Flushed when dropped, before an error is printed.
    let lines = narrate(options, &heading, &mut out, &mut opts)?;
    if let (Some(p), Some(l)) = (&prompt, &lines) {
        p.after(l);
    }
    zipstream::extract_archive_selected(&mut a, options.destination(), &opts, &select)
        .with_context(|| format!("extracting {name}"))?;
    drop(lines);
    // End of input at the prompt: the rest were kept, and the run failed
    // (Info-ZIP's exit 1).
    if prompt
        .as_ref()
        .is_some_and(super::extracting::Prompt::ran_dry)
    {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// `perfkit unzip -`: the archive streamed from stdin (local headers
/// only), listed, tested, printed or extracted.
fn from_stdin(
    options: &UnzipOptions,
    (raw_name, name): (&str, &str),
    sel: &Selection,
    listing: Option<Kind>,
    opts: ExtractOptions,
    out: &mut impl Write,
) -> Result<ExitCode> {
    let mut r = ZipStreamReader::new(io::BufReader::with_capacity(128 << 10, io::stdin().lock()));
    if let Some(kind) = listing {
        r.set_password(opts.password.as_deref());
        let mut list = Listing::start(kind, name, options.quiet, out).context(STDOUT)?;
        let mut count = 0u64;
        while let Some(mut e) = r.next_entry().with_context(|| format!("reading {name}"))? {
            count += 1;
            if count > opts.max_entries {
                bail!("{name}: more than {} entries", opts.max_entries);
            }
            // A streamed entry's sizes and CRC may come only after its
            // data (a data descriptor): read through it, counting.
            r.read_through(&mut e)
                .with_context(|| format!("reading {name}"))?;
            if sel.wants(&shown_name(options, &e)) {
                list.entry(&e, out).context(STDOUT)?;
            }
        }
        list.finish(out).context(STDOUT)?;
    } else if options.test || options.pipe || options.to_screen {
        pass(options).header(name, out).context(STDOUT)?;
        let mut passing = Passing::new(pass(options));
        let res = zipstream::read_stream_data(
            &mut r,
            &opts,
            &|e| sel.wants(&shown_name(options, e)),
            &mut |e, b| passing.piece(e, b, out),
        );
        let n = passed(passing, res).with_context(|| format!("reading {name}"))?;
        check_all_matched(sel, raw_name)?;
        tested_footer(options, name, n, out)?;
    } else {
        let mut opts = opts;
        // Flushed when dropped, before an error is printed.
        let _lines = narrate(options, name, out, &mut opts)?;
        zipstream::extract_stream_selected(&mut r, options.destination(), &opts, &|e| {
            sel.wants(&shown_name(options, e))
        })
        .with_context(|| format!("extracting {name}"))?;
    }
    check_all_matched(sel, raw_name)?;
    out.flush().context(STDOUT)?;
    Ok(ExitCode::SUCCESS)
}

/// Info-ZIP's `unzip -T`: the archive takes the time of its newest file.
fn set_archive_time(
    options: &UnzipOptions,
    src: impl io::Read + io::Seek,
    name: &str,
    out: &mut impl Write,
) -> Result<ExitCode> {
    // Info-ZIP's `-T`: the archive takes the time of its newest file
    // (folders do not count), and nothing is extracted.
    let a = ZipArchive::new(src).with_context(|| format!("reading {name}"))?;
    if let Some(t) = a.newest_file_time() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(t.max(0) as u64);
        fs::File::options()
            .write(true)
            .open(&options.archive)
            .and_then(|f| f.set_modified(t))
            .with_context(|| format!("setting the time of {name} (-T)"))?;
    }
    if options.quiet == 0 {
        writeln!(out, "Updated time stamp for {name}.").context(STDOUT)?;
    }
    out.flush().context(STDOUT)?;
    Ok(ExitCode::SUCCESS)
}

/// The name `-c` and `-t` show for `e`: lowered under `-L` as its file
/// would be named, as Info-ZIP shows it.
fn shown_name(options: &UnzipOptions, e: &zipstream::Entry) -> String {
    Lowering::from_count(options.lowercase).shown(e)
}

/// `-u` and `-f`: whether entry `e` is to be extracted over what is on
/// disk ([`Freshening::wants`]).
fn newer_than_on_disk(options: &UnzipOptions, e: &zipstream::Entry) -> bool {
    let f = Freshening {
        update: options.update,
        freshen: options.freshen,
        junk_paths: options.junk_paths,
    };
    f.wants(e, options.destination())
}

/// Opens the archive at `path` (shown as `name`), which is read from its
/// end: a FIFO, a socket or another file that cannot seek (`<(cat a.zip)`)
/// is refused with one line saying how to read it (streamed, on stdin),
/// rather than "Illegal seek".
fn open_seekable(path: &std::path::Path, name: &str) -> Result<fs::File> {
    use io::Seek;
    let mut f = fs::File::open(path).with_context(|| format!("opening {name}"))?;
    if let Err(e) = f.seek(io::SeekFrom::End(0)) {
        if e.raw_os_error() == Some(libc::ESPIPE) {
            bail!(
                "reading {name}: it is a pipe or FIFO, and an archive is read from its end \
                 (its central directory): stream it on stdin instead, `perfkit unzip - < {name}`"
            );
        }
        return Err(e).with_context(|| format!("reading {name}"));
    }
    Ok(f)
}

/// `-Z`, `-l` and `-v`: the central directory, held whole (the listings
/// sort and total it).
fn list_archive<R: io::Read + io::Seek>(
    options: &UnzipOptions,
    listing: Option<Kind>,
    a: &ZipArchive<R>,
    sel: &Selection,
    (raw_name, name): (&str, &str),
    out: &mut impl Write,
) -> Result<ExitCode> {
    let chosen: Vec<bool> = a
        .entries()
        .iter()
        .map(|e| sel.wants(&shown_name(options, e)))
        .collect();
    // Every MEMBER pattern must match before anything is listed.
    check_all_matched(sel, raw_name)?;
    if let Some(z) = options.zipinfo {
        let size = fs::metadata(&options.archive)?.len();
        let chosen = a.entries().iter().zip(&chosen).filter(|(_, c)| **c);
        let members = !options.members.is_empty() || !options.exclude.is_empty();
        z.list(
            name,
            size,
            a.entries().len(),
            members,
            chosen.map(|(e, _)| e),
            out,
        )
        .context(STDOUT)?;
    } else if let Some(kind) = listing {
        let limit = ExtractOptions::default().max_entries;
        if a.entries().len() as u64 > limit {
            bail!("{name}: {} entries, more than {limit}", a.entries().len());
        }
        let mut list = Listing::start(kind, &heading(name, a.comment()), options.quiet, out)
            .context(STDOUT)?;
        for (e, _) in a.entries().iter().zip(&chosen).filter(|(_, c)| **c) {
            list.entry(e, out).context(STDOUT)?;
        }
        list.finish(out).context(STDOUT)?;
    }
    out.flush().context(STDOUT)?;
    Ok(ExitCode::SUCCESS)
}

/// Info-ZIP's lines while extracting (not under `-q`): prints the
/// `Archive:` line (after what `out` holds) and gives `opts` the hook
/// that prints the rest.
fn narrate(
    options: &UnzipOptions,
    name: &str,
    out: &mut impl Write,
    opts: &mut ExtractOptions,
) -> Result<Option<super::extracting::Lines>> {
    if options.quiet > 0 {
        return Ok(None);
    }
    out.flush().context(STDOUT)?;
    let (lines, hook) = super::extracting::Lines::start(name, &options.dir, io::stdout())?;
    opts.on_placed = Some(hook);
    Ok(Some(lines))
}

/// What `-p`, `-c` and `-t` pass through, and how much they say.
fn pass(options: &UnzipOptions) -> Pass {
    Pass {
        pipe: options.pipe,
        to_screen: options.to_screen,
        test: options.test,
        quiet: options.quiet,
        lowering: Lowering::from_count(options.lowercase),
    }
}

/// The outcome of a run through the entries, a failed write to stdout
/// named as one; how many entries passed.
fn passed<T>(pass: Passing, res: zipstream::Result<T>) -> Result<u64> {
    match pass.check(res) {
        Err(err) => Err(err).context(STDOUT),
        Ok(res) => Ok(res?),
    }
}

/// `-t`'s last line (not under `-qq`), for `tested` entries.
fn tested_footer(
    options: &UnzipOptions,
    name: &str,
    tested: u64,
    out: &mut impl Write,
) -> Result<()> {
    let selected = !(options.members.is_empty() && options.exclude.is_empty());
    pass(options)
        .footer(name, selected, tested, out)
        .context(STDOUT)
}
