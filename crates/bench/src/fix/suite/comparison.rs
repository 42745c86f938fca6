//! A measured [`Comparison`] as a report section: a row per variant,
//! its ratios (paired by round where the variants kept rounds), and the
//! notes that say how each was taken.

use perfkit_measure::Comparison;
use perfkit_report::{Report, Row, Value};

/// The column of a batched row's median at a tenth of a nanosecond (the
/// latency columns round to whole nanoseconds below 100 ns).
pub(super) const P50_TENTHS: &str = "median_ns";

/// The JSON-only column of each interleaved round's median, in ns, in
/// round order, that a row's ratios are paired from.
const ROUND_MEDIANS: &str = "median_ns_rounds";

/// Each round's median in nanoseconds, space-separated: with its tenths
/// for a histogram of tenths ([`crate::fix::UNITS_PER_NS`]), whole
/// otherwise.
fn round_medians(rounds: &[u64], tenths: bool) -> String {
    let per = if tenths {
        f64::from(crate::fix::UNITS_PER_NS)
    } else {
        1.0
    };
    rounds
        .iter()
        .map(|&m| (m as f64 / per).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A batched variant's row: its histogram of tenths of a nanosecond shown
/// in nanoseconds, beside its median to the tenth.
pub(super) fn batched_row(v: perfkit_measure::Variant) -> Row {
    let p50 = crate::fix::median_ns(&v.histogram);
    let mut row = Row::new(v.name)
        .latency(crate::fix::in_ns(&v.histogram))
        .elapsed(v.elapsed)
        .col(P50_TENTHS, Value::num(p50, if p50 < 100.0 { 1 } else { 0 }));
    if let Some(note) = v.note {
        row = row.col("note", note);
    }
    row
}

/// A comparison's section: a row per variant, its ratios and its notes;
/// `tenths` when its histograms count tenths of a nanosecond (the batched
/// rows), whose ratios are then taken at that resolution.
pub(super) fn add_comparison(report: &mut Report, c: Comparison, tenths: bool) {
    let speedups: Vec<f64> = (0..c.variants.len()).map(|i| c.speedup(i)).collect();
    let baseline = c
        .variants
        .first()
        .map(|v| v.name.clone())
        .unwrap_or_default();
    // A second reference, e.g. tokio for the transports: its ratio column.
    let second = c.also_vs.filter(|&j| c.compare && j < c.variants.len());
    let second_ratios: Vec<f64> = match second {
        Some(j) => (0..c.variants.len()).map(|i| c.speedup_vs(j, i)).collect(),
        None => Vec::new(),
    };
    let second_name = second.map(|j| c.variants[j].name.clone());
    let second_col = second_name
        .as_deref()
        .map(|n| format!("speedup_vs_{}_x", snake(n)));
    let section = report.section(c.title);
    let rounds = c.variants.first().map_or(0, |v| v.rounds.len());
    // Paired only where every variant kept every round (as speedup_vs).
    let paired = rounds > 0 && c.variants.iter().all(|v| v.rounds.len() == rounds);
    for (i, v) in c.variants.into_iter().enumerate() {
        let per_round = round_medians(&v.rounds, tenths);
        let mut row = if tenths {
            batched_row(v)
        } else {
            let row = Row::new(v.name).latency(v.histogram).elapsed(v.elapsed);
            match v.note {
                Some(note) => row.col("note", note),
                None => row,
            }
        };
        if c.compare {
            row = row.col("speedup_x", Value::num(speedups[i], 2));
        }
        if let Some(col) = &second_col {
            row = row.col(col, Value::num(second_ratios[i], 2));
        }
        if paired {
            row = row.json_col(ROUND_MEDIANS, per_round);
        }
        section.row(row);
    }
    if tenths {
        section.note(format!(
            "{P50_TENTHS}: the median batch mean to 0.1 ns, as recorded; the latency columns \
             show the same histogram rounded to whole ns, and speedup_x is taken at 0.1 ns"
        ));
    }
    // How a ratio is taken, in the words of its note.
    let ratio = |of: &str| {
        if paired {
            format!(
                "the median over the {rounds} interleaved rounds of {of}'s median in the round / \
                 the row's (each round's in the JSON's {ROUND_MEDIANS})"
            )
        } else {
            format!("median of {of} / median of the row")
        }
    };
    if c.compare {
        section.note(format!(
            "speedup_x = {} (> 1: faster than {baseline})",
            ratio(&baseline)
        ));
    }
    if let (Some(col), Some(name)) = (&second_col, &second_name) {
        section.note(format!("{col} = {} (> 1: faster than {name})", ratio(name)));
    }
    for n in c.notes {
        section.note(n);
    }
}

/// `io_uring+defer_taskrun` → `io_uring_defer_taskrun`, for column names.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_owned()
}
