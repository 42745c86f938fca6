//! The command line: clap parses it here (and in each command folder's
//! `args.rs`), and every subcommand's flags are converted into plain
//! settings before the subcommand runs. Neither the commands' work nor
//! the libraries see a clap type.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Subcommand};
use perfkit_report::ReportOptions;

use crate::cmd;

mod manual;

/// The output flags every measuring subcommand flattens into its args.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ReportArgs {
    /// Print one JSON document instead of tables (nothing else on stdout).
    #[arg(long)]
    pub json: bool,
    /// Also write every histogram to FILE in HdrHistogram interval-log format.
    #[arg(long, value_name = "FILE")]
    pub hlog: Option<PathBuf>,
    /// Also print the full HdrHistogram percentile distribution of each row.
    #[arg(long)]
    pub percentiles: bool,
    /// Also draw every row's latency percentile spectrum to an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Tables with every column, one line per row, however wide (by default they fit 100
    /// columns and list the columns left out).
    #[arg(long)]
    pub wide: bool,
}

impl ReportArgs {
    /// The rendering these flags ask for.
    pub fn options(&self) -> ReportOptions {
        ReportOptions {
            json: self.json,
            hlog: self.hlog.clone(),
            percentiles: self.percentiles,
            plot: self.plot.clone(),
            wide: self.wide,
        }
    }

    /// The first of these flags given, for a command that takes them only
    /// in one of its modes to refuse them in the others.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (self.json, "--json"),
            (self.hlog.is_some(), "--hlog"),
            (self.percentiles, "--percentiles"),
            (self.plot.is_some(), "--plot"),
            (self.wide, "--wide"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

/// perfkit: latency-first tools for zstd, ZIP, BE-Tree, FIX and codec
/// stress, each with HDR-histogram reports.
#[derive(Debug, clap::Parser)]
#[command(name = "perfkit", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compress files with zstd (`FILE` → `FILE.zst`); `-b#` benchmarks levels, as zstd's.
    Compress(cmd::compress::CompressArgs),
    /// Decompress `.zst` files (the same as `compress -d`).
    Decompress(cmd::compress::DecompressArgs),
    /// The main job: every component's benchmark on built-in workloads.
    Bench(cmd::bench::BenchArgs),
    /// BE-Tree boolean-expression index: gen-exprs, gen-events, search, diff, bench.
    Betree(cmd::betree::BetreeArgs),
    /// Write the deterministic benchmark corpus to a directory.
    Corpus(cmd::corpus::CorpusArgs),
    /// FIX tools: `fix bench` measures the hot path and the session engine,
    /// `fix load` puts an engine under open-loop load, `fix check FILE|-`
    /// validates messages, `fix acceptor`/`initiator` run sessions.
    Fix(cmd::fix::FixArgs),
    /// The FIX benchmark (hot path, session engines, failover): `fix
    /// bench` under the name its users know.
    FixBench(cmd::fix::FixBenchArgs),
    /// Write, update or delete from a ZIP archive (`-` for stdout), as Info-ZIP zip.
    Zip(cmd::zip::ZipArgs),
    /// List, test or safely extract a ZIP archive (`-` for stdin).
    Unzip(cmd::zip::UnzipArgs),
    /// Work on reports of other runs: `report merge` adds up HdrHistogram
    /// interval logs from several machines into one report.
    Report(cmd::report::ReportCmdArgs),
    /// Producer/consumer codec stress test with interchangeable context pools.
    Stress(cmd::stress::StressArgs),
    /// Shell completions for bash, zsh, fish, elvish or PowerShell, on stdout.
    Completions(manual::CompletionsArgs),
    /// Manual pages (roff): `perfkit man [COMMAND] | man -l -`, or every page with `--dir DIR`.
    Man(manual::ManArgs),
}

impl Command {
    /// The flags of the command named `name` alone, as a clap subcommand
    /// of that name (`None` for a word that names no command): building
    /// every command's flags was a sixth of a short run's start-up, and a
    /// command line needs only its own. Each arm is the derive's own
    /// construction of that variant (no variant carries attributes of
    /// its own), so a line it parses parses to the same [`Cli`]
    /// (`every_command_alone_parses_as_the_full_tree`).
    pub fn alone(name: &str) -> Option<clap::Command> {
        fn flags<A: clap::Args>(name: &'static str) -> clap::Command {
            A::augment_args(clap::Command::new(name))
        }
        Some(match name {
            "compress" => flags::<cmd::compress::CompressArgs>("compress"),
            "decompress" => flags::<cmd::compress::DecompressArgs>("decompress"),
            "bench" => flags::<cmd::bench::BenchArgs>("bench"),
            "betree" => flags::<cmd::betree::BetreeArgs>("betree"),
            "corpus" => flags::<cmd::corpus::CorpusArgs>("corpus"),
            "fix" => flags::<cmd::fix::FixArgs>("fix"),
            "fix-bench" => flags::<cmd::fix::FixBenchArgs>("fix-bench"),
            "zip" => flags::<cmd::zip::ZipArgs>("zip"),
            "unzip" => flags::<cmd::zip::UnzipArgs>("unzip"),
            "report" => flags::<cmd::report::ReportCmdArgs>("report"),
            "stress" => flags::<cmd::stress::StressArgs>("stress"),
            "completions" => flags::<manual::CompletionsArgs>("completions"),
            "man" => flags::<manual::ManArgs>("man"),
            _ => return None,
        })
    }
}

/// Reports a command-line error as clap does, less its tip "to pass '-v'
/// as a value, use '-- -v'": the flags users bring from zstd and Info-ZIP
/// are options they expect to exist, and `-- -v` would name a file `-v`.
pub fn exit_without_dash_dash_tip(e: clap::Error) -> ! {
    use std::io::Write;
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        e.exit();
    }
    let text = e.render().to_string();
    let mut kept = String::new();
    for l in text.lines() {
        if l.trim_start().starts_with("tip: to pass") && l.contains("'-- ") {
            continue;
        }
        // The tip stood between two blank lines; keep one.
        if l.is_empty() && kept.ends_with("\n\n") {
            continue;
        }
        kept.push_str(l);
        kept.push('\n');
    }
    let _ = std::io::stderr().write_all(kept.as_bytes());
    std::process::exit(e.exit_code());
}

/// The `--hlog` and `--plot` paths the parsed command line names, at
/// whatever subcommand depth they were given.
pub fn report_paths(matches: &clap::ArgMatches) -> (Option<PathBuf>, Option<PathBuf>) {
    let mut hlog = None;
    let mut plot = None;
    let mut level = Some(matches);
    while let Some(m) = level {
        hlog = hlog.or_else(|| m.try_get_one::<PathBuf>("hlog").ok().flatten().cloned());
        plot = plot.or_else(|| m.try_get_one::<PathBuf>("plot").ok().flatten().cloned());
        level = m.subcommand().map(|(_, sub)| sub);
    }
    (hlog, plot)
}

impl Command {
    /// Converts the subcommand's flags into its settings and runs it.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Compress(args) => args.into_task().map_or_else(Ok, cmd::compress::run),
            Command::Decompress(args) => args.into_task().map_or_else(Ok, cmd::compress::run),
            Command::Bench(args) => args.job().map_or_else(Ok, cmd::bench::run),
            Command::Corpus(args) => cmd::corpus::run(args.job()),
            Command::Betree(args) => cmd::betree::run(args.task()),
            Command::Fix(args) => args.task().and_then(cmd::fix::run),
            Command::FixBench(args) => args.task().and_then(cmd::fix::bench),
            Command::Zip(args) => args.into_task().map_or_else(Ok, cmd::zip::run_zip),
            Command::Unzip(args) => cmd::zip::run_unzip(args.options()),
            Command::Stress(args) => args.task().and_then(cmd::stress::run),
            Command::Report(args) => cmd::report::run(args.task()),
            Command::Completions(args) => manual::completions(args.shell, Cli::command()),
            Command::Man(args) => manual::man(args.dir.as_deref(), &args.command, Cli::command()),
        }
    }
}
