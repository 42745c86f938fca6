//! `perfkit betree search`: events streamed in, matching ids streamed out
//! in batches.

use super::*;

pub(super) fn search(a: Search) -> Result<ExitCode> {
    a.input.refuse_output_over(&a.output)?;
    if let Some(times) = &a.times {
        a.input.refuse_output_over(times)?;
    }
    let start = Moment::now();
    let (index, _) = load_index(&a.input)?;
    let built = Moment::now();
    let mut events = a.input.open_events(index.schema())?;
    let mut stdout = io::stdout().lock();
    files::search_to(
        &index,
        &mut events,
        a.mode,
        a.budget,
        &a.output,
        &mut stdout,
    )?;
    if let Some(path) = &a.times {
        let done = Moment::now();
        let line = format!(
            "build_wall_ns={} build_cpu_ns={} search_wall_ns={} search_cpu_ns={}\n",
            (built.wall - start.wall).as_nanos(),
            built.cpu.saturating_sub(start.cpu).as_nanos(),
            (done.wall - built.wall).as_nanos(),
            done.cpu.saturating_sub(built.cpu).as_nanos(),
        );
        write_atomically(path, |f| f.write_all(line.as_bytes()))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A point of the run on both clocks, for `--times`: the search's time
/// includes writing its output; neither includes the process's start-up.
#[derive(Clone, Copy)]
struct Moment {
    wall: std::time::Instant,
    cpu: Duration,
}

impl Moment {
    fn now() -> Moment {
        Moment {
            wall: std::time::Instant::now(),
            cpu: perfkit_measure::clock::process_cpu(),
        }
    }
}
