//! `perfkit unzip`: listing, testing, printing and extracting members
//! selected by Info-ZIP's patterns.

use super::listing::{Kind, Listing};
use super::*;
use zipstream::pattern::{self, Pattern};

/// How `perfkit unzip` was asked to run.
#[derive(Debug)]
pub struct UnzipOptions {
    /// The archive, or `-` for stdin (streamed: local headers only).
    pub archive: PathBuf,
    /// Only members matching these names or patterns; all when empty.
    pub members: Vec<String>,
    /// Leave out members matching these patterns.
    pub exclude: Vec<String>,
    /// Extract into this directory.
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
    pub zipinfo: Option<super::zipinfo::Zipinfo>,
}

/// Which members a command acts on: the MEMBER patterns (all when none)
/// less the `-x` ones; remembers which MEMBER patterns matched.
struct Selection {
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
    matched: std::cell::RefCell<Vec<bool>>,
}

impl Selection {
    fn new(options: &UnzipOptions) -> Selection {
        let compile = |v: &[String]| v.iter().map(|p| Pattern::new(p)).collect();
        Selection {
            include: compile(&options.members),
            exclude: compile(&options.exclude),
            matched: std::cell::RefCell::new(vec![false; options.members.len()]),
        }
    }

    fn wants(&self, name: &str) -> bool {
        let mut inc = self.include.is_empty();
        for (k, p) in self.include.iter().enumerate() {
            if p.matches(name) {
                self.matched.borrow_mut()[k] = true;
                inc = true;
            }
        }
        inc && !pattern::any(&self.exclude, name)
    }

    /// Fails naming the first MEMBER pattern that matched nothing.
    fn check_all_matched(&self, archive: &str) -> Result<()> {
        let m = self.matched.borrow();
        if let Some(k) = m.iter().position(|&hit| !hit) {
            let p = self.include[k].text();
            bail!(
                "{}: filename not matched: {}",
                perfkit::printable::name(archive),
                perfkit::printable::name(&p)
            );
        }
        Ok(())
    }
}

pub(super) fn fmt_time(unix: i64) -> String {
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil::civil_from_days(unix.div_euclid(86_400));
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60
    )
}

/// Runs `perfkit unzip`.
pub fn run_unzip(options: UnzipOptions) -> Result<ExitCode> {
    use perfkit::printable;
    let stdin = options.archive.as_os_str() == "-";
    let raw_name = options.archive.display().to_string();
    let name = printable::name(&raw_name).into_owned();
    let sel = Selection::new(&options);
    let listing = match (options.verbose, options.list) {
        (true, _) => Some(Kind::Verbose),
        (false, true) => Some(Kind::Short),
        _ => None,
    };
    let extracting = !(listing.is_some() || options.test || options.pipe);
    // An -d that exists but is no directory (a file, a dangling symlink)
    // would only fail inside extraction, as a bare "File exists".
    if extracting && fs::symlink_metadata(&options.dir).is_ok() && !options.dir.is_dir() {
        bail!(
            "{}: not a directory (the -d destination)",
            printable::name(&options.dir.display().to_string())
        );
    }
    let opts_for = |pw: Option<Vec<u8>>| ExtractOptions {
        overwrite: options.overwrite,
        skip_existing: options.never_overwrite,
        junk_paths: options.junk_paths,
        password: pw,
        max_total_bytes: options.max_size,
        // Listed, so that Ctrl-C or kill mid-entry deletes them too.
        on_temporary: Some(TemporaryHook::new(|p| {
            perfkit_report::temporaries::register(p.to_path_buf())
        })),
        ..ExtractOptions::default()
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if stdin && options.zipinfo.is_some() {
        bail!("unzip -Z lists a ZIP file's central directory; it cannot read one from stdin");
    }
    if stdin {
        let pw = options.password.get(false, false)?;
        let mut r =
            ZipStreamReader::new(io::BufReader::with_capacity(128 << 10, io::stdin().lock()));
        let opts = opts_for(pw);
        if let Some(kind) = listing {
            r.set_password(opts.password.as_deref());
            let mut list = Listing::start(kind, &name, &mut out)?;
            let mut count = 0u64;
            let mut buf = vec![0u8; 64 << 10];
            while let Some(mut e) = r.next_entry().with_context(|| format!("reading {name}"))? {
                count += 1;
                if count > opts.max_entries {
                    bail!("{name}: more than {} entries", opts.max_entries);
                }
                // A streamed entry's sizes and CRC may come only after its
                // data (a data descriptor): read through it, counting.
                let mut crc = flate2::Crc::new();
                let mut counts = r.current_counts();
                loop {
                    let n = r
                        .read_data(&mut buf)
                        .with_context(|| format!("reading {name}"))?;
                    if n == 0 {
                        break;
                    }
                    crc.update(&buf[..n]);
                    counts = r.current_counts().or(counts);
                }
                if e.flags & 0x08 != 0 {
                    if let Some((consumed, produced)) = counts {
                        (e.compressed_size, e.size) = (consumed, produced);
                    }
                    // AE-2 entries carry no CRC (0), as their headers say.
                    if e.aes.is_none() {
                        e.crc32 = crc.sum();
                    }
                }
                if sel.wants(&e.name) {
                    list.entry(&e, &mut out)?;
                }
            }
            list.finish(&mut out)?;
        } else if options.test || options.pipe {
            tested_header(&options, &name, &mut out)?;
            zipstream::read_stream_data(&mut r, &opts, &|e| sel.wants(&e.name), &mut |e, b| {
                pass_or_note(&options, e, b, &mut out)
            })
            .with_context(|| format!("reading {name}"))?;
            sel.check_all_matched(&raw_name)?;
            tested_footer(&options, &name, &mut out)?;
        } else {
            let mut opts = opts;
            // Flushed when dropped, before an error is printed.
            let _lines = narrate(&options, &name, &mut out, &mut opts)?;
            zipstream::extract_stream_selected(&mut r, &options.dir, &opts, &|e| {
                sel.wants(&e.name)
            })
            .with_context(|| format!("extracting {name}"))?;
        }
        sel.check_all_matched(&raw_name)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let f = open_seekable(&options.archive, &name)?;
    let src = io::BufReader::with_capacity(64 << 10, f);
    if options.zipinfo.is_some() || listing.is_some() {
        let a = ZipArchive::new(src).with_context(|| format!("reading {name}"))?;
        return list_archive(&options, listing, &a, &sel, (&raw_name, &name), &mut out);
    }
    // Testing, printing and extracting walk the central directory instead
    // of holding it, so memory does not grow with the number of entries.
    let mut a = WalkedArchive::new(src).with_context(|| format!("reading {name}"))?;
    let mut encrypted = false;
    a.for_each(&mut |e| {
        encrypted |= sel.wants(&e.name) && e.encrypted;
        Ok(())
    })
    .with_context(|| format!("reading {name}"))?;
    // Every MEMBER pattern must match before anything is written.
    sel.check_all_matched(&raw_name)?;
    let pw = options.password.get(encrypted, false)?;
    let opts = opts_for(pw);
    let select = |e: &zipstream::Entry| sel.wants(&e.name);
    if options.test || options.pipe {
        tested_header(&options, &name, &mut out)?;
        zipstream::read_archive_data(&mut a, &opts, &select, &mut |e, b| {
            pass_or_note(&options, e, b, &mut out)
        })
        .with_context(|| format!("reading {name}"))?;
        tested_footer(&options, &name, &mut out)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut opts = opts;
    // Flushed when dropped, before an error is printed.
    let _lines = narrate(&options, &name, &mut out, &mut opts)?;
    zipstream::extract_archive_selected(&mut a, &options.dir, &opts, &select)
        .with_context(|| format!("extracting {name}"))?;
    Ok(ExitCode::SUCCESS)
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
    let chosen: Vec<bool> = a.entries().iter().map(|e| sel.wants(&e.name)).collect();
    // Every MEMBER pattern must match before anything is listed.
    sel.check_all_matched(raw_name)?;
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
        )?;
    } else if let Some(kind) = listing {
        let limit = ExtractOptions::default().max_entries;
        if a.entries().len() as u64 > limit {
            bail!("{name}: {} entries, more than {limit}", a.entries().len());
        }
        let mut list = Listing::start(kind, name, out)?;
        for (e, _) in a.entries().iter().zip(&chosen).filter(|(_, c)| **c) {
            list.entry(e, out)?;
        }
        list.finish(out)?;
    }
    out.flush()?;
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
    out.flush()?;
    let (lines, hook) = super::extracting::Lines::start(name, &options.dir)?;
    opts.on_placed = Some(hook);
    Ok(Some(lines))
}

/// `-t`'s first line, as Info-ZIP's unzip prints it (not under `-q`).
fn tested_header(options: &UnzipOptions, name: &str, out: &mut impl Write) -> Result<()> {
    if options.test && options.quiet == 0 {
        writeln!(out, "Archive:  {name}")?;
    }
    Ok(())
}

/// A piece of an entry's data: to stdout under `-p`; under `-t`, the end
/// of an entry that passed its checks (an empty piece) is Info-ZIP's
/// `testing:` line.
fn pass_or_note(
    options: &UnzipOptions,
    e: &zipstream::Entry,
    b: &[u8],
    out: &mut impl Write,
) -> zipstream::Result<()> {
    if options.pipe && e.kind() == EntryKind::File {
        out.write_all(b)?;
    }
    if options.test && options.quiet == 0 && b.is_empty() {
        writeln!(
            out,
            "    testing: {:<22}   OK",
            perfkit::printable::name(&e.name)
        )?;
    }
    Ok(())
}

/// `-t`'s last line, as Info-ZIP's unzip prints it (not under `-qq`).
fn tested_footer(options: &UnzipOptions, name: &str, out: &mut impl Write) -> Result<()> {
    if options.test && options.quiet < 2 {
        writeln!(out, "No errors detected in compressed data of {name}.")?;
    }
    Ok(())
}
