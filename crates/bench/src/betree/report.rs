//! The betree measurements rendered into the report model: the sections of
//! `perfkit betree bench` (and the betree part of `perfkit bench`), of its
//! `--sweep` and of its `--vs-atree`. Measuring is the parent module's; this
//! one only lays figures out, with the notes that say how they were taken.

use std::time::Duration;

use betree::Index;
use perfkit_measure::{latency_histogram, record};
use perfkit_report::{Report, Row, Value, format_ns};

use super::atree::Peer;
use super::sweep::Sweep;
use super::{Measured, Replayed, Throughput};

/// Adds the benchmark's sections to `rep`, names prefixed by `prefix`.
pub fn benchmark(rep: &mut Report, index: &Index, m: &Measured, build: Duration, prefix: &str) {
    let (r, cpu) = (&m.run, &m.cpu);
    let std_total = r.modes[0].total_ns.max(1) as f64;
    let s = rep.section(format!("{prefix}index"));
    s.row(
        Row::new("build")
            .elapsed(build)
            .col("build_ms", Value::num(build.as_secs_f64() * 1e3, 1))
            .col("expressions", index.len())
            .col("attributes", index.schema().len())
            .col(
                "index_mib",
                Value::num(index.memory_bytes() as f64 / (1 << 20) as f64, 1),
            ),
    );
    let s = rep.section(format!("{prefix}search per event"));
    for (k, m) in r.modes.iter().enumerate() {
        let name = [
            "std (search)",
            "all (search_iter + search_all)",
            "next (search_iter + search_next)",
        ][k];
        let mut row = Row::new(name)
            .latency(m.per_event.clone())
            .col(
                "events_per_s",
                Value::num(r.events as f64 / (m.total_ns.max(1) as f64 / 1e9), 0),
            )
            .col("vs_std", Value::num(m.total_ns as f64 / std_total, 3));
        if k == 2 {
            row = row
                .col("max_slice_us", Value::num(m.max_slice_ns as f64 / 1e3, 1))
                .col("max_slice_cpu_us", Value::num(cpu.max_ns as f64 / 1e3, 1));
        }
        s.row(row);
    }
    s.row(
        Row::new(format!("next: time between yields (budget {})", r.budget))
            .latency(r.modes[2].slices.clone()),
    );
    s.row(
        Row::new(format!("next: CPU time per slice (budget {})", r.budget))
            .latency(cpu.slices.clone()),
    );
    s.row(
        Row::new("control: fixed CPU loop of the median slice's length").latency(m.control.clone()),
    );
    let batch_eps = r.events as f64 / (r.batch_ns.max(1) as f64 / 1e9);
    s.row(
        Row::new("batch (search_batch, all events)")
            .elapsed(Duration::from_nanos(r.batch_ns))
            .col("events_per_s", Value::num(batch_eps, 0))
            .col("vs_std", Value::num(r.batch_ns as f64 / std_total, 3)),
    );
    s.note(format!(
        "{} events, {} matches in total, identical in every mode (checked); {} candidates evaluated in total",
        r.events, r.matches, r.candidates
    ));
    s.note("the slice rows and max_slice come from a further next pass per event that times every slice; the per-event and per-block times of the three modes are taken without that instrumentation (one clock pair per search), so its cost is not in the penalty");
    s.note("max_slice: longest wall time between two yields, which counts time the OS had the thread descheduled; max_slice_cpu: longest CPU time of one slice (thread CPU clock, a separate pass; in a VM it also counts time the hypervisor took); the control row is fixed work of the median slice's length, timed the same number of times: its tail is the machine's, not the search's");
    let per_event = |n: u64| Value::num(n as f64 / r.events.max(1) as f64, 1);
    let sel = rep.section(format!("{prefix}selection"));
    sel.row(
        Row::new("candidates evaluated vs matches, per event")
            .col("candidates_per_event", per_event(r.candidates))
            .col("matches_per_event", per_event(r.matches))
            .col(
                "candidates_per_match",
                Value::num(r.candidates as f64 / r.matches.max(1) as f64, 2),
            ),
    );
    sel.note("candidates: expressions the index selected for evaluation (counted in a further untimed search per event); the closer to matches, the more the index prunes");
    let s = rep.section(format!(
        "{prefix}relative difference per block of {} events vs std",
        r.block
    ));
    for (k, c) in r.comparisons.iter().enumerate() {
        s.row(
            Row::new(["all", "next"][k])
                .col("min_pct", Value::num(c.min * 100.0, 2))
                .col("max_pct", Value::num(c.max * 100.0, 2))
                .col("median_pct", Value::num(c.median * 100.0, 2))
                .col("p99_pct", Value::num(c.p99 * 100.0, 2))
                .col("better_pct", Value::num(c.better_share * 100.0, 0))
                .col("total_ratio", Value::num(c.total_ratio, 3)),
        );
    }
    s.note("negative = faster than std; better_pct = share of blocks faster than std");
    replays(rep, m, prefix);
}

/// The replay section: how long the longest slices take once the machine's
/// stalls are taken out.
pub fn replays(rep: &mut Report, m: &Measured, prefix: &str) {
    let r = &m.run;
    let us = |ns: u64| Value::num(ns as f64 / 1e3, 1);
    let mut least = latency_histogram();
    for x in &m.replayed {
        record(&mut least, Duration::from_nanos(x.min_ns()));
    }
    let min_max = m.replayed.iter().map(Replayed::min_ns).max().unwrap_or(0);
    let median_max = m
        .replayed
        .iter()
        .map(Replayed::median_ns)
        .max()
        .unwrap_or(0);
    let s = rep.section(format!(
        "{prefix}next: slices over {} replayed (budget {})",
        format_ns(m.opts.long_slice_ns as f64),
        r.budget
    ));
    s.row(
        Row::new(format!(
            "least time of each replayed slice (timed pass + {} replays)",
            m.replays
        ))
        .latency(least)
        .col("threshold_us", us(m.opts.long_slice_ns))
        .col("slices", r.modes[2].slices.len())
        .col("over_threshold", r.over_threshold)
        .col("replayed", m.replayed.len())
        .col("replays_each", m.replays)
        .col("raw_max_us", us(r.modes[2].max_slice_ns))
        .col("replay_min_max_us", us(min_max))
        .col("replay_median_max_us", us(median_max))
        .col("unreplayed_max_us", us(r.unkept_max_ns))
        .col("replayed_estimate_max_us", us(min_max.max(r.unkept_max_ns))),
    );
    // The slice whose least time is the longest: its replays show whether
    // that least time was one lucky run or what the slice always takes.
    if let Some(w) = m.replayed.iter().max_by_key(|x| (x.min_ns(), x.slice.ns)) {
        let mut h = latency_histogram();
        for &ns in &w.replays_ns {
            record(&mut h, Duration::from_nanos(ns));
        }
        s.row(
            Row::new(format!(
                "worst replayed slice: its {} replays",
                w.replays_ns.len()
            ))
            .latency(h)
            .col("event", w.slice.event + 1)
            .col("slice", w.slice.slice + 1)
            .col("reductions", w.slice.reductions)
            .col("raw_us", us(w.slice.ns))
            .col("min_us", us(w.min_ns()))
            .col("median_us", us(w.median_ns())),
        );
    }
    s.note(format!(
        "every slice of the next mode over {} in the timed pass (the longest {} at most) is run again {} times: same event, same budget, same slice number, and each replay checks it spends the same reductions (it does, or the run fails)",
        format_ns(m.opts.long_slice_ns as f64),
        m.opts.long_slices_kept,
        m.replays
    ));
    s.note("why it is fair: the work is deterministic and the machine's stalls (interrupts, preemption, hypervisor exits) only add time, so the least of several runs of the same work estimates the work; each replay first repeats what ran before the slice in the timed pass (the previous event's three timed modes and its sliced next pass, this event's three timed modes, next's earlier slices), so caches and predictors hold what they held then, and the replays go round-robin over all slices, so one slice's runs are spread over the phase, not back to back under the same stall");
    s.note("replay_min_max: the longest least time (timed pass and replays) of any replayed slice; replay_median_max: the longest median of replays; unreplayed_max: the longest slice not replayed");
    s.note(format!(
        "replayed_estimate_max = max(replay_min_max, unreplayed_max): the longest slice once each replayed slice counts at the least of its {} runs (timed pass and {} replays) and every other slice at its raw time; a best-of-{} estimate, not a bound: it leans optimistic, since the least run can be a lucky one below what the slice usually takes (replay_median_max shows the typical), and raw_max is what the timed pass really saw",
        m.replays + 1,
        m.replays,
        m.replays + 1
    ));
}

/// The throughput section: events per CPU second of every row, and the
/// command's ratio to the fastest library mode.
pub fn throughput(rep: &mut Report, t: &Throughput, prefix: &str) {
    let fastest = t.fastest_library().map_or(1, |r| r.median_ns()).max(1) as f64;
    let s = rep.section(format!("{prefix}throughput (CPU)"));
    for r in &t.rows {
        s.row(
            Row::new(r.name.clone())
                .col("events_per_s", Value::num(r.events_per_s(t.events), 0))
                .col("median_cpu_ms", Value::num(r.median_ns() as f64 / 1e6, 1))
                .col(
                    "vs_fastest_library",
                    Value::num(fastest / r.median_ns().max(1) as f64, 3),
                ),
        );
    }
    s.note(format!(
        "{} events, {} matches per round; CPU time (user + system) of the thread, median of {} rounds after a warm-up round, the rows in turn in an order rotating per round",
        t.events, t.matches, t.rounds
    ));
    s.note("library modes: events parsed beforehand; search reuses its scratch, search_batch gets batches of 1,024 and keeps its result lists; the command's row reads and parses every event from the file again, searches in std mode (512 events at a time) and formats every output line (written nowhere), keeping its buffers from round to round");
    if let Some(ratio) = t.command_ratio() {
        s.note(format!(
            "the command runs at {ratio:.3} x the fastest library mode"
        ));
    }
}

/// `betree bench --sweep`'s report: one row per grid point, the worst
/// (most candidates per match) first, as [`sweep`](super::sweep::sweep)
/// measured them.
pub fn sweep(sweep: &Sweep) -> Report {
    let st = sweep.settings;
    let mut rep = Report::new("betree bench --sweep");
    rep.run.iterations = (st.events * sweep.points.len()) as u64;
    rep.run.timing = "CPU time (user + system) of the thread".into();
    let s = rep.section("workload grid (worst first)");
    for p in &sweep.points {
        let (eps, mode) = p.events_per_s();
        let per_event = |n: u64| Value::num(n as f64 / p.events.max(1) as f64, 1);
        s.row(
            Row::new(p.shape.to_string())
                .col("events_per_s", Value::num(eps, 0))
                .col("fastest_mode", mode)
                .col(
                    "candidates_per_match",
                    Value::num(p.candidates_per_match(), 2),
                )
                .col("candidates_per_event", per_event(p.candidates))
                .col("matches_per_event", per_event(p.matches))
                .col("match_rate_pct", Value::num(p.match_rate() * 100.0, 2))
                .col(
                    "index_mib",
                    Value::num(p.index_bytes as f64 / (1 << 20) as f64, 1),
                )
                .col("build_cpu_ms", Value::num(p.build_cpu_ns as f64 / 1e6, 0))
                .col("looseness", Value::num(p.looseness, 3)),
        );
    }
    let worst = sweep.points.first();
    s.note(format!(
        "{} expressions and {} events per point from fixed seeds (expressions {}, events {}); events_per_s: the fastest library mode (search, search_all, search_batch), CPU median of {} rounds",
        st.expressions,
        st.events,
        super::sweep::EXPR_SEED,
        super::sweep::EVENT_SEED,
        st.rounds
    ));
    s.note(format!(
        "candidates per match: median {:.2}, worst {:.2} at {} (issue 33's bar: at most 2 at the median, 2.5 everywhere)",
        sweep.median_candidates_per_match(),
        worst.map_or(0.0, |p| p.candidates_per_match()),
        worst.map_or_else(String::new, |p| p.shape.to_string()),
    ));
    s.note(format!(
        "other parameters at the adtech profile's values; every event defines the {} most popular attributes; looseness: the share of predicates drawn wide over them so that the point matches about {} % of pairs; `perfkit betree gen-exprs --profile adtech --grid-point N` writes a point's files",
        betree::workload::GRID_ALWAYS_DEFINED,
        betree::workload::GRID_MATCH_RATE * 100.0
    ));
    rep
}

/// `betree bench --vs-atree`'s report: one row per workload with betree's
/// and a-tree's CPU events/s and their ratio, as
/// [`peer`](super::atree::peer) measured them.
pub fn vs_atree(peer: &Peer) -> Report {
    let st = peer.settings;
    let mut rep = Report::new("betree bench --vs-atree");
    rep.run.iterations = (st.events * peer.workloads.len()) as u64;
    rep.run.timing = "CPU time (user + system) of the thread".into();
    let s = rep.section("betree beside a-tree (same expressions, same events)");
    for w in &peer.workloads {
        s.row(
            Row::new(w.name.clone())
                .col(
                    "betree_events_per_s",
                    Value::num(w.betree_events_per_s(), 0),
                )
                .col("atree_events_per_s", Value::num(w.atree_events_per_s(), 0))
                .col("ratio", Value::num(w.ratio(), 2))
                .col("expressions", w.translated as u64)
                .col("left_out", w.skipped_total() as u64)
                .col(
                    "matches_per_event",
                    Value::num(w.matches as f64 / w.events.max(1) as f64, 1),
                )
                .col(
                    "betree_build_cpu_ms",
                    Value::num(w.betree_build_ns as f64 / 1e6, 0),
                )
                .col(
                    "atree_build_cpu_ms",
                    Value::num(w.atree_build_ns as f64 / 1e6, 0),
                ),
        );
    }
    s.note(format!(
        "{} events per workload, expressions and events from the sweep's fixed seeds (expressions {}, events {}); adtech at {} expressions, grid points at {}; events/s: one search per event (betree `search_with`, a-tree `search`), events built beforehand, CPU median of {} rounds alternating which runs first; ratio: betree's events/s over a-tree's",
        st.events,
        super::sweep::EXPR_SEED,
        super::sweep::EVENT_SEED,
        st.adtech_expressions,
        st.grid_expressions,
        st.rounds
    ));
    s.note(
        "ids: both return the same ids on every event (checked, a difference fails the run); both index only the expressions that translate into a-tree's language (`not` pushed down to the predicates, or'ed with `x is null` where betree makes the negation true on an undefined `x`)",
    );
    for w in &peer.workloads {
        let out = if w.skipped.is_empty() {
            "nothing".to_string()
        } else {
            w.skipped
                .iter()
                .map(|(why, n)| format!("{n} ({why})"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        s.note(format!(
            "{}: {}; left out of {} generated: {out}; {} of those indexed carry an `x is null or` guard",
            w.name, w.why, w.generated, w.guarded
        ));
    }
    rep
}
