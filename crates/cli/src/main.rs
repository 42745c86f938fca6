//! The `perfkit` binary. `flags` parses the command line and converts it
//! into each subcommand's plain settings; each subcommand is a module of
//! `cmd`; measurement lives in the libraries and rendering in
//! `perfkit_report`.

mod cmd;
mod flags;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use flags::{Cli, exit_without_dash_dash_tip};

fn main() -> ExitCode {
    if let Err(err) = landing::cleanup::install() {
        return cmd::fail(&anyhow::Error::from(err).context("installing signal handlers"));
    }
    let argv = cmd::zip::info_zip_level_flags(cmd::compress::zstd_level_flags(std::env::args_os()));
    let matches = Cli::command()
        .try_get_matches_from(argv)
        .unwrap_or_else(|e| exit_without_dash_dash_tip(e));
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let (hlog, plot) = flags::report_paths(&matches);
    if let Err(err) = cmd::open_report_files(hlog.as_deref(), plot.as_deref()) {
        return cmd::fail(&err);
    }
    let result = cli.command.run();
    cmd::discard_report_files();
    match result {
        Ok(code) => code,
        Err(err) => cmd::fail(&err),
    }
}
