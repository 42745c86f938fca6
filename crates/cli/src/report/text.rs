//! The human tables, and the units and summary quantiles they share with
//! the JSON document.

use super::*;
pub use perfkit_measure::report::format_ns;

/// The summary quantiles every table and JSON row carries.
pub(super) const SUMMARY: [(&str, f64); 4] =
    [("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p999", 0.999)];

/// The fewest samples for which quantile `q` says more than the maximum:
/// 1/(1-q), so p99 needs 100 samples and p99.9 needs 1000. The table shows
/// `-` below it; JSON keeps the key (the histogram's value, which is then
/// the maximum) so documents stay one shape, and `count` tells the reader.
pub fn min_samples_for(q: f64) -> u64 {
    (1.0 / (1.0 - q)).round() as u64
}

/// Renders the human tables.
pub fn render_text(report: &Report, percentiles: bool) -> String {
    let mut s = String::new();
    let r = &report.run;
    let _ = writeln!(
        s,
        "perfkit {} — {} ({} cores){}",
        report.command,
        report.machine.cpu_model,
        report.machine.cores,
        // A report that measured nothing itself (a merge of logs) has no
        // iterations or threads to state; a load run has no iterations,
        // but may have pinned its threads.
        if r.iterations == 0 {
            r.pinned
                .as_deref()
                .map_or_else(String::new, |p| format!(", threads pinned: {p}"))
        } else {
            format!(
                ", {} iterations + {} warm-up, {} run(s), threads {}",
                r.iterations,
                r.warmup,
                r.runs,
                r.pinned
                    .as_deref()
                    .map_or_else(|| "not pinned".to_owned(), |p| format!("pinned to {p}"))
            )
        },
    );
    let _ = writeln!(s, "timing: {}", r.timing);
    for sec in &report.sections {
        let _ = writeln!(s, "\n== {} ==", sec.name);
        s.push_str(&table(sec));
        for n in &sec.notes {
            let _ = writeln!(s, "  {n}");
        }
    }
    if !report.summary.is_empty() {
        let _ = writeln!(s, "\n== summary ==");
        for c in &report.summary {
            let _ = writeln!(s, "  {}", c.line());
        }
    }
    if percentiles {
        for (name, _, h) in report.histograms() {
            let _ = writeln!(s, "\n-- percentile distribution: {name} (values in µs) --");
            s.push_str(&percentile_distribution(h, 1000.0));
        }
    }
    s
}

fn table(sec: &Section) -> String {
    let has_latency = sec.rows.iter().any(|r| r.latency.is_some());
    let mut extra: Vec<&str> = Vec::new();
    for r in &sec.rows {
        for (k, _) in &r.columns {
            if !extra.contains(&k.as_str()) {
                extra.push(k);
            }
        }
    }
    let mut header = vec!["name".to_owned()];
    if has_latency {
        header.extend(
            ["count", "min", "mean", "p50", "p90", "p99", "p99.9", "max"].map(String::from),
        );
    }
    header.extend(extra.iter().map(|k| column_title(k)));
    let mut cells: Vec<Vec<String>> = vec![header];
    for r in &sec.rows {
        let mut line = vec![r.name.clone()];
        if has_latency {
            match &r.latency {
                Some(h) if !h.is_empty() => {
                    line.push(h.len().to_string());
                    line.push(format_ns(h.min() as f64));
                    line.push(format_ns(h.mean()));
                    for (_, q) in SUMMARY {
                        line.push(if h.len() >= min_samples_for(q) {
                            format_ns(h.value_at_quantile(q) as f64)
                        } else {
                            "-".to_owned()
                        });
                    }
                    line.push(format_ns(h.max() as f64));
                }
                _ => line.extend(std::iter::repeat_n("-".to_owned(), 8)),
            }
        }
        for k in &extra {
            line.push(r.get(k).map_or_else(|| "-".to_owned(), cell));
        }
        cells.push(line);
    }
    let widths: Vec<usize> = (0..cells[0].len())
        .map(|c| {
            cells
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for (i, line) in cells.iter().enumerate() {
        for (c, cell) in line.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c == 0 {
                let _ = write!(s, "{cell}{}", " ".repeat(pad));
            } else {
                let _ = write!(s, "  {}{cell}", " ".repeat(pad));
            }
        }
        s.push('\n');
        if i == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
            s.push_str(&"-".repeat(total));
            s.push('\n');
        }
    }
    s
}

/// `throughput_mb_s` → `throughput MB/s`: the unit suffix becomes a unit.
pub(super) fn column_title(key: &str) -> String {
    const UNITS: [(&str, &str); 8] = [
        ("_mb_s", " MB/s"),
        ("_mib_s", " MiB/s"),
        ("_ns", " (ns)"),
        ("_us", " (µs)"),
        ("_ms", " (ms)"),
        ("_mib", " (MiB)"),
        ("_bytes", " (B)"),
        ("_per_s", "/s"),
    ];
    for (suffix, unit) in UNITS {
        if let Some(stem) = key.strip_suffix(suffix) {
            return format!("{}{unit}", stem.replace('_', " "));
        }
    }
    key.replace('_', " ")
}

/// The standard HdrHistogram percentile distribution (five ticks per half
/// distance), values divided by `scale`, with the usual footer.
pub fn percentile_distribution(h: &Histogram<u64>, scale: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut total = 0u64;
    for v in h.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let value = v.value_iterated_to() as f64 / scale;
        if q < 1.0 {
            let _ = writeln!(
                s,
                "{value:12.3} {q:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - q)
            );
        } else {
            let _ = writeln!(s, "{value:12.3} {q:2.12} {total:10}");
        }
    }
    let _ = writeln!(
        s,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        h.mean() / scale,
        h.stdev() / scale
    );
    let _ = writeln!(
        s,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        h.max() as f64 / scale,
        h.len()
    );
    let _ = writeln!(
        s,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        h.distinct_values()
    );
    s
}

/// A column's value as the table shows it: numbers to their decimals, and
/// `-` for a number that is not finite (JSON shows `null` there).
fn cell(v: &Value) -> String {
    match v {
        Value::Num { value, decimals } if value.is_finite() => format!("{value:.decimals$}"),
        Value::Num { .. } => "-".into(),
        Value::Int(i) => i.to_string(),
        Value::Text(s) => s.clone(),
    }
}
