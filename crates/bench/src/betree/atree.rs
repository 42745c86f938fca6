//! The `a-tree` crate as a peer (issue 33, item 5; `perfkit betree bench
//! --vs-atree`): the same expressions and the same events, indexed by
//! betree and by a-tree in one process, searched alternately round after
//! round on the thread's CPU clock, and the ids each returns compared per
//! event (a difference fails the run).
//!
//! a-tree's language covers a subset of betree's, so every expression is
//! translated from betree's text first, and both indexes hold only the
//! expressions that translated (the same ids). What does not translate is
//! counted by reason:
//!
//! * function calls (frequency caps, segments, geo, string functions),
//!   `true`/`false` constants, floats (a-tree's are decimals), `all of`
//!   (a-tree's `all of` asks whether the *event's* list lies within the
//!   expression's, betree's the converse) and `is null` on lists (a-tree
//!   has no absence test for a list);
//! * a negation over a list attribute that some event of the run leaves
//!   undefined: betree makes `not (xs one of (…))` true when `xs` is
//!   undefined, a-tree leaves it unknown (no match), and a-tree cannot
//!   test a list for absence to say it otherwise.
//!
//! The translation keeps the meaning exactly. betree is two-valued: a
//! predicate on an undefined attribute is false (`<>`, `not in`, `none of`
//! included) and only `not` turns that into true. a-tree is three-valued:
//! such a predicate is unknown, and only a known true matches. So `not` is
//! pushed down to the predicates here (De Morgan), never handed to a-tree,
//! which leaves a formula that only grows with its predicates; there
//! unknown acts as false, as in betree. A negated predicate becomes its
//! complement on a defined value (`=` ↔ `<>`, `in` ↔ `not in`, `one of` ↔
//! `none of`, `b` ↔ `not b`, `<` ↔ `>=`), or'ed with `x is null` unless
//! every event of the run defines `x`, which gives betree's true on an
//! undefined `x`.

use std::collections::{BTreeMap, BTreeSet};

use a_tree::ATree;
use betree::workload::{Shape, grid};
use betree::{Error, Event, Index, Result, Schema, Scratch};

use perfkit_measure::clock;

use super::median;

mod translate;

pub use translate::Translator;

/// How big each workload's instance is and how long it is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Expressions generated for the adtech profile.
    pub adtech_expressions: usize,
    /// Expressions generated for each grid point.
    pub grid_expressions: usize,
    /// Events searched per workload (every round).
    pub events: usize,
    /// Rounds (each runs both indexes once; the median is reported).
    pub rounds: usize,
}

impl Default for Settings {
    /// The adtech profile at 100,000 expressions (issue 33's size) and the
    /// grid points at the sweep's 20,000 (the sweep's instances, same
    /// seeds); 300 events, median of 5 rounds.
    fn default() -> Settings {
        Settings {
            adtech_expressions: 100_000,
            grid_expressions: 20_000,
            events: 300,
            rounds: 5,
        }
    }
}

impl Settings {
    /// Small instances (seconds in all), for tests and a first look:
    /// 2,000 expressions, 40 events, one round.
    pub fn quick() -> Settings {
        Settings {
            adtech_expressions: 2_000,
            grid_expressions: 2_000,
            events: 40,
            rounds: 1,
        }
    }
}

/// A grid point run beside the adtech profile, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridPoint {
    /// Attributes in the schema.
    pub attributes: usize,
    /// Zipf exponent of attribute and value popularity.
    pub zipf: f64,
    /// Predicates per expression.
    pub predicates: (usize, usize),
    /// Share of negated predicates.
    pub negation: f64,
    /// Why it was chosen.
    pub why: &'static str,
}

/// The three grid points run beside the adtech profile.
pub const GRID_POINTS: [GridPoint; 3] = [
    GridPoint {
        attributes: 400,
        zipf: 0.6,
        predicates: (2, 4),
        negation: 0.0,
        why: "the sweep's worst point (most candidates per match), the most attributes",
    },
    GridPoint {
        attributes: 200,
        zipf: 1.4,
        predicates: (8, 15),
        negation: 0.4,
        why: "heavy negation over long expressions, skewed popularity",
    },
    GridPoint {
        attributes: 50,
        zipf: 1.4,
        predicates: (8, 15),
        negation: 0.0,
        why: "few attributes, long expressions, no negation: events hit many predicates",
    },
];

/// The workloads of [`peer`]: the adtech profile, then [`GRID_POINTS`].
pub fn workloads() -> Vec<(Shape, &'static str)> {
    let mut out = vec![(Shape::default(), "issue 33's adtech profile")];
    for p in GRID_POINTS {
        let shape = grid()
            .into_iter()
            .find(|s| {
                s.attributes == p.attributes
                    && s.attr_zipf == p.zipf
                    && s.predicates == p.predicates
                    && s.negation == Some(p.negation)
            })
            .expect("GRID_POINTS are points of the grid");
        out.push((shape, p.why));
    }
    out
}

/// One workload measured on both indexes.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Its name: `adtech` or the grid point's parameters.
    pub name: String,
    /// Why it was chosen.
    pub why: &'static str,
    /// Expressions generated.
    pub generated: usize,
    /// Expressions translated and indexed by both.
    pub translated: usize,
    /// Expressions left out, by reason.
    pub skipped: BTreeMap<&'static str, usize>,
    /// Translated expressions with at least one `x is null or …` guard (a
    /// negation on an attribute some event leaves undefined).
    pub guarded: usize,
    /// Events searched (every round, by both).
    pub events: usize,
    /// Matches over all events (identical ids in both, checked).
    pub matches: u64,
    /// CPU nanoseconds of inserting every translated expression.
    pub betree_build_ns: u64,
    /// The same for a-tree.
    pub atree_build_ns: u64,
    /// CPU nanoseconds of betree's rounds (`Index::search_with`, one event
    /// at a time), in round order.
    pub betree_rounds_ns: Vec<u64>,
    /// The same for a-tree (`ATree::search`).
    pub atree_rounds_ns: Vec<u64>,
}

impl Workload {
    /// betree's events per CPU second (median round).
    pub fn betree_events_per_s(&self) -> f64 {
        self.events as f64 / (median(&self.betree_rounds_ns).max(1) as f64 / 1e9)
    }

    /// a-tree's events per CPU second (median round).
    pub fn atree_events_per_s(&self) -> f64 {
        self.events as f64 / (median(&self.atree_rounds_ns).max(1) as f64 / 1e9)
    }

    /// betree's events/s over a-tree's (above 1: betree is faster).
    pub fn ratio(&self) -> f64 {
        median(&self.atree_rounds_ns) as f64 / median(&self.betree_rounds_ns).max(1) as f64
    }

    /// Expressions left out.
    pub fn skipped_total(&self) -> usize {
        self.skipped.values().sum()
    }
}

/// Result of [`peer`].
#[derive(Debug, Clone)]
pub struct Peer {
    /// What was run.
    pub settings: Settings,
    /// The adtech profile, then the grid points.
    pub workloads: Vec<Workload>,
}

/// Runs every workload of [`workloads`], calling `progress` after each.
pub fn peer(settings: Settings, progress: &mut dyn FnMut(&Workload)) -> Result<Peer> {
    let mut out = Vec::new();
    for (shape, why) in workloads() {
        let count = if shape == Shape::default() {
            settings.adtech_expressions
        } else {
            settings.grid_expressions
        };
        let w = measure(&shape, why, count, settings)?;
        progress(&w);
        out.push(w);
    }
    Ok(Peer {
        settings,
        workloads: out,
    })
}

/// Measures one shape: its fixed-seed instance (the sweep's seeds),
/// translated, indexed by both, checked event by event, then timed.
pub fn measure(
    shape: &Shape,
    why: &'static str,
    expressions: usize,
    settings: Settings,
) -> Result<Workload> {
    let (_, schema, exprs, events) = super::sweep::instance(shape, expressions, settings.events)?;
    let name = if *shape == Shape::default() {
        "adtech".to_string()
    } else {
        shape.to_string()
    };
    let mut w = compare(&schema, &exprs, &events, settings.rounds)?;
    w.name = name;
    w.why = why;
    Ok(w)
}

/// The comparison on given expressions (ids 1, 2, … in order) and events:
/// translate, index both, check every event's ids, time `rounds` rounds
/// (at least 1) after an unrecorded one. A difference in ids is an
/// [`Error::Event`] naming the event and the ids.
pub fn compare(
    schema: &Schema,
    exprs: &[String],
    events: &[Event],
    rounds: usize,
) -> Result<Workload> {
    let atree_err =
        |what: &str, e: &dyn std::fmt::Display| Error::Event(format!("a-tree {what}: {e}"));
    // Attributes every event defines: a negation over them needs no
    // absence test.
    let always: BTreeSet<usize> = (0..schema.len())
        .filter(|&a| {
            events
                .iter()
                .all(|ev| ev.get(a as betree::AttrId).is_some())
        })
        .collect();
    let tr = Translator::new(schema, &always);
    let mut translated: Vec<(u64, String, bool)> = Vec::new();
    let mut skipped: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (k, e) in exprs.iter().enumerate() {
        let before = tr.guards.get();
        match tr.translate(e) {
            Ok(t) => translated.push((k as u64 + 1, t, tr.guards.get() > before)),
            Err(why) => *skipped.entry(why).or_default() += 1,
        }
    }
    let mut atree: ATree<u64> =
        ATree::new(&tr.definitions()).map_err(|e| atree_err("schema", &e))?;
    let t = clock::thread_cpu();
    let mut refused: Vec<u64> = Vec::new();
    for (id, e, _) in &translated {
        if atree.insert(id, e).is_err() {
            refused.push(*id);
        }
    }
    let atree_build_ns = (clock::thread_cpu() - t).as_nanos() as u64;
    if !refused.is_empty() {
        // Never expected: the translator writes only what a-tree parses.
        *skipped.entry("refused by a-tree's parser").or_default() += refused.len();
        for id in &refused {
            atree.delete(id);
        }
        translated.retain(|(id, ..)| !refused.contains(id));
    }
    let t = clock::thread_cpu();
    let mut index = Index::new(schema.clone());
    let mut bulk = index.bulk();
    for (id, ..) in &translated {
        bulk.insert(*id, &exprs[*id as usize - 1])?;
    }
    drop(bulk);
    let betree_build_ns = (clock::thread_cpu() - t).as_nanos() as u64;
    let aevents = events
        .iter()
        .map(|ev| tr.event(&atree, ev))
        .collect::<Result<Vec<_>>>()?;

    // The id check, untimed: every event, both indexes.
    let mut scratch = Scratch::default();
    let mut ids = Vec::new();
    let mut matches = 0u64;
    for (k, (ev, aev)) in events.iter().zip(&aevents).enumerate() {
        index.search_with(&mut scratch, ev, &mut ids)?;
        let report = atree.search(aev).map_err(|e| atree_err("search", &e))?;
        let mut theirs: Vec<u64> = report.matches().iter().map(|id| **id).collect();
        theirs.sort_unstable();
        if theirs != ids {
            let only = |a: &[u64], b: &[u64]| -> Vec<u64> {
                a.iter()
                    .filter(|x| b.binary_search(x).is_err())
                    .copied()
                    .take(5)
                    .collect()
            };
            return Err(Error::Event(format!(
                "betree and a-tree differ on event {k}: {} matches against {}; only betree: {:?}, only a-tree: {:?} (first ids)",
                ids.len(),
                theirs.len(),
                only(&ids, &theirs),
                only(&theirs, &ids),
            )));
        }
        matches += ids.len() as u64;
    }

    // Timed rounds, alternating which goes first; round 0 unrecorded.
    let rounds = rounds.max(1);
    let (mut b_ns, mut a_ns) = (Vec::new(), Vec::new());
    for round in 0..=rounds {
        for side in [round % 2, 1 - round % 2] {
            let t = clock::thread_cpu();
            let mut m = 0u64;
            if side == 0 {
                for ev in events {
                    index.search_with(&mut scratch, ev, &mut ids)?;
                    m += ids.len() as u64;
                }
            } else {
                for aev in &aevents {
                    let report = atree.search(aev).map_err(|e| atree_err("search", &e))?;
                    m += report.matches().len() as u64;
                }
            }
            let ns = (clock::thread_cpu() - t).as_nanos() as u64;
            if m != matches {
                return Err(Error::Event(format!(
                    "{} found {m} matches in a timed round, {matches} when checked",
                    if side == 0 { "betree" } else { "a-tree" }
                )));
            }
            if round > 0 {
                if side == 0 { &mut b_ns } else { &mut a_ns }.push(ns);
            }
        }
    }
    Ok(Workload {
        name: String::new(),
        why: "",
        generated: exprs.len(),
        translated: translated.len(),
        skipped,
        guarded: translated.iter().filter(|t| t.2).count(),
        events: events.len(),
        matches,
        betree_build_ns,
        atree_build_ns,
        betree_rounds_ns: b_ns,
        atree_rounds_ns: a_ns,
    })
}

#[cfg(test)]
mod tests;
