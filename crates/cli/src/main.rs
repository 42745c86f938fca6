//! The `perfkit` binary: argument parsing and dispatch. Each subcommand is a
//! module of `cmd`, the flags several share are in `flags`; measurement
//! lives in the libraries and rendering in `perfkit::report`.

mod cmd;
mod flags;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Subcommand};

/// perfkit: latency-first tools for zstd, ZIP, BE-Tree, FIX and codec
/// stress, each with HDR-histogram reports.
#[derive(Debug, clap::Parser)]
#[command(name = "perfkit", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compress files with zstd (`FILE` → `FILE.zst`); `compress bench` measures recipes.
    Compress(cmd::compress::CompressArgs),
    /// Decompress `.zst` files (the same as `compress -d`).
    Decompress(cmd::compress::CompressArgs),
    /// The main job: every component's benchmark on built-in workloads.
    Bench(cmd::bench::BenchArgs),
    /// BE-Tree boolean-expression index: generate, search, diff, bench.
    Betree(cmd::betree::BetreeArgs),
    /// Write the deterministic benchmark corpus to a directory.
    Corpus(cmd::corpus::CorpusArgs),
    /// FIX tools: `fix bench` measures the hot path and the session engine,
    /// `fix check FILE|-` validates messages, `fix acceptor`/`initiator`
    /// run sessions.
    Fix(cmd::fix::FixArgs),
    /// `perfkit fix bench` under its older name, kept so scripts and
    /// habits that call it still work.
    #[command(hide = true)]
    FixBench(cmd::fix::FixBenchArgs),
    /// Write a ZIP archive (`-` for stdout); `zip bench` measures the writers.
    Zip(cmd::zip::ZipArgs),
    /// List, test or safely extract a ZIP archive (`-` for stdin).
    Unzip(cmd::zip::UnzipArgs),
    /// Work on reports of other runs: `report merge` adds up HdrHistogram
    /// interval logs from several machines into one report.
    Report(cmd::report::ReportCmdArgs),
    /// Producer/consumer codec stress test with interchangeable context pools.
    Stress(cmd::stress::StressArgs),
    /// Shell completions for bash, zsh, fish, elvish or PowerShell, on stdout.
    Completions(cmd::manual::CompletionsArgs),
    /// The manual page (roff), on stdout: `perfkit man | man -l -`.
    Man,
    /// Internal: run a program and write its wait4 usage to a file (the
    /// launcher `perfkit bench`'s commands part measures children through).
    #[command(hide = true)]
    MeasureChild {
        /// Where to write the usage line.
        usage: std::path::PathBuf,
        /// The program and its arguments.
        #[arg(last = true, required = true)]
        argv: Vec<std::ffi::OsString>,
    },
}

/// Reports a command-line error as clap does, less its tip "to pass '-v'
/// as a value, use '-- -v'": the flags users bring from zstd and Info-ZIP
/// are options they expect to exist, and `-- -v` would name a file `-v`.
fn exit_without_dash_dash_tip(e: clap::Error) -> ! {
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

fn main() -> ExitCode {
    if let Err(err) = perfkit::cleanup::install() {
        return cmd::fail(&anyhow::Error::from(err).context("installing signal handlers"));
    }
    let argv = cmd::zip::info_zip_level_flags(cmd::compress::zstd_level_flags(std::env::args_os()));
    let matches = Cli::command()
        .try_get_matches_from(argv)
        .unwrap_or_else(|e| exit_without_dash_dash_tip(e));
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Err(err) = cmd::open_report_files(&matches) {
        return cmd::fail(&err);
    }
    let result = match cli.command {
        Command::Compress(args) => args.into_task(false).map_or_else(Ok, cmd::compress::run),
        Command::Decompress(args) => args.into_task(true).map_or_else(Ok, cmd::compress::run),
        Command::Bench(args) => cmd::bench::run(args.job()),
        Command::Corpus(args) => cmd::corpus::run(args),
        Command::Betree(args) => cmd::betree::run(args),
        Command::Fix(args) => cmd::fix::run(args),
        Command::FixBench(args) => cmd::fix::bench(args),
        Command::Zip(args) => args.into_task().map_or_else(Ok, cmd::zip::run_zip),
        Command::Unzip(args) => cmd::zip::run_unzip(args.options()),
        Command::Stress(args) => args.task().and_then(cmd::stress::run),
        Command::Report(args) => cmd::report::run(args),
        Command::Completions(args) => cmd::manual::completions(args, Cli::command()),
        Command::Man => cmd::manual::man(Cli::command()),
        Command::MeasureChild { usage, argv } => {
            perfkit_measure::child::measure_child(&usage, &argv)
                .map(|()| std::process::ExitCode::SUCCESS)
        }
    };
    cmd::discard_report_files();
    match result {
        Ok(code) => code,
        Err(err) => cmd::fail(&err),
    }
}
