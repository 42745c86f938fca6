//! `perfkit fix bench --connect SETTINGS --rate N[,N...]`: the open-loop
//! load generator ([`fixload`]) against the initiator
//! sessions of a QuickFIX settings file, one run per rate, rendered as
//! per-interval and total rows and, for a sweep, a latency-vs-throughput
//! table with the saturation point.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use fixcore::session::store::AnyStore;
use fixcore::settings::ConnectionType;
use fixload::{self as load, Outcome, Plan, Target};
use perfkit::report::{Report, Row, RunInfo, Section, Value};

use super::FixBenchArgs;

/// A `--rate` value: orders per second, with an optional `k`/`M` and `/s`;
/// each element of a list is parsed on its own. At least 1/s: the rate is
/// shown to the order per second (a step of 0.5/s would be named "0/s"),
/// and a run of a few seconds below it sends hardly an order.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches("/s");
    let (num, scale) = match t.as_bytes().last() {
        Some(b'k' | b'K') => (&t[..t.len() - 1], 1e3),
        Some(b'M') => (&t[..t.len() - 1], 1e6),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v * scale >= 1.0 && v * scale <= 1e8 => Ok(v * scale),
        _ => Err(format!(
            "'{s}' is not a rate (orders per second from 1 to 100M, e.g. 50000, 50k or 50k/s)"
        )),
    }
}

/// A `--duration` value: how long each rate is measured, over zero (a
/// zero-length measured part would report an empty run as a result).
pub fn parse_measured(s: &str) -> Result<Duration, String> {
    let d = perfkit::units::parse_duration(s)?;
    if d.is_zero() {
        return Err(format!(
            "'{}' measures nothing: give a duration over zero (e.g. 10s)",
            s.trim()
        ));
    }
    Ok(d)
}

/// The engine kept up with a step when at least this share of the rate
/// was sent, the window never filled and every order was answered.
const HELD: f64 = 0.99;

/// The generator kept its schedule in a step when at least this share of
/// the orders went out within 1 ms of their intended time.
const ON_TIME: f64 = 0.999;

/// What held a step back, in the order it is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    /// Nothing: the engine kept up and the generator kept its schedule.
    None,
    /// A session ended before the run logged it out: what was not sent
    /// or answered after it is the lost session's, not the generator's.
    SessionLost,
    /// Orders were still unanswered at the end.
    Unanswered,
    /// A full window of unanswered orders held a sender back: the
    /// engine's answers set the pace.
    WindowFull,
    /// The generator sent under [`HELD`] of the rate with the window never
    /// full: the engine was not what held it back.
    RateNotSent,
    /// Everything was sent and answered, but over 0.1 % of it late.
    SendsLate,
}

impl Limit {
    fn as_str(self) -> &'static str {
        match self {
            Limit::None => "-",
            Limit::SessionLost => "session lost",
            Limit::Unanswered => "unanswered orders",
            Limit::WindowFull => "engine (window full)",
            Limit::RateNotSent => "generator (rate not sent)",
            Limit::SendsLate => "generator (sends late)",
        }
    }
}

/// What one step of a sweep shows, apart: whether the engine kept up, and
/// whether the generator kept its schedule. They are judged apart because
/// the saturation point is the engine's: a generator running late on a
/// busy machine adds to the corrected latencies but does not mean the
/// engine fell behind.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Verdict {
    /// What held the step back.
    limit: Limit,
    /// At least [`ON_TIME`] of the orders sent within 1 ms of their time
    /// (judged apart: a step limited by the engine may be late too).
    on_time: bool,
}

impl Verdict {
    fn of(o: &Outcome, rate: f64) -> Verdict {
        let on_time = o.on_time() as f64 >= ON_TIME * o.sent() as f64;
        let limit = if !o.lost.is_empty() {
            Limit::SessionLost
        } else if o.unanswered > 0 {
            Limit::Unanswered
        } else if o.window_full > 0 {
            Limit::WindowFull
        } else if o.achieved_rate() < HELD * rate {
            Limit::RateNotSent
        } else if !on_time {
            Limit::SendsLate
        } else {
            Limit::None
        };
        Verdict { limit, on_time }
    }

    /// Every order answered, no order held back by a full window, and at
    /// least [`HELD`] of the rate sent.
    fn kept_up(&self) -> bool {
        matches!(self.limit, Limit::None | Limit::SendsLate)
    }

    /// The engine kept up and the generator kept its schedule.
    fn held(&self) -> bool {
        self.limit == Limit::None
    }
}

/// The sweep's conclusion: the engine's saturation point (the highest rate
/// of the unbroken run of steps, from the lowest rate up, at which it kept
/// up) and the rates at which the generator kept its schedule.
fn saturation(steps: &[(f64, Verdict)]) -> String {
    let mut sorted = steps.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let first_miss = sorted.iter().position(|(_, v)| !v.kept_up());
    let engine = match first_miss {
        None => format!(
            "saturation: above {:.0} orders/s, the engine kept up at every rate of the sweep",
            sorted.last().map_or(0.0, |s| s.0)
        ),
        Some(0) if sorted[0].1.limit == Limit::RateNotSent => format!(
            "saturation: not found: at {:.0} orders/s, the sweep's lowest rate, the generator could not send the rate",
            sorted[0].0
        ),
        // The generator could not offer the next rate: the engine's limit
        // was not reached, only this machine's.
        Some(k) if sorted[k].1.limit == Limit::RateNotSent => format!(
            "saturation: not found: the engine kept up to {:.0} orders/s, and at {:.0}/s the generator could not send the rate",
            sorted[k - 1].0,
            sorted[k].0
        ),
        Some(0) => format!(
            "saturation: below {:.0} orders/s, the sweep's lowest rate, where the engine did not keep up ({})",
            sorted[0].0,
            sorted[0].1.limit.as_str()
        ),
        Some(k) => format!(
            "saturation: {:.0} orders/s, the highest rate the engine kept up with; at {:.0}/s it did not ({})",
            sorted[k - 1].0,
            sorted[k].0,
            sorted[k].1.limit.as_str()
        ),
    };
    let on_time: Vec<String> = sorted
        .iter()
        .filter(|(_, v)| v.on_time)
        .map(|(r, _)| format!("{r:.0}/s"))
        .collect();
    let generator = if on_time.is_empty() {
        "at no rate: there its own lateness is part of the corrected latencies".to_string()
    } else {
        format!("at {}", on_time.join(", "))
    };
    format!(
        "{engine} (kept up: every order answered, the window never full, ≥ {:.0} % of the rate sent); the generator sent ≥ {:.1} % of orders within 1 ms of their intended time {generator}; latency = intended send time → first ExecutionReport",
        HELD * 100.0,
        ON_TIME * 100.0
    )
}

/// Runs every rate of `args.rate` against `settings` into one report, and
/// the problems a run met (unanswered orders, rejects, lost sessions),
/// which the caller prints after the report and exits non-zero for.
pub fn measure(args: &FixBenchArgs, settings: &Path) -> Result<(Report, Vec<String>)> {
    if args.rate.is_empty() {
        bail!("--connect needs --rate (orders per second; a list sweeps)");
    }
    let warmup = match args.warmup_for_load()? {
        Some(d) => d,
        None => Duration::from_secs(1),
    };
    let template = match &args.order_template {
        Some(path) => read_template(path)?,
        None => Plan::default_template(),
    };
    let mut report = Report::new("fix-bench load");
    let mut problems = Vec::new();
    let mut sweep = Section::new("load: latency vs throughput");
    let mut steps = Vec::new();
    let bar = super::super::progress(None, args.report.json);
    for &rate in &args.rate {
        let plan = Plan {
            rate,
            duration: args.duration,
            warmup,
            interval: args.interval,
            window: args.window,
            template: template.clone(),
            grace: args.grace,
            logon_timeout: Duration::from_secs(10),
            pin: args.pin,
            coalesce: args.coalesce,
            io: args.io.into(),
            max_unsent: load::DEFAULT_MAX_UNSENT,
        };
        let targets = targets(settings, args.sessions)?;
        let sessions = targets.len();
        let run = load::run(targets, &plan, &|line| {
            bar.set_message(format!("{rate:.0}/s {line}"))
        })
        .map_err(in_flag_terms)
        .with_context(|| format!("load at {rate:.0} orders/s"));
        // A step that fails after others ran ends the sweep; what the
        // earlier steps measured is still reported.
        let o = match run {
            Ok(o) => o,
            Err(e) if !report.sections.is_empty() => {
                problems.push(format!("{e:#}"));
                break;
            }
            Err(e) => return Err(e),
        };
        if report.started.is_none() {
            report.started = Some(o.started);
        }
        let name = format!("load {rate:.0}/s over {sessions} session(s)");
        problems.extend(problems_of(&o, &name));
        let verdict = Verdict::of(&o, rate);
        steps.push((rate, verdict));
        sweep.row(
            Row::new(format!("{rate:.0}/s"))
                .latency(o.total.corrected.clone())
                .elapsed(o.measured)
                .col("target_per_s", Value::num(rate, 0))
                .col("achieved_per_s", Value::num(o.achieved_rate(), 0))
                .col("on_time_share", on_time(&o))
                .col("uncorrected_p99_us", p_us(&o.total.uncorrected, 0.99))
                .col("unanswered", o.unanswered)
                .col("engine_kept_up", yes_no(verdict.kept_up()))
                .col("held", yes_no(verdict.held()))
                .col("limited_by", verdict.limit.as_str()),
        );
        report
            .sections
            .push(intervals(&name, &o, report_offset(&report, &o)));
        report.sections.push(totals(&name, &o, rate, verdict));
    }
    bar.finish_and_clear();
    if args.rate.len() > 1 {
        sweep.note(saturation(&steps));
        report.sections.insert(0, sweep);
    }
    report.run = RunInfo {
        iterations: 0,
        warmup: 0,
        runs: args.rate.len() as u64,
        pinned: match load::cores(args.pin) {
            (Some(send), Some(recv)) => Some(format!(
                "sender on core {send}, receiver on core {recv}"
            )),
            _ => None,
        },
        timing: "open loop: every order has an intended send time; latency from it (corrected) and from the actual send (uncorrected), to the first ExecutionReport, Instant".into(),
    };
    Ok((report, problems))
}

/// `e`, with the flag named when a flag's value is what the generator
/// refused.
fn in_flag_terms(e: load::Error) -> anyhow::Error {
    match e {
        load::Error::CoreNotUsable { core, usable } => {
            anyhow::anyhow!("--pin {core}: this process may run on cores {usable:?} only")
        }
        load::Error::UringUnavailable(why) => {
            anyhow::anyhow!("--io io-uring: io_uring is not available here: {why}")
        }
        e => e.into(),
    }
}

/// The initiator sessions of the settings file, the first `k` when given.
fn targets(settings: &Path, k: Option<usize>) -> Result<Vec<Target<AnyStore>>> {
    let mut all = super::session::sessions(settings, ConnectionType::Initiator, false)?;
    if let Some(k) = k {
        if k > all.len() {
            bail!(
                "{}: --sessions {k}, but the file has {} initiator session(s)",
                settings.display(),
                all.len()
            );
        }
        all.truncate(k);
    }
    all.into_iter()
        .map(|(s, session)| {
            let (Some(host), Some(port)) = (s.socket_connect_host.clone(), s.socket_connect_port)
            else {
                bail!(
                    "{}: SocketConnectHost and SocketConnectPort are needed",
                    s.id()
                );
            };
            Ok(Target {
                name: s.id(),
                host,
                port,
                session,
            })
        })
        .collect()
}

/// `--order-template FILE`: `tag=value` fields separated by `|` or SOH
/// (line breaks too); ClOrdID (11) and TransactTime (60) are the
/// generator's and may not be given.
fn read_template(path: &Path) -> Result<Vec<(u32, Vec<u8>)>> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut fields = Vec::new();
    for f in text
        .split(|&b| b == b'|' || b == 1 || b == b'\n' || b == b'\r')
        .filter(|f| !f.is_empty())
    {
        let eq = f.iter().position(|&b| b == b'=');
        let tag = eq
            .and_then(|i| std::str::from_utf8(&f[..i]).ok())
            .and_then(|t| t.parse::<u32>().ok())
            .filter(|&t| t > 0);
        let (Some(i), Some(tag)) = (eq, tag) else {
            bail!(
                "{}: '{}' is not a tag=value field",
                path.display(),
                String::from_utf8_lossy(f)
            );
        };
        if matches!(tag, 8 | 9 | 10 | 11 | 34 | 35 | 49 | 52 | 56 | 60) {
            bail!(
                "{}: tag {tag} is written by the session or the generator, not the template",
                path.display()
            );
        }
        if f.len() == i + 1 {
            bail!("{}: tag {tag} has an empty value", path.display());
        }
        fields.push((tag, f[i + 1..].to_vec()));
    }
    Ok(fields)
}

/// Where this run's intervals sit from the report's start (the first run's).
fn report_offset(report: &Report, o: &Outcome) -> Duration {
    report
        .started
        .and_then(|s| o.started.duration_since(s).ok())
        .unwrap_or_default()
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

/// Whether a run held its rate, and if not, what held it back and what the
/// generator saw of why.
fn explain(o: &Outcome, rate: f64, v: Verdict) -> String {
    let share = o.on_time() as f64 * 100.0 / o.sent().max(1) as f64;
    let ms = |h: &hdrhistogram::Histogram<u64>| {
        format!(
            "p50 {:.0} µs, p99.9 {:.0} µs, max {:.2} ms",
            h.value_at_quantile(0.5) as f64 / 1e3,
            h.value_at_quantile(0.999) as f64 / 1e3,
            h.max() as f64 / 1e6
        )
    };
    // Orders go late when the sender wakes late (the OS's doing) or a
    // round runs long (preempted, or waiting for a session's lock).
    let wakes = if o.wake_late.is_empty() {
        String::new()
    } else {
        format!(
            "; the sender woke behind the time it asked for by {}, and its rounds took {}",
            ms(&o.wake_late),
            ms(&o.round_time)
        )
    };
    let why = match v.limit {
        Limit::None => {
            return format!(
                "verdict: held {rate:.0}/s: every order answered, the window never full, {share:.2} % of orders sent within 1 ms of their intended time{wakes}"
            );
        }
        Limit::SessionLost => o
            .lost
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; "),
        Limit::Unanswered => format!("{} order(s) never answered", o.unanswered),
        Limit::WindowFull => format!(
            "the engine's answers fell behind: a full window held orders back {} time(s)",
            o.window_full
        ),
        Limit::RateNotSent => format!(
            "the generator sent {:.0}/s: it could not send faster ({} ns of CPU per order)",
            o.achieved_rate(),
            o.cpu_per_order().as_nanos()
        ),
        Limit::SendsLate => format!(
            "{share:.2} % of orders sent within 1 ms of their intended time, under {:.1} %",
            ON_TIME * 100.0
        ),
    };
    format!(
        "verdict: {rate:.0}/s not held ({}): {why}{wakes}",
        v.limit.as_str()
    )
}

/// One row per interval: the corrected histogram, with what was sent then.
fn intervals(name: &str, o: &Outcome, offset: Duration) -> Section {
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
            .start(offset + from)
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
fn totals(name: &str, o: &Outcome, rate: f64, verdict: Verdict) -> Section {
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
                .latency(o.total.corrected.clone()),
        )
        .col("on_time_share", on_time(o))
        .col(
            "max_lag_us",
            Value::num(o.max_lag.as_nanos() as f64 / 1e3, 1),
        )
        .col("window_full", o.window_full),
    );
    s.row(
        counts(
            Row::new("uncorrected (actual send → first ExecutionReport)")
                .latency(o.total.uncorrected.clone()),
        )
        .col("rejects", o.rejects)
        .col("disconnects", o.disconnects)
        .col(
            "generator_cpu_per_order_ns",
            Value::num(o.cpu_per_order().as_nanos() as f64, 0),
        ),
    );
    s.note(explain(o, rate, verdict));
    s.note(format!("transport: {}", o.transport));
    let secs = o.measured.as_secs_f64().max(1e-9);
    s.note(format!(
        "wakes: the sender woke {:.0} times/s, the receiver {:.0} times/s over the measured part (a wake from sleep costs CPU; on a VM often more than an order)",
        o.send_rounds as f64 / secs,
        o.receive_wakes as f64 / secs
    ));
    s.note("generator CPU: this process's CPU time over the measured part (every thread) / orders sent in it");
    s
}

/// The problems of one run, each a line for after the report.
fn problems_of(o: &Outcome, name: &str) -> Vec<String> {
    let mut v = Vec::new();
    if o.unanswered > 0 {
        v.push(format!("{name}: {} order(s) unanswered", o.unanswered));
    }
    if o.rejects > 0 {
        v.push(format!("{name}: {} reject(s)", o.rejects));
    }
    for lost in &o.lost {
        v.push(format!("{name}: {lost}"));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_take_units() {
        assert_eq!(parse_rate("50000"), Ok(50_000.0));
        assert_eq!(parse_rate("50k"), Ok(50_000.0));
        assert_eq!(parse_rate("2.5k/s"), Ok(2_500.0));
        assert_eq!(parse_rate("1M/s"), Ok(1_000_000.0));
        assert_eq!(parse_rate("1"), Ok(1.0));
        assert_eq!(parse_rate("0.5k"), Ok(500.0));
        for bad in [
            "", "0", "0.5", "0.999/s", "0.0001k", "-5", "fast", "1e300", "10q",
        ] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_measured_duration_is_over_zero() {
        assert_eq!(parse_measured("2s"), Ok(Duration::from_secs(2)));
        for zero in ["0s", "0", "0ms", "0.1ns"] {
            let e = parse_measured(zero).unwrap_err();
            assert!(e.contains("measures nothing"), "{zero}: {e}");
        }
        assert!(parse_measured("fast").is_err());
    }

    #[test]
    fn templates_are_fields_without_the_generators_tags() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        std::fs::write(&p, "55=IBM|54=2\n38=5|").unwrap();
        assert_eq!(
            read_template(&p).unwrap(),
            vec![
                (55, b"IBM".to_vec()),
                (54, b"2".to_vec()),
                (38, b"5".to_vec())
            ]
        );
        for (text, msg) in [
            ("11=x", "tag 11 is written"),
            ("55", "'55' is not a tag=value field"),
            ("x=1", "'x=1' is not"),
            ("55=", "tag 55 has an empty value"),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = read_template(&p).unwrap_err().to_string();
            assert!(e.contains(msg), "{text}: {e}");
        }
    }

    fn v(limit: Limit, on_time: bool) -> Verdict {
        Verdict { limit, on_time }
    }

    /// An outcome of `sent` orders over `secs`, `late` of them late.
    fn outcome(sent: u64, late: u64, secs: f64, unanswered: u64, window_full: u64) -> Outcome {
        let interval = || load::Interval {
            corrected: perfkit_measure::latency_histogram(),
            uncorrected: perfkit_measure::latency_histogram(),
            sent,
            late,
        };
        Outcome {
            started: std::time::SystemTime::UNIX_EPOCH,
            interval: Duration::from_secs(1),
            intervals: vec![interval()],
            total: interval(),
            answered: sent - unanswered,
            unanswered,
            rejects: 0,
            disconnects: 0,
            max_lag: Duration::ZERO,
            window_full,
            cpu: Duration::ZERO,
            measured: Duration::from_secs_f64(secs),
            transport: "test".into(),
            send_rounds: 0,
            receive_wakes: 0,
            wake_late: perfkit_measure::latency_histogram(),
            round_time: perfkit_measure::latency_histogram(),
            sessions: 1,
            lost: Vec::new(),
        }
    }

    #[test]
    fn a_step_is_judged_on_the_engines_side_and_the_generators_apart() {
        let judge = |o: Outcome| {
            let v = Verdict::of(&o, 1_000.0);
            (v.limit, v.kept_up(), v.on_time, v.held())
        };
        // 1,000 orders in 1 s, one late: 99.9 % on time exactly.
        assert_eq!(
            judge(outcome(1_000, 1, 1.0, 0, 0)),
            (Limit::None, true, true, true)
        );
        assert_eq!(
            judge(outcome(1_000, 2, 1.0, 0, 0)),
            (Limit::SendsLate, true, false, false)
        );
        // 989 orders in 1 s is under 99 % of the rate.
        assert_eq!(
            judge(outcome(989, 0, 1.0, 0, 0)),
            (Limit::RateNotSent, false, true, false)
        );
        assert_eq!(
            judge(outcome(1_000, 500, 1.0, 0, 1)),
            (Limit::WindowFull, false, false, false)
        );
        assert_eq!(
            judge(outcome(1_000, 0, 1.0, 1, 1)),
            (Limit::Unanswered, false, true, false)
        );
    }

    /// Issue 30: a session the engine dropped is judged before anything
    /// it left unsent or unanswered, named in the verdict with when and
    /// why, and is one of the run's problems (exit 1); the generator is
    /// not blamed for the rate it could not send over a closed connection.
    #[test]
    fn a_lost_session_is_the_verdict_and_a_problem() {
        let mut o = outcome(300, 0, 1.0, 2, 0);
        o.lost = vec![load::Lost {
            session: "LOAD1->EXCH".into(),
            at: Duration::from_millis(1_234),
            why: "connection closed by the engine".into(),
        }];
        o.disconnects = 1;
        let v = Verdict::of(&o, 1_000.0);
        assert_eq!(v.limit, Limit::SessionLost);
        assert!(!v.kept_up());
        let line = explain(&o, 1_000.0, v);
        assert_eq!(
            line,
            "verdict: 1000/s not held (session lost): session LOAD1->EXCH lost at 1.23 s: connection closed by the engine"
        );
        let problems = problems_of(&o, "load 1000/s");
        assert!(
            problems.contains(
                &"load 1000/s: session LOAD1->EXCH lost at 1.23 s: connection closed by the engine"
                    .to_string()
            ),
            "{problems:?}"
        );
    }

    #[test]
    fn the_saturation_point_is_the_engines_not_the_generators() {
        // Given out of order; the generator late everywhere, the engine
        // keeping up to 10k: the point is 10k, and the lateness is said
        // apart.
        let steps = [
            (20_000.0, v(Limit::WindowFull, false)),
            (5_000.0, v(Limit::SendsLate, false)),
            (10_000.0, v(Limit::SendsLate, false)),
            (40_000.0, v(Limit::WindowFull, false)),
        ];
        let note = saturation(&steps);
        assert!(
            note.starts_with(
                "saturation: 10000 orders/s, the highest rate the engine kept up with; at 20000/s it did not (engine (window full))"
            ),
            "{note}"
        );
        assert!(
            note.contains("within 1 ms of their intended time at no rate"),
            "{note}"
        );
        // A step that keeps up again above the first miss does not count:
        // the run from the bottom is broken.
        let steps = [
            (1_000.0, v(Limit::None, true)),
            (2_000.0, v(Limit::Unanswered, true)),
            (3_000.0, v(Limit::None, true)),
        ];
        let note = saturation(&steps);
        assert!(note.starts_with("saturation: 1000 orders/s,"), "{note}");
        assert!(
            note.contains("intended time at 1000/s, 2000/s, 3000/s;"),
            "{note}"
        );
        let all = saturation(&[
            (1_000.0, v(Limit::None, true)),
            (2_000.0, v(Limit::SendsLate, false)),
        ]);
        assert!(all.starts_with("saturation: above 2000 orders/s"), "{all}");
        // A generator that cannot send the rate finds no saturation point.
        let short = saturation(&[
            (1_000.0, v(Limit::None, true)),
            (9_000.0, v(Limit::RateNotSent, true)),
        ]);
        assert!(
            short.starts_with("saturation: not found: the engine kept up to 1000 orders/s, and at 9000/s the generator could not send the rate"),
            "{short}"
        );
        let short = saturation(&[(9_000.0, v(Limit::RateNotSent, true))]);
        assert!(
            short.starts_with("saturation: not found: at 9000 orders/s"),
            "{short}"
        );
        let none = saturation(&[(7_000.0, v(Limit::WindowFull, true))]);
        assert!(
            none.starts_with("saturation: below 7000 orders/s, the sweep's lowest rate, where the engine did not keep up (engine (window full))"),
            "{none}"
        );
    }
}
