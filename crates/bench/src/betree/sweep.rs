//! Issue 33's workload grid measured (`perfkit betree bench --sweep`): for
//! each of [`betree::workload::grid`]'s 24 shapes, a fixed-seed instance is
//! generated and indexed, and the sweep records how much the index prunes
//! (candidates per match), how fast every library search mode runs (CPU,
//! [`throughput`]) and the index's memory. The grid exists to show the
//! index holds across workload shapes, not on the one profile it was
//! shaped by.

use betree::workload::{Adtech, Shape, grid};
use betree::{Error, Event, Index, Result, Schema, SearchStep};

use perfkit_measure::clock;

use super::throughput::{Throughput, throughput};

/// How big each grid point's instance is and how long it is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Expressions indexed per point.
    pub expressions: usize,
    /// Events searched per point (every round).
    pub events: usize,
    /// Rounds of the throughput rows (median reported).
    pub rounds: usize,
}

impl Default for Settings {
    /// About two minutes for the whole grid in a release build on the
    /// project's 2-vCPU machine: 20,000 expressions and 300 events per
    /// point, median of 5 rounds (`betree bench`'s `--rounds`).
    fn default() -> Settings {
        Settings {
            expressions: 20_000,
            events: 300,
            rounds: 5,
        }
    }
}

impl Settings {
    /// A small instance of every point (seconds in all), for tests and a
    /// first look: 2,000 expressions, 40 events, one round.
    pub fn quick() -> Settings {
        Settings {
            expressions: 2_000,
            events: 40,
            rounds: 1,
        }
    }
}

/// The seeds of every point's expressions and events: fixed, so the grid
/// is the same instance on every run.
pub const EXPR_SEED: u64 = 1;
/// See [`EXPR_SEED`].
pub const EVENT_SEED: u64 = 2;

/// One grid point measured.
#[derive(Debug, Clone)]
pub struct Point {
    /// Its parameters.
    pub shape: Shape,
    /// The share of predicates the generator drew wide to meet the match
    /// rate (see [`Adtech::looseness`]).
    pub looseness: f64,
    /// Expressions indexed.
    pub expressions: usize,
    /// Events searched.
    pub events: usize,
    /// Matches over all events.
    pub matches: u64,
    /// Expressions evaluated over all events (the selection's candidates).
    pub candidates: u64,
    /// The index's memory, bytes.
    pub index_bytes: usize,
    /// CPU time of inserting every expression, nanoseconds.
    pub build_cpu_ns: u64,
    /// The library modes' CPU throughput.
    pub throughput: Throughput,
}

impl Point {
    /// Candidates evaluated per match (infinite when nothing matched).
    pub fn candidates_per_match(&self) -> f64 {
        if self.matches == 0 {
            f64::INFINITY
        } else {
            self.candidates as f64 / self.matches as f64
        }
    }

    /// The share of (expression, event) pairs that matched.
    pub fn match_rate(&self) -> f64 {
        self.matches as f64 / (self.expressions * self.events).max(1) as f64
    }

    /// Events per CPU second of the fastest library mode, with its name.
    pub fn events_per_s(&self) -> (f64, &str) {
        self.throughput.fastest_library().map_or((0.0, ""), |r| {
            (r.events_per_s(self.throughput.events), &r.name)
        })
    }
}

/// Result of [`sweep`]: the points, worst (most candidates per match)
/// first.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// What was run.
    pub settings: Settings,
    /// Every point, worst first.
    pub points: Vec<Point>,
}

impl Sweep {
    /// The median of the points' candidates per match (the upper median).
    pub fn median_candidates_per_match(&self) -> f64 {
        let mut v: Vec<f64> = self
            .points
            .iter()
            .map(Point::candidates_per_match)
            .collect();
        v.sort_unstable_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    }
}

/// The instance of `shape` every betree bench uses: its generator and
/// schema, then `expressions` expressions and `events` events from the
/// fixed seeds.
pub(crate) fn instance(
    shape: &Shape,
    expressions: usize,
    events: usize,
) -> Result<(Adtech, Schema, Vec<String>, Vec<Event>)> {
    let generator = Adtech::with_shape(shape.clone())?;
    let schema = Schema::from_domains(generator.domains())?;
    let exprs = generator.expressions(expressions, EXPR_SEED);
    let events = generator.events(&schema, events, EVENT_SEED)?;
    Ok((generator, schema, exprs, events))
}

/// Measures one shape: generates its instance from the fixed seeds,
/// indexes it, counts candidates and matches in one untimed search per
/// event, then times the library's modes.
pub fn measure_point(shape: &Shape, settings: Settings) -> Result<Point> {
    let (generator, schema, exprs, events) =
        instance(shape, settings.expressions, settings.events)?;
    let t = clock::thread_cpu();
    let mut index = Index::new(schema);
    let mut bulk = index.bulk();
    for (k, e) in exprs.iter().enumerate() {
        bulk.insert(k as u64 + 1, e)?;
    }
    drop(bulk);
    let build_cpu_ns = (clock::thread_cpu() - t).as_nanos() as u64;
    drop(exprs);
    let (mut candidates, mut matches) = (0u64, 0u64);
    for ev in &events {
        let mut it = index.search_iter(ev)?;
        let SearchStep::Done(ids) = index.search_next(&mut it, u64::MAX) else {
            return Err(Error::Event(
                "an unbounded search step did not finish".into(),
            ));
        };
        candidates += it.candidates() as u64;
        matches += ids.len() as u64;
    }
    let throughput = throughput::<Error>(&index, &events, settings.rounds, None)?;
    Ok(Point {
        shape: shape.clone(),
        looseness: generator.looseness(),
        expressions: settings.expressions,
        events: events.len(),
        matches,
        candidates,
        index_bytes: index.memory_bytes(),
        build_cpu_ns,
        throughput,
    })
}

/// Measures every point of the grid, calling `progress` after each (for a
/// progress bar), and orders them worst first.
pub fn sweep(settings: Settings, progress: &mut dyn FnMut(usize, &Point)) -> Result<Sweep> {
    let mut points = Vec::new();
    for (k, shape) in grid().iter().enumerate() {
        let p = measure_point(shape, settings)?;
        progress(k, &p);
        points.push(p);
    }
    points.sort_by(|a, b| {
        b.candidates_per_match()
            .total_cmp(&a.candidates_per_match())
    });
    Ok(Sweep { settings, points })
}
