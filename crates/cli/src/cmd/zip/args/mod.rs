//! The flags of `perfkit zip` and `perfkit unzip`, and
//! their conversion into the plain options the commands run on: clap's
//! types end here.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args as _;
use zipstream::update::Mode;
use zipstream::{AesStrength, Method};

use super::{Options, Password, Task};

mod unzip;

pub use unzip::UnzipArgs;
pub(super) use unzip::unzip_usage_error;

/// Arguments of `perfkit zip`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Info-ZIP habits that work: -r, -q, -0..-9 (also in clusters such as -r9; -0 \
stores), -j (junk paths), -x and -i GLOB, -@, -u (update: add new, replace older), -f (freshen: \
replace older only), -d (delete entries), -A (adjust a self-extractor's offsets to count its stub; every update keeps \
the stub and counts it too), -m (move: delete the originals once the archive is \
on disk, and tested with -T; a file changed since it was listed is kept, with a warning), -T (test before the archive replaces anything), -e and -P, \
-D (no directory entries), -X (no extra fields), -o (archive time = newest entry), -FS (file sync: \
update, add, and delete the entries whose files are not among those given), -z (archive comment \
from stdin, to a line holding `.`), -n SUFFIXES (store names ending so), -sf (show the files, \
write nothing), -v (sizes on each line, and totals), -MM (a name not there stops the run), \
-t DATE and -tt DATE (files modified from / before that day), -g (accepted: updates grow the \
archive anyway), -c (a comment per entry, from stdin), -R PATTERN... (recurse from here, keeping what \
matches), -Z store|deflate (also zstd), -k (DOS names, marked as made on MS-DOS), -U PATTERN... --out OUT \
(copy entries), -F --out OUT (copy every entry of a mostly intact archive), --out/-O OUT (write the result there, the archive left as it was), -sd (Info-ZIP's sd: \
lines), -lf FILE, -la, -li (log file), -T -TT CMD (test with CMD: `{}` is the archive), -dc, -db, \
-du, -dv (counts, bytes, sizes, disks on each line), -b PATH and -dd/-dg/-ds SIZE \
(accepted: the temporary goes beside the archive, progress is perfkit's bar), a name that is not there warned of \
(`zip warning: name not matched:`) and the rest archived, \
\"adding:\"/\"updating:\" lines on stdout (stderr when the archive goes to stdout; -q silences \
them), `-` for stdin data, an existing archive is updated (entries replaced in place, new ones \
appended), a name without an extension gets .zip.

Patterns (-x, -i, -d): Info-ZIP's rules: `*` any run of characters, `/` included; `?` one \
character; `[abc]`, `[a-z]`, `[!a-z]` a set; directories are matched with their trailing `/`.

Encryption: -e (prompts twice, no echo) and -P PASSWORD write WinZip AES-256, not Info-ZIP's \
ZipCrypto (broken): Info-ZIP unzip 6.0 cannot read them, 7-Zip and perfkit unzip can. -P shows \
the password to other users (ps), so it warns; --password-file and --password-env do not.

-l and -ll store text files with CR LF or LF line ends (a file whose first 64 KiB look binary is \
stored as it is, with Info-ZIP's warning on a line of its own).

Differences from Info-ZIP zip: --level is the long form of -0..-9; --jobs N is long only; two inputs under one name are a usage error (exit 2), as is \
Info-ZIP's 'cannot repeat names'; FIFOs, sockets and devices are skipped with a note; \
\"nothing to do\" (only missing names: Info-ZIP's `zip error: Nothing to do!`; -u, -f, -d) exits 1 and failures exit 1 or 2, never Info-ZIP's other codes; \
a link that loops back to a folder being walked is skipped with a note (Info-ZIP walks it until \
its names grow too long); -Z bzip2 is refused (perfkit writes store, deflate and zstd); -FF \
(salvage an archive) is refused: `perfkit unzip - < DAMAGED.zip` extracts what the local headers hold; \
-dd and -dg draw perfkit's bar, not dots; -w is refused, as Info-ZIP's zip refuses it on Unix."
)]
pub struct ZipArgs {
    /// The archive to write: a file, `-` for stdout, or `s3://bucket/key`
    /// (S3-compatible storage configured by AWS_ENDPOINT_URL, AWS_REGION,
    /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ALLOW_HTTP).
    archive: Option<PathBuf>,
    /// Files and directories to add; `-` adds stdin as an entry named `-`.
    paths: Vec<PathBuf>,
    /// Recurse into directories.
    #[arg(short = 'r', long)]
    recurse: bool,
    /// Quiet: no "adding:" lines and no progress bar (as Info-ZIP's `-q`).
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Read more paths from stdin, one per line (like Info-ZIP's `-@`).
    #[arg(short = '@', long = "names-stdin")]
    names_stdin: bool,
    /// Compression method: deflate, store, or zstd (Info-ZIP's unzip 6.0
    /// cannot read zstd), or the start of one in any case (`-Zs`); also
    /// Info-ZIP's `--compression-method`. Its bzip2 is refused (see
    /// Differences).
    #[arg(short = 'Z', long, visible_alias = "compression-method", value_name = "METHOD",
          value_parser = parse_method, default_value = "deflate")]
    method: MethodArg,
    /// Level: deflate 0-9 (0 stores, as Info-ZIP's `-0`), zstd 1-22.
    /// Info-ZIP's `-0`..`-9` are accepted too (`-r9` as well).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(0..=22))]
    level: u32,
    /// Junk paths: store each file under its name alone, and no directory
    /// entries (Info-ZIP's `-j`).
    #[arg(short = 'j', long = "junk-paths")]
    junk_paths: bool,
    /// Store symbolic links as links (Info-ZIP's `-y`); without it a link
    /// is followed and what it names is stored under the link's name.
    #[arg(short = 'y', long = "symlinks")]
    symlinks: bool,
    /// Compression threads (entries and 1 MiB blocks in parallel); 1
    /// compresses inline. Long only: Info-ZIP's `-j` junks paths.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Encrypt entries with WinZip AES of this strength.
    #[arg(long, value_enum)]
    encrypt: Option<EncryptArg>,
    #[command(flatten)]
    password_from: PasswordArgs,
    /// Leave out paths matching these globs (Info-ZIP's patterns): as in
    /// Info-ZIP, the rest of the command line up to the next option.
    #[arg(short = 'x', long, value_name = "GLOB", num_args = 1..)]
    exclude: Vec<String>,
    /// Add only paths matching these globs (Info-ZIP's patterns): as in
    /// Info-ZIP, the rest of the command line up to the next option.
    #[arg(short = 'i', long, value_name = "GLOB", num_args = 1..)]
    include: Vec<String>,
    /// Update: add new files, replace entries only by newer files.
    #[arg(short = 'u', long, conflicts_with_all = ["freshen", "delete"])]
    update: bool,
    /// Freshen: replace entries by newer files; add nothing new.
    #[arg(short = 'f', long, conflicts_with = "delete")]
    freshen: bool,
    /// Delete the entries matching the PATHS (patterns) from the archive.
    #[arg(short = 'd', long)]
    delete: bool,
    /// Move: delete the originals once the archive is written (and tested).
    #[arg(short = 'm', long = "move", conflicts_with = "delete")]
    move_files: bool,
    /// Test the new archive before it replaces anything (`test of … OK`).
    #[arg(short = 'T', long = "test")]
    test: bool,
    /// Adjust a self-extractor (Info-ZIP's `-A`): an archive whose stub was
    /// prepended without counting it in its offsets is rewritten with
    /// offsets that count it (any update does so too); alone, nothing else
    /// changes.
    #[arg(short = 'A', long = "adjust-sfx", conflicts_with = "delete")]
    adjust: bool,
    /// Encrypt with AES-256 (not ZipCrypto), prompting twice for the password.
    #[arg(short = 'e', conflicts_with_all = ["password", "password_file", "password_env"])]
    encrypt_prompt: bool,
    /// Encrypt with AES-256 using PASSWORD (visible to other users: warns).
    #[arg(short = 'P', long = "password", value_name = "PASSWORD",
        conflicts_with_all = ["password_file", "password_env"])]
    password: Option<String>,
    /// No directory entries: only files (and links) are stored, under
    /// their full names (Info-ZIP's `-D`).
    #[arg(short = 'D', long = "no-dir-entries")]
    no_dir_entries: bool,
    /// No extra fields: entries carry the DOS time alone, without the
    /// extended timestamp (Info-ZIP's `-X`).
    #[arg(short = 'X', long = "no-extra")]
    no_extra: bool,
    /// Give the archive file the time of its newest entry (Info-ZIP's `-o`).
    #[arg(short = 'o', long = "latest-time")]
    latest_time: bool,
    /// File sync (Info-ZIP's `-FS`): update the entries whose files
    /// changed, add new files and delete the entries whose files are not
    /// among the paths given.
    #[arg(long = "filesync", conflicts_with_all = ["update", "freshen", "delete"])]
    filesync: bool,
    /// Read the archive comment from stdin, up to a line holding only `.`
    /// or the end of input (Info-ZIP's `-z`).
    #[arg(short = 'z', long = "archive-comment")]
    archive_comment: bool,
    /// Store, without compressing, files whose names end in one of these
    /// suffixes, separated by `:` or `;` (Info-ZIP's `-n .jpg:.zip`;
    /// without it .Z, .zip, .zoo, .arc, .lzh and .arj are stored, unless
    /// -9; `-n :` compresses everything).
    #[arg(short = 'n', long = "suffixes", value_name = "SUFFIXES")]
    suffixes: Option<String>,
    /// Show the files that would be operated on, then stop without
    /// writing (Info-ZIP's `-sf`).
    #[arg(long = "show-files")]
    show_files: bool,
    /// Must match (Info-ZIP's `-MM`): a name that is not there stops the
    /// run before anything is written, instead of a warning.
    #[arg(long = "must-match")]
    must_match: bool,
    /// Only files modified on or after DATE, `mmddyyyy` or `yyyy-mm-dd`,
    /// local time (Info-ZIP's `-t`).
    #[arg(short = 't', long = "from-date", value_name = "DATE", value_parser = parse_date)]
    from_date: Option<i64>,
    /// Only files modified before DATE (Info-ZIP's `-tt`).
    #[arg(long = "before-date", value_name = "DATE", value_parser = parse_date)]
    before_date: Option<i64>,
    /// Store text files with CR LF line ends (Info-ZIP's `-l`; a file
    /// that looks binary is stored as it is, with a warning).
    #[arg(short = 'l', long = "to-crlf", conflicts_with = "to_lf")]
    to_crlf: bool,
    /// Store text files with LF line ends, from CR LF (Info-ZIP's `-ll`).
    #[arg(long = "to-lf")]
    to_lf: bool,
    /// Recurse from the current folder, storing what matches the PATHS
    /// taken as patterns (Info-ZIP's `-R`: `zip -R a.zip '*.c'`).
    #[arg(short = 'R', long = "recurse-patterns")]
    recurse_patterns: bool,
    /// A one-line comment for each entry added, read from stdin after
    /// `Enter comment for NAME:` (Info-ZIP's `-c`).
    #[arg(short = 'c', long = "entry-comments")]
    entry_comments: bool,
    /// Where Info-ZIP puts its temporary archive (`-b PATH`): accepted;
    /// perfkit writes it beside the archive, so the rename stays on one
    /// file system.
    #[arg(short = 'b', long = "temp-path", value_name = "PATH", hide = true)]
    temp_path: Option<PathBuf>,
    /// Before each entry's line, the entries done and to go (Info-ZIP's
    /// `-dc`: `  0/  3   adding: a.txt`).
    #[arg(long = "display-counts")]
    display_counts: bool,
    /// Before each entry's line, the bytes done and to go (Info-ZIP's
    /// `-db`: `[4.8K/ 29K]   adding: a.txt`).
    #[arg(long = "display-bytes")]
    display_bytes: bool,
    /// Each entry's size after its name (Info-ZIP's `-du`:
    /// `adding: a.txt (4.8K) (deflated 62%)`).
    #[arg(long = "display-usize")]
    display_usize: bool,
    /// Before each entry's line, the disk it is read from and written to
    /// (Info-ZIP's `-dv`: always `1>1: `, perfkit writes no split archives).
    #[arg(long = "display-volume")]
    display_volume: bool,
    /// Info-ZIP's dots while each file is compressed (`-dd`): no dots,
    /// perfkit's bar shows progress (see Differences), but Info-ZIP's
    /// space after the name of a large file where they would start.
    #[arg(long = "display-dots")]
    display_dots: bool,
    /// Info-ZIP's dots for the whole archive (`-dg`): no dots (see
    /// Differences), but its space after the first entry's name and its
    /// line end at the end.
    #[arg(long = "display-globaldots", hide = true)]
    display_globaldots: bool,
    /// The bytes each dot stands for (Info-ZIP's `-ds SIZE`: at least
    /// 32k, or 0 for none).
    #[arg(long = "dot-size", value_name = "SIZE", value_parser = parse_dot_size)]
    dot_size: Option<u64>,
    /// DOS names (Info-ZIP's `-k`): each part of a name in upper case,
    /// cut to 8.3, the characters DOS refuses left out, and the entries
    /// marked as made on MS-DOS.
    #[arg(short = 'k', long = "dos-names", visible_alias = "DOS-names")]
    dos_names: bool,
    /// VMS file versions (Info-ZIP's `-w`): refused, as Info-ZIP's zip
    /// refuses it on Unix.
    #[arg(short = 'w', hide = true)]
    vms_versions: bool,
    /// Show debugging lines as each step is done (Info-ZIP's `-sd`:
    /// `sd: Scanning files`).
    #[arg(long = "show-debug")]
    show_debug: bool,
    /// Log the run to FILE (Info-ZIP's `-lf`): the command line, warnings,
    /// the total and the times; replaced unless `--log-append`.
    #[arg(long = "logfile-path", value_name = "FILE")]
    log_file: Option<PathBuf>,
    /// Append to the log file instead of replacing it (Info-ZIP's `-la`).
    #[arg(long = "log-append", requires = "log_file")]
    log_append: bool,
    /// Log each entry's line too (Info-ZIP's `-li`).
    #[arg(long = "log-info", requires = "log_file")]
    log_info: bool,
    /// With `-T`, test with this command instead (Info-ZIP's `-TT CMD`):
    /// `{}` in it is the archive written, else its path is added at the
    /// end; the test passes when the command exits 0.
    #[arg(long = "unzip-command", value_name = "CMD")]
    unzip_command: Option<String>,
    /// Fix an archive (Info-ZIP's `-F`, with `--out`): every entry its
    /// central directory names is copied into OUT, the offsets counting
    /// any stub; `-FF` (salvage from the local headers) is refused, see
    /// Differences.
    #[arg(short = 'F', long = "fix", action = clap::ArgAction::Count)]
    fix: u8,
    /// Copy the entries of ARCHIVE that the PATHS (patterns) name into the
    /// `--out` archive (Info-ZIP's `-U`: `zip -U a.zip '*.c' --out c.zip`).
    #[arg(short = 'U', long = "copy", requires = "out",
          conflicts_with_all = ["update", "freshen", "delete", "move_files", "filesync"])]
    copy: bool,
    /// Write the result to OUT, leaving ARCHIVE as it was (Info-ZIP's
    /// `-O`/`--out`): an update, a deletion or `-U`'s copy.
    #[arg(short = 'O', long = "out", value_name = "OUT")]
    out: Option<PathBuf>,
    /// Grow the archive (Info-ZIP's `-g`): perfkit updates in place anyway.
    #[arg(short = 'g', long = "grow")]
    grow: bool,
    /// Verbose: each entry's sizes on its line and a total (Info-ZIP's
    /// `-v` with files to add).
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Part size of an s3:// multipart upload (5MiB to 5GiB; S3 allows
    /// 10,000 parts, so this bounds the archive size at 10,000 × SIZE).
    #[arg(long, value_name = "SIZE", default_value = "8MiB", value_parser = perfkit::units::parse_size)]
    part_size: u64,
}

/// Where a password comes from.
#[derive(Debug, Clone, clap::Args)]
pub struct PasswordArgs {
    /// Read the password from the first line of FILE.
    #[arg(long, value_name = "FILE")]
    password_file: Option<PathBuf>,
    /// Read the password from environment variable VAR.
    #[arg(long, value_name = "VAR", conflicts_with = "password_file")]
    password_env: Option<String>,
}

/// A day as Info-ZIP's `-t` takes it, `mmddyyyy` or `yyyy-mm-dd`: the
/// Unix time of its local midnight.
fn parse_date(s: &str) -> Result<i64, String> {
    let bad = || format!("{s:?} is not a date: write mmddyyyy or yyyy-mm-dd");
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let (y, m, d) = match s.len() {
        8 if digits(s) => (&s[4..8], &s[0..2], &s[2..4]),
        10 if s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-' => (&s[0..4], &s[5..7], &s[8..10]),
        _ => return Err(bad()),
    };
    let num = |t: &str| {
        if digits(t) {
            t.parse::<i32>().ok()
        } else {
            None
        }
    };
    let (Some(y), Some(m), Some(d)) = (num(y), num(m), num(d)) else {
        return Err(bad());
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || y < 1970 {
        return Err(bad());
    }
    // SAFETY: `tm` is a plain C struct, zeroed (a valid value for every
    // field) and then filled; mktime only reads and normalises it.
    let t = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        tm.tm_year = y - 1900;
        tm.tm_mon = m - 1;
        tm.tm_mday = d;
        tm.tm_isdst = -1;
        libc::mktime(&mut tm)
    };
    if t == -1 {
        return Err(bad());
    }
    // time_t is i64 here, i32 on some targets.
    #[allow(clippy::useless_conversion)]
    Ok(i64::from(t))
}

/// Info-ZIP's `-ds SIZE`: a size as `--part-size` takes it (`32k`,
/// `10m`), at least 32 KiB, or 0 for no dots.
fn parse_dot_size(s: &str) -> Result<u64, String> {
    let n = perfkit::units::parse_size(s)?;
    if n != 0 && n < 32 << 10 {
        return Err(format!(
            "{s:?}: a dot stands for at least 32k (or 0: no dots)"
        ));
    }
    Ok(n)
}

/// Info-ZIP's `-Z METHOD`: a method's name or the start of one, in any
/// case (`-Z s`, `-Zd`, `-Z STORE`), as its zip takes them.
fn parse_method(s: &str) -> Result<MethodArg, String> {
    const NAMES: &[(&str, MethodArg)] = &[
        ("store", MethodArg::Store),
        ("deflate", MethodArg::Deflate),
        ("bzip2", MethodArg::Bzip2),
        ("zstd", MethodArg::Zstd),
    ];
    let lower = s.to_ascii_lowercase();
    NAMES
        .iter()
        .find(|(name, _)| !lower.is_empty() && name.starts_with(&lower))
        .map(|&(_, m)| m)
        .ok_or_else(|| format!("{s:?} is not a compression method: store, deflate or zstd"))
}

/// The compression methods `--method` and Info-ZIP's `-Z` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MethodArg {
    /// Stored as it is.
    Store,
    /// Deflate, as Info-ZIP's zip writes it.
    Deflate,
    /// Info-ZIP's `-Z bzip2`: refused (see Differences).
    Bzip2,
    /// Zstandard (method 93).
    Zstd,
}

/// The WinZip AES strengths `--encrypt` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum EncryptArg {
    /// AES-256, what `-e` and `-P` write.
    Aes256,
    /// AES-192.
    Aes192,
    /// AES-128.
    Aes128,
}

impl MethodArg {
    /// The method this names; bzip2 is a usage error (not written).
    fn method(self) -> Result<Method, ExitCode> {
        Ok(match self {
            MethodArg::Store => Method::Stored,
            MethodArg::Deflate => Method::Deflate,
            MethodArg::Zstd => Method::Zstd,
            MethodArg::Bzip2 => {
                return Err(usage_error(
                    "-Z bzip2 is not written: perfkit writes store, deflate and zstd (zstd \
                     compresses better and faster than bzip2; see Differences in docs/zip.md)",
                ));
            }
        })
    }
}

impl EncryptArg {
    /// The strength zipstream writes.
    fn strength(self) -> AesStrength {
        match self {
            EncryptArg::Aes256 => AesStrength::Aes256,
            EncryptArg::Aes192 => AesStrength::Aes192,
            EncryptArg::Aes128 => AesStrength::Aes128,
        }
    }
}

impl PasswordArgs {
    /// Where these flags say the password comes from.
    fn source(&self) -> Password {
        match (&self.password_file, &self.password_env) {
            (Some(f), _) => Password::File(f.clone()),
            (None, Some(v)) => Password::Env(v.clone()),
            (None, None) => Password::Prompt,
        }
    }
}

impl ZipArgs {
    /// The task these flags ask for, or the exit code of a usage error
    /// parsing cannot see, already printed as clap prints its own.
    pub fn into_task(mut self) -> Result<Task, ExitCode> {
        self.refuse_unsupported()?;
        let method = self.method.method()?;
        let (encrypt, password) = self.encryption()?;
        let mode = self.mode();
        // -b: accepted, see its doc comment.
        let _ = &self.temp_path;
        let _ = self.dot_size;
        if self.archive.as_deref() == Some(std::path::Path::new("-"))
            && (mode != Mode::Add || self.move_files || self.test || self.adjust)
        {
            return Err(usage_error(
                "-u, -f, -d, -m, -T and -A need an archive file, not `-` (stdout cannot be read back)",
            ));
        }
        // -R PATTERN...: the current folder walked, what matches kept.
        let (mut paths, mut recurse) = (self.paths, self.recurse);
        let mut recurse_patterns = Vec::new();
        if self.recurse_patterns {
            recurse_patterns = paths
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            paths = vec![PathBuf::from(".")];
            recurse = true;
        }
        Ok(Task::Write(Options {
            archive: self.archive,
            paths,
            recurse,
            quiet: self.quiet,
            names_stdin: self.names_stdin,
            method,
            dos_names: self.dos_names,
            show_debug: self.show_debug,
            log: self.log_file.map(|path| super::log::LogSettings {
                path,
                append: self.log_append,
                info: self.log_info,
            }),
            unzip_command: self.unzip_command,
            copy: self.copy || self.fix == 1,
            fix: self.fix == 1,
            out: self.out,
            display: super::announce::Display {
                counts: self.display_counts,
                bytes: self.display_bytes,
                usize: self.display_usize,
                volume: self.display_volume,
                global_dots: self.display_globaldots,
                dots: self.display_dots,
            },
            level: self.level,
            junk_paths: self.junk_paths,
            symlinks: self.symlinks,
            jobs: self.jobs,
            encrypt,
            password,
            exclude: self.exclude,
            include: self.include,
            recurse_patterns,
            line_ends: if self.to_crlf {
                Some(super::items::LineEnds::ToDos)
            } else if self.to_lf {
                Some(super::items::LineEnds::ToUnix)
            } else {
                None
            },
            mode,
            move_files: self.move_files,
            test: self.test,
            adjust: self.adjust,
            part_size: self.part_size,
            no_dir_entries: self.no_dir_entries,
            no_extra: self.no_extra,
            latest_time: self.latest_time,
            filesync: self.filesync,
            archive_comment: self.archive_comment,
            store_suffixes: store_suffixes(self.suffixes, self.level),
            show_files: self.show_files,
            verbose: self.verbose,
            must_match: self.must_match,
            modified_from: self.from_date,
            modified_before: self.before_date,
            grow: self.grow,
            ask_entry_comments: self.entry_comments,
            entry_comments: Default::default(),
        }))
    }

    /// Refuses what perfkit does not do (`-w`, `-FF`), `-F` without
    /// `--out` or with paths, and the old `zip bench`; the exit code of the
    /// usage error, already printed.
    fn refuse_unsupported(&self) -> Result<(), ExitCode> {
        // `zip bench` moved to `perfkit bench --only zip`; a file or
        // archive really named `bench` is still an archive.
        if self.archive.as_deref() == Some(std::path::Path::new("bench"))
            && !std::path::Path::new("bench").exists()
            && !std::path::Path::new("bench.zip").exists()
        {
            eprintln!(
                "perfkit zip: `zip bench` is now `perfkit bench --only zip` (to write bench.zip, name it bench.zip)"
            );
            return Err(ExitCode::from(2));
        }
        if self.vms_versions {
            return Err(usage_error(
                "-w (VMS file versions) is not supported on Unix, as in Info-ZIP's zip",
            ));
        }
        if self.fix > 1 {
            return Err(usage_error(
                "-FF (salvage an archive) is not done; `perfkit unzip - < DAMAGED.zip` extracts \
                 what its local headers still hold (see Differences in docs/zip.md)",
            ));
        }
        if self.fix == 1 && self.out.is_none() {
            return Err(usage_error(
                "-F (fix an archive) needs --out OUT: the archive named is only read",
            ));
        }
        if self.fix == 1 && (!self.paths.is_empty() || self.names_stdin) {
            return Err(usage_error(
                "-F (fix an archive) copies every entry: it takes no paths, as Info-ZIP's",
            ));
        }
        Ok(())
    }

    /// The encryption asked for and where its password comes from: `-e`
    /// and `-P` mean AES-256; a password without encryption is a usage
    /// error.
    fn encryption(&mut self) -> Result<(Option<AesStrength>, Password), ExitCode> {
        // `-e` and `-P` are Info-ZIP's spellings of "encrypt": here with
        // AES-256, the only choice that is not broken.
        let mut encrypt = self.encrypt.map(EncryptArg::strength);
        let password = match self.password.take() {
            Some(p) => {
                eprintln!(
                    "perfkit zip: warning: -P puts the password on the command line, where other users can see it (ps); -e prompts for it"
                );
                Password::Given(p.into_bytes())
            }
            None => self.password_from.source(),
        };
        if self.encrypt_prompt || matches!(password, Password::Given(_)) {
            encrypt.get_or_insert(AesStrength::Aes256);
        }
        // A password is only ever used to encrypt; taking one without
        // --encrypt would write in plain text what the user meant to protect.
        if encrypt.is_none() && password != Password::Prompt {
            return Err(usage_error(
                "a password (--password-file/--password-env) needs --encrypt aes256|aes192|aes128; without it the archive would be written unencrypted",
            ));
        }
        Ok((encrypt, password))
    }

    /// What is done to the archive's entries: `-FS` and `-u` update, `-d`
    /// deletes, `-f` freshens, otherwise items are added.
    fn mode(&self) -> Mode {
        if self.filesync {
            Mode::Update
        } else if self.delete {
            Mode::Delete
        } else if self.freshen {
            Mode::Freshen
        } else if self.update {
            Mode::Update
        } else {
            Mode::Add
        }
    }
}

/// The suffixes `-n` names as stored without compression, or Info-ZIP's
/// default list (none at `-9`).
fn store_suffixes(suffixes: Option<String>, level: u32) -> Vec<String> {
    match suffixes {
        Some(s) => s
            .split([':', ';'])
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect(),
        // Info-ZIP's default list, which -9 drops ("attempts
        // compression on all files regardless of extension").
        None if level == 9 => Vec::new(),
        None => DEFAULT_STORED.iter().map(|s| s.to_string()).collect(),
    }
}

/// `perfkit zip` or `perfkit unzip` (`command`) alone: its help on
/// stdout, as Info-ZIP's tools alone print their usage.
pub(super) fn print_usage(command: &str) -> std::io::Result<()> {
    use clap::CommandFactory;
    let mut top = crate::flags::Cli::command();
    top.build();
    match top.find_subcommand_mut(command) {
        Some(cmd) => cmd.print_help(),
        None => Ok(()),
    }
}

/// Reports a usage error that parsing cannot see exactly as clap reports
/// its own: `error: …`, the usage line, exit code 2.
pub(super) fn usage_error(message: &str) -> ExitCode {
    let mut cmd = ZipArgs::augment_args(clap::Command::new("zip").bin_name("perfkit zip"));
    let err = cmd.error(clap::error::ErrorKind::ArgumentConflict, message);
    let _ = err.print();
    ExitCode::from(err.exit_code().clamp(0, 255) as u8)
}

/// The suffixes Info-ZIP's zip stores without trying to compress when
/// `-n` is not given (its manual's list: archives already compressed).
const DEFAULT_STORED: &[&str] = &[".Z", ".zip", ".zoo", ".arc", ".lzh", ".arj"];

/// Short flags of `perfkit zip` that take no value, which may share a
/// cluster with a level digit (`-r9`, `-9qr`), as in Info-ZIP.
const ZIP_SHORT_SWITCHES: &[u8] = b"rqj@ufdmTeADXozvgcRlkUF";

/// Rewrites Info-ZIP's level flags in a `zip` command line into
/// `--level=N` before clap sees them (clap cannot parse `-#` flags):
/// `-0`..`-9` alone or in a cluster of switches (`-r9` → `-r --level=9`).
/// The value after `-x`, `--level` and the like, and anything after `--`,
/// are left alone.
pub fn info_zip_level_flags(args: Vec<OsString>) -> Vec<OsString> {
    if args.get(1).and_then(|a| a.to_str()) == Some("unzip") {
        return zipinfo_flags(args);
    }
    if args.get(1).and_then(|a| a.to_str()) != Some("zip") {
        return args;
    }
    const TAKES_VALUE: &[&str] = &[
        "-x",
        "--exclude",
        "--level",
        "--jobs",
        "--method",
        "--encrypt",
        "--password-file",
        "--password-env",
        "--part-size",
        "-i",
        "--include",
        "-P",
        "--password",
        "-n",
        "--suffixes",
        "-t",
        "--from-date",
        "-tt",
        "--before-date",
        "-b",
        "--temp-path",
        "-ds",
        "--dot-size",
        "-Z",
        "--method",
        "--compression-method",
        "-lf",
        "--logfile-path",
        "-TT",
        "--unzip-command",
        "-O",
        "--out",
    ];
    crate::cmd::rewrite_options(args, TAKES_VALUE, |s, out| {
        // Info-ZIP's two-letter options, which clap would read as two
        // single-letter ones.
        match s {
            "-FS" => return out.push("--filesync".into()),
            "-sf" => return out.push("--show-files".into()),
            "-MM" => return out.push("--must-match".into()),
            "-ll" => return out.push("--to-lf".into()),
            "-tt" => return out.push("--before-date".into()),
            "-sd" => return out.push("--show-debug".into()),
            "-lf" => return out.push("--logfile-path".into()),
            "-la" => return out.push("--log-append".into()),
            "-li" => return out.push("--log-info".into()),
            "-TT" => return out.push("--unzip-command".into()),
            // Info-ZIP's progress displays, not -d (delete) with a letter.
            "-dc" => return out.push("--display-counts".into()),
            "-db" => return out.push("--display-bytes".into()),
            "-dd" => return out.push("--display-dots".into()),
            "-dg" => return out.push("--display-globaldots".into()),
            "-du" => return out.push("--display-usize".into()),
            "-dv" => return out.push("--display-volume".into()),
            "-ds" => return out.push("--dot-size".into()),
            _ => {}
        }
        let cluster = s.strip_prefix('-').filter(|c| {
            !c.is_empty()
                && !c.starts_with('-')
                && c.bytes().any(|b| b.is_ascii_digit())
                && c.bytes()
                    .all(|b| b.is_ascii_digit() || ZIP_SHORT_SWITCHES.contains(&b))
        });
        match cluster {
            Some(c) => {
                let switches: String = c.chars().filter(|ch| !ch.is_ascii_digit()).collect();
                if !switches.is_empty() {
                    out.push(format!("-{switches}").into());
                }
                // Info-ZIP takes the last level given.
                let level = c.chars().rfind(char::is_ascii_digit).unwrap_or('6');
                out.push(format!("--level={level}").into());
            }
            None => out.push(s.into()),
        }
    })
}

/// `unzip -Z`, zipinfo mode: `-Z` is the first option, and it and the
/// single-dash options after it (up to the archive) are zipinfo's
/// letters (`-Z1`, `-Z -m`, `-Z -2 -h -t`), gathered into `--zipinfo=`.
/// Any other `unzip` command line is left alone.
fn zipinfo_flags(args: Vec<OsString>) -> Vec<OsString> {
    let Some(z) = args
        .iter()
        .skip(2)
        .position(|a| a.to_str().is_some_and(|s| s.starts_with("-Z")))
        .map(|i| i + 2)
    else {
        return args;
    };
    let mut letters = args[z].to_str().unwrap_or("")[2..].to_string();
    let mut rest = z + 1;
    while let Some(s) = args.get(rest).and_then(|a| a.to_str()) {
        match s.strip_prefix('-') {
            Some(l) if !l.is_empty() && !l.starts_with('-') => letters.push_str(l),
            _ => break,
        }
        rest += 1;
    }
    let mut out: Vec<OsString> = args[..z].to_vec();
    out.push(format!("--zipinfo={letters}").into());
    out.extend(args[rest..].iter().cloned());
    out
}
