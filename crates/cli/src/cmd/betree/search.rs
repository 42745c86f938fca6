//! `perfkit betree search`: events streamed in, matching ids streamed out
//! in batches.

use super::*;
use betree::stream::{StreamBuffers, search_stream};

pub(super) fn search(a: Search) -> Result<ExitCode> {
    refuse_output_over_input(&a.output, &a.input)?;
    if let Some(times) = &a.times {
        refuse_output_over_input(times, &a.input)?;
    }
    let start = Moment::now();
    let (index, _) = load_index(&a.input)?;
    let built = Moment::now();
    let mut events = open_events(&a.input, index.schema())?;
    let mut bufs = StreamBuffers::default();
    let mut run = |out: &mut dyn Write| {
        search_stream(&index, &mut events, a.mode, a.budget, &mut bufs, out).map(drop)
    };
    if a.output == Path::new("-") {
        let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
        // An input or search error is reported as it is; a write error
        // is the output's.
        match run(&mut out) {
            Err(StreamError::Write(e)) => return Err(anyhow::Error::from(e).context(STDOUT)),
            other => other?,
        }
        out.flush().context(STDOUT)?;
    } else {
        // An input or search error is reported as it is, not as a failure
        // to write the output (the partial output is removed either way).
        let mut input_err = None;
        let written = write_atomically(&a.output, |f| -> Result<()> {
            let mut out = BufWriter::with_capacity(1 << 16, f);
            match run(&mut out) {
                Err(StreamError::Write(e)) => return Err(e.into()),
                Err(e) => {
                    input_err = Some(e);
                    bail!("search failed");
                }
                Ok(()) => {}
            }
            Ok(out.flush()?)
        });
        if let Some(e) = input_err {
            return Err(e.into());
        }
        written.with_context(|| format!("writing {}", a.output.display()))?;
    }
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

/// Refuses an output that is one of the input files (the same file by
/// device and inode, so also through a symlink or a hard link): renaming
/// the finished output over it would replace the user's expression, event
/// or domain file with search results.
pub(super) fn refuse_output_over_input(output: &Path, input: &Input) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    if output == Path::new("-") {
        return Ok(());
    }
    let Ok(out) = fs::metadata(output) else {
        return Ok(());
    };
    let inputs = [
        ("expression file", Some(&input.exprs)),
        ("event file", Some(&input.events)),
        ("domain file", input.domains.as_ref()),
    ];
    for (what, path) in inputs {
        let Some(path) = path.filter(|p| p.as_path() != Path::new("-")) else {
            continue;
        };
        if fs::metadata(path).is_ok_and(|m| m.dev() == out.dev() && m.ino() == out.ino()) {
            bail!(
                "refusing to write {}: it is the {what} {}",
                output.display(),
                path.display()
            );
        }
    }
    Ok(())
}
