//! The `perfkit` binary. `flags` parses the command line and converts it
//! into each subcommand's plain settings; each subcommand is a module of
//! `cmd`; measurement lives in the libraries and rendering in
//! `perfkit_report`.

mod cmd;
mod flags;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches};
use flags::{Cli, exit_without_dash_dash_tip};

fn main() -> ExitCode {
    if let Err(err) = landing::cleanup::install() {
        return cmd::fail(&anyhow::Error::from(err).context("installing signal handlers"));
    }
    let argv = cmd::zip::info_zip_level_flags(cmd::compress::zstd_level_flags(std::env::args_os()));
    let (cli, matches) = fix_alone(&argv).unwrap_or_else(|| {
        let matches = Cli::command()
            .try_get_matches_from(argv)
            .unwrap_or_else(|e| exit_without_dash_dash_tip(e));
        (
            Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit()),
            matches,
        )
    });
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

/// A `perfkit fix ...` command line parsed by the flags of `fix` alone:
/// the full tree's flags of every command were a sixth of `perfkit fix
/// check`'s start-up. `None` for any other command line, and for any
/// error, help or version request, which the full tree then parses and
/// reports as ever; a line it takes parses to the same `Cli`
/// (`the_fix_command_alone_parses_as_the_full_tree`).
fn fix_alone(argv: &[OsString]) -> Option<(Cli, ArgMatches)> {
    if argv.get(1).is_none_or(|a| a != "fix") {
        return None;
    }
    let fix = <cmd::fix::FixArgs as clap::Args>::augment_args(clap::Command::new("fix"));
    let matches = clap::Command::new("perfkit")
        .subcommand(fix)
        .try_get_matches_from(argv)
        .ok()?;
    Some((Cli::from_arg_matches(&matches).ok()?, matches))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    /// Every line `fix_alone` takes parses to what the full tree makes of
    /// it; the lines it leaves (errors, help, version) are the full tree's.
    #[test]
    fn the_fix_command_alone_parses_as_the_full_tree() {
        let taken = [
            "fix check a.fix",
            "fix check --json -",
            "fix check --dictionary d.xml --app-dictionary a.xml a.fix",
            "fix bench --json",
            "fix load --rate 1000 s.cfg",
            "fix acceptor s.cfg",
            "fix initiator s.cfg",
        ];
        let left = [
            "fix",
            "fix check",
            "fix chek a",
            "fix check a b",
            "fix check -h",
            "fix check --help",
            "fix -V",
            "fix check --version",
            "fix help check",
            "fixx check a",
            "zip -r a.zip d",
            "--version",
        ];
        for line in taken.iter().chain(&left) {
            let argv: Vec<OsString> = std::iter::once("perfkit")
                .chain(line.split(' '))
                .map(OsString::from)
                .collect();
            let alone = fix_alone(&argv).map(|(cli, _)| format!("{cli:?}"));
            assert_eq!(alone.is_some(), taken.contains(line), "{line}");
            if let Some(alone) = alone {
                let full = Cli::try_parse_from(&argv).expect("the full tree takes it too");
                assert_eq!(alone, format!("{full:?}"), "{line}");
            }
        }
    }
}
