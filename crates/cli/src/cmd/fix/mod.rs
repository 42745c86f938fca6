//! `perfkit fix`, one module per subcommand, each shaped the same way:
//! [`args`] holds every flag and converts it into the settings the
//! subcommand's module runs on.
//!
//! - `fix bench` ([`bench`](mod@bench)): the FIX hot path, before/after pairs
//!   measured in one run, and fixcore's parser beside QuickFIX's when the
//!   peer is built (also reachable as `perfkit fix-bench`, its older
//!   name);
//! - `fix load` ([`load`]): the open-loop load generator and its floor
//!   (`fix bench --connect` is its hidden alias);
//! - `fix check` ([`check`]): validate FIX messages from a file or stdin;
//! - `fix acceptor` / `initiator` ([`engine`]): the session engine
//!   ([`fixengine::assembly`]) and where its lines go.

mod args;
mod bench;
mod check;
mod engine;
mod load;

pub use args::{FixArgs, FixBenchArgs};
pub use bench::run as bench;

use std::io;
use std::process::ExitCode;

use anyhow::{Context, Result};
use fixcore::input;

/// What `perfkit fix` was asked to do, the flags resolved.
#[derive(Debug)]
pub enum Task {
    /// `fix bench`: measure, or with `--connect` run the load generator.
    Bench(bench::Task),
    /// `fix load`: the load generator and its floor.
    Load(load::Task),
    /// `fix check`: validate messages.
    Check(check::Check),
    /// `fix acceptor`: serve the acceptor sessions of a settings file.
    Acceptor(fixengine::assembly::EngineSettings),
    /// `fix initiator`: run the initiator sessions of a settings file.
    Initiator(fixengine::assembly::EngineSettings),
}

/// Runs what `perfkit fix` was asked to do.
pub fn run(task: Task) -> Result<ExitCode> {
    match task {
        Task::Bench(t) => bench::run(t),
        Task::Load(t) => load::run(t),
        Task::Check(c) => check::check(c),
        Task::Acceptor(e) => engine::acceptor(&e),
        Task::Initiator(e) => engine::initiator(&e),
    }
}

/// Opens `fix check`'s or `fix-bench --input`'s input (`-` is stdin) and
/// hands every message and problem in it to `sink`, in bounded chunks.
fn each_input_message(
    path: &std::path::Path,
    sink: impl input::Sink<Error = anyhow::Error>,
) -> Result<()> {
    let name = path.display().to_string();
    if path.as_os_str() == "-" {
        input::each_message(io::stdin().lock(), &name, sink)
    } else {
        let file = std::fs::File::open(path).with_context(|| format!("reading {name}"))?;
        input::each_message(file, &name, sink)
    }
}

#[cfg(test)]
mod tests;
