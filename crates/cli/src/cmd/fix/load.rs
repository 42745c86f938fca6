//! `perfkit fix bench --connect SETTINGS --rate N[,N...]`: the open-loop
//! load generator ([`perfkit_bench::fix::load`]) against the initiator
//! sessions of a QuickFIX settings file, one run per rate, rendered as
//! per-interval and total rows and, for a sweep, a latency-vs-throughput
//! table with the saturation point.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use fixcore::session::store::AnyStore;
use fixcore::settings::ConnectionType;
use perfkit::report::{Report, Row, RunInfo, Section, Value};
use perfkit_bench::fix::load::{self, Outcome, Plan, Target};

use super::FixBenchArgs;

/// A `--rate` value: orders per second, with an optional `k`/`M` and `/s`.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches("/s");
    let (num, scale) = match t.as_bytes().last() {
        Some(b'k' | b'K') => (&t[..t.len() - 1], 1e3),
        Some(b'M') => (&t[..t.len() - 1], 1e6),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * scale <= 1e8 => Ok(v * scale),
        _ => Err(format!(
            "'{s}' is not a rate (orders per second up to 100M, e.g. 50000, 50k or 50k/s)"
        )),
    }
}

/// A step of the sweep holds its rate when it sent at least this share of
/// the rate, and at least [`ON_TIME`] of its orders within 1 ms of their
/// intended time.
const HELD: f64 = 0.99;

/// See [`HELD`].
const ON_TIME: f64 = 0.999;

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
    let mut held = None;
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
        };
        let targets = targets(settings, args.sessions)?;
        let sessions = targets.len();
        let run = load::run(targets, &plan, &|line| {
            bar.set_message(format!("{rate:.0}/s {line}"))
        })
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
        let holds = o.achieved_rate() >= HELD * rate
            && (o.sent() - o.total.late) as f64 >= ON_TIME * o.sent() as f64
            && o.unanswered == 0;
        if holds {
            held = Some(rate);
        }
        sweep.row(
            Row::new(format!("{rate:.0}/s"))
                .latency(o.total.corrected.clone())
                .elapsed(o.measured)
                .col("target_per_s", Value::num(rate, 0))
                .col("achieved_per_s", Value::num(o.achieved_rate(), 0))
                .col("on_time_share", on_time(&o))
                .col("uncorrected_p99_us", p_us(&o.total.uncorrected, 0.99))
                .col("unanswered", o.unanswered)
                .col("held", if holds { "yes" } else { "no" })
                .col("limited_by", limit(&o, holds)),
        );
        report
            .sections
            .push(intervals(&name, &o, report_offset(&report, &o)));
        report.sections.push(totals(&name, &o));
    }
    bar.finish_and_clear();
    if args.rate.len() > 1 {
        sweep.note(match held {
            Some(r) => format!(
                "saturation: the highest rate held was {r:.0} orders/s (held: ≥ {:.0} % of the rate sent, ≥ {:.1} % of orders sent within 1 ms of their intended time, every order answered); latency = intended send time → first ExecutionReport",
                HELD * 100.0,
                ON_TIME * 100.0
            ),
            None => "saturation: no rate of the sweep was held".into(),
        });
        report.sections.insert(0, sweep);
    }
    report.run = RunInfo {
        iterations: 0,
        warmup: 0,
        runs: args.rate.len() as u64,
        pinned: None,
        timing: "open loop: every order has an intended send time; latency from it (corrected) and from the actual send (uncorrected), to the first ExecutionReport, Instant".into(),
    };
    Ok((report, problems))
}

/// The initiator sessions of the settings file, the first `k` when given.
fn targets(settings: &Path, k: Option<usize>) -> Result<Vec<Target<AnyStore>>> {
    let mut all = super::session::sessions(settings, ConnectionType::Initiator)?;
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
    Value::num((o.sent() - o.total.late) as f64 / o.sent() as f64, 4)
}

/// Why a step did not hold its rate: orders left unanswered, the engine's
/// pace (a full window of unanswered orders held the sender back), or the
/// generator itself (late without a full window).
fn limit(o: &Outcome, holds: bool) -> &'static str {
    if holds {
        "-"
    } else if o.unanswered > 0 {
        "unanswered orders"
    } else if o.window_full > 0 {
        "engine (window full)"
    } else {
        "generator (sends late)"
    }
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
fn totals(name: &str, o: &Outcome) -> Section {
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
    s.note(format!("transport: {}", o.transport));
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
    for e in &o.events {
        v.push(format!("{name}: session lost: {e}"));
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
        for bad in ["", "0", "-5", "fast", "1e300", "10q"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
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
}
