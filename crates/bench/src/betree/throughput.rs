//! Events per CPU second of the library's search modes beside the
//! `perfkit betree search` command's own path (read and parse each event
//! from its file, search, format the output line), on the same events in
//! one run: the gap between the two is what the command costs a user on
//! top of the library.
//!
//! Every row is timed on the thread's CPU clock (user + system), which on
//! a shared machine counts the work and not the time other processes had
//! the core. The rows run in turn, round after round, in an order that
//! rotates with the round, and each row's figure is the median of its
//! rounds.

use betree::{Error, Event, Index, Scratch};

use perfkit_measure::clock;

/// One row of [`Throughput`]: a way of searching every event once.
#[derive(Debug, Clone)]
pub struct ThroughputRow {
    /// What the row runs, e.g. `search_batch`.
    pub name: String,
    /// Whether this is the command's path (events read from their file,
    /// parse and output included) rather than a library mode over events
    /// parsed beforehand.
    pub command: bool,
    /// CPU nanoseconds of each round, in round order.
    pub rounds_ns: Vec<u64>,
}

impl ThroughputRow {
    /// The median round's CPU nanoseconds (the upper median of an even
    /// count).
    pub fn median_ns(&self) -> u64 {
        super::median(&self.rounds_ns)
    }

    /// Events per CPU second of the median round.
    pub fn events_per_s(&self, events: usize) -> f64 {
        events as f64 / (self.median_ns().max(1) as f64 / 1e9)
    }
}

/// Result of [`throughput`].
#[derive(Debug, Clone)]
pub struct Throughput {
    /// Events searched per round by every row.
    pub events: usize,
    /// Rounds run (every row once per round).
    pub rounds: usize,
    /// Matches per round (identical in every row, checked).
    pub matches: u64,
    /// The library's modes, then the command's path if one was given.
    pub rows: Vec<ThroughputRow>,
}

impl Throughput {
    /// The library mode with the least median CPU time.
    pub fn fastest_library(&self) -> Option<&ThroughputRow> {
        self.rows
            .iter()
            .filter(|r| !r.command)
            .min_by_key(|r| r.median_ns())
    }

    /// The command's row, if it was measured.
    pub fn command(&self) -> Option<&ThroughputRow> {
        self.rows.iter().find(|r| r.command)
    }

    /// The command's events/s over the fastest library mode's (1.0: the
    /// command runs at library speed).
    pub fn command_ratio(&self) -> Option<f64> {
        let (c, f) = (self.command()?, self.fastest_library()?);
        Some(f.median_ns() as f64 / c.median_ns().max(1) as f64)
    }
}

/// The command's path over the same events: reads them from their file
/// again, searches and formats every output line, and returns how many ids
/// it wrote (checked against the library's matches). Its error type is
/// the caller's (the command's own, which names files).
pub type CommandPath<'a, E> = &'a mut dyn FnMut() -> std::result::Result<u64, E>;

/// Events the `search_batch` row hands the library per call. The command
/// streams batches of its own size (512, chosen by measuring the command);
/// this row keeps the 1,024 it was first measured with.
pub const BATCH: usize = 1024;

/// Measures every library mode (`search_with`, `search_iter_in` +
/// `search_all_in`, each reusing one scratch, and `search_batch_into` in
/// batches of [`BATCH`])
/// and, if given, the command's path, for `rounds` rounds (at least 1)
/// after one unrecorded warm-up round. Every row must find the same number
/// of matches (that the ids are the same is [`super::run`]'s check).
pub fn throughput<E: From<Error>>(
    index: &Index,
    events: &[Event],
    rounds: usize,
    mut command: Option<CommandPath<'_, E>>,
) -> std::result::Result<Throughput, E> {
    let rounds = rounds.max(1);
    let mut names = vec!["search", "search_all", "search_batch"];
    if command.is_some() {
        names.push("command: perfkit betree search");
    }
    let mut rows: Vec<ThroughputRow> = names
        .iter()
        .enumerate()
        .map(|(k, n)| ThroughputRow {
            name: (*n).to_string(),
            command: k == 3,
            rounds_ns: Vec::with_capacity(rounds),
        })
        .collect();
    let mut scratch = Scratch::default();
    let mut one = Vec::new();
    let mut found: Vec<Vec<u64>> = Vec::new();
    let mut expected: Option<u64> = None;
    // Round 0 warms up (caches, the allocator's pools, the file in the page
    // cache) and is not recorded.
    for round in 0..=rounds {
        let n = rows.len();
        for k in (0..n).map(|k| (k + round) % n) {
            let t = clock::thread_cpu();
            let matches = match k {
                0 => {
                    let mut m = 0u64;
                    for ev in events {
                        index.search_with(&mut scratch, ev, &mut one)?;
                        m += one.len() as u64;
                    }
                    m
                }
                1 => {
                    let mut m = 0u64;
                    for ev in events {
                        let it = index.search_iter_in(ev, &mut scratch)?;
                        m += index.search_all_in(it, &mut scratch).len() as u64;
                    }
                    m
                }
                2 => {
                    let mut m = 0u64;
                    for chunk in events.chunks(BATCH) {
                        index.search_batch_into(chunk, &mut found)?;
                        m += found.iter().map(|ids| ids.len() as u64).sum::<u64>();
                    }
                    m
                }
                _ => command.as_mut().expect("row 3 is the command's")()?,
            };
            let ns = (clock::thread_cpu() - t).as_nanos() as u64;
            match expected {
                None => expected = Some(matches),
                Some(e) if e != matches => {
                    return Err(Error::Event(format!(
                        "{} found {matches} matches, another mode {e}",
                        rows[k].name
                    ))
                    .into());
                }
                Some(_) => {}
            }
            if round > 0 {
                rows[k].rounds_ns.push(ns);
            }
        }
    }
    Ok(Throughput {
        events: events.len(),
        rounds,
        matches: expected.unwrap_or(0),
        rows,
    })
}
