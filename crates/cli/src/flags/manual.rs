//! `perfkit completions SHELL` and `perfkit man`: both generated from the
//! clap command tree, so they list exactly the commands and flags the
//! binary parses.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap_complete::Shell;

/// Arguments of `perfkit completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the completion script for the shell to stdout.
pub fn completions(shell: Shell, mut cmd: clap::Command) -> Result<ExitCode> {
    // Rendered whole, then written: a closed pipe is one io::Error that
    // `cmd::fail` turns into a quiet exit 141.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "perfkit", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Writes one roff manual page to stdout: the top-level page, then a
/// section per subcommand (nested ones too), each with its options.
pub fn man(cmd: clap::Command) -> Result<ExitCode> {
    let mut cmd = cmd;
    cmd.build();
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    render_subcommands(&cmd, "perfkit", &mut page)?;
    let mut out = io::stdout().lock();
    out.write_all(&page)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Appends a `.SH` section per visible subcommand, recursively, with its
/// synopsis and options (clap_mangen's own page lists only the names).
fn render_subcommands(cmd: &clap::Command, path: &str, page: &mut Vec<u8>) -> Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("{path} {}", sub.get_name());
        writeln!(page, ".SH \"{}\"", roff_escape(&name.to_uppercase()))?;
        let man = clap_mangen::Man::new(sub.clone().bin_name(name.clone()));
        let mut body = Vec::new();
        man.render_synopsis_section(&mut body)?;
        man.render_description_section(&mut body)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(&mut body)?;
        }
        // Inside a subcommand's section its parts are subsections, so the
        // page keeps one NAME/SYNOPSIS/... outline.
        for line in String::from_utf8_lossy(&body).lines() {
            match line.strip_prefix(".SH ") {
                Some(title) => writeln!(page, ".SS {title}")?,
                None => writeln!(page, "{line}")?,
            }
        }
        render_subcommands(sub, &name, page)?;
    }
    Ok(())
}

/// Escapes what roff would read as a request or an escape.
fn roff_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('-', "\\-")
}
