//! The flags of `perfkit zip` (and `zip bench`) and `perfkit unzip`, and
//! their conversion into the plain options the commands run on: clap's
//! types end here.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args as _;
use perfkit::units::parse_duration;
use perfkit_bench::zip::{Keep, Settings};

use super::unzip::UnzipOptions;
use super::{Options, Password, Task};
use crate::flags::ReportArgs;

/// Arguments of `perfkit zip`.
#[derive(Debug, clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Info-ZIP habits that work: -r, -q, -0..-9 (also in clusters such as -r9; -0 \
stores), -j (junk paths), -x GLOB, -@, `-` for stdin data, an existing archive is updated (entries \
replaced in place, new ones appended), a name without an extension gets .zip.

Differences from Info-ZIP zip: --level is the long form of -0..-9 (Info-ZIP's -l converts line \
ends, which perfkit does not do); --jobs N is long only; -x takes one glob per -x (Info-ZIP's takes \
the rest of the list), matched with `*` spanning `/`; nothing is printed per file (no \
\"adding:\" lines, a progress bar on a terminal instead, which -q hides); a password needs \
--encrypt (WinZip AES, never ZipCrypto) and is read from --password-file, --password-env or a \
prompt, never from -P; two inputs under one name are a usage error (exit 2), as is Info-ZIP's \
'cannot repeat names'; FIFOs, sockets and devices are skipped with a note; failures exit 1 or 2, \
never Info-ZIP's other codes; -u/-f/-d/-m, -T, -y and -e do not exist (symlinks are always \
stored as links)."
)]
pub struct ZipArgs {
    #[command(subcommand)]
    sub: Option<ZipSub>,
    /// The archive to write: a file, `-` for stdout, or `s3://bucket/key`
    /// (S3-compatible storage configured by AWS_ENDPOINT_URL, AWS_REGION,
    /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ALLOW_HTTP).
    archive: Option<PathBuf>,
    /// Files and directories to add; `-` adds stdin as an entry named `-`.
    paths: Vec<PathBuf>,
    /// Recurse into directories.
    #[arg(short = 'r', long)]
    recurse: bool,
    /// Quiet: no progress bar (as Info-ZIP's `-q`).
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Read more paths from stdin, one per line (like Info-ZIP's `-@`).
    #[arg(short = '@', long = "names-stdin")]
    names_stdin: bool,
    /// Compression method.
    #[arg(long, default_value = "deflate", value_parser = ["deflate", "store", "zstd"])]
    method: String,
    /// Level: deflate 0-9 (0 stores, as Info-ZIP's `-0`), zstd 1-22.
    /// Info-ZIP's `-0`..`-9` are accepted too (`-r9` as well).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(0..=22))]
    level: u32,
    /// Junk paths: store each file under its name alone, and no directory
    /// entries (Info-ZIP's `-j`).
    #[arg(short = 'j', long = "junk-paths")]
    junk_paths: bool,
    /// Compression threads (entries and 1 MiB blocks in parallel); 1
    /// compresses inline. Long only: Info-ZIP's `-j` junks paths.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Encrypt entries with WinZip AES.
    #[arg(long, value_parser = ["aes256", "aes192", "aes128"])]
    encrypt: Option<String>,
    #[command(flatten)]
    password: PasswordArgs,
    /// Leave out paths matching this glob (`*`, `?`; repeatable).
    #[arg(short = 'x', long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Part size of an s3:// multipart upload (5MiB to 5GiB; S3 allows
    /// 10,000 parts, so this bounds the archive size at 10,000 × SIZE).
    #[arg(long, value_name = "SIZE", default_value = "8MiB", value_parser = perfkit::units::parse_size)]
    part_size: u64,
}

#[derive(Debug, clap::Subcommand)]
enum ZipSub {
    /// Measure sync vs async vs parallel writing, AES cost, and the ratio.
    Bench(ZipBenchArgs),
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

/// Arguments of `perfkit zip bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct ZipBenchArgs {
    /// Measuring time per scenario (all modes together).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub time: Duration,
    /// At most this many measured iterations per scenario.
    #[arg(long, default_value_t = 200)]
    pub iterations: u64,
    /// Warm-up iterations, excluded.
    #[arg(long, default_value_t = 1)]
    pub warmup: u64,
    /// Deflate level (0..=9).
    #[arg(short = 'l', long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(0..=9))]
    pub level: u32,
    /// Workers for the parallel mode (1..=256).
    #[arg(short = 'j', long, default_value_t = 2, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub jobs: usize,
    /// Add the 200 MiB single-file scenario.
    #[arg(long)]
    pub large: bool,
    /// Only the small scenarios (used by `perfkit bench`).
    #[arg(long)]
    pub quick: bool,
    /// Also write one archive per row, made after the timed ones, to
    /// DIR/s<section>-r<row>.zip (indexes of the report's sections and
    /// rows, from 0), so they can be checked with other tools.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
}

impl ZipBenchArgs {
    /// The measurement's plain options.
    pub fn settings(&self) -> Settings {
        Settings {
            time: self.time,
            iterations: self.iterations,
            warmup: self.warmup,
            level: self.level,
            jobs: self.jobs,
            large: self.large,
            quick: self.quick,
            keep: self.keep.clone().map(|dir| Keep {
                dir,
                write: |path, bytes| {
                    perfkit::report::write_atomically(path, |f| Ok(f.write_all(bytes)?))
                },
            }),
        }
    }
}

/// Measures what the flags ask for (also used by `perfkit bench`).
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
    pub fn into_task(self) -> Result<Task, ExitCode> {
        if let Some(ZipSub::Bench(b)) = self.sub {
            return Ok(Task::Bench {
                settings: b.settings(),
                report: b.report.options(),
            });
        }
        let password = self.password.source();
        // A password is only ever used to encrypt; taking one without
        // --encrypt would write in plain text what the user meant to protect.
        if self.encrypt.is_none() && password != Password::Prompt {
            return Err(usage_error(
                "a password (--password-file/--password-env) needs --encrypt aes256|aes192|aes128; without it the archive would be written unencrypted",
            ));
        }
        Ok(Task::Write(Options {
            archive: self.archive,
            paths: self.paths,
            recurse: self.recurse,
            quiet: self.quiet,
            names_stdin: self.names_stdin,
            method: self.method,
            level: self.level,
            junk_paths: self.junk_paths,
            jobs: self.jobs,
            encrypt: self.encrypt,
            password,
            exclude: self.exclude,
            part_size: self.part_size,
        }))
    }
}

impl UnzipArgs {
    /// The options these flags ask for.
    pub fn options(self) -> UnzipOptions {
        UnzipOptions {
            password: self.password.source(),
            archive: self.archive,
            members: self.members,
            exclude: self.exclude,
            dir: self.dir,
            list: self.list,
            test: self.test,
            pipe: self.pipe,
            overwrite: self.overwrite,
            never_overwrite: self.never_overwrite,
            junk_paths: self.junk_paths,
            quiet: self.quiet,
            max_size: self.max_size,
        }
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

/// Short flags of `perfkit zip` that take no value, which may share a
/// cluster with a level digit (`-r9`, `-9qr`), as in Info-ZIP.
const ZIP_SHORT_SWITCHES: &[u8] = b"rqj@";

/// Rewrites Info-ZIP's level flags in a `zip` command line into
/// `--level=N` before clap sees them (clap cannot parse `-#` flags):
/// `-0`..`-9` alone or in a cluster of switches (`-r9` → `-r --level=9`).
/// The value after `-x`, `--level` and the like, and anything after `--`,
/// are left alone.
pub fn info_zip_level_flags(args: Vec<OsString>) -> Vec<OsString> {
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
    ];
    crate::cmd::rewrite_options(args, TAKES_VALUE, |s, out| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bench: ZipBenchArgs,
    }

    /// The flags' defaults are the library's: `zip bench` with no flags
    /// measures exactly `Settings::default()`.
    #[test]
    fn bench_flag_defaults_are_the_settings_defaults() {
        let cli = Cli::try_parse_from(["bench"]).unwrap();
        assert_eq!(
            format!("{:?}", cli.bench.settings()),
            format!("{:?}", Settings::default())
        );
    }
}
