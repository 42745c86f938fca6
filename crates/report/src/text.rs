//! The human tables, and the units and summary quantiles they share with
//! the JSON document.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use crate::model::{Report, Row, Section, Value};
use crate::units::format_ns;

/// The summary quantiles every table and JSON row carries.
pub(crate) const SUMMARY: [(&str, f64); 4] =
    [("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p999", 0.999)];

/// The fewest samples for which quantile `q` says more than the maximum:
/// 1/(1-q), so p99 needs 100 samples and p99.9 needs 1000. The table shows
/// `-` below it; JSON keeps the key (the histogram's value, which is then
/// the maximum) so documents stay one shape, and `count` tells the reader.
pub fn min_samples_for(q: f64) -> u64 {
    (1.0 / (1.0 - q)).round() as u64
}

/// The widest the default text report is: every line of it, tables
/// included, fits this many columns (what a terminal shows and what
/// `--help` wraps to). `--wide` lifts it for the tables.
pub const TEXT_WIDTH: usize = 100;

/// The latency columns every table with a histogram keeps, whatever its
/// width (docs/report.md promises them): count, min, mean, p50, p90, p99,
/// p99.9, max.
const LATENCY_TITLES: [&str; 8] = ["count", "min", "mean", "p50", "p90", "p99", "p99.9", "max"];

/// The column key a table keeps before any other extra column.
const VERDICT: &str = "verdict";

/// A row name shorter than this never moves to a line of its own to make
/// room for an extra column.
const NAME_ROOM: usize = 24;

/// Renders the human tables, each fitted to [`TEXT_WIDTH`] columns.
pub fn render_text(report: &Report, percentiles: bool) -> String {
    render_text_as(report, percentiles, false)
}

/// Renders the human tables: fitted to [`TEXT_WIDTH`] columns (extra
/// columns that do not fit are left to `--wide`, long row names get a
/// line of their own), or with `wide` every column, one line per row.
pub fn render_text_as(report: &Report, percentiles: bool, wide: bool) -> String {
    let mut s = String::new();
    let r = &report.run;
    // The title names the command and the machine alone, and what was run
    // has a line of its own: a CPU's name is up to 48 characters (the x86
    // brand string), and beside the counts it pushed the line past the
    // width and wrapped it mid-phrase.
    let head = format!(
        "perfkit {} — {} ({} cores)",
        report.command, report.machine.cpu_model, report.machine.cores,
    );
    push_wrapped(&mut s, &head, "", "  ");
    let run = if r.iterations == 0 {
        // A report that measured nothing itself (a merge of logs) has no
        // iterations or threads to state; a load run has no iterations,
        // but may have pinned its threads.
        r.pinned
            .as_deref()
            .map(|p| format!("run: threads pinned: {p}"))
    } else {
        Some(format!(
            "run: {} iterations + {} warm-up, {} run(s), threads {}",
            r.iterations,
            r.warmup,
            r.runs,
            r.pinned
                .as_deref()
                .map_or_else(|| "not pinned".to_owned(), |p| format!("pinned to {p}"))
        ))
    };
    if let Some(run) = run {
        push_wrapped(&mut s, &run, "", "  ");
    }
    push_wrapped(&mut s, &format!("timing: {}", r.timing), "", "  ");
    for sec in &report.sections {
        s.push('\n');
        push_wrapped(&mut s, &format!("== {} ==", sec.name), "", "   ");
        let table = table(sec, wide);
        s.push_str(&table.text);
        // Notes are footnotes: numbered, under the table, each wrapped on
        // its own so a long one does not widen the report.
        for (i, n) in sec.notes.iter().enumerate() {
            let mark = format!("[{}] ", i + 1);
            let indent = " ".repeat(mark.len());
            push_wrapped(&mut s, &format!("{mark}{n}"), "", &indent);
        }
        if !table.hidden.is_empty() {
            let line = format!(
                "(--wide adds {} more column{}: {})",
                table.hidden.len(),
                if table.hidden.len() == 1 { "" } else { "s" },
                table.hidden.join(", ")
            );
            push_wrapped(&mut s, &line, "", " ");
        }
    }
    if !report.summary.is_empty() {
        let _ = writeln!(s, "\n== summary ==");
        for c in &report.summary {
            push_wrapped(&mut s, &c.line(), "  ", "    ");
        }
    }
    if percentiles {
        for (name, _, h) in report.histograms() {
            s.push('\n');
            let title = format!("-- percentile distribution: {name} (values in µs) --");
            push_wrapped(&mut s, &title, "", "   ");
            s.push_str(&percentile_distribution(h, 1000.0));
        }
    }
    s
}

/// Appends `text` wrapped at spaces to [`TEXT_WIDTH`] columns, the first
/// line indented by `first`, the others by `rest`. A word longer than a
/// line (a path, a URL) is left whole rather than cut.
fn push_wrapped(s: &mut String, text: &str, first: &str, rest: &str) {
    let options = textwrap::Options::new(TEXT_WIDTH)
        .initial_indent(first)
        .subsequent_indent(rest)
        .break_words(false);
    for line in textwrap::wrap(text, options) {
        s.push_str(line.trim_end());
        s.push('\n');
    }
}

/// A rendered table and the titles of the columns it left out.
struct Table {
    text: String,
    hidden: Vec<String>,
}

fn table(sec: &Section, wide: bool) -> Table {
    let has_latency = sec.rows.iter().any(|r| r.latency.is_some());
    let mut extra: Vec<&str> = Vec::new();
    for r in &sec.rows {
        for (k, _) in &r.columns {
            if !extra.contains(&k.as_str()) {
                extra.push(k);
            }
        }
    }
    // Every value column, title first then one cell per row; the name
    // column is laid out apart, as the only one that may take a line of
    // its own.
    let mut columns: Vec<Vec<String>> = Vec::new();
    if has_latency {
        let latency: Vec<[String; 8]> = sec.rows.iter().map(latency_cells).collect();
        for (c, title) in LATENCY_TITLES.iter().enumerate() {
            let mut col = vec![(*title).to_owned()];
            col.extend(latency.iter().map(|cells| cells[c].clone()));
            columns.push(col);
        }
    }
    let fixed = columns.len();
    for k in &extra {
        let mut col = vec![column_title(k)];
        col.extend(
            sec.rows
                .iter()
                .map(|r| r.get(k).map_or_else(|| "-".to_owned(), cell)),
        );
        columns.push(col);
    }
    let width = |col: &Vec<String>| col.iter().map(|c| c.chars().count()).max().unwrap_or(0);
    let name_width = sec
        .rows
        .iter()
        .map(|r| r.name.chars().count())
        .chain(["name".len()])
        .max()
        .unwrap_or(0);
    // Extra columns join in order while the latency columns, the extras so
    // far and a name of reasonable length fit; the rest wait for --wide. A
    // verdict (pass/FAIL, inline/offload) is what a reader looks for
    // first, so it is considered first.
    let mut order: Vec<usize> = (fixed..columns.len()).collect();
    order.sort_by_key(|&c| extra[c - fixed] != VERDICT);
    let mut shown: Vec<usize> = (0..fixed).collect();
    let mut used: usize = shown.iter().map(|&c| width(&columns[c]) + 2).sum();
    let mut full = false;
    for c in order {
        let w = width(&columns[c]) + 2;
        full = full || !wide && used + w + name_width.min(NAME_ROOM) > TEXT_WIDTH;
        if !full {
            shown.push(c);
            used += w;
        }
    }
    shown.sort_unstable();
    let hidden: Vec<String> = (fixed..columns.len())
        .filter(|c| !shown.contains(c))
        .map(|c| columns[c][0].clone())
        .collect();
    let name_width = if wide {
        name_width
    } else {
        name_width.min(TEXT_WIDTH.saturating_sub(used).max("name".len()))
    };
    let mut s = String::new();
    let line = |s: &mut String, name: &str, i: usize| {
        let _ = write!(s, "{name:<name_width$}");
        for &c in &shown {
            let w = width(&columns[c]);
            let _ = write!(s, "  {:>w$}", columns[c][i]);
        }
        s.push('\n');
    };
    line(&mut s, "name", 0);
    s.push_str(&"-".repeat(name_width + used));
    s.push('\n');
    for (i, r) in sec.rows.iter().enumerate() {
        if r.name.chars().count() > name_width {
            // Too long for the column: the name alone, its values on the
            // next line.
            let _ = writeln!(s, "{}", r.name);
            line(&mut s, "", i + 1);
        } else {
            line(&mut s, &r.name, i + 1);
        }
    }
    Table { text: s, hidden }
}

/// A row's latency cells: count, min, mean, the summary quantiles (`-`
/// without the samples for them), max; all `-` without a histogram.
fn latency_cells(r: &Row) -> [String; 8] {
    match &r.latency {
        Some(h) if !h.is_empty() => {
            let q = |q: f64| {
                if h.len() >= min_samples_for(q) {
                    format_ns(h.value_at_quantile(q) as f64)
                } else {
                    "-".to_owned()
                }
            };
            [
                h.len().to_string(),
                format_ns(h.min() as f64),
                format_ns(h.mean()),
                q(SUMMARY[0].1),
                q(SUMMARY[1].1),
                q(SUMMARY[2].1),
                q(SUMMARY[3].1),
                format_ns(h.max() as f64),
            ]
        }
        _ => std::array::from_fn(|_| "-".to_owned()),
    }
}

/// A column's title from its key, in one style: the words in lower case
/// (acronyms such as CPU and RSS in capitals), then the unit the key ends
/// in, in parentheses: `throughput_mb_s` → `throughput (MB/s)`,
/// `rss_slope_mib_per_min` → `RSS slope (MiB/min)`, `speedup_x` →
/// `speedup (×)`, `orders_per_s` → `orders (per s)`. A key that is only a unit is shown as the unit.
pub(crate) fn column_title(key: &str) -> String {
    let words: Vec<&str> = key.split('_').filter(|w| !w.is_empty()).collect();
    let n = words.len();
    // The unit: the longest of these shapes the key ends in.
    let (stem, unit) = if n >= 3 && is_unit(words[n - 3]) && words[n - 2] == "per" {
        // `us_per_order`, `mib_per_min`.
        (n - 3, format!("{}/{}", unit(words[n - 3]), words[n - 1]))
    } else if n >= 4 && words[n - 4..] == ["mb", "per", "cpu", "s"] {
        (n - 4, "MB/CPU s".to_owned())
    } else if n >= 2 && words[n - 2] == "per" && matches!(words[n - 1], "s" | "min") {
        (n - 2, format!("per {}", words[n - 1]))
    } else if n >= 2 && matches!(words[n - 2], "mb" | "mib") && words[n - 1] == "s" {
        (n - 2, format!("{}/s", unit(words[n - 2])))
    } else if n >= 2 && is_unit(words[n - 1]) {
        (n - 1, unit(words[n - 1]).to_owned())
    } else {
        return words.iter().map(|w| word(w)).collect::<Vec<_>>().join(" ");
    };
    let stem: Vec<&str> = words[..stem].iter().map(|w| word(w)).collect();
    if stem.is_empty() {
        unit
    } else {
        format!("{} ({unit})", stem.join(" "))
    }
}

/// Whether a key's last word is a unit [`column_title`] shows as one.
fn is_unit(w: &str) -> bool {
    !unit(w).is_empty()
}

/// The symbol of a unit word in a key, or "" for a word that is not one.
fn unit(w: &str) -> &'static str {
    match w {
        "ns" => "ns",
        "us" => "µs",
        "ms" => "ms",
        "s" => "s",
        "mb" => "MB",
        "mib" => "MiB",
        "bytes" => "B",
        "pct" => "%",
        "x" => "×",
        _ => "",
    }
}

/// A word of a key as a title shows it: acronyms in capitals.
fn word(w: &str) -> &str {
    match w {
        "cpu" => "CPU",
        "rss" => "RSS",
        "os" => "OS",
        "quickfix" => "QuickFIX",
        _ => w,
    }
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
