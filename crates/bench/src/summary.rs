//! The headline lines of `perfkit bench`: each comparison computed from
//! rows of the assembled report, as the components' sections name them, and
//! the assembly itself (each component's sections under its prefix).

use hdrhistogram::Histogram;
use perfkit_report::{Headline, Report, Row, Section, Value};

/// Adds `from`'s sections to `into`, each name prefixed by `component`
/// (`"zstd: "`...), and keeps the largest iteration and warm-up counts.
pub fn absorb(into: &mut Report, component: &str, from: Report) {
    into.run.iterations = into.run.iterations.max(from.run.iterations);
    into.run.warmup = into.run.warmup.max(from.run.warmup);
    if into.run.pinned.is_none() {
        into.run.pinned = from.run.pinned;
    }
    for mut s in from.sections {
        s.name = format!("{component}: {}", s.name);
        into.sections.push(s);
    }
}

/// The JSON-only column naming the group of workloads a `commands` row
/// is one of (`fix check` beside QuickFIX on each workload, `betree search`
/// on each generator): the summary shows the group's worst ratio, not each
/// row's, so a gain on one workload cannot stand for the others.
pub const WORKLOAD_GROUP: &str = "workload_group";

/// The group a row's workload belongs to ([`WORKLOAD_GROUP`]), if any.
fn group_of(row: &Row) -> Option<&str> {
    row.json_only
        .iter()
        .find(|(n, _)| n == WORKLOAD_GROUP)
        .and_then(|(_, v)| match v {
            Value::Text(t) => Some(t.as_str()),
            _ => None,
        })
}

/// One line per group of workloads ([`WORKLOAD_GROUP`]) and ratio: the
/// lowest over the group's rows, naming the row and how many there were.
fn worst_of_workloads(report: &Report, out: &mut Vec<Headline>) {
    let rows: Vec<&Row> = report
        .sections
        .iter()
        .filter(|s| s.name.starts_with("commands: "))
        .flat_map(|s| &s.rows)
        .filter(|r| group_of(r).is_some())
        .collect();
    let mut groups: Vec<&str> = Vec::new();
    for r in &rows {
        let g = group_of(r).unwrap_or_default();
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    for g in groups {
        let members: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|r| group_of(r) == Some(g))
            .collect();
        for (column, process) in [
            ("vs_library", true),
            ("vs_peer", false),
            ("cpu_vs_peer", false),
        ] {
            // CPU is a headline only where the rows say what they hold
            // equal with the peer (issue 64), as each row's own would be.
            if column == "cpu_vs_peer" && members.iter().any(|r| r.get("held_equal").is_none()) {
                continue;
            }
            let worst = members
                .iter()
                .filter_map(|r| num(r, column).map(|v| (*r, v)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let Some((row, v)) = worst else { continue };
            let measured = members.iter().filter(|r| num(r, column).is_some()).count();
            let (peer, basis) = if process {
                (
                    "the same work by the library in-process".to_owned(),
                    "median wall time",
                )
            } else {
                (
                    match row.get("peer") {
                        Some(Value::Text(p)) => p.clone(),
                        _ => "its peer".into(),
                    },
                    if column == "cpu_vs_peer" {
                        "median CPU time (user + sys), both as processes"
                    } else {
                        "median wall time, both as processes"
                    },
                )
            };
            let held = match row.get("held_equal") {
                Some(Value::Text(h)) => format!("; held equal: {h}"),
                _ => String::new(),
            };
            out.push(Headline {
                subject: if process {
                    format!("{g}, the worst of its workloads (process)")
                } else if column == "cpu_vs_peer" {
                    format!("{g}, the worst of its workloads (CPU)")
                } else {
                    format!("{g}, the worst of its workloads")
                },
                peer,
                speedup: v,
                basis: format!(
                    "{basis}; the lowest of {measured} workloads: {}{held}",
                    row.name.trim_start_matches("perfkit ")
                ),
            });
        }
    }
}

/// The median of a row's histogram, if it has samples.
fn p50(row: &Row) -> Option<f64> {
    row.latency
        .as_ref()
        .filter(|h| !h.is_empty())
        .map(|h: &Histogram<u64>| h.value_at_quantile(0.5) as f64)
}

fn num(row: &Row, column: &str) -> Option<f64> {
    match row.get(column) {
        Some(Value::Num { value, .. }) if value.is_finite() => Some(*value),
        Some(Value::Int(i)) => Some(*i as f64),
        _ => None,
    }
}

fn find<'a>(section: &'a Section, name: &str) -> Option<&'a Row> {
    section.rows.iter().find(|r| r.name == name)
}

/// The geometric mean, the average that treats 2× faster and 2× slower
/// symmetrically; `None` for no values.
fn geomean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// The headline comparisons, each computed from rows of this report (a part
/// that did not run, or a row that is missing, gives no line).
pub fn summarise(report: &Report) -> Vec<Headline> {
    let mut out = Vec::new();
    let sections = |prefix: &'static str| {
        report
            .sections
            .iter()
            .filter(move |s| s.name.starts_with(prefix))
    };
    // zstd: a reused context against a fresh one per call, per corpus file.
    // The worst input is the headline (issue 64: a summary shows the worst
    // workload, not an average that a good one can lift).
    let ratios: Vec<(&str, f64)> = sections("zstd: ")
        .filter_map(|s| {
            let reused = p50(find(s, "balanced reused")?)?;
            let fresh = p50(find(s, "balanced fresh")?)?;
            Some((s.name.trim_start_matches("zstd: "), fresh / reused))
        })
        .collect();
    if let Some(&(worst, w)) = ratios.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
        let all: Vec<f64> = ratios.iter().map(|r| r.1).collect();
        out.push(Headline {
            subject: "zstdkit balanced compress with a reused context".into(),
            peer: "a fresh context per call".into(),
            speedup: w,
            basis: format!(
                "median time per call, the worst of {} inputs ({worst}; geometric mean {:.3}x)",
                all.len(),
                geomean(&all).unwrap_or(w)
            ),
        });
    }
    // The zstd CLI against perfkit's own process, and the library against
    // its own command (commands section).
    for s in sections("commands: ") {
        for r in &s.rows {
            if group_of(r).is_some() {
                continue;
            }
            let subject = r.name.trim_start_matches("perfkit ").to_owned();
            if let Some(v) = num(r, "vs_library") {
                out.push(Headline {
                    subject: format!("{subject} (process)"),
                    peer: "the same work by the library in-process".into(),
                    speedup: v,
                    basis: "median wall time".into(),
                });
            }
            // What a row holds equal with its peer (issue 64), when it says:
            // then its CPU is a headline too, at that same work.
            let held = match r.get("held_equal") {
                Some(Value::Text(h)) => Some(h.clone()),
                _ => None,
            };
            let peer = match r.get("peer") {
                Some(Value::Text(p)) => p.clone(),
                _ => "its peer".into(),
            };
            let at = |basis: &str| match &held {
                Some(h) => format!("{basis}; held equal: {h}"),
                None => basis.to_owned(),
            };
            if let Some(v) = num(r, "vs_peer") {
                out.push(Headline {
                    subject: subject.clone(),
                    peer: peer.clone(),
                    speedup: v,
                    basis: at("median wall time, both as processes"),
                });
            }
            if let (Some(v), Some(_)) = (num(r, "cpu_vs_peer"), &held) {
                out.push(Headline {
                    subject: format!("{subject} (CPU)"),
                    peer,
                    speedup: v,
                    basis: at("median CPU time (user + sys), both as processes"),
                });
            }
        }
    }
    worst_of_workloads(report, &mut out);
    // betree: cooperative search against the plain one.
    if let Some(next) = sections("betree: search per event")
        .find_map(|s| find(s, "next (search_iter + search_next)"))
        .and_then(|r| num(r, "vs_std"))
    {
        out.push(Headline {
            subject: "betree cooperative search (search_next)".into(),
            peer: "plain search".into(),
            speedup: 1.0 / next,
            basis: "total time over the same events".into(),
        });
    }
    // fix: each before/after section's best row against its baseline.
    for s in sections("fix: ") {
        let Some(base) = s.rows.first() else { continue };
        let best = s
            .rows
            .iter()
            .skip(1)
            .filter_map(|r| num(r, "speedup_x").map(|x| (r, x)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((row, x)) = best {
            let what = s.name.trim_start_matches("fix: ");
            out.push(Headline {
                subject: format!("fixcore {what}: {}", row.name),
                peer: base.name.clone(),
                speedup: x,
                basis: "median time per call".into(),
            });
        }
    }
    // fix: the session engines, perfkit ↔ perfkit against QuickFIX ↔ QuickFIX.
    for s in sections("fix: session") {
        let Some(ours) = find(s, "perfkit initiator ↔ perfkit acceptor") else {
            continue;
        };
        let peer = "QuickFIX ↔ QuickFIX".to_owned();
        if let Some(x) = num(ours, "p50_vs_quickfix_x") {
            out.push(Headline {
                subject: "FIX session engine on both sides".into(),
                peer: peer.clone(),
                speedup: 1.0 / x,
                basis: "p50 NewOrderSingle → ExecutionReport round trip".into(),
            });
        }
        if let Some(x) = num(ours, "orders_per_s_vs_quickfix_x") {
            out.push(Headline {
                subject: "FIX session engine on both sides".into(),
                peer,
                speedup: x,
                basis: "orders per second, a window of orders in flight".into(),
            });
        }
    }
    zip_writers(report, &mut out);
    // stress: the context pool against a fresh context per block.
    for s in sections("stress: totals") {
        let rate = |name| find(s, name).and_then(|r| num(r, "throughput_mb_s"));
        if let (Some(pool), Some(fresh)) = (rate("pool"), rate("fresh")) {
            out.push(Headline {
                subject: "stress with a context pool".into(),
                peer: "a fresh context per block".into(),
                speedup: pool / fresh,
                basis: "throughput".into(),
            });
        }
    }
    out
}

/// A peer's row of a zip section beside our sync writer's on its workload.
struct ZipPair<'a> {
    /// The peer's row.
    name: &'a str,
    /// The peer's median CPU per archive over ours (`cpu_vs_sync`).
    cpu_ratio: f64,
    /// The peer's compressed bytes over our sync writer's
    /// (`data_vs_sync`).
    size: f64,
    /// The level the peer ran at.
    level: Option<f64>,
    /// How its CPU is held at our size (`crate::zip::SIZE_HELD`).
    held: &'a str,
}

/// zip: our sync writer against each peer writer, per workload set, in
/// median CPU per archive at equal compressed bytes (issue 64): the peers
/// run at their level nearest our entries' compressed bytes, and a
/// workload where even
/// that is more than 1 % off is left out of the ratio and named, never
/// averaged in silently. With no workload at equal size, the line gives
/// the ratio at the nearest sizes and says so.
fn zip_writers(report: &Report, out: &mut Vec<Headline>) {
    for s in report
        .sections
        .iter()
        .filter(|s| s.name.starts_with("zip: "))
    {
        for peer in ["zip crate", "s-zip"] {
            let pairs: Vec<ZipPair> = s
                .rows
                .iter()
                .filter_map(|r| {
                    let (workload, writer) = r.name.split_once(" · ")?;
                    if !writer.starts_with(peer) || writer.contains("async") {
                        return None;
                    }
                    find(s, &format!("{workload} · sync"))?;
                    Some(ZipPair {
                        name: &r.name,
                        cpu_ratio: num(r, "cpu_vs_sync")?,
                        size: num(r, "data_vs_sync")?,
                        level: num(r, "level"),
                        // JSON-only, so not among the columns `get` reads.
                        held: r
                            .json_only
                            .iter()
                            .find(|(n, _)| n == crate::zip::SIZE_HELD)
                            .and_then(|(_, v)| match v {
                                Value::Text(t) => Some(t.as_str()),
                                _ => None,
                            })
                            .unwrap_or("not equal"),
                    })
                })
                .collect();
            let (equal, unequal): (Vec<&ZipPair>, Vec<&ZipPair>) =
                pairs.iter().partition(|p| p.held != "not equal");
            let named = |v: &[&ZipPair]| {
                v.iter()
                    .map(|p| format!("{} ({:.3}x our compressed bytes)", p.name, p.size))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let (counted, held) = if equal.is_empty() {
                let held = format!(
                    "NOT at equal size: no level of the peer's came within 1 % of our compressed bytes, so these compare the nearest ({})",
                    named(&unequal)
                );
                (&unequal, held)
            } else {
                let mut levels: Vec<String> = equal
                    .iter()
                    .filter_map(|p| p.level.map(|l| format!("{l:.0}")))
                    .collect();
                levels.sort();
                levels.dedup();
                let within: Vec<f64> = equal
                    .iter()
                    .filter(|p| p.held == "within 1 %")
                    .map(|p| p.size)
                    .collect();
                let interpolated = equal.len() - within.len();
                let mut held = format!(
                    "held equal: the entries' compressed bytes, the peer at level {}",
                    levels.join(", ")
                );
                if let Some(g) = geomean(&within) {
                    held.push_str(&format!(
                        "; {} within 1 % (its compressed bytes {g:.4}x ours, geometric mean)",
                        within.len()
                    ));
                }
                if interpolated > 0 {
                    held.push_str(&format!(
                        "; {interpolated} interpolated in size between two of its levels, neither within 1 %"
                    ));
                }
                if !unequal.is_empty() {
                    held.push_str(&format!(
                        "; left out, no level of the peer's within 1 % of our compressed bytes: {}",
                        named(&unequal)
                    ));
                }
                (&equal, held)
            };
            // The worst row is the headline, named; the mean is context.
            let Some(worst) = counted
                .iter()
                .min_by(|a, b| a.cpu_ratio.total_cmp(&b.cpu_ratio))
            else {
                continue;
            };
            let ratios: Vec<f64> = counted.iter().map(|p| p.cpu_ratio).collect();
            out.push(Headline {
                subject: format!(
                    "zipstream sync writer ({})",
                    s.name.trim_start_matches("zip: ")
                ),
                peer: format!("the {peer} writer"),
                speedup: worst.cpu_ratio,
                basis: format!(
                    "median CPU per archive, the worst of {} rows ({}; geometric mean {:.3}x); {held}",
                    ratios.len(),
                    worst.name,
                    geomean(&ratios).unwrap_or(worst.cpu_ratio)
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reused-context line is the worst input's ratio, named, not the
    /// mean over inputs.
    #[test]
    fn the_reused_context_line_is_its_worst_input() {
        let timed = |name: &str, ns: u64| {
            let mut h = Histogram::<u64>::new(3).unwrap();
            h.record(ns).unwrap();
            Row::new(name).latency(h)
        };
        let mut report = Report::new("bench");
        for (input, reused, fresh) in [("text", 100, 400), ("binary", 100, 150)] {
            let mut s = Section::new(format!("zstd: {input}"));
            s.rows = vec![
                timed("balanced reused", reused),
                timed("balanced fresh", fresh),
            ];
            report.sections.push(s);
        }
        let lines = summarise(&report);
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!((lines[0].speedup - 1.5).abs() < 1e-9, "{lines:#?}");
        assert!(
            lines[0]
                .basis
                .contains("the worst of 2 inputs (binary; geometric mean 2.449x)"),
            "{}",
            lines[0].basis
        );
    }

    /// A group's workloads give one line per ratio, the lowest of them and
    /// named, whichever row it is on; rows of no group keep their own
    /// lines.
    #[test]
    fn a_group_of_workloads_is_summarised_by_its_worst_row() {
        let row = |name: &str, vs_peer: f64, vs_library: Option<f64>, group: Option<&str>| {
            let mut r = Row::new(name)
                .col("vs_peer", Value::num(vs_peer, 3))
                .col("peer", "QuickFIX");
            if let Some(l) = vs_library {
                r = r.col("vs_library", Value::num(l, 3));
            }
            match group {
                Some(g) => r.json_col(WORKLOAD_GROUP, g),
                None => r,
            }
        };
        let mut report = Report::new("bench");
        let mut s = Section::new("commands: process vs library vs peer");
        s.rows = vec![
            row(
                "perfkit fix check, a",
                4.0,
                None,
                Some("fix check beside QuickFIX"),
            ),
            row(
                "perfkit fix check, b",
                2.5,
                None,
                Some("fix check beside QuickFIX"),
            ),
            row(
                "perfkit fix check, c",
                8.0,
                None,
                Some("fix check beside QuickFIX"),
            ),
            row(
                "perfkit betree search, x",
                1.0,
                Some(0.9),
                Some("betree search"),
            ),
            row(
                "perfkit betree search, y",
                1.0,
                Some(0.7),
                Some("betree search"),
            ),
            row("perfkit compress", 1.2, Some(0.95), None),
        ];
        report.sections.push(s);
        let lines = summarise(&report);
        let fix: Vec<&Headline> = lines
            .iter()
            .filter(|h| h.subject.starts_with("fix check beside QuickFIX"))
            .collect();
        assert_eq!(fix.len(), 1, "{lines:#?}");
        assert_eq!(fix[0].speedup, 2.5);
        assert!(
            fix[0]
                .basis
                .ends_with("the lowest of 3 workloads: fix check, b"),
            "{}",
            fix[0].basis
        );
        assert_eq!(fix[0].peer, "QuickFIX");
        let betree: Vec<&Headline> = lines
            .iter()
            .filter(|h| h.subject.starts_with("betree search"))
            .collect();
        // Its library ratio (process) and its peer column, each the lowest.
        assert_eq!(betree.len(), 2, "{lines:#?}");
        assert!(
            betree
                .iter()
                .any(|h| h.speedup == 0.7 && h.subject.ends_with("(process)"))
        );
        // No line of a grouped row on its own; the ungrouped row keeps both.
        assert!(
            !lines.iter().any(|h| h.subject.starts_with("fix check, ")),
            "{lines:#?}"
        );
        assert_eq!(
            lines
                .iter()
                .filter(|h| h.subject.starts_with("compress"))
                .count(),
            2,
            "{lines:#?}"
        );
    }

    /// The zip writers' lines compare CPU at equal compressed bytes: a
    /// peer's row within 1 % of ours or interpolated to it counts, one
    /// that is neither is left out and named, and a section with none says
    /// so.
    #[test]
    fn a_zip_writer_line_counts_only_rows_at_our_compressed_bytes() {
        let row = |name: &str, data: f64, cpu: f64, held: &str| {
            Row::new(name)
                .col("cpu_vs_sync", Value::num(cpu, 3))
                .col("data_vs_sync", Value::num(data, 4))
                .col("level", Value::from(9u64))
                .json_col(crate::zip::SIZE_HELD, held)
        };
        let peer = "zip crate 9.4.1 (zlib-rs, its default)";
        let mut report = Report::new("bench");
        let mut s = Section::new("zip: write, realistic (corpus), deflate level 6");
        s.rows = vec![
            row("a · sync", 1.0, 1.0, "within 1 %"),
            row(&format!("a · {peer}"), 1.005, 1.5, "within 1 %"),
            row("b · sync", 1.0, 1.0, "within 1 %"),
            row(&format!("b · {peer}"), 0.9, 0.3, "interpolated"),
            row("c · sync", 1.0, 1.0, "within 1 %"),
            row(&format!("c · {peer}"), 1.2, 0.1, "not equal"),
        ];
        report.sections.push(s);
        let mut s = Section::new("zip: write, highly compressible, deflate level 6");
        s.rows = vec![
            row("a · sync", 1.0, 1.0, "within 1 %"),
            row(&format!("a · {peer}"), 1.2, 0.5, "not equal"),
        ];
        report.sections.push(s);
        let lines = summarise(&report);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        let (equal, none) = (&lines[0], &lines[1]);
        // The worst of the two rows at equal size, not their mean: the
        // mean (0.671) would hide the row where the peer wins.
        assert_eq!(equal.speedup, 0.3, "{equal:#?}");
        for part in [
            "the worst of 2 rows (b · zip crate",
            "geometric mean 0.671x",
            "1 within 1 % (its compressed bytes 1.0050x ours",
            "1 interpolated",
            "left out, no level of the peer's within 1 % of our compressed bytes: c · zip crate",
        ] {
            assert!(equal.basis.contains(part), "{part}: {}", equal.basis);
        }
        assert_eq!(none.speedup, 0.5);
        assert!(none.basis.contains("NOT at equal size"), "{}", none.basis);
    }
}
