//! `perfkit unzip`: listing, testing, printing and extracting members
//! selected by Info-ZIP's patterns.

use super::*;

/// Arguments of `perfkit unzip`.
///
/// Info-ZIP's habits: `unzip a.zip 'd/*' -x '*.log' -d out`, `-n`, `-o`,
/// `-j`, `-q`, `-p a.zip member`, `-l`, `-t`. Where perfkit differs: it
/// never prompts (an existing file is an error unless `-o` or `-n`);
/// extraction prints nothing (no "inflating:" lines, so `-q` only quiets
/// `-t`'s summary and `-qq` removes it); `-l` and `-t` print their own
/// formats; a pattern that matches nothing is an error, exit 1 (Info-ZIP
/// warns and exits 11), checked before anything is written; failures exit
/// 1, never Info-ZIP's other codes; and `--max-size` and the ratio limit
/// apply to every mode (`-p`, `-t`, `-l`'s entry count, extraction, stdin).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Patterns: `*` matches any run of characters, `/` included; `?` one \
character; `[abc]`, `[a-z]`, `[!a-z]` a set; anything else itself (case-sensitive), as Info-ZIP \
matches them. Names are printed with control characters shown as ^J, ^[ ...

Differences from Info-ZIP unzip: options may come anywhere (a member named like an option needs \
`--` before it); it never prompts: an existing file is an error unless -o or -n; extraction \
prints nothing, so -q only shortens -t (-qq silences it); -l and -t print their own formats; a \
MEMBER that matches nothing is an error, exit 1, before anything is written (Info-ZIP warns and \
exits 11); every failure exits 1; --max-size and the compression-ratio limit apply to -p, -t, \
extraction and stdin alike; a failed extraction removes what it created; symlinks are created \
only when they resolve inside DIR."
)]
pub struct UnzipArgs {
    /// The archive, or `-` for stdin (streamed: local headers only).
    archive: PathBuf,
    /// Only these members (names or patterns); all when none are given.
    #[arg(value_name = "MEMBER")]
    members: Vec<String>,
    /// Leave out members matching these patterns (the rest of the command
    /// line up to the next option, as in Info-ZIP).
    #[arg(short = 'x', num_args = 1.., value_name = "PATTERN")]
    exclude: Vec<String>,
    /// Extract into DIR.
    #[arg(short = 'd', long, default_value = ".")]
    dir: PathBuf,
    /// List entries instead of extracting.
    #[arg(short = 'l', long)]
    list: bool,
    /// Test entries (decode and verify CRC/MAC) instead of extracting.
    #[arg(short = 't', long)]
    test: bool,
    /// Extract file data to stdout.
    #[arg(short = 'p', long)]
    pipe: bool,
    /// Replace existing files.
    #[arg(short = 'o', long)]
    overwrite: bool,
    /// Never overwrite: skip existing files quietly.
    #[arg(short = 'n', long = "never-overwrite", conflicts_with = "overwrite")]
    never_overwrite: bool,
    /// Junk paths: write every file into DIR itself, without its directories.
    #[arg(short = 'j', long = "junk-paths")]
    junk_paths: bool,
    /// Quieter: `-q` keeps only `-t`'s summary line, `-qq` prints nothing.
    #[arg(short = 'q', long, action = clap::ArgAction::Count)]
    quiet: u8,
    /// Largest total uncompressed size to accept (zip bomb limit), in every mode.
    #[arg(long, default_value = "64GiB", value_parser = perfkit::units::parse_size)]
    max_size: u64,
    #[command(flatten)]
    password: PasswordArgs,
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
    fn new(args: &UnzipArgs) -> Selection {
        let chars = |v: &[String]| v.iter().map(|p| p.chars().collect()).collect();
        Selection {
            include: chars(&args.members),
            exclude: chars(&args.exclude),
            matched: std::cell::RefCell::new(vec![false; args.members.len()]),
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
pub fn run_unzip(args: UnzipArgs) -> Result<ExitCode> {
    use perfkit::printable;
    let stdin = args.archive.as_os_str() == "-";
    let raw_name = args.archive.display().to_string();
    let name = printable::name(&raw_name).into_owned();
    let sel = Selection::new(&args);
    let extracting = !(args.list || args.test || args.pipe);
    // An -d that exists but is no directory (a file, a dangling symlink)
    // would only fail inside extraction, as a bare "File exists".
    if extracting && fs::symlink_metadata(&args.dir).is_ok() && !args.dir.is_dir() {
        bail!(
            "{}: not a directory (the -d destination)",
            printable::name(&args.dir.display().to_string())
        );
    }
    let opts_for = |pw: Option<Vec<u8>>| ExtractOptions {
        overwrite: args.overwrite,
        skip_existing: args.never_overwrite,
        junk_paths: args.junk_paths,
        password: pw,
        max_total_bytes: args.max_size,
        // Listed, so that Ctrl-C or kill mid-entry deletes them too.
        on_temporary: Some(TemporaryHook::new(|p| {
            perfkit::cleanup::register(p.to_path_buf())
        })),
        ..ExtractOptions::default()
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if stdin {
        let pw = args.password.get(false, false)?;
        let mut r =
            ZipStreamReader::new(io::BufReader::with_capacity(128 << 10, io::stdin().lock()));
        let opts = opts_for(pw);
        if args.list {
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
        } else if args.test || args.pipe {
            let rep =
                zipstream::read_stream_data(&mut r, &opts, &|e| sel.wants(&e.name), &mut |e, b| {
                    if args.pipe && e.kind() == EntryKind::File {
                        out.write_all(b)?;
                    }
                    Ok(())
                })
                .with_context(|| format!("reading {name}"))?;
            sel.check_all_matched(&raw_name)?;
            if args.test && args.quiet < 2 {
                let n = rep.files + rep.dirs + rep.symlinks;
                writeln!(out, "No errors detected in {name} ({n} entries).")?;
            }
        } else {
            zipstream::extract_stream_selected(&mut r, &args.dir, &opts, &|e| sel.wants(&e.name))
                .with_context(|| format!("extracting {name}"))?;
        }
        sel.check_all_matched(&raw_name)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let f = fs::File::open(&args.archive).with_context(|| format!("opening {name}"))?;
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
    if args.list {
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
    let pw = args.password.get(encrypted, false)?;
    let opts = opts_for(pw);
    let select = |e: &zipstream::Entry| sel.wants(&e.name);
    if args.test || args.pipe {
        let rep = zipstream::read_archive_data(&mut a, &opts, &select, &mut |e, b| {
            if args.pipe && e.kind() == EntryKind::File {
                out.write_all(b)?;
            }
            Ok(())
        })
        .with_context(|| format!("reading {name}"))?;
        if args.test && args.quiet < 2 {
            let n = rep.files + rep.dirs + rep.symlinks;
            writeln!(out, "No errors detected in {name} ({n} entries).")?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    zipstream::extract_archive_selected(&mut a, &args.dir, &opts, &select)
        .with_context(|| format!("extracting {name}"))?;
    Ok(ExitCode::SUCCESS)
}
