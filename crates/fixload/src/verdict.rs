//! The verdict on each run of a sweep, and the sweep's conclusion: did
//! the engine keep up (every order answered, the window never full, the
//! rate sent), and apart from that, did the generator keep its schedule.
//!
//! They are judged apart because the saturation point is the engine's: a
//! generator running late on a busy machine adds to the corrected
//! latencies, but does not mean the engine fell behind.

use crate::Outcome;

/// The engine kept up with a step when at least this share of the rate
/// was sent, the window never filled and every order was answered.
pub const HELD: f64 = 0.99;

/// The generator kept its schedule in a step when at least this share of
/// the orders went out within 1 ms of their intended time.
pub const ON_TIME: f64 = 0.999;

/// What held a step back, in the order it is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
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
    /// A few words for a report's column (`-` for [`Limit::None`]), with
    /// no parentheses, since sentences quote them in some.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::None => "-",
            Limit::SessionLost => "session lost",
            Limit::Unanswered => "unanswered orders",
            Limit::WindowFull => "engine: window full",
            Limit::RateNotSent => "generator: rate not sent",
            Limit::SendsLate => "generator: sends late",
        }
    }
}

/// What one step of a sweep shows, apart (see the [module docs](self)
/// for why): whether the engine kept up, and whether the generator kept
/// its schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// What held the step back.
    pub limit: Limit,
    /// At least [`ON_TIME`] of the orders sent within 1 ms of their time
    /// (judged apart: a step limited by the engine may be late too).
    pub on_time: bool,
}

impl Verdict {
    /// The verdict on `o`, a run at `rate` orders per second.
    pub fn of(o: &Outcome, rate: f64) -> Verdict {
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
    pub fn kept_up(&self) -> bool {
        matches!(self.limit, Limit::None | Limit::SendsLate)
    }

    /// The engine kept up and the generator kept its schedule.
    pub fn held(&self) -> bool {
        self.limit == Limit::None
    }

    /// Whether `o`, a run at `rate`, held its rate, and if not, what held
    /// it back and what the generator saw of why: the run's verdict line.
    pub fn explain(&self, o: &Outcome, rate: f64) -> String {
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
        let why = match self.limit {
            Limit::None => {
                return format!(
                    "verdict: held {rate:.0}/s: every order answered, the window never full, {share:.2} % of orders sent within 1 ms of their intended time{wakes}"
                );
            }
            // The engine kept up: the verdict says so first, as the sweep's
            // table and saturation point do, and then what was late.
            Limit::SendsLate => {
                return format!(
                    "verdict: the engine kept up with {rate:.0}/s, but the generator sent only {share:.2} % of orders within 1 ms of their intended time (under {:.1} %), so its own lateness is part of the corrected latencies{wakes}",
                    ON_TIME * 100.0
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
        };
        format!(
            "verdict: {rate:.0}/s not held ({}): {why}{wakes}",
            self.limit.as_str()
        )
    }
}

/// The sweep's conclusion: the engine's saturation point (the highest rate
/// of the unbroken run of steps, from the lowest rate up, at which it kept
/// up) and the rates at which the generator kept its schedule.
pub fn saturation(steps: &[(f64, Verdict)]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn v(limit: Limit, on_time: bool) -> Verdict {
        Verdict { limit, on_time }
    }

    /// An outcome of `sent` orders over `secs`, `late` of them late.
    fn outcome(sent: u64, late: u64, secs: f64, unanswered: u64, window_full: u64) -> Outcome {
        let interval = || crate::Interval {
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
            first_reject: None,
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
            order_size: 0,
            report_size: 0,
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
        o.lost = vec![crate::Lost {
            session: "LOAD1->EXCH".into(),
            at: Duration::from_millis(1_234),
            why: "connection closed by the engine".into(),
        }];
        o.disconnects = 1;
        let v = Verdict::of(&o, 1_000.0);
        assert_eq!(v.limit, Limit::SessionLost);
        assert!(!v.kept_up());
        let line = v.explain(&o, 1_000.0);
        assert_eq!(
            line,
            "verdict: 1000/s not held (session lost): session LOAD1->EXCH lost at 1.23 s: connection closed by the engine"
        );
        let problems = crate::sweep::problems(&o, "load 1000/s");
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
                "saturation: 10000 orders/s, the highest rate the engine kept up with; at 20000/s it did not (engine: window full)"
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
            none.starts_with("saturation: below 7000 orders/s, the sweep's lowest rate, where the engine did not keep up (engine: window full)"),
            "{none}"
        );
    }

    /// Issue 65: each verdict is one sentence that agrees with the sweep's
    /// headline. A run whose engine kept up (the generator late) says the
    /// engine kept up, not "not held", and no verdict, limit or
    /// saturation line nests parentheses (`not held (generator (sends
    /// late))` before).
    #[test]
    fn every_verdict_agrees_with_the_headline_and_nests_no_parentheses() {
        let depth = |line: &str| {
            let mut d = 0i32;
            let mut most = 0;
            for c in line.chars() {
                d += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                most = most.max(d);
            }
            assert_eq!(d, 0, "{line}");
            most
        };
        let mut lost = outcome(300, 0, 1.0, 2, 0);
        lost.lost = vec![crate::Lost {
            session: "LOAD1->EXCH".into(),
            at: Duration::from_millis(1_234),
            why: "connection closed by the engine".into(),
        }];
        let mut late = outcome(1_000, 2, 1.0, 0, 0);
        late.wake_late.record(2_000_000).unwrap();
        late.round_time.record(20_000).unwrap();
        let runs = [
            (Limit::None, outcome(1_000, 1, 1.0, 0, 0)),
            (Limit::SendsLate, late),
            (Limit::RateNotSent, outcome(989, 0, 1.0, 0, 0)),
            (Limit::WindowFull, outcome(1_000, 500, 1.0, 0, 1)),
            (Limit::Unanswered, outcome(1_000, 0, 1.0, 1, 1)),
            (Limit::SessionLost, lost),
        ];
        for (limit, o) in runs {
            let v = Verdict::of(&o, 1_000.0);
            assert_eq!(v.limit, limit);
            let line = v.explain(&o, 1_000.0);
            assert!(depth(&line) <= 1, "{line}");
            assert!(depth(limit.as_str()) == 0, "{}", limit.as_str());
            let headline = saturation(&[(1_000.0, v)]);
            assert!(depth(&headline) <= 1, "{headline}");
            if v.kept_up() {
                assert!(headline.contains("the engine kept up"), "{headline}");
                assert!(!line.contains("not held"), "{line}\nbeside {headline}");
                assert!(
                    line.starts_with("verdict: held 1000/s")
                        || line.starts_with("verdict: the engine kept up with 1000/s"),
                    "{line}"
                );
            } else {
                assert!(line.starts_with("verdict: 1000/s not held ("), "{line}");
            }
        }
    }
}
