//! The `perfkit` binary: argument parsing and dispatch. Each subcommand is a
//! module of `cmd`; measurement lives in the libraries and rendering in
//! `perfkit::report`.

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// perfkit: latency-first tools for zstd, ZIP, BE-Tree, FIX and codec
/// stress, each with HDR-histogram reports.
#[derive(Debug, Parser)]
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
    /// The FIX hot path: scan, parse, build, store, deferred, affinity and
    /// transport, each as a before/after pair measured in one run.
    FixBench(cmd::fix::FixBenchArgs),
    /// FIX tools: `fix check FILE|-` validates messages.
    Fix(cmd::fix::FixArgs),
    /// Write a ZIP archive (`-` for stdout); `zip bench` measures the writers.
    Zip(cmd::zip::ZipArgs),
    /// List, test or safely extract a ZIP archive (`-` for stdin).
    Unzip(cmd::zip::UnzipArgs),
    /// Producer/consumer codec stress test with interchangeable context pools.
    Stress(cmd::stress::StressArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Compress(args) => cmd::compress::run(args, false),
        Command::Decompress(args) => cmd::compress::run(args, true),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Corpus(args) => cmd::corpus::run(args),
        Command::Betree(args) => cmd::betree::run(args),
        Command::FixBench(args) => cmd::fix::run(args),
        Command::Fix(args) => cmd::fix::run_fix(args),
        Command::Zip(args) => cmd::zip::run_zip(args),
        Command::Unzip(args) => cmd::zip::run_unzip(args),
        Command::Stress(args) => cmd::stress::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => cmd::fail(&err),
    }
}
