//! The flags of `perfkit unzip` and their conversion into
//! [`UnzipOptions`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args as _;
use clap::builder::{OsStringValueParser, TypedValueParser};

use super::PasswordArgs;
use crate::cmd::zip::Password;
use crate::cmd::zip::unzip::UnzipOptions;

/// Arguments of `perfkit unzip`.
///
/// Info-ZIP's habits: `unzip a.zip 'd/*' -x '*.log' -d out`, `-n`, `-o`,
/// `-j`, `-q`, `-p a.zip member`, `-c`, `-l`, `-t`, `-z`, `-u`, `-f`,
/// `-C`; `unzip ../a` finds `../a.zip`, `unzip -l '*.zip'` lists each
/// archive; an existing file is asked about on stdin (`replace a.txt?`).
/// Where perfkit differs: extraction prints Info-ZIP's `inflating:`
/// lines (`-q` silences them);
/// `-t` prints its own summary; a pattern that matches nothing is an error, exit 1 (Info-ZIP
/// warns and exits 11), checked before anything is written; failures exit
/// 1, never Info-ZIP's other codes; and `--max-size` and the ratio limit
/// apply to every mode (`-p`, `-t`, `-l`'s entry count, extraction, stdin).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "-l and -v list as Info-ZIP's unzip does, column for column, with its totals; -Z \
(-Z1, -Z -2, -Z -m, -Z -l, with -h and -t) lists as zipinfo does.

Patterns: `*` matches any run of characters, `/` included; `?` one \
character; `[abc]`, `[a-z]`, `[!a-z]` a set; anything else itself (case-sensitive), as Info-ZIP \
matches them. Names are printed with control characters shown as ^J, ^[ ...

Encrypted entries (WinZip AES, legacy ZipCrypto) take the password from -P, --password-file, \
--password-env or a prompt; a wrong one stops the run before anything is written (Info-ZIP \
skips those entries and exits 82).

The archive: NAME, else NAME.zip, else NAME.ZIP; a NAME with wildcards (`'*.zip'`) is each \
archive it matches, in name order, with Info-ZIP's tally at the end. An existing file is asked \
about, as Info-ZIP asks, on stderr, the answer read from stdin (a terminal or not): `replace \
a.txt? [y]es, [n]o, [A]ll, [N]one, [r]ename:`; the end of input is [N]one, and the run then \
fails; -o replaces, -n keeps, without asking. -c prints each file under its `inflating:` line, \
-z the archive comment, -u and -f extract only files newer than those on disk (-u also new \
ones), -C matches names without regard to case, -T gives the archive the time of its newest \
file, -B backs a file in the way up as NAME~ and replaces it, -D leaves folders' times \
alone (-DD files' too), -W keeps `*` and `?` within a folder level (`**` crosses), -b (binary) is what perfkit always does. Folders get the archive's \
times, as files do.

Differences from Info-ZIP unzip: options may come anywhere (a member named like an option needs \
`--` before it); with the archive on stdin nothing is asked: an existing file is an error unless \
-o or -n; -a is accepted but converts nothing (files are extracted byte for byte, with a note: a \
guess at text from a flag in the archive can corrupt data); -X and -K are accepted and do \
nothing (files belong to the user running unzip; setuid, setgid and sticky bits are never \
restored); -U and -UU are accepted and extract names as stored, never as #Uxxxx escapes; -M \
does not page (pipe into less); -L and -LL lower the names extracted, tested and matched, not those listed; -s and -N \
are refused, as Info-ZIP's unzip refuses them on Unix; \
extraction prints Info-ZIP's lines (Archive:, creating:, inflating:, extracting:, linking:), which \
-q silences; -t prints its own summary (-q keeps its last line, -qq nothing); -l and -v \
print times in UTC (Info-ZIP: local time); a \
MEMBER that matches nothing is an error, exit 1, before anything is written (Info-ZIP warns and \
exits 11); every failure exits 1; --max-size and the compression-ratio limit apply to -p, -t, \
extraction and stdin alike; a failed extraction removes what it created; symlinks are created \
only when they resolve inside DIR."
)]
pub struct UnzipArgs {
    /// The archive, or `-` for stdin (streamed: local headers only);
    /// without one, this help (as Info-ZIP's unzip prints its usage).
    archive: Option<PathBuf>,
    /// Only these members (names or patterns); all when none are given.
    #[arg(value_name = "MEMBER")]
    members: Vec<String>,
    /// Leave out members matching these patterns (the rest of the command
    /// line up to the next option, as in Info-ZIP).
    #[arg(short = 'x', num_args = 1.., value_name = "PATTERN")]
    exclude: Vec<String>,
    /// Extract into DIR (the current directory without it, or empty).
    // Any value, an empty one too: Info-ZIP's `-d ''` is the current
    // directory, with no prefix on the names.
    #[arg(short = 'd', long, value_parser = OsStringValueParser::new().map(PathBuf::from))]
    dir: Option<PathBuf>,
    /// List entries instead of extracting (Info-ZIP's columns and totals).
    #[arg(short = 'l', long)]
    list: bool,
    /// List verbosely: method, compressed size, ratio, CRC-32 (Info-ZIP's `-v`).
    #[arg(short = 'v', long)]
    verbose: bool,
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
    /// Quieter: `-q` prints no extraction lines and keeps only `-t`'s
    /// summary line; `-qq` prints nothing.
    #[arg(short = 'q', long, action = clap::ArgAction::Count)]
    quiet: u8,
    /// Largest total uncompressed size to accept (zip bomb limit), in every mode.
    #[arg(long, default_value = "64GiB", value_parser = perfkit::units::parse_size)]
    max_size: u64,
    /// Decrypt with PASSWORD (Info-ZIP's `-P`; visible to other users:
    /// warns). AES and legacy ZipCrypto entries are read alike.
    #[arg(short = 'P', value_name = "PASSWORD",
        conflicts_with_all = ["password_file", "password_env"])]
    given_password: Option<String>,
    #[command(flatten)]
    password: PasswordArgs,
    /// Extract file data to stdout, each file under its `inflating:`
    /// line (Info-ZIP's `-c`; `-q` leaves the lines out).
    #[arg(short = 'c', conflicts_with_all = ["list", "verbose", "test", "pipe"])]
    to_screen: bool,
    /// Show the archive comment only (Info-ZIP's `-z`).
    #[arg(short = 'z', conflicts_with_all = ["list", "verbose", "test", "pipe", "to_screen"])]
    comment: bool,
    /// Match MEMBER and `-x` patterns without regard to case (Info-ZIP's `-C`).
    #[arg(short = 'C')]
    ignore_case: bool,
    /// Update: extract only files newer than those on disk, and files not
    /// on disk (Info-ZIP's `-u`).
    #[arg(short = 'u', conflicts_with = "freshen")]
    update: bool,
    /// Freshen: extract only files newer than those already on disk
    /// (Info-ZIP's `-f`).
    #[arg(short = 'f')]
    freshen: bool,
    /// Accepted for Info-ZIP's text conversion, which perfkit does not do:
    /// files are extracted as stored, with a note (see Differences).
    #[arg(short = 'a', action = clap::ArgAction::Count)]
    text: u8,
    /// Give the archive file the time of its newest file, and do nothing
    /// else (Info-ZIP's `-T`, which other modes give way to).
    #[arg(short = 'T')]
    timestamp: bool,
    /// Wildcards stop at `/` (Info-ZIP's `-W`): `*` and `?` match within
    /// one folder level, `**` across them.
    #[arg(short = 'W')]
    wildcards_stop_at_slash: bool,
    /// Leave times alone (Info-ZIP's `-D`): folders get none of the
    /// archive's times; `-DD`: files neither.
    #[arg(short = 'D', action = clap::ArgAction::Count)]
    no_times: u8,
    /// Back up a file in the way as NAME~ (NAME~1, ... when taken; with
    /// -o an older NAME~ is replaced) and replace it, without asking
    /// (Info-ZIP's `-B`).
    #[arg(short = 'B')]
    backup: bool,
    /// Treat every file as binary (Info-ZIP's `-b`): perfkit always does.
    #[arg(short = 'b')]
    binary: bool,
    /// Accepted for Info-ZIP's restoring of owners: perfkit leaves files
    /// to the user running it (see Differences).
    #[arg(short = 'X')]
    owners: bool,
    /// Accepted for Info-ZIP's keeping of setuid/setgid/sticky bits:
    /// perfkit never sets them (see Differences).
    #[arg(short = 'K')]
    keep_special: bool,
    /// Lower-case names (Info-ZIP's `-L`): those of entries made on a
    /// system with upper-case names only (MS-DOS's FAT, `zip -k`; VMS,
    /// CP/M, MVS, VM/CMS, TOPS-20, Tandem); `-LL` every name.
    #[arg(short = 'L', action = clap::ArgAction::Count)]
    lowercase: u8,
    /// Info-ZIP's `-U` (show non-ASCII characters of UTF-8 names as
    /// `#Uxxxx` escapes) and `-UU` (ignore UTF-8 names): accepted; names
    /// are extracted as stored (see Differences).
    #[arg(short = 'U', action = clap::ArgAction::Count)]
    unicode: u8,
    /// Pipe the output through a pager (Info-ZIP's `-M`): accepted;
    /// output goes straight to stdout, for `| less` (see Differences).
    #[arg(short = 'M')]
    more: bool,
    /// Info-ZIP's `-s` (spaces to underscores, OS/2, NT and MS-DOS only):
    /// refused, as Info-ZIP's unzip refuses it on Unix.
    #[arg(short = 's', hide = true)]
    spaces: bool,
    /// Info-ZIP's `-N` (comments as Amiga filenotes): refused, as
    /// Info-ZIP's unzip refuses it on Unix.
    #[arg(short = 'N', hide = true)]
    filenotes: bool,
    /// zipinfo's listing (`unzip -Z`, its letters after it: `-Z1`,
    /// `-Z -m`); written `-Z`, which is read into this.
    #[arg(long, value_name = "LETTERS", hide = true, value_parser = parse_zipinfo,
          conflicts_with_all = ["list", "verbose", "test", "pipe"])]
    zipinfo: Option<zipstream::listing::Zipinfo>,
}

/// zipinfo's letters (`-Z`'s), as `--zipinfo` takes them.
fn parse_zipinfo(
    s: &str,
) -> Result<zipstream::listing::Zipinfo, zipstream::listing::UnsupportedOption> {
    zipstream::listing::Zipinfo::parse(s)
}

impl UnzipArgs {
    /// The options these flags ask for.
    pub fn options(self) -> UnzipOptions {
        if self.text > 0 {
            eprintln!(
                "perfkit unzip: note: -a (text conversion) is not done: files are extracted byte for byte as stored"
            );
        }
        // -X and -K ask for what perfkit does not do (owners) or never
        // does (setuid, setgid, sticky): accepted, as on a system where
        // Info-ZIP cannot do them either.
        let _ = (self.owners, self.keep_special);
        // -b asks for what perfkit always does: bytes as stored; -U and
        // -M for what it does not (see their doc comments).
        let _ = (self.binary, self.unicode, self.more);
        let refused = if self.spaces {
            Some(
                "-s (spaces to underscores) is for OS/2, NT and MS-DOS: Info-ZIP's unzip refuses it on Unix too",
            )
        } else if self.filenotes {
            Some(
                "-N (comments as filenotes) is for the Amiga: Info-ZIP's unzip refuses it on Unix too",
            )
        } else {
            None
        };
        UnzipOptions {
            password: match self.given_password {
                Some(p) => {
                    eprintln!(
                        "perfkit unzip: warning: -P puts the password on the command line, where other users can see it (ps); without it unzip prompts"
                    );
                    Password::Given(p.into_bytes())
                }
                None => self.password.source(),
            },
            // No archive: an empty path, which run_unzip answers with the
            // usage, exit 0, as Info-ZIP's unzip does.
            archive: self.archive.unwrap_or_default(),
            members: self.members,
            exclude: self.exclude,
            dir: self.dir.unwrap_or_default(),
            list: self.list,
            verbose: self.verbose,
            test: self.test,
            pipe: self.pipe,
            overwrite: self.overwrite,
            never_overwrite: self.never_overwrite,
            junk_paths: self.junk_paths,
            quiet: self.quiet,
            max_size: self.max_size,
            zipinfo: self.zipinfo,
            to_screen: self.to_screen,
            comment: self.comment,
            ignore_case: self.ignore_case,
            update: self.update,
            freshen: self.freshen,
            timestamp: self.timestamp,
            backup: self.backup,
            no_times: self.no_times,
            wildcards_stop_at_slash: self.wildcards_stop_at_slash,
            lowercase: self.lowercase,
            refused,
        }
    }
}

/// [`usage_error`](super::usage_error) for `perfkit unzip`.
pub(in crate::cmd::zip) fn unzip_usage_error(message: &str) -> ExitCode {
    let mut cmd = UnzipArgs::augment_args(clap::Command::new("unzip").bin_name("perfkit unzip"));
    let err = cmd.error(clap::error::ErrorKind::ArgumentConflict, message);
    let _ = err.print();
    ExitCode::from(err.exit_code().clamp(0, 255) as u8)
}
