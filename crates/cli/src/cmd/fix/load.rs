//! `perfkit fix load SETTINGS --rate N[,N...]` (and its hidden alias
//! `fix bench --connect`): the open-loop load generator ([`fixload`])
//! against the initiator sessions of a QuickFIX settings file, one run per
//! rate, each followed by the generator's floor at the same shape
//! ([`fixload::floor`], the `fixload-floor` peer program), into fixload's
//! sweep report (per-interval and total rows and, for a sweep, a
//! latency-vs-throughput table with the saturation point). What is left
//! here is the file's side: the sessions it names, the order template it
//! points at, where the floor program is, and the flags behind what the
//! generator refuses.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use fixcore::scan::ScanPath;
use fixload::{Settings, Sweep, Swept, Target};
use fixsession::store::AnyStore;
use perfkit_report::ReportOptions;

/// What `perfkit fix load` was asked to do, the flags resolved.
#[derive(Debug)]
pub struct Task {
    /// The engine and which of its sessions.
    pub engine: Connect,
    /// The rates and the plan for each.
    pub sweep: Settings,
    /// How to render it.
    pub report: ReportOptions,
}

/// Runs `task` and renders its report; a sweep whose runs met problems
/// (orders unanswered, rejects, sessions lost) fails with them in one line
/// after its report.
pub fn run(task: Task) -> Result<ExitCode> {
    let swept = measure(&task.engine, &task.sweep, task.report.json)?;
    super::super::emit(&swept.report, &task.report)?;
    if !swept.problems.is_empty() {
        bail!("{}", swept.problems.join("; "));
    }
    Ok(ExitCode::SUCCESS)
}

/// The engine under load: the initiator sessions of a QuickFIX settings
/// file, which say where to connect.
#[derive(Debug, Clone)]
pub struct Connect {
    /// The settings file.
    pub settings: PathBuf,
    /// Only its first K initiator sessions, when given.
    pub sessions: Option<usize>,
}

/// Runs every rate of `load` against `engine` into one report, each run
/// followed by the floor's, with the problems the runs met (unanswered
/// orders, rejects, lost sessions), which the caller prints after the
/// report and exits non-zero for. A floor that could not be measured (its
/// program not built, or failing) is a note in the report instead of its
/// row. The progress line shows on a terminal unless `json`.
pub fn measure(engine: &Connect, load: &Settings, json: bool) -> Result<Swept> {
    ScanPath::cap_from_env()?;
    let mut sweep = Sweep::new("fix load", load);
    let bar = super::super::progress(None, json);
    let floor_program = perfkit_peers::locate(perfkit_peers::LOAD_FLOOR);
    // One set of sessions for the whole sweep: each rate logs them on
    // again with their numbers carrying on, as a real counterparty's
    // would (a file with ResetOnLogon=Y resets them at each Logon, saying
    // so with ResetSeqNumFlag=Y).
    let mut targets = targets(&engine.settings, engine.sessions)?;
    for &rate in &load.rates {
        let plan = load.plan(rate);
        let run = fixload::run_keeping(&mut targets, &plan, &|line| {
            bar.set_message(format!("{rate:.0}/s {line}"))
        })
        .map_err(in_flag_terms)
        .with_context(|| format!("load at {rate:.0} orders/s"));
        // A step that fails after others ran ends the sweep; what the
        // earlier steps measured is still reported.
        match run {
            Ok(o) => {
                bar.set_message(format!("{rate:.0}/s: the floor"));
                let floor = match &floor_program {
                    Some(p) => perfkit_bench::fix::floor::measure(p, &plan, &o)
                        .map_err(|e| format!("{e:#}")),
                    None => Err(perfkit_bench::peer::missing_note(perfkit_peers::LOAD_FLOOR)),
                };
                sweep.step(rate, &o, floor.as_ref().ok());
                if let Err(why) = &floor {
                    sweep.no_floor(why);
                }
            }
            Err(e) if !sweep.is_empty() => {
                sweep.cut_short(format!("{e:#}"));
                break;
            }
            Err(e) => return Err(e),
        }
    }
    bar.finish_and_clear();
    Ok(sweep.finish())
}

/// `e`, with the flag named when a flag's value is what the generator
/// refused.
fn in_flag_terms(e: fixload::Error) -> anyhow::Error {
    match e {
        fixload::Error::CoreNotUsable { core, usable } => {
            // A list in words, not a Vec's Debug text ("[0, 1]").
            let usable: Vec<String> = usable.iter().map(ToString::to_string).collect();
            anyhow::anyhow!(
                "--pin {core}: this process may run on cores {} only",
                usable.join(", ")
            )
        }
        fixload::Error::UringUnavailable(why) => {
            anyhow::anyhow!("--io io-uring: io_uring is not available here: {why}")
        }
        e => e.into(),
    }
}

/// The initiator sessions of the settings file, the first `k` when given.
fn targets(settings: &Path, k: Option<usize>) -> Result<Vec<Target<AnyStore>>> {
    let mut all = fixengine::assembly::load_sessions(settings, &super::engine::Stderr::default())?;
    if let Some(k) = k {
        if k > all.len() {
            bail!(
                "{}: --sessions {k}, but the file has {} initiator session(s)",
                settings.display(),
                all.len()
            );
        }
        all.truncate(k);
    }
    for why in fixload::ignored_keys(all.iter().map(|(s, _)| s)) {
        eprintln!("perfkit: warning: {}: {why}", settings.display());
    }
    all.into_iter()
        .map(|(s, session)| Ok(Target::from_settings(settings, &s, session)?))
        .collect()
}

/// `--order-template FILE`: see [`fixload::parse_template`].
pub fn read_template(path: &Path) -> Result<Vec<(u32, Vec<u8>)>> {
    let text = fixengine::whole_file::read(path, fixengine::whole_file::Kind::OrderTemplate)
        .with_context(|| format!("reading {}", path.display()))?;
    fixload::parse_template(&text).with_context(|| path.display().to_string())
}

#[cfg(test)]
mod tests;
