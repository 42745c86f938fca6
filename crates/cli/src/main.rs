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
    let (cli, matches) = parsed_alone(&argv).unwrap_or_else(|| {
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

/// A command line parsed by the flags of the command it names alone
/// ([`flags::Command::alone`]), not by the whole tree, which clap would
/// build first. `None` for a line naming no command and for any error,
/// help or version request, which the full tree then parses and reports
/// as ever.
fn parsed_alone(argv: &[OsString]) -> Option<(Cli, ArgMatches)> {
    let name = argv.get(1)?.to_str()?;
    let matches = clap::Command::new("perfkit")
        .subcommand(flags::Command::alone(name)?)
        .try_get_matches_from(argv)
        .ok()?;
    Some((Cli::from_arg_matches(&matches).ok()?, matches))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    /// Every command of the full tree has its flags alone, with the same
    /// arguments and subcommands, so no command is left to the slow path
    /// or parsed by other flags than its own.
    #[test]
    fn every_command_has_the_same_flags_alone() {
        let full = Cli::command();
        let ids = |c: &clap::Command| {
            let mut ids: Vec<String> = c.get_arguments().map(|a| a.get_id().to_string()).collect();
            ids.sort();
            let mut subs: Vec<String> = c.get_subcommands().map(|s| s.get_name().into()).collect();
            subs.sort();
            (ids, subs)
        };
        for sub in full.get_subcommands() {
            let name = sub.get_name();
            if name == "help" {
                continue;
            }
            let alone = flags::Command::alone(name).unwrap_or_else(|| panic!("{name} alone"));
            let (mut want, subs) = ids(sub);
            // The version flag the full tree propagates; a line asking for
            // it goes to the full tree.
            want.retain(|id| id != "version");
            assert_eq!(ids(&alone), (want, subs), "{name}");
        }
    }

    /// Every line a command's flags alone take parses to what the full
    /// tree makes of it; the lines they leave (errors, help, version) are
    /// the full tree's.
    #[test]
    fn every_command_alone_parses_as_the_full_tree() {
        let taken = [
            "fix check a.fix",
            "fix check --json -",
            "fix check --dictionary d.xml --app-dictionary a.xml a.fix",
            "fix bench --json",
            "fix load --rate 1000 s.cfg",
            "fix acceptor s.cfg",
            "fix initiator s.cfg --pin 0",
            "compress -T2 -f a b",
            "compress --recipe balanced -c a",
            "decompress -T2 --decoder=perfkit a.zst -o out",
            "bench --only zstd,fix --json",
            "betree search --exprs e --events v -o out",
            "corpus d",
            "fix-bench --only scan",
            "zip -r -q a.zip d",
            "unzip -l a.zip",
            "unzip -o a.zip -d dir",
            "stress --duration 1s",
            "completions bash",
            "man zip",
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
            "zip --help",
            "zip -V",
            "compress --level 99 a",
            "help zip",
            "--version",
        ];
        for line in taken.iter().chain(&left) {
            let argv: Vec<OsString> = std::iter::once("perfkit")
                .chain(line.split(' '))
                .map(OsString::from)
                .collect();
            let alone = parsed_alone(&argv).map(|(cli, _)| format!("{cli:?}"));
            assert_eq!(alone.is_some(), taken.contains(line), "{line}");
            if let Some(alone) = alone {
                let full = Cli::try_parse_from(&argv).expect("the full tree takes it too");
                assert_eq!(alone, format!("{full:?}"), "{line}");
            }
        }
    }
}
