//! The `betree search` rows of the commands part: the three generators'
//! workloads ([`BetreeWorkload`]) written as the command reads them and
//! held in memory for the library side, and the case that measures them.
//! It stands alone because the workload generation is betree's own job,
//! apart from the FIX and zip cases beside it.

use std::path::Path;

use perfkit_measure::child::Spawner;
use perfkit_report::Section;

use super::{
    BETREE_EXPRS, BETREE_PARAMS, BETREE_RUNS, BETREE_WORKLOADS, Side, Work, case, case_rounds,
    library, of_workloads, process,
};
use crate::error::{IoContext, Result};
use crate::invocation::{Invocation, Launcher};

/// Writes the file at `p` through a buffer by `fill`, as the generators
/// write theirs: one item at a time, never the whole file in memory.
fn write_to(
    p: &Path,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    use std::io::Write;
    let writing = || format!("writing {}", p.display());
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(p).doing_with(|| format!("creating {}", p.display()))?,
    );
    fill(&mut w).doing_with(writing)?;
    w.flush().doing_with(writing)
}

/// The generators `betree search` runs on, each at [`BETREE_EXPRS`]
/// expressions: three shapes, so a gain on one cannot stand for the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BetreeWorkload {
    /// The reference benchmark's generator (erl-be-tree's): boolean
    /// parameters, short conjunctions, Erlang event lists.
    Reference,
    /// The adtech profile: 200 typed attributes, Zipf popularity, JSON
    /// events defining 40 to 120 of them.
    Adtech,
    /// Few attributes, wide integer ranges, string equality, negation
    /// nested deep ([`betree::workload::DeepNegation`]).
    DeepNegation,
}

impl BetreeWorkload {
    /// Every generator, in row order.
    pub const ALL: [BetreeWorkload; 3] = [
        BetreeWorkload::Reference,
        BetreeWorkload::Adtech,
        BetreeWorkload::DeepNegation,
    ];

    /// Its name in the row.
    pub fn name(self) -> &'static str {
        match self {
            BetreeWorkload::Reference => "reference generator",
            BetreeWorkload::Adtech => "adtech profile",
            BetreeWorkload::DeepNegation => "deep negation",
        }
    }

    /// Writes `exprs` expressions and `events` events (seeds fixed) to the
    /// two files, in the forms `betree search` reads, and returns the same
    /// workload in memory for the library side: the schema, the
    /// expressions and the events.
    pub fn write(
        self,
        exprs: usize,
        events: usize,
        expr_file: &Path,
        event_file: &Path,
    ) -> Result<(betree::Schema, Vec<String>, Vec<betree::Event>)> {
        use betree::workload::{Adtech, DeepNegation};
        let writing = |p: &Path| format!("writing {}", p.display());
        match self {
            BetreeWorkload::Reference => {
                let schema = betree::Schema::boolean_params(BETREE_PARAMS);
                let texts = betree::reference::random_expressions(BETREE_PARAMS, exprs, 1);
                std::fs::write(
                    expr_file,
                    betree::reference::write_expr_file(schema.domains(), &texts),
                )
                .doing_with(|| writing(expr_file))?;
                let bools = betree::reference::random_events(BETREE_PARAMS, events, 2);
                std::fs::write(event_file, betree::reference::write_event_file(&bools))
                    .doing_with(|| writing(event_file))?;
                let evs = bools
                    .iter()
                    .map(|v| betree::Event::from_bools(&schema, v))
                    .collect::<betree::Result<Vec<_>>>()?;
                Ok((schema, texts, evs))
            }
            BetreeWorkload::Adtech => {
                let g = Adtech::new();
                write_to(expr_file, |w| g.write_exprs(w, exprs, 1))?;
                write_to(event_file, |w| g.write_events(w, events, 2))?;
                let schema = betree::Schema::from_domains(g.domains())?;
                let evs = g.events(&schema, events, 2)?;
                Ok((schema, g.expressions(exprs, 1), evs))
            }
            BetreeWorkload::DeepNegation => {
                let g = DeepNegation;
                write_to(expr_file, |w| g.write_exprs(w, exprs, 1))?;
                write_to(event_file, |w| g.write_events(w, events, 2))?;
                let schema = betree::Schema::from_domains(g.domains())?;
                let evs = g.events(&schema, events, 2)?;
                Ok((schema, g.expressions(exprs, 1), evs))
            }
        }
    }

    /// Events searched per run: enough that the search outweighs the noise
    /// of the index build taken out (the shapes differ tenfold in their
    /// time per event).
    pub fn events(self) -> usize {
        match self {
            BetreeWorkload::Reference => 1_000,
            BetreeWorkload::Adtech => 2_500,
            BetreeWorkload::DeepNegation => 5_000,
        }
    }

    /// Whether its events are JSON objects (else Erlang lists).
    fn json_events(self) -> bool {
        self != BetreeWorkload::Reference
    }
}

/// `betree search` of each generator's workload ([`BetreeWorkload`]) at
/// [`BETREE_EXPRS`] expressions, timed by the command itself (`--times`:
/// the search and its output, without the start-up and the index build),
/// beside `search_batch` of a built index in this process; the summary
/// shows the worst of them.
///
/// The command's own clock is what lets the rows run at 100,000
/// expressions: taking the build out by a second run on no events, run by
/// run, subtracted two processes' noise, and at 100,000 the reference
/// generator's build is twice its search.
pub(super) fn betree_case(
    section: &mut Section,
    d: &Path,
    search_batch: usize,
    perfkit: &dyn Launcher,
    spawner: &mut Spawner,
) -> Result<()> {
    let times = d.join("betree-times.txt");
    for workload in BetreeWorkload::ALL {
        let exprs = d.join("exprs.txt");
        let events = d.join("events.txt");
        let (schema, texts, evs) =
            workload.write(BETREE_EXPRS, workload.events(), &exprs, &events)?;
        let mut index = betree::Index::new(schema);
        let mut bulk = index.bulk();
        for (i, e) in texts.into_iter().enumerate() {
            bulk.insert_owned(i as u64 + 1, e)?;
        }
        drop(bulk);
        let (mut ours, mut lib) = (Side::default(), Side::default());
        let mut rounds = case_rounds(BETREE_RUNS);
        while rounds.another() {
            let mut whole = Side::default();
            process(
                spawner,
                &mut whole,
                &mut perfkit.command(&Invocation::BetreeSearch {
                    exprs: &exprs,
                    events: &events,
                    json_events: workload.json_events(),
                    output: Path::new("/dev/null"),
                    times: Some(&times),
                }),
            )?;
            let text = std::fs::read_to_string(&times).doing("reading betree search's --times")?;
            let (wall, cpu) = search_times(&text).ok_or_else(|| {
                crate::error::Error::Program(format!(
                    "betree search --times wrote no search times: `{}`",
                    text.trim()
                ))
            })?;
            ours.push(perfkit_measure::child::Usage {
                wall,
                cpu,
                peak_rss_bytes: whole.rss.first().copied().unwrap_or(0),
            });
            // As the command searches: in batches of its batch size.
            library(&mut lib, || {
                for batch in evs.chunks(search_batch) {
                    std::hint::black_box(index.search_batch(batch)?);
                }
                Ok(())
            })?;
        }
        case(
            section,
            &format!(
                "betree search, {}, {}k expressions, index build excluded",
                workload.name(),
                BETREE_EXPRS / 1000
            ),
            Work::Items(workload.events() as u64, "events"),
            &ours,
            Some(("betree Index::search_batch, index built beforehand", &lib)),
            None,
        );
        of_workloads(section, BETREE_WORKLOADS);
    }
    Ok(())
}

/// The search's wall and CPU time from `betree search --times`'s line
/// (`key=nanoseconds` pairs); `None` when either is missing.
fn search_times(line: &str) -> Option<(std::time::Duration, std::time::Duration)> {
    let get = |key: &str| {
        line.split_ascii_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse::<u64>().ok())
            .map(std::time::Duration::from_nanos)
    };
    Some((get("search_wall_ns")?, get("search_cpu_ns")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_times_are_read_from_the_commands_line() {
        let line = "build_wall_ns=5 build_cpu_ns=4 search_wall_ns=3000 search_cpu_ns=2000\n";
        let ms = std::time::Duration::from_nanos;
        assert_eq!(search_times(line), Some((ms(3000), ms(2000))));
        assert_eq!(search_times("build_wall_ns=5 search_wall_ns=3"), None);
        assert_eq!(search_times("search_wall_ns=x search_cpu_ns=2"), None);
    }

    /// Each generator's files, read back as `betree search` reads them,
    /// give the same ids as the workload the library side searches, so
    /// the command and the library do the same work; the three shapes
    /// differ (attribute counts, event forms).
    #[test]
    fn each_betree_workload_writes_what_the_library_side_searches() {
        let dir = tempfile::tempdir().unwrap();
        let (ex, ev) = (dir.path().join("e"), dir.path().join("v"));
        let mut attrs = Vec::new();
        for w in BetreeWorkload::ALL {
            let (schema, texts, events) = w.write(300, 40, &ex, &ev).unwrap();
            let file =
                betree::reference::read_expr_file(&std::fs::read_to_string(&ex).unwrap()).unwrap();
            assert_eq!(file.exprs, texts, "{}", w.name());
            let read = betree::Schema::from_domains(file.domains).unwrap();
            let text = std::fs::read_to_string(&ev).unwrap();
            let from_file: Vec<betree::Event> = if w.json_events() {
                text.lines()
                    .map(|l| betree::Event::from_json(&read, l).unwrap())
                    .collect()
            } else {
                betree::reference::read_event_file(&text)
                    .unwrap()
                    .iter()
                    .map(|b| betree::Event::from_bools(&read, b).unwrap())
                    .collect()
            };
            assert_eq!(from_file.len(), events.len(), "{}", w.name());
            let index = |s: &betree::Schema| {
                let mut i = betree::Index::new(s.clone());
                for (k, e) in texts.iter().enumerate() {
                    i.insert(k as u64 + 1, e).unwrap();
                }
                i
            };
            let (a, b) = (index(&schema), index(&read));
            for (x, y) in events.iter().zip(&from_file) {
                assert_eq!(a.search(x).unwrap(), b.search(y).unwrap(), "{}", w.name());
            }
            attrs.push(schema.len());
        }
        assert_eq!(attrs, [BETREE_PARAMS, betree::workload::ADTECH_ATTRS, 7]);
    }
}
