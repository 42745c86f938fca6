//! A sweep's report, in perfkit-report's model: per rate, a
//! section of intervals (placed at their time, so interval logs of runs on
//! several machines add up; in the interval log, the one series of the
//! run's corrected latency) and one of totals with the verdict; for
//! several rates, a latency-vs-throughput table first, with the
//! saturation point. Data only: the caller renders it.

use std::time::Duration;

use perfkit_report::{Report, Row, RunInfo, Section, Value};

use crate::verdict::{Verdict, saturation};
use crate::{Floor, Outcome, Settings, cores};

/// A sweep's report as its runs come in: [`Sweep::step`] adds each run,
/// [`Sweep::finish`] concludes.
///
/// ```
/// let settings = fixload::Settings::new(vec![1_000.0, 2_000.0]);
/// let sweep = fixload::Sweep::new("fix load", &settings);
/// assert!(sweep.is_empty());
/// let done = sweep.finish();
/// assert_eq!(done.report.run.runs, 2);
/// assert!(done.problems.is_empty());
/// ```
#[derive(Debug)]
pub struct Sweep {
    report: Report,
    /// The latency-vs-throughput table: a row per run.
    table: Section,
    /// Each run's rate and verdict, for the saturation point.
    steps: Vec<(f64, Verdict)>,
    problems: Vec<String>,
    /// Rates the sweep was asked for (it may end before the last).
    rates: usize,
    pin: Option<usize>,
    /// The interval-log series of the runs so far: a rate given twice
    /// gets a series of its own, not the first one's tag.
    series: Vec<String>,
}

/// A finished sweep: its report, and the problems its runs met (orders
/// unanswered, rejects, sessions lost, a run that failed part-way), one
/// line each, for the caller to print after the report and fail on.
#[derive(Debug)]
pub struct Swept {
    /// What was measured.
    pub report: Report,
    /// What went wrong, one line each.
    pub problems: Vec<String>,
}

impl Sweep {
    /// An empty sweep of `settings`, its report named after `command`.
    pub fn new(command: &str, settings: &Settings) -> Sweep {
        Sweep {
            report: Report::new(command),
            table: Section::new("load: latency vs throughput"),
            steps: Vec::new(),
            problems: Vec::new(),
            rates: settings.rates.len(),
            pin: settings.run.pin,
            series: Vec::new(),
        }
    }

    /// Whether no run has been added yet.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Adds `o`, the run at `rate`: its verdict, its row of the table, its
    /// sections, and its problems; with `floor` (measured right after it,
    /// see [`crate::floor`]), the floor's row and the generator's CPU per
    /// order as a ratio to it.
    pub fn step(&mut self, rate: f64, o: &Outcome, floor: Option<&Floor>) {
        let report = &mut self.report;
        let started = *report.started.get_or_insert(o.started);
        // Where this run's intervals sit from the report's start (the
        // first run's).
        let offset = o.started.duration_since(started).unwrap_or_default();
        let name = format!("load {rate:.0}/s over {} session(s)", o.sessions);
        self.problems.extend(problems(o, &name));
        let verdict = Verdict::of(o, rate);
        self.steps.push((rate, verdict));
        let mut row = Row::new(format!("{rate:.0}/s"));
        if let Some(f) = floor {
            row = row.col("cpu_over_floor_x", Value::num(f.ratio(o), 2));
        }
        let series = corrected_series(&name, &self.series);
        self.series.push(series.clone());
        self.table.row(
            row.latency(o.total.corrected.clone())
                .sum_of(&series)
                .elapsed(o.measured)
                .col("target_per_s", Value::num(rate, 0))
                .col("achieved_per_s", Value::num(o.achieved_rate(), 0))
                .col("on_time_share", on_time(o))
                .col("uncorrected_p99_us", p_us(&o.total.uncorrected, 0.99))
                .col("unanswered", o.unanswered)
                .col("engine_kept_up", yes_no(verdict.kept_up()))
                .col("held", yes_no(verdict.held()))
                .col("limited_by", verdict.limit.as_str()),
        );
        report.sections.push(intervals(&name, &series, o, offset));
        report
            .sections
            .push(totals(&name, &series, o, rate, verdict, floor));
    }

    /// Says in the last run's totals why it has no floor row (the floor
    /// program is missing, or failed).
    pub fn no_floor(&mut self, why: &str) {
        if let Some(s) = self.report.sections.last_mut() {
            s.note(format!("floor not measured: {why}"));
        }
    }

    /// Ends the sweep early: a run failed after others were measured,
    /// which are still reported; `why` joins the problems.
    pub fn cut_short(&mut self, why: String) {
        self.problems.push(why);
    }

    /// The report (the table and saturation point first when the sweep
    /// was asked for several rates) and the problems.
    pub fn finish(self) -> Swept {
        let mut report = self.report;
        let mut table = self.table;
        if self.rates > 1 {
            table.note(saturation(&self.steps));
            report.sections.insert(0, table);
        }
        report.run = RunInfo {
            iterations: 0,
            warmup: 0,
            runs: self.rates as u64,
            pinned: match cores(self.pin) {
                (Some(send), Some(recv)) => Some(format!(
                    "sender on core {send}, receiver on core {recv}"
                )),
                _ => None,
            },
            timing: "open loop: every order has an intended send time; latency from it (corrected) and from the actual send (uncorrected), to the first ExecutionReport, Instant".into(),
        };
        Swept {
            report,
            problems: self.problems,
        }
    }
}

fn p_us(h: &hdrhistogram::Histogram<u64>, q: f64) -> Value {
    if h.is_empty() {
        Value::num(f64::NAN, 1)
    } else {
        Value::num(h.value_at_quantile(q) as f64 / 1e3, 1)
    }
}

fn on_time(o: &Outcome) -> Value {
    if o.sent() == 0 {
        return Value::num(f64::NAN, 4);
    }
    Value::num(o.on_time() as f64 / o.sent() as f64, 4)
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// The interval-log tag of a run's corrected latency: its intervals are
/// the series, its totals (and its row of the sweep's table) their sum.
/// The uncorrected latency of the same orders is kept out of the log, so
/// that a reader adding up the log's tags counts each order once.
/// `_2`, `_3`, … follow the tag of a run named as an earlier one (a rate
/// given twice), which is in `taken`.
fn corrected_series(run: &str, taken: &[String]) -> String {
    let base = perfkit_report::hlog_tag(run, "corrected");
    let mut tag = base.clone();
    let mut n = 1;
    while taken.contains(&tag) {
        n += 1;
        tag = format!("{base}_{n}");
    }
    tag
}

/// One row per interval: the corrected histogram, with what was sent then.
fn intervals(name: &str, series: &str, o: &Outcome, offset: Duration) -> Section {
    let mut s = Section::new(format!("{name}: intervals"));
    let w = o.interval;
    for (i, x) in o.intervals.iter().enumerate() {
        let from = w * i as u32;
        s.row(
            Row::new(format!(
                "{:.1}-{:.1}s",
                from.as_secs_f64(),
                (from + w).as_secs_f64()
            ))
            .latency(x.corrected.clone())
            .elapsed(w)
            .interval_of(series, offset + from)
            .col("sent_per_s", Value::num(x.sent as f64 / w.as_secs_f64(), 0))
            .col("late", x.late)
            .col("uncorrected_p50_us", p_us(&x.uncorrected, 0.5))
            .col("uncorrected_p99_us", p_us(&x.uncorrected, 0.99)),
        );
    }
    s.note("latency: intended send time → first ExecutionReport (corrected), by the interval the answer arrived in; sent and late (> 1 ms behind schedule) by the interval the order was due in; intervals past the run's end hold answers of the grace period");
    s
}

/// The totals of one run: both histograms and the counts.
fn totals(
    name: &str,
    series: &str,
    o: &Outcome,
    rate: f64,
    verdict: Verdict,
    floor: Option<&Floor>,
) -> Section {
    let mut s = Section::new(name.to_owned());
    let counts = |r: Row| {
        r.elapsed(o.measured)
            .col("sent", o.sent())
            .col("answered", o.answered)
            .col("unanswered", o.unanswered)
            .col("achieved_per_s", Value::num(o.achieved_rate(), 0))
    };
    s.row(
        counts(
            Row::new("corrected (intended send → first ExecutionReport)")
                .latency(o.total.corrected.clone())
                .sum_of(series),
        )
        .col("on_time_share", on_time(o))
        .col(
            "max_lag_us",
            Value::num(o.max_lag.as_nanos() as f64 / 1e3, 1),
        )
        .col("window_full", o.window_full),
    );
    let mut uncorrected = counts(
        Row::new("uncorrected (actual send → first ExecutionReport)")
            .latency(o.total.uncorrected.clone())
            .not_logged(),
    )
    .col("rejects", o.rejects)
    .col("disconnects", o.disconnects)
    .col(
        "generator_cpu_per_order_ns",
        Value::num(o.cpu_per_order().as_nanos() as f64, 0),
    );
    if let Some(f) = floor {
        uncorrected = uncorrected.col("generator_over_floor_x", Value::num(f.ratio(o), 2));
    }
    s.row(uncorrected);
    if let Some(f) = floor {
        s.row(
            Row::new("floor (fixload-floor: the same I/O in C, no FIX work)")
                .elapsed(f.measured)
                .col("sent", f.sent)
                .col(
                    "floor_cpu_per_order_ns",
                    Value::num(f.cpu_per_order().as_nanos() as f64, 0),
                ),
        );
    }
    s.note(verdict.explain(o, rate));
    s.note(format!("transport: {}", o.transport));
    let secs = o.measured.as_secs_f64().max(1e-9);
    s.note(format!(
        "wakes: the sender woke {:.0} times/s, the receiver {:.0} times/s over the measured part (a wake from sleep costs CPU; on a VM often more than an order)",
        o.send_rounds as f64 / secs,
        o.receive_wakes as f64 / secs
    ));
    s.note("generator CPU: this process's CPU time over the measured part (every thread) / orders sent in it");
    if let Some(f) = floor {
        s.note(format!(
            "CPU per order: the generator {:.0} ns, its floor {:.0} ns: {:.2}× the floor",
            o.cpu_per_order().as_nanos() as f64,
            f.cpu_per_order().as_nanos() as f64,
            f.ratio(o)
        ));
        s.note(format!(
            "floor: run right after, at the same rate, warm-up, duration and {} coalescing over {} loopback connection(s): a C sender waking with clock_nanosleep(TIMER_ABSTIME) writes {}-byte orders (this run's mean NewOrderSingle), a receiver in poll + read takes two {}-byte answers per order (its mean ExecutionReport) from a forked counterparty (a thread per connection, as engines serve sessions); its CPU is getrusage of its own process over the measured part / orders, woke {:.0}/s (sender) and {:.0}/s (receiver)",
            perfkit_report::format_ns(f.coalesce.as_nanos() as f64),
            o.sessions,
            f.order_size,
            f.report_size,
            f.send_rounds as f64 / f.measured.as_secs_f64().max(1e-9),
            f.receive_wakes as f64 / f.measured.as_secs_f64().max(1e-9),
        ));
    }
    s
}

/// The problems of one run, each a line for after the report.
pub(crate) fn problems(o: &Outcome, name: &str) -> Vec<String> {
    let mut v = Vec::new();
    if o.unanswered > 0 {
        v.push(format!("{name}: {} order(s) unanswered", o.unanswered));
    }
    if o.rejects > 0 {
        let first = o
            .first_reject
            .as_deref()
            .map(|f| format!(" (first: {f})"))
            .unwrap_or_default();
        v.push(format!("{name}: {} reject(s){first}", o.rejects));
    }
    for lost in &o.lost {
        v.push(format!("{name}: {lost}"));
    }
    v
}
