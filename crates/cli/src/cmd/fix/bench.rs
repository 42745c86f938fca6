//! `perfkit fix bench`: the suite of micro benchmarks
//! ([`perfkit_bench::fix::suite`]) and the `--input` messages it may
//! parse instead of the samples, or with `--connect` (a hidden alias of
//! `fix load`) the load sweep ([`super::load`]).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use fixcore::input;
use fixcore::parse::Parser;
use fixcore::scan::ScanPath;
use perfkit_bench::fix::suite::Suite;
use perfkit_report::{Report, ReportOptions};

use super::load;

/// What `perfkit fix bench` was asked to do, the flags resolved.
#[derive(Debug)]
pub enum Task {
    /// The micro benchmarks.
    Suite {
        /// What to measure.
        suite: Suite,
        /// How to render it.
        report: ReportOptions,
    },
    /// `--connect`, the hidden alias: `fix load`'s sweep.
    Load(load::Task),
}

/// What the alias prints on stderr before it runs: the command it stands
/// for.
pub const CONNECT_ALIAS: &str =
    "perfkit: `fix bench --connect SETTINGS` is now `perfkit fix load SETTINGS`";

/// Runs `perfkit fix bench`: measures and renders, or under `--connect`
/// names the new command on stderr and runs `fix load`.
pub fn run(task: Task) -> Result<ExitCode> {
    match task {
        Task::Suite { suite, report } => {
            let measured = measure(&suite, report.json)?;
            super::super::emit(&measured, &report)
        }
        Task::Load(t) => {
            eprintln!("{CONNECT_ALIAS}");
            load::run(t)
        }
    }
}

/// Measures `suite` into a report, showing each part's name on a terminal
/// unless `json`.
fn measure(suite: &Suite, json: bool) -> Result<Report> {
    ScanPath::cap_from_env()?;
    let perfkit = super::super::launcher::Perfkit::this()?;
    let progress = super::super::progress(None, json);
    let report = perfkit_bench::fix::suite::measure(
        suite,
        &|part| progress.set_message(part.to_owned()),
        &perfkit,
    );
    progress.finish_and_clear();
    Ok(report?)
}

/// Collects `fix-bench --input`'s messages; the first invalid one is an
/// error.
struct Collect<'p> {
    path: &'p Path,
    parser: Parser,
    msgs: Vec<Vec<u8>>,
}

impl input::Sink for &mut Collect<'_> {
    type Error = anyhow::Error;

    fn message(&mut self, bytes: &[u8]) -> Result<Option<String>> {
        match self.parser.parse(bytes) {
            Ok(_) => {
                self.msgs.push(bytes.to_vec());
                Ok(None)
            }
            Err(e) => Ok(Some(e.to_string())),
        }
    }

    fn problem(&mut self, origin: input::Origin, why: &str) -> Result<()> {
        bail!(
            "{}: {origin}: {why} (fix-bench --input needs valid messages; see `perfkit fix check`)",
            self.path.display()
        )
    }
}

/// The messages of a `--input` file, found as `fix check` finds them; the
/// first invalid one is an error. The benchmark needs them all in memory;
/// the file is not held beside them.
pub fn read_messages(path: &Path) -> Result<Vec<Vec<u8>>> {
    let mut c = Collect {
        path,
        parser: Parser::new(),
        msgs: Vec::new(),
    };
    super::each_input_message(path, &mut c)?;
    if c.msgs.is_empty() {
        bail!("{}: no messages", path.display());
    }
    Ok(c.msgs)
}
