//! `perfkit unzip`: listing, testing, printing and extracting members
//! selected by Info-ZIP's patterns.

use super::*;

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
}

/// Info-ZIP's wildcard match: `*` any run (including `/`), `?` one
/// character, `[...]` a set with ranges and `!`/`^` negation.
pub(super) fn wildcard(pat: &[char], s: &[char]) -> bool {
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        let step = match pat.get(p) {
            Some('*') => {
                star = Some((p, i));
                p += 1;
                continue;
            }
            Some('?') => Some(p + 1),
            Some('[') => match set_match(&pat[p..], s[i]) {
                Some((true, len)) => Some(p + len),
                Some((false, _)) => None,
                // An unclosed `[` is a literal.
                None => (s[i] == '[').then_some(p + 1),
            },
            Some(&c) => (c == s[i]).then_some(p + 1),
            None => None,
        };
        match (step, star) {
            (Some(np), _) => {
                p = np;
                i += 1;
            }
            (None, Some((sp, si))) => {
                p = sp + 1;
                i = si + 1;
                star = Some((sp, si + 1));
            }
            (None, None) => return false,
        }
    }
    pat[p..].iter().all(|&c| c == '*')
}

/// Matches `c` against the set at the start of `pat` (`[...]`); returns
/// whether it matched and the set's length, or None if it is not closed.
fn set_match(pat: &[char], c: char) -> Option<(bool, usize)> {
    let mut k = 1;
    let negate = matches!(pat.get(1), Some('!') | Some('^'));
    if negate {
        k += 1;
    }
    let mut hit = false;
    let mut first = true;
    while k < pat.len() {
        if pat[k] == ']' && !first {
            return Some((hit != negate, k + 1));
        }
        first = false;
        if k + 2 < pat.len() && pat[k + 1] == '-' && pat[k + 2] != ']' {
            hit |= pat[k] <= c && c <= pat[k + 2];
            k += 3;
        } else {
            hit |= pat[k] == c;
            k += 1;
        }
    }
    None
}

/// Which members a command acts on: the MEMBER patterns (all when none)
/// less the `-x` ones; remembers which MEMBER patterns matched.
struct Selection {
    include: Vec<Vec<char>>,
    exclude: Vec<Vec<char>>,
    matched: std::cell::RefCell<Vec<bool>>,
}

impl Selection {
    fn new(options: &UnzipOptions) -> Selection {
        let chars = |v: &[String]| v.iter().map(|p| p.chars().collect()).collect();
        Selection {
            include: chars(&options.members),
            exclude: chars(&options.exclude),
            matched: std::cell::RefCell::new(vec![false; options.members.len()]),
        }
    }

    fn wants(&self, name: &str) -> bool {
        let n: Vec<char> = name.chars().collect();
        let mut inc = self.include.is_empty();
        for (k, p) in self.include.iter().enumerate() {
            if wildcard(p, &n) {
                self.matched.borrow_mut()[k] = true;
                inc = true;
            }
        }
        inc && !self.exclude.iter().any(|p| wildcard(p, &n))
    }

    /// Fails naming the first MEMBER pattern that matched nothing.
    fn check_all_matched(&self, archive: &str) -> Result<()> {
        let m = self.matched.borrow();
        if let Some(k) = m.iter().position(|&hit| !hit) {
            let p: String = self.include[k].iter().collect();
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
    let extracting = !(options.list || options.test || options.pipe);
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
            perfkit::cleanup::register(p.to_path_buf())
        })),
        ..ExtractOptions::default()
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if stdin {
        let pw = options.password.get(false, false)?;
        let mut r =
            ZipStreamReader::new(io::BufReader::with_capacity(128 << 10, io::stdin().lock()));
        let opts = opts_for(pw);
        if options.list {
            r.set_password(opts.password.as_deref());
            let mut count = 0u64;
            let mut buf = vec![0u8; 64 << 10];
            while let Some(e) = r.next_entry().with_context(|| format!("reading {name}"))? {
                count += 1;
                if count > opts.max_entries {
                    bail!("{name}: more than {} entries", opts.max_entries);
                }
                if sel.wants(&e.name) {
                    writeln!(
                        out,
                        "{:>12}  {}  {}",
                        e.size,
                        fmt_time(e.mtime),
                        printable::name(&e.name)
                    )?;
                }
                // A stream's sizes come after the data: read through it.
                while r
                    .read_data(&mut buf)
                    .with_context(|| format!("reading {name}"))?
                    > 0
                {}
            }
        } else if options.test || options.pipe {
            let rep =
                zipstream::read_stream_data(&mut r, &opts, &|e| sel.wants(&e.name), &mut |e, b| {
                    if options.pipe && e.kind() == EntryKind::File {
                        out.write_all(b)?;
                    }
                    Ok(())
                })
                .with_context(|| format!("reading {name}"))?;
            sel.check_all_matched(&raw_name)?;
            if options.test && options.quiet < 2 {
                let n = rep.files + rep.dirs + rep.symlinks;
                writeln!(out, "No errors detected in {name} ({n} entries).")?;
            }
        } else {
            zipstream::extract_stream_selected(&mut r, &options.dir, &opts, &|e| {
                sel.wants(&e.name)
            })
            .with_context(|| format!("extracting {name}"))?;
        }
        sel.check_all_matched(&raw_name)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let f = fs::File::open(&options.archive).with_context(|| format!("opening {name}"))?;
    let mut a = ZipArchive::new(io::BufReader::with_capacity(64 << 10, f))
        .with_context(|| format!("reading {name}"))?;
    let chosen: Vec<bool> = a.entries().iter().map(|e| sel.wants(&e.name)).collect();
    // Every MEMBER pattern must match before anything is written.
    sel.check_all_matched(&raw_name)?;
    let encrypted = a
        .entries()
        .iter()
        .zip(&chosen)
        .any(|(e, &c)| c && e.encrypted);
    if options.list {
        let limit = ExtractOptions::default().max_entries;
        if a.entries().len() as u64 > limit {
            bail!("{name}: {} entries, more than {limit}", a.entries().len());
        }
        writeln!(
            out,
            "{:>12}  {:>12}  {:<7}  {:<16}  name",
            "size", "compressed", "method", "modified"
        )?;
        for (e, _) in a.entries().iter().zip(&chosen).filter(|(_, c)| **c) {
            let method = match (e.method, e.aes) {
                (0, None) => "store".to_string(),
                (8, None) => "deflate".to_string(),
                (93, None) => "zstd".to_string(),
                (m, Some(_)) => format!(
                    "{}+aes",
                    if m == 8 {
                        "deflate"
                    } else if m == 0 {
                        "store"
                    } else {
                        "?"
                    }
                ),
                (m, None) => format!("m{m}"),
            };
            writeln!(
                out,
                "{:>12}  {:>12}  {:<7}  {:<16}  {}",
                e.size,
                e.compressed_size,
                method,
                fmt_time(e.mtime),
                printable::name(&e.name)
            )?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let pw = options.password.get(encrypted, false)?;
    let opts = opts_for(pw);
    let select = |e: &zipstream::Entry| sel.wants(&e.name);
    if options.test || options.pipe {
        let rep = zipstream::read_archive_data(&mut a, &opts, &select, &mut |e, b| {
            if options.pipe && e.kind() == EntryKind::File {
                out.write_all(b)?;
            }
            Ok(())
        })
        .with_context(|| format!("reading {name}"))?;
        if options.test && options.quiet < 2 {
            let n = rep.files + rep.dirs + rep.symlinks;
            writeln!(out, "No errors detected in {name} ({n} entries).")?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    zipstream::extract_archive_selected(&mut a, &options.dir, &opts, &select)
        .with_context(|| format!("extracting {name}"))?;
    Ok(ExitCode::SUCCESS)
}
