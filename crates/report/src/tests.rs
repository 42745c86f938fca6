use perfkit_measure::latency_histogram;

use super::*;
use super::{svg::series_style, text::column_title};

#[test]
fn units_are_chosen_per_value() {
    assert_eq!(format_ns(850.0), "850 ns");
    assert_eq!(format_ns(12_345.0), "12.3 µs");
    assert_eq!(format_ns(4_560_000.0), "4.56 ms");
    assert_eq!(format_ns(2.5e9), "2.50 s");
}

#[test]
fn column_titles_put_the_unit_in_parentheses() {
    for (key, title) in [
        ("throughput_mb_s", "throughput (MB/s)"),
        ("predicted_us", "predicted (µs)"),
        ("ratio", "ratio"),
        ("mb_per_cpu_s", "MB/CPU s"),
        ("cpu_mib_s", "CPU (MiB/s)"),
        ("orders_per_s", "orders (per s)"),
        ("rss_slope_mib_per_min", "RSS slope (MiB/min)"),
        ("acceptor_cpu_us_per_order", "acceptor CPU (µs/order)"),
        ("peak_rss_mib", "peak RSS (MiB)"),
        ("speedup_x", "speedup (×)"),
        ("p99_pct", "p99 (%)"),
        ("vs_zstd", "vs zstd"),
    ] {
        assert_eq!(column_title(key), title, "{key}");
    }
}

/// A section too wide for [`TEXT_WIDTH`]: long names, many columns, a
/// long note.
fn wide_report() -> Report {
    let mut rep = Report::new("test");
    let sec = rep.section("wide");
    for i in 0..3u64 {
        let mut h = latency_histogram();
        for v in 1..=1000 {
            h.record(v * 1000 * (i + 1)).unwrap();
        }
        let mut row = Row::new(format!(
            "a row whose name is long, number {i}, and longer still"
        ))
        .latency(h);
        for c in 0..12 {
            row = row.col(&format!("column_{c}_mb_s"), Value::num(1234.5, 1));
        }
        sec.row(row);
    }
    sec.row(Row::new("short").col("column_0_mb_s", Value::num(1.0, 1)));
    sec.note("a note ".repeat(40));
    sec.note("another");
    rep
}

#[test]
fn default_tables_fit_the_width_and_wide_ones_keep_every_column() {
    let rep = wide_report();
    let text = render_text(&rep, false);
    for line in text.lines() {
        assert!(line.chars().count() <= TEXT_WIDTH, "{line}\n{text}");
    }
    for title in ["count", "min", "mean", "p50", "p90", "p99", "p99.9", "max"] {
        assert!(text.contains(title), "{title}: {text}");
    }
    // The long names keep a line of their own, whole.
    assert!(
        text.contains("\na row whose name is long, number 0, and longer still\n"),
        "{text}"
    );
    assert!(text.contains("--wide adds"), "{text}");
    assert!(text.contains("\n[1] a note a note"), "{text}");
    assert!(text.contains("\n[2] another\n"), "{text}");
    let wide = render_text_as(&rep, false, true);
    assert!(wide.contains("column 11 (MB/s)"), "{wide}");
    assert!(!wide.contains("--wide adds"), "{wide}");
    let row = wide
        .lines()
        .find(|l| l.starts_with("a row whose name"))
        .unwrap();
    assert!(row.contains("1234.5"), "values on the name's line: {row}");
}

#[test]
fn hlog_tags_are_short_readable_and_unique() {
    let h = || {
        let mut h = latency_histogram();
        h.record(1000).unwrap();
        h
    };
    let mut rep = Report::new("t");
    rep.section("load 1000/s over 1 session(s)")
        .row(Row::new("corrected (intended send → first ExecutionReport)").latency(h()))
        .row(Row::new("corrected (another aside)").latency(h()))
        .row(Row::new("no histogram"));
    let mut merged = Row::new("anything").latency(h());
    merged.tag = Some("kept.as-is".into());
    rep.section("m").row(merged);
    let tags = hlog_tags(&rep);
    assert_eq!(
        tags,
        [
            vec![
                Some("load_1000_per_s_over_1_session.corrected".to_owned()),
                Some("load_1000_per_s_over_1_session.corrected_2".to_owned()),
                None
            ],
            vec![Some("kept.as-is".to_owned())]
        ]
    );
    let doc = to_json(&rep);
    assert_eq!(
        doc["sections"][0]["rows"][1]["hlog_tag"],
        "load_1000_per_s_over_1_session.corrected_2"
    );
    assert!(doc["sections"][0]["rows"][2].get("hlog_tag").is_none());
}

#[test]
fn table_lists_quantiles_computed_from_the_samples() {
    let mut h = latency_histogram();
    for v in 1..=1000u64 {
        h.record(v * 1000).unwrap(); // 1 µs .. 1 ms, uniform
    }
    let mut rep = Report::new("test");
    rep.section("s").row(
        Row::new("uniform")
            .latency(h)
            .col("ratio", Value::num(2.5, 2)),
    );
    let text = render_text(&rep, false);
    let line = text.lines().find(|l| l.starts_with("uniform")).unwrap();
    let cells: Vec<&str> = line
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    // Independent expectation: the p-th value of 1..=1000 µs is p·1000 µs
    // (within the histogram's 0.1 % precision).
    assert_eq!(
        cells,
        [
            "uniform", "1000", "1.00 µs", "501 µs", "500 µs", "900 µs", "990 µs", "999 µs",
            "1.00 ms", "2.50"
        ]
    );
}

fn row_cells(rep: &Report, name: &str) -> Vec<String> {
    render_text(rep, false)
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn percentile_cells_appear_once_the_count_supports_them() {
    let row = |n: u64| {
        let mut h = latency_histogram();
        for v in 1..=n {
            h.record(v * 1000).unwrap();
        }
        Row::new(format!("n{n}")).latency(h)
    };
    let mut rep = Report::new("test");
    rep.section("s")
        .row(row(9))
        .row(row(10))
        .row(row(99))
        .row(row(100))
        .row(row(999));
    // Columns: name, count, min, mean, p50, p90, p99, p99.9, max.
    let q = |name: &str| row_cells(&rep, name)[4..8].to_vec();
    let dash = |c: &String| c == "-";
    assert_eq!(
        q("n9 ").iter().map(dash).collect::<Vec<_>>(),
        [false, true, true, true]
    );
    assert_eq!(
        q("n10 ").iter().map(dash).collect::<Vec<_>>(),
        [false, false, true, true]
    );
    assert_eq!(
        q("n99 ").iter().map(dash).collect::<Vec<_>>(),
        [false, false, true, true]
    );
    assert_eq!(
        q("n100 ").iter().map(dash).collect::<Vec<_>>(),
        [false, false, false, true]
    );
    assert_eq!(
        q("n999 ").iter().map(dash).collect::<Vec<_>>(),
        [false, false, false, true]
    );
    // JSON keeps every key whatever the count.
    let doc = to_json(&rep);
    let lat = &doc["sections"][0]["rows"][0]["latency"];
    assert!(lat["p99_ns"].is_u64() && lat["p999_ns"].is_u64());
}

#[test]
fn summary_lines_say_faster_or_slower_by_the_factor() {
    let c = |speedup: f64| Headline {
        subject: "x".into(),
        peer: "y".into(),
        speedup,
        basis: "b".into(),
    };
    assert_eq!(c(2.5).line(), "perfkit x is 2.50× faster than y (b)");
    assert_eq!(c(0.5).line(), "perfkit x is 2.00× slower than y (b)");
    assert!(c(f64::NAN).line().contains("could not be compared"));
    assert!(c(0.0).line().contains("could not be compared"));
    let mut rep = Report::new("t");
    rep.summary.push(c(4.0));
    assert!(render_text(&rep, false).contains("== summary ==\n  perfkit x is 4.00× faster"));
    assert_eq!(to_json(&rep)["summary"][0]["speedup"], 4.0);
    assert!(to_json(&Report::new("t")).get("summary").is_none());
}

#[test]
fn tick_labels_carry_their_unit_and_no_spare_digits() {
    assert_eq!(format_tick_ns(1.0), "1 ns");
    assert_eq!(format_tick_ns(100.0), "100 ns");
    assert_eq!(format_tick_ns(1e3), "1 µs");
    assert_eq!(format_tick_ns(2.5e4), "25 µs");
    assert_eq!(format_tick_ns(1e8), "100 ms");
    assert_eq!(format_tick_ns(1e10), "10 s");
}

#[test]
fn the_first_thirty_series_styles_are_all_different() {
    let styles: Vec<_> = (0..30).map(series_style).collect();
    for (i, a) in styles.iter().enumerate() {
        for b in &styles[..i] {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn a_series_is_one_tag_in_time_order_and_its_sums_are_not_written_again() {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let h = |n: u64| {
        let mut h = latency_histogram();
        h.record_n(1000, n).unwrap();
        h
    };
    let mut rep = Report::new("t");
    // A summary row before its series, as a sweep's table is, and an
    // omitted row: neither may reach the log.
    rep.section("table")
        .row(Row::new("1000/s").latency(h(5)).sum_of("run.corrected"));
    let s = rep.section("run");
    for (i, n) in [(1u32, 3u64), (0, 2)] {
        s.row(
            Row::new(format!("{i}s"))
                .latency(h(n))
                .elapsed(std::time::Duration::from_secs(1))
                .interval_of("run.corrected", std::time::Duration::from_secs(i.into())),
        );
    }
    s.row(Row::new("corrected").latency(h(5)).sum_of("run.corrected"));
    s.row(Row::new("uncorrected").latency(h(5)).not_logged());
    // A row of its own may not take the series' tag.
    rep.section("run").row(Row::new("corrected").latency(h(1)));
    let tags = hlog_tags(&rep);
    let series = Some("run.corrected".to_owned());
    assert_eq!(
        tags[1],
        [series.clone(), series.clone(), series.clone(), None]
    );
    assert_eq!(tags[2], [Some("run.corrected_2".to_owned())]);
    let doc = to_json(&rep);
    assert_eq!(
        doc["sections"][1]["rows"][0]["hlog_start_ns"],
        1_000_000_000u64
    );
    assert!(doc["sections"][1]["rows"][2].get("hlog_start_ns").is_none());

    let mut log = Vec::new();
    write_hlog(&rep, &mut log).unwrap();
    let got: Vec<(String, f64)> = IntervalLogIterator::new(&log)
        .filter_map(|e| match e.unwrap() {
            LogEntry::Interval(i) => Some((
                i.tag().unwrap().as_str().to_owned(),
                i.start_timestamp().as_secs_f64(),
            )),
            _ => None,
        })
        .collect();
    let first = got[0].1;
    let shown: Vec<(&str, f64)> = got.iter().map(|(t, s)| (t.as_str(), s - first)).collect();
    assert_eq!(
        shown,
        [
            ("run.corrected", 0.0),
            ("run.corrected", 1.0),
            ("run.corrected_2", 2.0)
        ]
    );
}

/// Issue 65: the title's width depended on the CPU's name, which shared
/// its line with the run's counts (a `stress` title reached 101 columns).
/// Whatever the name, up to the 48 characters of an x86 brand string,
/// the title is the command and the machine on one line, the run on the
/// next, and no line is wider than the report.
#[test]
fn the_title_fits_whatever_the_cpu_is_called() {
    let longest = "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz XX";
    assert_eq!(longest.len(), 48);
    for name in ["AMD EPYC", "AMD EPYC 7B13 64-Core Processor", longest] {
        for command in ["stress", "betree bench", "report merge"] {
            let mut rep = Report::new(command);
            rep.machine.cpu_model = name.to_owned();
            rep.machine.cores = 256;
            rep.run.iterations = 123_456_789;
            rep.run.warmup = 1_234_567;
            rep.run.pinned = Some("core 0, helpers on cores 1-255".into());
            let text = render_text(&rep, false);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines[0], format!("perfkit {command} — {name} (256 cores)"));
            assert!(lines[1].starts_with("run: 123456789 iterations"), "{text}");
            for l in &lines {
                assert!(l.chars().count() <= TEXT_WIDTH, "{l}");
            }
        }
    }
}
