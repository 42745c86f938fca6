//! `perfkit betree bench`: the reference benchmark measured by
//! `perfkit_bench::betree` and rendered into the report.

use super::*;
use betree::stream::{StreamBuffers, search_stream};
use perfkit_bench::betree::report;

/// Builds the report of the reference benchmark, with the CPU throughput
/// of the library's modes beside the command's own path.
pub(super) fn bench_report(
    index: &Index,
    events: &[Event],
    build: Duration,
    b: &Bench,
) -> Result<Report> {
    let (opts, replays) = (b.options, b.replays);
    let m =
        measure::measure_all(index, events, opts, replays).context("measuring the benchmark")?;
    let mut rep = Report::new("betree bench");
    rep.run.iterations = m.run.events as u64;
    rep.run.warmup = opts.warmup.min(events.len()) as u64;
    rep.run.timing = "std::time::Instant around each search and each search_next step".into();
    report::benchmark(&mut rep, index, &m, build, "");
    let t = command_throughput(index, events, &b.input, b.rounds)?;
    report::throughput(&mut rep, &t, "");
    Ok(rep)
}

/// The library's modes and `perfkit betree search`'s own path (events read
/// again from their file and parsed, searched in `std` mode, every line
/// formatted; written to nowhere), on the CPU clock. An event file read
/// from stdin cannot be read again: then only the library's modes run.
fn command_throughput(
    index: &Index,
    events: &[Event],
    input: &Input,
    rounds: usize,
) -> Result<measure::Throughput> {
    // Kept from round to round, as the search_batch row keeps its lists:
    // a round measures a stream, not the buffers' first growth.
    let mut bufs = StreamBuffers::default();
    let mut command = || -> Result<u64> {
        let mut reader = input.open_events(index.schema())?;
        Ok(search_stream(
            index,
            &mut reader,
            Mode::Std,
            0,
            &mut bufs,
            &mut io::sink(),
        )?)
    };
    let command: Option<measure::CommandPath<'_, anyhow::Error>> =
        (input.events != Path::new("-")).then_some(&mut command);
    measure::throughput(index, events, rounds, command).context("measuring the throughput")
}

/// A progress bar on stderr, or none when the report is JSON or stderr is
/// not a terminal.
fn progress(json: bool, len: u64) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if json || !io::stderr().is_terminal() {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr())
    }
}

/// `betree bench --sweep`: every grid point's instance generated, indexed
/// and measured (`perfkit_bench::betree::sweep`).
pub(super) fn sweep_report(task: &Sweep) -> Result<Report> {
    let bar = progress(task.report.json, 24);
    let sweep = measure::sweep::sweep(task.settings, &mut |_, p| {
        bar.set_message(p.shape.to_string());
        bar.inc(1);
    })
    .context("measuring the workload grid")?;
    bar.finish_and_clear();
    Ok(report::sweep(&sweep))
}

/// `betree bench --vs-atree`: betree beside the a-tree crate on the same
/// expressions and events (`perfkit_bench::betree::atree`).
pub(super) fn vs_atree_report(task: &VsAtree) -> Result<Report> {
    let workloads = measure::atree::workloads();
    let bar = progress(task.report.json, workloads.len() as u64);
    let peer = measure::atree::peer(task.settings, &mut |w| {
        bar.set_message(w.name.clone());
        bar.inc(1);
    })
    .context("betree beside a-tree")?;
    bar.finish_and_clear();
    Ok(report::vs_atree(&peer))
}
